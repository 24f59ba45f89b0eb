package coll

import (
	"bytes"
	"fmt"
)

// Scatter sends parts[j] from root to rank j and returns each rank's part
// (root gets a copy of parts[root]). Only root's parts is used; it must hold
// exactly p entries, whose sizes may differ.
//
// Algorithm: binomial tree rooted at root. Root packs all parts
// (length-prefixed) in relative-rank order; each node keeps its own block and
// forwards to each child the contiguous byte range holding that child's
// subtree, largest subtree first. Cost: lg p rounds; root sends lg p messages
// holding N = Σ sizes in total; each block travels at most lg p hops. Uses
// tag only.
func Scatter(c Comm, parts [][]byte, root, tag int) ([]byte, error) {
	b, err := scatter(c, parts, root, tag)
	return b, wrap("scatter", err)
}

func scatter(c Comm, parts [][]byte, root, tag int) ([]byte, error) {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return nil, err
	}
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	var packed []byte
	if vr == 0 {
		if err := checkParts(parts, p); err != nil {
			return nil, err
		}
		if p == 1 {
			return bytes.Clone(parts[0]), nil
		}
		for i := range p {
			packed = appendBlock(packed, parts[toRank(i, root, p)])
		}
	} else {
		src := toRank(vr-m, root, p)
		if packed, err = c.RecvAlloc(src, tag); err != nil {
			return nil, fmt.Errorf("recv from %d: %w", src, err)
		}
	}

	// packed holds the blocks of relative ranks [vr, vr+n).
	n := min(m, p-vr)
	offs, blocks, err := parseBlocks(packed, n)
	if err != nil {
		return nil, err
	}
	var reqs []Request
	for k := m / 2; k > 0; k /= 2 {
		if k >= n {
			continue
		}
		dst := toRank(vr+k, root, p)
		q, err := c.Isend(packed[offs[k]:offs[min(2*k, n)]], dst, tag)
		if err != nil {
			return nil, fmt.Errorf("send to %d: %w", dst, err)
		}
		reqs = append(reqs, q)
	}
	if err := waitAll(reqs); err != nil {
		return nil, err
	}
	return bytes.Clone(blocks[0]), nil
}

// ScatterFixed sends block j of in (n bytes each, p·n at root; other
// ranks pass nil) from root to rank j, into out (n bytes) on every rank.
// The tree and its messages are Scatter's, one an edge, without headers:
// every rank knows every block's length, so a rank that only receives
// (half of them) receives straight into out, and root sends slices of in
// unless a subtree's blocks wrap around rank p-1. Uses tag only.
func ScatterFixed(c Comm, in, out []byte, root, tag int) error {
	return wrap("scatter", scatterFixed(c, in, out, root, tag))
}

func scatterFixed(c Comm, in, out []byte, root, tag int) error {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return err
	}
	n := len(out)
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	if vr == 0 {
		if len(in) != p*n {
			return fmt.Errorf("%w: %d bytes of input for %d blocks of %d", ErrArg, len(in), p, n)
		}
		for k := m / 2; k > 0; k /= 2 {
			if k >= p {
				continue
			}
			first, cnt := toRank(k, root, p), min(k, p-k)
			b := in[first*n : min(first+cnt, p)*n]
			if first+cnt > p { // wraps around rank p-1
				b = append(append(make([]byte, 0, cnt*n), b...), in[:(first+cnt-p)*n]...)
			}
			if err := sendTo(c, b, toRank(k, root, p), tag); err != nil {
				return err
			}
		}
		copy(out, in[r*n:(r+1)*n])
		return nil
	}
	src := toRank(vr-m, root, p)
	cnt := min(m, p-vr)
	if cnt == 1 {
		return recvExact(c, out, src, tag)
	}
	acc := make([]byte, cnt*n)
	if err := recvExact(c, acc, src, tag); err != nil {
		return err
	}
	for k := m / 2; k > 0; k /= 2 {
		if k >= cnt {
			continue
		}
		if err := sendTo(c, acc[k*n:min(2*k, cnt)*n], toRank(vr+k, root, p), tag); err != nil {
			return err
		}
	}
	copy(out, acc[:n])
	return nil
}

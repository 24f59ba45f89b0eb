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

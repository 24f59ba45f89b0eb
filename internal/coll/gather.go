package coll

import (
	"bytes"
	"fmt"
)

// Gather collects every rank's buf at root. Root gets p slices in rank order
// (its own is a copy of buf); other ranks get nil. Sizes may differ between
// ranks. The returned slices share one backing array, each capped to its
// length.
//
// Algorithm: binomial tree rooted at root. Each node packs its own buffer
// (length-prefixed) and appends the packed blocks of its subtrees, which
// arrive in relative-rank order, then sends the lot to its parent. Cost:
// lg p rounds; root receives lg p messages holding N = Σ sizes (+ a few bytes
// of header per block); each block travels at most lg p hops. Uses tag only.
func Gather(c Comm, buf []byte, root, tag int) ([][]byte, error) {
	b, err := gather(c, buf, root, tag)
	return b, wrap("gather", err)
}

func gather(c Comm, buf []byte, root, tag int) ([][]byte, error) {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return nil, err
	}
	if p == 1 {
		return [][]byte{bytes.Clone(buf)}, nil
	}
	packed, err := gatherPacked(c, buf, r, p, root, tag)
	if err != nil || r != root {
		return nil, err
	}
	_, blocks, err := parseBlocks(packed, p)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, p)
	for i, b := range blocks {
		out[toRank(i, root, p)] = b
	}
	return out, nil
}

// gatherPacked gathers the packed blocks of all ranks, in rank order
// relative to root, at root; other ranks return nil.
func gatherPacked(c Comm, buf []byte, r, p, root, tag int) ([]byte, error) {
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	packed := appendBlock(nil, buf)
	for k := 1; k < m && vr+k < p; k <<= 1 {
		src := toRank(vr+k, root, p)
		in, err := c.RecvAlloc(src, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", src, err)
		}
		packed = append(packed, in...)
	}
	if vr == 0 {
		return packed, nil
	}
	dst := toRank(vr-m, root, p)
	if err := c.Send(packed, dst, tag); err != nil {
		return nil, fmt.Errorf("send to %d: %w", dst, err)
	}
	return nil, nil
}

// GatherFixed collects every rank's buf, all of one length n, at root:
// rank i's block lands at out[i·n:] (out has p·n bytes; other ranks pass
// nil). The tree is Gather's, but every rank knows every block's length,
// so a subtree's blocks travel as one message without headers, and root
// receives them straight into out unless they wrap around rank p-1. A
// rank that only sends (half of them) allocates nothing; an inner rank
// of the tree gathers its subtree in one buffer. Uses tag only.
func GatherFixed(c Comm, buf, out []byte, root, tag int) error {
	return wrap("gather", gatherFixed(c, buf, out, root, tag))
}

func gatherFixed(c Comm, buf, out []byte, root, tag int) error {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return err
	}
	n := len(buf)
	if r == root && len(out) != p*n {
		return fmt.Errorf("%w: %d bytes of output for %d blocks of %d", ErrArg, len(out), p, n)
	}
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	if vr != 0 && (vr+1 >= p || m == 1) {
		// A leaf: its own block is its subtree.
		return sendTo(c, buf, toRank(vr-m, root, p), tag)
	}
	if vr == 0 {
		copy(out[r*n:], buf)
		for k := 1; k < m && k < p; k <<= 1 {
			if err := recvBlocks(c, out, n, k, min(k, p-k), root, p, tag); err != nil {
				return err
			}
		}
		return nil
	}
	acc := make([]byte, min(m, p-vr)*n)
	copy(acc, buf)
	for k := 1; k < m && vr+k < p; k <<= 1 {
		if err := recvExact(c, acc[k*n:(k+min(k, p-vr-k))*n], toRank(vr+k, root, p), tag); err != nil {
			return err
		}
	}
	return sendTo(c, acc, toRank(vr-m, root, p), tag)
}

// recvBlocks receives, at root, the cnt blocks of n bytes of the
// relative ranks from vr on, sent by relative rank vr, into their places
// in out; blocks that wrap around rank p-1 come through a buffer.
func recvBlocks(c Comm, out []byte, n, vr, cnt, root, p, tag int) error {
	first := toRank(vr, root, p)
	src := first
	if first+cnt <= p {
		return recvExact(c, out[first*n:(first+cnt)*n], src, tag)
	}
	tmp := make([]byte, cnt*n)
	if err := recvExact(c, tmp, src, tag); err != nil {
		return err
	}
	k := copy(out[first*n:], tmp)
	copy(out, tmp[k:])
	return nil
}

func sendTo(c Comm, b []byte, dst, tag int) error {
	if err := c.Send(b, dst, tag); err != nil {
		return fmt.Errorf("send to %d: %w", dst, err)
	}
	return nil
}

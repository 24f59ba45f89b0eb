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

package coll

import "fmt"

// Reduce combines the buffers of all ranks with f and returns the result at
// root; other ranks return nil. buf is not modified. Buffer and partial
// result sizes may differ between ranks and may grow as they are combined.
//
// Algorithm: binomial tree. Each node receives the partial results of its
// subtrees, which cover the next contiguous ranges of ranks, and folds them
// in as acc ⊕ in, so every partial is the in-order reduction of a contiguous
// range. If commutative the tree is rooted at root, with ranks taken
// relative to root. Otherwise it is rooted at rank 0, so that relative and
// absolute rank order agree and the result is exactly x0 ⊕ x1 ⊕ ... ⊕ x(p-1);
// rank 0 then sends it to root if root != 0.
//
// Cost: lg p rounds (one more if !commutative and root != 0); p-1 messages in
// total, each carrying one partial result; root performs up to lg p
// combines. Uses tag and tag+1.
func Reduce(c Comm, buf []byte, f Combine, commutative bool, root, tag int) ([]byte, error) {
	b, err := reduce(c, buf, f, commutative, root, tag)
	return b, wrap("reduce", err)
}

func reduce(c Comm, buf []byte, f Combine, commutative bool, root, tag int) ([]byte, error) {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return nil, err
	}
	if err := checkCombine(f); err != nil {
		return nil, err
	}
	treeRoot := root
	if !commutative {
		treeRoot = 0
	}
	res, err := reduceTree(c, buf, f, r, p, treeRoot, tag)
	if err != nil || treeRoot == root {
		return res, err
	}
	switch r {
	case 0:
		if err := c.Send(res, root, tag+1); err != nil {
			return nil, fmt.Errorf("send to %d: %w", root, err)
		}
		return nil, nil
	case root:
		res, err := c.RecvAlloc(0, tag+1)
		if err != nil {
			return nil, fmt.Errorf("recv from 0: %w", err)
		}
		return res, nil
	}
	return nil, nil
}

// reduceTree reduces buf over the binomial tree rooted at root, combining in
// relative-rank order. It returns the result at root and nil elsewhere.
func reduceTree(c Comm, buf []byte, f Combine, r, p, root, tag int) ([]byte, error) {
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	acc := accum{b: buf}
	for k := 1; k < m && vr+k < p; k <<= 1 {
		src := toRank(vr+k, root, p)
		in, err := c.RecvAlloc(src, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", src, err)
		}
		if err := acc.combine(f, in, true); err != nil {
			return nil, err
		}
	}
	if vr == 0 {
		return acc.result(), nil
	}
	dst := toRank(vr-m, root, p)
	if err := c.Send(acc.b, dst, tag); err != nil {
		return nil, fmt.Errorf("send to %d: %w", dst, err)
	}
	return nil, nil
}

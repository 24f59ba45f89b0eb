package coll

import "fmt"

// ReduceVec combines equal-length vectors of all ranks with the
// commutative operation op and leaves the result in buf at root; on other
// ranks buf is clobbered (it carries partial results). scratch must be as
// long as buf. Nothing is allocated.
//
// Algorithm: binomial tree rooted at root; each node receives its
// children's partial results into scratch, folds them into buf, and sends
// buf to its parent. Cost: lg p rounds of whole vectors. Uses tag only.
func ReduceVec(c Comm, buf, scratch []byte, op VecOp, root, tag int) error {
	return wrap("reduce", reduceVec(c, buf, scratch, op, root, tag))
}

func reduceVec(c Comm, buf, scratch []byte, op VecOp, root, tag int) error {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return err
	}
	if len(scratch) < len(buf) || op == nil {
		return fmt.Errorf("%w: scratch of %d bytes for %d, or nil operation", ErrArg, len(scratch), len(buf))
	}
	in := scratch[:len(buf)]
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	for k := 1; k < m && vr+k < p; k <<= 1 {
		if err := recvExact(c, in, toRank(vr+k, root, p), tag); err != nil {
			return err
		}
		op(buf, in)
	}
	if vr == 0 {
		return nil
	}
	dst := toRank(vr-m, root, p)
	if err := c.Send(buf, dst, tag); err != nil {
		return fmt.Errorf("send to %d: %w", dst, err)
	}
	return nil
}

// ScanVec computes the prefix reduction of equal-length vectors with the
// commutative operation op: on rank r, buf becomes x0 ⊕ ... ⊕ xr
// (inclusive) or x0 ⊕ ... ⊕ x(r-1) (exclusive; rank 0's buf is then left
// unchanged and have reports false). scratch must be twice as long as buf.
// Nothing is allocated.
//
// Algorithm: recursive doubling, as Scan: each rank keeps the reduction of
// its aligned block of 2^k ranks and exchanges it with rank r XOR 2^k.
// Cost: lg p rounds of whole vectors. Uses tag only.
func ScanVec(c Comm, buf, scratch []byte, op VecOp, inclusive bool, tag int) (have bool, err error) {
	have, err = scanVec(c, buf, scratch, op, inclusive, tag)
	return have, wrap("scan", err)
}

func scanVec(c Comm, buf, scratch []byte, op VecOp, inclusive bool, tag int) (bool, error) {
	p, r, err := setup(c)
	if err != nil {
		return false, err
	}
	n := len(buf)
	if len(scratch) < 2*n || op == nil {
		return false, fmt.Errorf("%w: scratch of %d bytes for %d, or nil operation", ErrArg, len(scratch), n)
	}
	partial, in := scratch[:n], scratch[n:2*n]
	copy(partial, buf)
	have := inclusive
	for mask := 1; mask < p; mask <<= 1 {
		peer := r ^ mask
		if peer >= p {
			continue
		}
		if err := exchange(c, partial, in, peer, tag); err != nil {
			return false, err
		}
		op(partial, in)
		if peer < r {
			if have {
				op(buf, in)
			} else {
				copy(buf, in)
				have = true
			}
		}
	}
	return have, nil
}

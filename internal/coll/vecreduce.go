package coll

import "fmt"

// ReduceVec combines equal-length vectors of all ranks with the
// commutative operation op and leaves the result in buf at root; on other
// ranks buf is clobbered (it carries partial results). scratch must be as
// long as buf; esz is the element size. Nothing is allocated. alg "" selects
// by size:
//
//   - binomial: a binomial tree rooted at root; each node receives its
//     children's partial results into scratch, folds them into buf, and
//     sends buf to its parent: lg p rounds of whole vectors;
//   - rabenseifner: recursive-halving reduce-scatter (with the folding of
//     Allreduce for p not a power of two), then a binomial gather of the
//     reduced segments to the first rank of the folded group, which sends
//     the result to root if it is another rank: 2 lg p rounds, about 2n
//     bytes per rank instead of n lg p at the top of the tree.
//
// Uses tag..tag+3.
func ReduceVec(c Comm, alg string, buf, scratch []byte, esz int, op VecOp, root, tag int) error {
	return wrap("reduce", reduceVec(c, alg, buf, scratch, esz, op, root, tag))
}

func reduceVec(c Comm, alg string, buf, scratch []byte, esz int, op VecOp, root, tag int) error {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return err
	}
	if len(scratch) < len(buf) || op == nil || esz <= 0 || len(buf)%esz != 0 {
		return fmt.Errorf("%w: scratch of %d bytes for %d, element size %d, or nil operation", ErrArg, len(scratch), len(buf), esz)
	}
	sit := Situation{Ranks: p, Bytes: len(buf), Commutative: true, Fixed: true, Elems: len(buf) / esz}
	if alg == "" {
		alg = Select(CollReduce, sit)
	} else if !Applicable(CollReduce, alg, sit) {
		return fmt.Errorf("%w: algorithm %q cannot run reduce of %d elements on %d ranks", ErrArg, alg, sit.Elems, p)
	}
	switch alg {
	case AlgRabenseifner:
		return reduceRabenseifner(c, buf, scratch[:len(buf)], esz, op, r, p, root, tag)
	case AlgBinomial:
	default:
		return fmt.Errorf("%w: unknown reduce algorithm %q", ErrArg, alg)
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

func reduceRabenseifner(c Comm, buf, scratch []byte, esz int, op VecOp, r, p, root, tag int) error {
	if p == 1 {
		return nil
	}
	pof2 := pof2Below(p)
	rem := p - pof2
	first := foldedRank(0, rem) // gathers the result
	newr := -1
	if r < 2*rem && r%2 == 0 {
		if err := c.Send(buf, r+1, tag); err != nil {
			return fmt.Errorf("send to %d: %w", r+1, err)
		}
	} else {
		newr = r - rem
		if r < 2*rem {
			newr = r / 2
			if err := recvExact(c, scratch, r-1, tag); err != nil {
				return err
			}
			op(buf, scratch)
		}
		sg := segs{n: len(buf) / esz, esz: esz, k: pof2}
		if err := halving(c, nil, buf, scratch, sg.off, pof2, newr, rem, op, tag+1); err != nil {
			return err
		}
		// Binomial gather of the segments to new rank 0.
		for mask := 1; mask < pof2; mask <<= 1 {
			switch newr & (2*mask - 1) {
			case mask:
				dst := foldedRank(newr-mask, rem)
				if err := c.Send(buf[sg.off(newr):sg.off(newr+mask)], dst, tag+2); err != nil {
					return fmt.Errorf("send to %d: %w", dst, err)
				}
			case 0:
				if err := recvExact(c, buf[sg.off(newr+mask):sg.off(newr+2*mask)], foldedRank(newr+mask, rem), tag+2); err != nil {
					return err
				}
			}
		}
	}
	switch {
	case root == first:
	case r == first:
		if err := c.Send(buf, root, tag+3); err != nil {
			return fmt.Errorf("send to %d: %w", root, err)
		}
	case r == root:
		return recvExact(c, buf, first, tag+3)
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
	if p == 2 {
		return scanPairVec(c, buf, in, op, inclusive, tag)
	}
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

// scanPairVec is scanVec for two ranks: one message, rank 0's operand to
// rank 1, and rank 0 is free at once. Recursive doubling would exchange
// two, and hold rank 0 until rank 1's came; scan (the other road of a
// scan) does the same, so the two roads stay message for message alike.
func scanPairVec(c Comm, buf, in []byte, op VecOp, inclusive bool, tag int) (bool, error) {
	if c.Rank() == 0 {
		if err := c.Send(buf, 1, tag); err != nil {
			return false, fmt.Errorf("send to 1: %w", err)
		}
		return inclusive, nil
	}
	if err := recvExact(c, in, 0, tag); err != nil {
		return false, err
	}
	if inclusive {
		op(buf, in)
	} else {
		copy(buf, in)
	}
	return true, nil
}

package coll

import (
	"bytes"
	"fmt"
)

// Scan returns on rank r the inclusive prefix reduction x0 ⊕ x1 ⊕ ... ⊕ xr,
// always combined in rank order (commutative is accepted for symmetry with
// the other reductions; order is respected either way). buf is not
// modified; sizes may differ and grow.
//
// Algorithm: recursive doubling. Each rank keeps partial, the reduction of
// its aligned block of 2^k ranks, and its result. In round k it exchanges
// partial with rank r XOR 2^k (when that rank exists); a partner below adds
// its operand on the left of both partial and result, a partner above on the
// right of partial only. Cost: lg p rounds; each rank sends one partial per
// round and performs up to two combines per round. Two ranks need one
// message only: rank 0 sends its operand to rank 1 and returns. Uses tag
// only.
func Scan(c Comm, buf []byte, f Combine, commutative bool, tag int) ([]byte, error) {
	b, err := scan(c, buf, f, tag, true)
	return b, wrap("scan", err)
}

// Exscan returns on rank r > 0 the exclusive prefix reduction
// x0 ⊕ ... ⊕ x(r-1), combined in rank order; rank 0 gets nil. Arguments,
// algorithm and cost as Scan (commutative is likewise not needed).
func Exscan(c Comm, buf []byte, f Combine, commutative bool, tag int) ([]byte, error) {
	b, err := scan(c, buf, f, tag, false)
	return b, wrap("exscan", err)
}

func scan(c Comm, buf []byte, f Combine, tag int, inclusive bool) ([]byte, error) {
	p, r, err := setup(c)
	if err != nil {
		return nil, err
	}
	if err := checkCombine(f); err != nil {
		return nil, err
	}
	partial := accum{b: buf}
	var result accum
	have := inclusive // whether result holds a value yet
	if inclusive {
		result.b = buf
	}
	if p == 2 {
		// One message, rank 0's operand to rank 1, as scanPairVec sends.
		if r == 0 {
			if err := c.Send(buf, 1, tag); err != nil {
				return nil, fmt.Errorf("send to 1: %w", err)
			}
			if !have {
				return nil, nil
			}
			return result.result(), nil
		}
		in, err := c.RecvAlloc(0, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from 0: %w", err)
		}
		if !have {
			return in, nil
		}
		if err := result.combine(f, in, false); err != nil {
			return nil, err
		}
		return result.result(), nil
	}
	for mask := 1; mask < p; mask <<= 1 {
		peer := r ^ mask
		if peer >= p {
			continue
		}
		in, err := sendrecv(c, partial.b, peer, peer, tag)
		if err != nil {
			return nil, err
		}
		if peer > r {
			err = partial.combine(f, in, true)
		} else {
			if have {
				err = result.combine(f, in, false)
			} else {
				result, have = accum{b: bytes.Clone(in), owned: true}, true
			}
			if err == nil {
				err = partial.combine(f, in, false)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if !have {
		return nil, nil
	}
	return result.result(), nil
}

package coll

import "fmt"

// Allreduce combines the buffers of all ranks with f and returns the result
// on every rank. All ranks get bit-identical results. buf is not modified;
// sizes may differ between ranks and may grow as they are combined.
//
// The algorithm is recursive doubling over the largest power of two
// p' <= p, with the usual fix for the rem = p - p' extra ranks: first
// each even rank r < 2·rem sends its buffer to r+1 and drops out; then the
// p' remaining ranks exchange partial results with partners at distance
// 1, 2, 4, ... (in the renumbered set); finally each odd rank r < 2·rem sends
// the result back to r-1. Both partners of an exchange compute
// lower ⊕ upper from the same two operands, so they stay identical even for
// floating point. Cost: lg p' rounds, plus 2 if p is not a power of two;
// each active rank sends one partial per round, p'·lg p' + 2·rem messages in
// total.
//
// It needs no commutativity: renumbering keeps rank order, so each rank
// holds the reduction of a run of consecutive ranks, and every combine
// puts the lower run's operand on the left (MPICH does the same). So
// commutative only documents the caller's operation. A non-commutative
// operation once took a reduce to rank 0 and a broadcast instead, whose
// messages a rank combining vectors of plain values (recursive doubling
// too, with the same tags) never matched: two ranks that passed
// different types waited for each other until the hang report, instead
// of both learning of the mismatch (ErrType).
//
// Uses tag..tag+2.
func Allreduce(c Comm, buf []byte, f Combine, commutative bool, tag int) ([]byte, error) {
	b, err := allreduce(c, buf, f, commutative, tag)
	return b, wrap("allreduce", err)
}

func allreduce(c Comm, buf []byte, f Combine, commutative bool, tag int) ([]byte, error) {
	p, r, err := setup(c)
	if err != nil {
		return nil, err
	}
	if err := checkCombine(f); err != nil {
		return nil, err
	}
	pof2 := 1
	for pof2*2 <= p {
		pof2 *= 2
	}
	rem := p - pof2
	acc := accum{b: buf}

	// Fold the extra ranks in: ranks 2i and 2i+1 (i < rem) become new rank i.
	if r < 2*rem && r%2 == 0 {
		if err := c.Send(buf, r+1, tag); err != nil {
			return nil, fmt.Errorf("send to %d: %w", r+1, err)
		}
		res, err := c.RecvAlloc(r+1, tag+2)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", r+1, err)
		}
		return res, nil
	}
	newr := r - rem
	if r < 2*rem {
		newr = r / 2
		in, err := c.RecvAlloc(r-1, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", r-1, err)
		}
		if err := acc.combine(f, in, false); err != nil {
			return nil, err
		}
	}

	// Recursive doubling among the pof2 new ranks. Renumbering preserves
	// rank order, so the partner with the lower new rank holds the lower
	// range of ranks and its operand goes on the left.
	for mask := 1; mask < pof2; mask <<= 1 {
		np := newr ^ mask
		peer := np + rem
		if np < rem {
			peer = 2*np + 1
		}
		in, err := sendrecv(c, acc.b, peer, peer, tag+1)
		if err != nil {
			return nil, err
		}
		if err := acc.combine(f, in, np > newr); err != nil {
			return nil, err
		}
	}

	// Unfold: give the result to the ranks that dropped out.
	res := acc.result()
	if r < 2*rem {
		if err := c.Send(res, r-1, tag+2); err != nil {
			return nil, fmt.Errorf("send to %d: %w", r-1, err)
		}
	}
	return res, nil
}

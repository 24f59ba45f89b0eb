package coll

import "fmt"

// This file holds the algorithms for fixed-size vectors combined with a
// commutative elementwise operation, in the caller's buffer: the fast path
// of the predefined operations and of the low-level layer. op(inout, in)
// sets inout[i] = inout[i] ⊕ in[i]; both slices hold whole elements.

// VecOp combines in into inout elementwise (inout = inout ⊕ in).
type VecOp func(inout, in []byte)

// segs splits n elements of esz bytes into k nearly equal segments on
// element boundaries: segment i is bytes [off(i), off(i+1)).
type segs struct{ n, esz, k int }

func (s segs) off(i int) int { return (s.n * i / s.k) * s.esz }

// pof2Below returns the largest power of two <= p.
func pof2Below(p int) int {
	pof2 := 1
	for pof2*2 <= p {
		pof2 *= 2
	}
	return pof2
}

// foldedRank maps a rank of the power-of-two group used after folding (see
// Allreduce) back to a real rank.
func foldedRank(np, rem int) int {
	if np < rem {
		return 2*np + 1
	}
	return np + rem
}

// exchange sends sbuf to peer while receiving exactly len(rbuf) bytes from it.
func exchange(c Comm, sbuf, rbuf []byte, peer, tag int) error {
	return exchange2(c, sbuf, peer, rbuf, peer, tag)
}

// exchange2 sends sbuf to dst while receiving exactly len(rbuf) bytes from src.
func exchange2(c Comm, sbuf []byte, dst int, rbuf []byte, src, tag int) error {
	q, err := c.Isend(sbuf, dst, tag)
	if err != nil {
		return fmt.Errorf("send to %d: %w", dst, err)
	}
	n, rerr := c.Recv(rbuf, src, tag)
	if _, err := q.Wait(); err != nil {
		return fmt.Errorf("send to %d: %w", dst, err)
	}
	if rerr != nil {
		return fmt.Errorf("recv from %d: %w", src, rerr)
	}
	if n != len(rbuf) {
		return fmt.Errorf("%w: %d bytes from rank %d, expected %d", ErrMessage, n, src, len(rbuf))
	}
	return nil
}

// recvExact receives exactly len(buf) bytes from src.
func recvExact(c Comm, buf []byte, src, tag int) error {
	n, err := c.Recv(buf, src, tag)
	if err != nil {
		return fmt.Errorf("recv from %d: %w", src, err)
	}
	if n != len(buf) {
		return fmt.Errorf("%w: %d bytes from rank %d, expected %d", ErrMessage, n, src, len(buf))
	}
	return nil
}

// AllreduceVec combines equal-length vectors of all ranks with the
// commutative operation op, leaving the result in buf on every rank; all
// ranks get bit-identical results. Partial results arrive in scratch,
// which must be as long as buf; esz is the element size (segments are cut
// on element boundaries). alg names the algorithm; "" selects one with
// Select by vector size and rank count:
//
//   - recursive_doubling: lg p' rounds of whole-vector exchanges (+2 when
//     p is not a power of two): the fewest rounds, for short vectors;
//   - rabenseifner: recursive-halving reduce-scatter, then
//     recursive-doubling allgather, over p' ranks with the same folding:
//     2·lg p' rounds moving 2n(p'-1)/p' bytes per rank;
//   - ring: reduce-scatter and allgather around a ring: 2(p-1) rounds,
//     each moving n/p bytes per rank, for long vectors and any p;
//   - reduce_bcast: binomial reduce then broadcast (2·lg p rounds of
//     whole vectors).
//
// Uses tag..tag+3.
func AllreduceVec(c Comm, alg string, buf, scratch []byte, esz int, op VecOp, tag int) error {
	return wrap("allreduce", allreduceVec(c, alg, false, buf, scratch, esz, op, tag))
}

// AllreduceVecChosen is AllreduceVec with alg as Select chose it for this
// very situation (the caller remembers the choice): it skips the check.
func AllreduceVecChosen(c Comm, alg string, buf, scratch []byte, esz int, op VecOp, tag int) error {
	return wrap("allreduce", allreduceVec(c, alg, true, buf, scratch, esz, op, tag))
}

// AllreduceVecChosenFrom is AllreduceVecChosen for a contribution in src
// and the result in buf (as long as src; the same slice or not
// overlapping at all). Rabenseifner's algorithm on a power-of-two group
// sends the half it gives away in its first step straight from src, and
// copies into buf only the half it keeps, instead of copying all of src
// into buf first: half a pass over a long vector saved. Other algorithms
// copy first.
func AllreduceVecChosenFrom(c Comm, alg string, src, buf, scratch []byte, esz int, op VecOp, tag int) error {
	p := c.Size()
	if alg != AlgRabenseifner || len(buf) == 0 || len(src) != len(buf) || &src[0] == &buf[0] ||
		p < 2 || pof2Below(p) != p || esz <= 0 || len(buf)%esz != 0 || len(scratch) < len(buf) || op == nil {
		copy(buf, src)
		return AllreduceVecChosen(c, alg, buf, scratch, esz, op, tag)
	}
	r := c.Rank()
	if r < 0 || r >= p {
		return wrap("allreduce", fmt.Errorf("%w: rank %d of size %d", ErrArg, r, p))
	}
	return wrap("allreduce", allreduceRabenseifner(c, src, buf, scratch[:len(buf)], esz, op, r, p, tag))
}

// AllreduceVecRD is AllreduceVecChosen for recursive doubling, the
// small-vector case where every nanosecond shows: it goes straight to the
// algorithm, skipping the argument checks and the dispatch by name.
func AllreduceVecRD(c Comm, buf, scratch []byte, op VecOp, tag int) error {
	return wrap("allreduce", allreduceInPlace(c, buf, scratch, op, tag))
}

func allreduceVec(c Comm, alg string, chosen bool, buf, scratch []byte, esz int, op VecOp, tag int) error {
	p, r, err := setup(c)
	if err != nil {
		return err
	}
	if esz <= 0 || len(buf)%esz != 0 {
		return fmt.Errorf("%w: %d bytes is not a whole number of %d-byte elements", ErrArg, len(buf), esz)
	}
	if len(scratch) < len(buf) {
		return fmt.Errorf("%w: scratch of %d bytes for a %d-byte buffer", ErrArg, len(scratch), len(buf))
	}
	if op == nil {
		return fmt.Errorf("%w: nil operation", ErrArg)
	}
	scratch = scratch[:len(buf)]
	sit := Situation{Ranks: p, Bytes: len(buf), Commutative: true, Fixed: true, Elems: len(buf) / esz}
	if alg == "" {
		alg = Select(CollAllreduce, sit)
	} else if !chosen && !Applicable(CollAllreduce, alg, sit) {
		return fmt.Errorf("%w: algorithm %q cannot run allreduce of %d elements on %d ranks", ErrArg, alg, sit.Elems, p)
	}
	if p == 1 {
		return nil
	}
	switch alg {
	case AlgRecursiveDoubling:
		return allreduceInPlace(c, buf, scratch, op, tag)
	case AlgRabenseifner:
		return allreduceRabenseifner(c, nil, buf, scratch, esz, op, r, p, tag)
	case AlgRing:
		return allreduceRing(c, buf, scratch, esz, op, r, p, tag)
	case AlgReduceBcast:
		f := func(acc, in []byte, _ bool) ([]byte, error) { op(acc, in); return acc, nil }
		res, err := reduceTree(c, buf, f, r, p, 0, tag)
		if err != nil {
			return err
		}
		if r == 0 {
			copy(buf, res)
		}
		return bcast(c, buf, 0, tag+1)
	}
	return fmt.Errorf("%w: unknown allreduce algorithm %q", ErrArg, alg)
}

// allreduceRabenseifner: fold to p' ranks (as in recursive doubling),
// reduce-scatter by recursive halving, allgather by recursive doubling,
// unfold. Tags: fold tag, halving tag+1, allgather tag+2, unfold tag+3.
// src, if not nil, holds the contribution and buf nothing yet; only for
// a power-of-two p (no folding).
func allreduceRabenseifner(c Comm, src, buf, scratch []byte, esz int, op VecOp, r, p, tag int) error {
	pof2 := pof2Below(p)
	rem := p - pof2
	if r < 2*rem && r%2 == 0 {
		if err := c.Send(buf, r+1, tag); err != nil {
			return fmt.Errorf("send to %d: %w", r+1, err)
		}
		return recvExact(c, buf, r+1, tag+3)
	}
	newr := r - rem
	if r < 2*rem {
		newr = r / 2
		if err := recvExact(c, scratch, r-1, tag); err != nil {
			return err
		}
		op(buf, scratch)
	}
	sg := segs{n: len(buf) / esz, esz: esz, k: pof2}
	if err := halving(c, src, buf, scratch, sg.off, pof2, newr, rem, op, tag+1); err != nil {
		return err
	}
	for mask := 1; mask < pof2; mask <<= 1 {
		peer := newr ^ mask
		mylo, plo := newr&^(mask-1), peer&^(mask-1)
		if err := exchange(c, buf[sg.off(mylo):sg.off(mylo+mask)], buf[sg.off(plo):sg.off(plo+mask)], foldedRank(peer, rem), tag+2); err != nil {
			return err
		}
	}
	if r < 2*rem {
		if err := c.Send(buf, r-1, tag+3); err != nil {
			return fmt.Errorf("send to %d: %w", r-1, err)
		}
	}
	return nil
}

// halving is the recursive-halving reduce-scatter among the pof2 ranks of
// the folded group: afterwards buf[off(newr):off(newr+1)] holds the
// reduction of that segment over all ranks. Each step exchanges half of the
// current range with the partner across the top remaining bit.
//
// src, if not nil, holds the contribution in place of buf, which holds
// nothing yet: the first step sends from src and receives the partner's
// half straight into the part of buf it keeps, then folds its own half
// in from src (keep = theirs ⊕ mine, the same value as mine ⊕ theirs for
// a commutative op). No copy of src into buf is made, and the rest of
// buf is filled by the allgather that follows.
func halving(c Comm, src, buf, scratch []byte, off func(int) int, pof2, newr, rem int, op VecOp, tag int) error {
	lo, hi := 0, pof2
	for mask := pof2 / 2; mask >= 1; mask >>= 1 {
		peer := foldedRank(newr^mask, rem)
		mid := lo + (hi-lo)/2
		klo, khi, slo, shi := lo, mid, mid, hi
		if newr&mask != 0 {
			klo, khi, slo, shi = mid, hi, lo, mid
		}
		keep := buf[off(klo):off(khi)]
		if src != nil {
			if err := exchange(c, src[off(slo):off(shi)], keep, peer, tag); err != nil {
				return err
			}
			op(keep, src[off(klo):off(khi)])
			src = nil
			lo, hi = klo, khi
			continue
		}
		in := scratch[:len(keep)]
		if err := exchange(c, buf[off(slo):off(shi)], in, peer, tag); err != nil {
			return err
		}
		op(keep, in)
		lo, hi = klo, khi
	}
	if src != nil { // pof2 == 1: nothing was exchanged
		copy(buf, src)
	}
	return nil
}

// allreduceRing: ring reduce-scatter (tag), then ring allgather (tag+1).
func allreduceRing(c Comm, buf, scratch []byte, esz int, op VecOp, r, p, tag int) error {
	sg := segs{n: len(buf) / esz, esz: esz, k: p}
	seg := func(i int) []byte { return buf[sg.off(i):sg.off(i+1)] }
	right, left := (r+1)%p, (r-1+p)%p
	for s := 0; s < p-1; s++ {
		sendSeg, recvSeg := (r-s+p)%p, (r-s-1+2*p)%p
		dst := seg(recvSeg)
		in := scratch[:len(dst)]
		if err := exchange2(c, seg(sendSeg), right, in, left, tag); err != nil {
			return err
		}
		op(dst, in)
	}
	for s := 0; s < p-1; s++ {
		sendSeg, recvSeg := (r+1-s+p)%p, (r-s+p)%p
		if err := exchange2(c, seg(sendSeg), right, seg(recvSeg), left, tag+1); err != nil {
			return err
		}
	}
	return nil
}

// ReduceScatterVec combines equal-length vectors of all ranks with the
// commutative operation op and leaves in buf[offs[r]:offs[r+1]] on rank r
// that block of the result (MPI_Reduce_scatter); the rest of buf is
// clobbered. offs has p+1 entries, offs[p] == len(buf), the same on every
// rank. scratch must be as long as buf.
//
// Algorithm: recursive halving (Thakur et al.). With p' the largest power
// of two <= p and rem = p - p', ranks 2i and 2i+1 (i < rem) first combine
// whole vectors, so that p' ranks remain, each responsible for a contiguous
// range of blocks; then lg p' steps each exchange half of the remaining
// range with the partner across the next bit, halving it; finally rank
// 2i+1 sends rank 2i its block. Cost: lg p' rounds (+2), n(p'-1)/p' bytes
// per rank (+n for folded ranks). Uses tag..tag+2.
func ReduceScatterVec(c Comm, buf, scratch []byte, offs []int, op VecOp, tag int) error {
	return wrap("reduce_scatter", reduceScatterVec(c, buf, scratch, offs, op, tag))
}

func reduceScatterVec(c Comm, buf, scratch []byte, offs []int, op VecOp, tag int) error {
	p, r, err := setup(c)
	if err != nil {
		return err
	}
	if len(offs) != p+1 || offs[0] != 0 || offs[p] != len(buf) {
		return fmt.Errorf("%w: %d offsets for %d ranks and %d bytes", ErrArg, len(offs), p, len(buf))
	}
	for i := range p {
		if offs[i] > offs[i+1] {
			return fmt.Errorf("%w: offsets decrease at %d", ErrArg, i)
		}
	}
	if len(scratch) < len(buf) {
		return fmt.Errorf("%w: scratch of %d bytes for a %d-byte buffer", ErrArg, len(scratch), len(buf))
	}
	if op == nil {
		return fmt.Errorf("%w: nil operation", ErrArg)
	}
	if p == 1 {
		return nil
	}
	pof2 := pof2Below(p)
	rem := p - pof2
	if r < 2*rem && r%2 == 0 {
		if err := c.Send(buf, r+1, tag); err != nil {
			return fmt.Errorf("send to %d: %w", r+1, err)
		}
		return recvExact(c, buf[offs[r]:offs[r+1]], r+1, tag+2)
	}
	newr := r - rem
	if r < 2*rem {
		newr = r / 2
		if err := recvExact(c, scratch[:len(buf)], r-1, tag); err != nil {
			return err
		}
		op(buf, scratch[:len(buf)])
	}
	off := func(i int) int {
		if i < rem {
			return offs[2*i]
		}
		return offs[i+rem]
	}
	if err := halving(c, nil, buf, scratch, off, pof2, newr, rem, op, tag+1); err != nil {
		return err
	}
	if r < 2*rem {
		if err := c.Send(buf[offs[r-1]:offs[r]], r-1, tag+2); err != nil {
			return fmt.Errorf("send to %d: %w", r-1, err)
		}
	}
	return nil
}

package coll

import (
	"bytes"
	"fmt"
)

// This file holds the helpers shared by the algorithms: argument checks,
// binomial-tree arithmetic, paired exchanges and the accumulator that
// protects the caller's buffer from in-place Combine.

// wrap prefixes a non-nil error with the package and operation name.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("coll: %s: %w", op, err)
}

// setup returns the size and rank of c after checking them.
func setup(c Comm) (p, r int, err error) {
	p, r = c.Size(), c.Rank()
	if p < 1 || r < 0 || r >= p {
		return 0, 0, fmt.Errorf("%w: rank %d of size %d", ErrArg, r, p)
	}
	return p, r, nil
}

// setupRoot is setup plus a check that root is a rank of c.
func setupRoot(c Comm, root int) (p, r int, err error) {
	if p, r, err = setup(c); err != nil {
		return 0, 0, err
	}
	if root < 0 || root >= p {
		return 0, 0, fmt.Errorf("%w: root %d of size %d", ErrRoot, root, p)
	}
	return p, r, nil
}

// checkCombine rejects a nil Combine.
func checkCombine(f Combine) error {
	if f == nil {
		return fmt.Errorf("%w: nil Combine", ErrArg)
	}
	return nil
}

// checkParts rejects a parts slice that does not hold one entry per rank.
func checkParts(parts [][]byte, p int) error {
	if len(parts) != p {
		return fmt.Errorf("%w: %d parts for %d ranks", ErrArg, len(parts), p)
	}
	return nil
}

// Binomial trees.
//
// The trees work on relative ranks vr = (r - root) mod p, so the root is
// relative rank 0. subtree(vr, p) returns m, the lowest set bit of vr (for
// vr == 0, the smallest power of two >= p). Then:
//
//   - the parent of vr is vr - m;
//   - the children of vr are vr + k for k = 1, 2, 4, ... < m with vr + k < p,
//     and child vr + k covers the relative ranks [vr+k, min(vr+2k, p));
//   - vr covers the relative ranks [vr, min(vr+m, p)).
//
// Children are visited in increasing k when gathering, so the data arrives
// in relative-rank order, and in decreasing k when scattering, so the
// largest subtree starts first. The tree has depth lg p.

// subtree returns the subtree bound m of relative rank vr (see above).
func subtree(vr, p int) int {
	m := 1
	for m < p && vr&m == 0 {
		m <<= 1
	}
	return m
}

// toRel converts rank r to its rank relative to root.
func toRel(r, root, p int) int { return (r - root + p) % p }

// toRank converts relative rank vr back to a rank.
func toRank(vr, root, p int) int { return (vr + root) % p }

// bcastTree is the binomial broadcast shared by Bcast and BcastVar. recv
// receives the parent's message; the result is then sent to the children.
func bcastTree(c Comm, buf []byte, r, p, root, tag int, recv func(src int) ([]byte, error)) ([]byte, error) {
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	if vr != 0 {
		var err error
		if buf, err = recv(toRank(vr-m, root, p)); err != nil {
			return nil, err
		}
	}
	var reqs []Request
	for k := m / 2; k > 0; k /= 2 {
		if vr+k >= p {
			continue
		}
		dst := toRank(vr+k, root, p)
		q, err := c.Isend(buf, dst, tag)
		if err != nil {
			return nil, fmt.Errorf("send to %d: %w", dst, err)
		}
		reqs = append(reqs, q)
	}
	return buf, waitAll(reqs)
}

// waitAll waits for send requests, stopping at the first error.
func waitAll(reqs []Request) error {
	for _, q := range reqs {
		if _, err := q.Wait(); err != nil {
			return fmt.Errorf("send: %w", err)
		}
	}
	return nil
}

// sendrecv sends sbuf to dst while receiving a message of any length from
// src; it cannot deadlock against a peer doing the same.
func sendrecv(c Comm, sbuf []byte, dst, src, tag int) ([]byte, error) {
	return sendrecvInto(c, sbuf, dst, nil, src, tag)
}

// sendrecvInto is sendrecv receiving into rbuf (allocated if nil; see
// recvInto).
func sendrecvInto(c Comm, sbuf []byte, dst int, rbuf []byte, src, tag int) ([]byte, error) {
	q, err := c.Isend(sbuf, dst, tag)
	if err != nil {
		return nil, fmt.Errorf("send to %d: %w", dst, err)
	}
	in, err := recvInto(c, rbuf, src, tag)
	if err != nil {
		return nil, fmt.Errorf("recv from %d: %w", src, err)
	}
	if _, err := q.Wait(); err != nil {
		return nil, fmt.Errorf("send to %d: %w", dst, err)
	}
	return in, nil
}

// accum is a reduction accumulator. It starts out aliasing the caller's
// buffer and copies it before the first Combine, which may work in place.
type accum struct {
	b     []byte
	owned bool
}

// combine sets a to a ⊕ in (accFirst) or in ⊕ a.
func (a *accum) combine(f Combine, in []byte, accFirst bool) error {
	if !a.owned {
		a.b, a.owned = bytes.Clone(a.b), true
	}
	b, err := f(a.b, in, accFirst)
	if err != nil {
		return fmt.Errorf("combine: %w", err)
	}
	a.b = b
	return nil
}

// result returns the accumulated value as a slice the caller owns.
func (a *accum) result() []byte {
	if !a.owned {
		a.b, a.owned = bytes.Clone(a.b), true
	}
	return a.b
}

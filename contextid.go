package mpi

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/coll"
)

// Context agreement. A new communicator needs a context id free on every
// one of its members (and, for an intercommunicator, on every member of
// both groups). agreeContext runs the agreement over any "allreduce" that
// reaches exactly those members: the members of a parent communicator
// (newContext), a subset of one reached on a tag of the parent's
// collective context (CreateGroup), or two groups joined through their
// leaders (intercommunicators).
//
// Each attempt is two allreduces. The first ANDs the members' free-id
// bitmaps; every member then reserves the chosen id locally if it is still
// free (another goroutine of the same rank may have taken it meanwhile).
// The second ANDs the members' success flags: if any failed, those that
// succeeded release the id and all try again. The second round also XORs
// one random word from each member, which seeds the next attempt's choice
// among the lowest free ids, so that creations that keep colliding on the
// same lowest id (overlapping subsets from different goroutines) spread
// out instead of colliding again.

// selfCtxID is the context id of each rank's Self communicator, reserved
// on every rank by newWorld.
const selfCtxID = 1

// Derived contexts of a communicator with point-to-point context ctx; an
// id below ctxIDs gives contexts below 2·ctxIDs, so these never collide
// with a communicator's own:
//
//	ctx|ctxLocalBit, +1   an intercommunicator's local-group traffic
const ctxLocalBit = 1 << 29

// groupTagBit marks the tags that CreateGroup and IntercommCreate use on a
// collective context: the user's tag with bit 30 set. Collective tags are
// below 1<<27, so these never match a collective's messages.
const groupTagBit = 1 << 30

// agreeCombine ANDs every byte but the last eight, which it XORs.
func agreeCombine(acc, in []byte, _ bool) ([]byte, error) {
	if len(acc) != len(in) || len(acc) < 8 {
		return nil, fmt.Errorf("context agreement: records of %d and %d bytes", len(acc), len(in))
	}
	n := len(acc) - 8
	for i := 0; i < n; i++ {
		acc[i] &= in[i]
	}
	for i := n; i < len(acc); i++ {
		acc[i] ^= in[i]
	}
	return acc, nil
}

// withNonce appends eight random bytes to b.
func withNonce(b []byte) []byte {
	var r [8]byte
	rand.Read(r[:])
	return append(b, r[:]...)
}

// errNoContext is agreeContext's error when no context id is free on every
// member: the program holds ctxIDs communicators at once, almost always
// because it makes them in a loop (Dup, Split, ...) without freeing them.
// It is the user's doing, not the library's, so it has class ErrOther (as
// MPICH reports its "too many communicators"), not ErrIntern.
var errNoContext = fmt.Errorf("no context id is free on every member: each of the %d is held by a communicator on at least one of them (Free the communicators you no longer need, such as those a loop makes with Dup or Split)", ctxIDs)

// ctxFail is the error of call op when agreeing on a context failed with
// err: ErrOther if the ids ran out, ErrIntern otherwise.
func (c *Comm) ctxFail(op string, err error) error {
	if errors.Is(err, errNoContext) {
		return c.fail(op, ErrOther, loc{}, "%v", err)
	}
	return c.fail(op, ErrIntern, loc{}, "agreeing on a context: %v", err)
}

// agreeRetries counts the attempts that found their chosen id taken (for
// tests).
var agreeRetries atomic.Int64

// agreeContext agrees on a context id with the members ar reaches and
// reserves it on this rank.
func (p *proc) agreeContext(ar func(buf []byte) ([]byte, error)) (uint32, error) {
	var seed uint64
	for attempt := 0; attempt < 1000; attempt++ {
		mask, err := ar(withNonce(p.ctx.freeMask()))
		if err != nil {
			return 0, err
		}
		mask = mask[:len(mask)-8]
		// The free ids common to all, lowest first; attempt 0 takes the
		// lowest, later attempts one of the lowest 64 chosen by the seed.
		pick := 0
		if attempt > 0 {
			pick = int(seed % 64)
		}
		id, first := uint32(ctxIDs), uint32(ctxIDs)
		for i := 0; i+8 <= len(mask) && id == ctxIDs; i += 8 {
			for w := binary.LittleEndian.Uint64(mask[i:]); w != 0; w &= w - 1 {
				cand := uint32(i/8*64 + bits.TrailingZeros64(w))
				if first == ctxIDs {
					first = cand
				}
				if pick == 0 {
					id = cand
					break
				}
				pick--
			}
		}
		if id == ctxIDs {
			id = first // fewer free ids than the pick: the lowest
		}
		if id == ctxIDs {
			return 0, errNoContext
		}
		ok := p.ctx.tryTake(id)
		flag := []byte{0}
		if ok {
			flag[0] = 1
		}
		all, err := ar(withNonce(flag))
		if err != nil {
			if ok {
				p.ctx.release(id)
			}
			return 0, err
		}
		if all[0] == 1 {
			return id, nil
		}
		if ok {
			p.ctx.release(id)
		}
		agreeRetries.Add(1)
		seed = binary.LittleEndian.Uint64(all[1:]) ^ uint64(attempt)*0x9e3779b97f4a7c15
		// Back off a little, longer as collisions repeat.
		if attempt < 4 {
			runtime.Gosched()
		} else {
			time.Sleep(time.Duration(seed%uint64(min(attempt, 50))) * 10 * time.Microsecond)
		}
	}
	return 0, fmt.Errorf("could not agree on a context id")
}

// tagAllreduce combines buf over every rank of cc with the commutative f,
// using only tag: recursive doubling, with the ranks beyond the largest
// power of two folded in. Between any two ranks the messages of one call,
// and of consecutive calls, follow the same order on both sides, so one
// tag suffices, and calls with different tags never mix.
func tagAllreduce(cc coll.Comm, buf []byte, f coll.Combine, tag int) ([]byte, error) {
	p, r := cc.Size(), cc.Rank()
	pof2 := 1
	for pof2*2 <= p {
		pof2 *= 2
	}
	if r >= pof2 {
		if err := cc.Send(buf, r-pof2, tag); err != nil {
			return nil, err
		}
		return cc.RecvAlloc(r-pof2, tag)
	}
	acc := buf
	if r+pof2 < p {
		in, err := cc.RecvAlloc(r+pof2, tag)
		if err != nil {
			return nil, err
		}
		if acc, err = f(acc, in, true); err != nil {
			return nil, err
		}
	}
	for mask := 1; mask < pof2; mask <<= 1 {
		peer := r ^ mask
		req, err := cc.Isend(acc, peer, tag)
		if err != nil {
			return nil, err
		}
		in, rerr := cc.RecvAlloc(peer, tag)
		if _, err := req.Wait(); err != nil {
			return nil, err
		}
		if rerr != nil {
			return nil, rerr
		}
		// acc was being sent: combine into a fresh copy.
		acc = append([]byte(nil), acc...)
		if acc, err = f(acc, in, peer > r); err != nil {
			return nil, err
		}
	}
	if r+pof2 < p {
		if err := cc.Send(acc, r+pof2, tag); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// subComm is a subset of a communicator as a coll.Comm: rank i of the
// subset is rank ranks[i] of the parent. Messages carry the sender's rank
// in the parent, so a subset's messages can never be taken for another
// subset's, even with the same tag.
type subComm struct {
	cc    collComm
	ranks []int
	me    int
}

func (s subComm) Rank() int { return s.me }
func (s subComm) Size() int { return len(s.ranks) }
func (s subComm) Send(buf []byte, dst, tag int) error {
	return s.cc.Send(buf, s.ranks[dst], tag)
}
func (s subComm) Recv(buf []byte, src, tag int) (int, error) {
	return s.cc.Recv(buf, s.ranks[src], tag)
}
func (s subComm) RecvAlloc(src, tag int) ([]byte, error) {
	return s.cc.RecvAlloc(s.ranks[src], tag)
}
func (s subComm) Isend(buf []byte, dst, tag int) (coll.Request, error) {
	return s.cc.Isend(buf, s.ranks[dst], tag)
}
func (s subComm) Irecv(buf []byte, src, tag int) (coll.Request, error) {
	return s.cc.Irecv(buf, s.ranks[src], tag)
}

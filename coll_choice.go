package mpi

// The algorithm-choice caches of a communicator's collectives.
//
// Choosing an algorithm (coll.Select over the selection table, and for the
// node-aware forms the communicator's hierarchy, hier.go) takes map
// lookups and string compares, a measurable part of a small collective
// (docs/performance.md, "Why the code is as it is"). The table is fixed
// once loaded, so the choice depends only on the message's size: each
// communicator remembers the last choice of each cached collective
// (Comm.arChoice, bcChoice, a2aChoice), since a loop of one collective on
// one size is the common case. A choice is replaced, not updated, so
// readers need no lock.

import "github.com/mpigo/mpi/internal/coll"

// algChoice is how a communicator last ran a broadcast (or an alltoall)
// of bytes bytes: the hierarchy to use, or (hier nil) the algorithm
// Select chose.
type algChoice struct {
	bytes int
	hier  *hierarchy
	alg   string
}

// vecChoice is how a communicator last ran an elementwise allreduce: for
// vectors of bytes bytes and elems elements, the hierarchy to use, or (hier
// nil) the algorithm Select chose ("": let coll choose and check); rd
// tells that it is recursive doubling without comparing names.
type vecChoice struct {
	bytes, elems int
	hier         *hierarchy
	alg          string
	rd           bool
	inProcess    bool // the ranks meet in memory (coll_meet.go)
}

// chooseBcast chooses how c broadcasts n bytes of fixed size
// (bcastFixed) and remembers it in c.bcChoice; bcastFixed calls it when
// the last choice was for another size. Choosing may build c's
// hierarchy, which is collective over c.
func (c *Comm) chooseBcast(n int) (*algChoice, error) {
	s := coll.Situation{Ranks: len(c.group), Bytes: n, Fixed: true, SharedMemory: c.sharedMemoryNode()}
	h, err := c.hierFor(coll.CollBcast, s)
	if err != nil {
		return nil, err
	}
	ch := &algChoice{bytes: n, hier: h}
	if h == nil {
		ch.alg = coll.Select(coll.CollBcast, s)
	}
	c.bcChoice.Store(ch)
	return ch, nil
}

// chooseAllreduce chooses how c combines a vector of n bytes, elems
// elements of esz bytes each, with a commutative operation
// (allreduceVec), and remembers it in c.arChoice; allreduceVec calls it
// when the last choice was for another shape. Choosing may build c's
// hierarchy, which is collective over c.
func (c *Comm) chooseAllreduce(n, elems, esz int) (*vecChoice, error) {
	s := coll.Situation{Ranks: len(c.group), Bytes: n, Commutative: true, Fixed: true, Elems: elems, InProcess: c.inProcess()}
	h, err := c.hierFor(coll.CollAllreduce, s)
	if err != nil {
		return nil, err
	}
	ch := &vecChoice{bytes: n, elems: elems, hier: h}
	if h == nil && esz > 0 && n%esz == 0 {
		ch.alg = coll.Select(coll.CollAllreduce, s)
		if ch.alg == coll.AlgInProcess {
			// The ranks meet in memory; a long vector then goes by the
			// algorithm processes would use.
			s.InProcess = false
			ch.alg, ch.inProcess = coll.Select(coll.CollAllreduce, s), true
		}
		ch.rd = ch.alg == coll.AlgRecursiveDoubling
	}
	c.arChoice.Store(ch)
	return ch, nil
}

// meetsVectors reports whether a vector reduction of n bytes on c
// (root < 0: an allreduce) meets in memory, as reduceVec and
// allreduceVec decide: the road of combined values then meets too
// (meetCombine), asking with n 0, since its ranks' encoded values may
// differ in length (the default rules put no bound on in_process).
func (c *Comm) meetsVectors(root, n int) bool {
	if !c.inProcess() {
		return false
	}
	name := coll.CollAllreduce
	if root >= 0 {
		name = coll.CollReduce
	}
	return coll.Select(name, coll.Situation{Ranks: len(c.group), Bytes: n, Commutative: true, Fixed: true, InProcess: true}) == coll.AlgInProcess
}

// alltoallAlg returns the algorithm Select chooses for an alltoall of
// blk-byte blocks on c, remembering the last choice (no hierarchy).
func (c *Comm) alltoallAlg(blk int) string {
	ch := c.a2aChoice.Load()
	if ch == nil || ch.bytes != blk {
		ch = &algChoice{bytes: blk, alg: coll.Select(coll.CollAlltoall, coll.Situation{Ranks: len(c.group), Bytes: blk, Fixed: true})}
		c.a2aChoice.Store(ch)
	}
	return ch.alg
}

package mpi

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/coll"
)

// Node-aware (hierarchical) collectives.
//
// When a communicator spans several nodes and some node holds several of
// its ranks, Barrier, fixed-size Bcast, and Reduce and Allreduce of
// commutative operations over equal-length vectors run in two levels: the
// ranks of each node combine through the node's leader (its lowest rank in
// the communicator) over the node's fast transport, and only the leaders
// talk across nodes. Allreduce, for instance, is a reduce to the leader in
// each node, an allreduce among the leaders, and a broadcast in each node,
// so each node sends one vector over the network instead of one per rank.
//
// The per-node and leader communicators are made by the first blocking
// collective on the communicator that needs them, on every member alike
// (MPI has every member call collectives in the same order). A
// non-blocking collective uses them only if they already exist when it
// starts, which is again the same on every member. The selection table's
// "hierarchical" rule (first for allreduce, bcast and reduce;
// MPIGO_COLL_<NAME> can drop it) decides whether they are used.

// hierCache holds a communicator's hierarchy once it has been built.
type hierCache struct {
	mu   sync.Mutex
	done atomic.Bool
	h    *hierarchy // nil when the communicator is flat
}

// hierarchy is a communicator seen as nodes.
type hierarchy struct {
	local   *Comm // the members on this node, in the parent's order (leader = 0)
	leaders *Comm // one member per node, in order of node index; nil except on leaders
	nodeOf  []int // node index of each member
	lrank   []int // rank of each member in its node's local communicator
}

// snapshot returns the cache as it is now, for a non-blocking
// collective's view: a hierarchy not built yet stays unbuilt there.
func (hc *hierCache) snapshot() *hierCache {
	if hc == nil || hc.done.Load() {
		return hc
	}
	s := &hierCache{}
	s.done.Store(true)
	return s
}

// free releases the hierarchy's communicators.
func (hc *hierCache) free() {
	if hc == nil || !hc.done.Load() || hc.h == nil {
		return
	}
	hc.h.local.free()
	if hc.h.leaders != nil {
		hc.h.leaders.free()
	}
}

// hierarchy returns c's hierarchy, building it on first use (which is
// collective over c), or nil if c is flat: all of it on one node, or no
// two members on the same node.
func (c *Comm) hierarchy() (*hierarchy, error) {
	hc := c.hc
	if hc == nil || c.inter != nil || c.ext { // intercommunicators have their own collectives; other jobs' nodes are unknown
		return nil, nil
	}
	if hc.done.Load() {
		return hc.h, nil
	}
	if !c.p.multiNode {
		hc.done.Store(true)
		return nil, nil
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.done.Load() {
		return hc.h, nil
	}
	h, err := c.buildHierarchy()
	if err != nil {
		return nil, err
	}
	hc.h = h
	hc.done.Store(true)
	return h, nil
}

func (c *Comm) buildHierarchy() (*hierarchy, error) {
	var mine [8]byte
	binary.LittleEndian.PutUint64(mine[:], uint64(c.p.node))
	all, err := coll.Allgather(c.coll(), mine[:], c.collTag())
	if err != nil {
		return nil, fmt.Errorf("exchanging node identities: %w", err)
	}
	n := len(c.group)
	h := &hierarchy{nodeOf: make([]int, n), lrank: make([]int, n)}
	index := map[uint64]int{}
	var count, leader []int
	for r, b := range all {
		if len(b) != 8 {
			return nil, fmt.Errorf("bad node record of %d bytes from rank %d", len(b), r)
		}
		id := binary.LittleEndian.Uint64(b)
		k, ok := index[id]
		if !ok {
			k = len(count)
			index[id] = k
			count = append(count, 0)
			leader = append(leader, r)
		}
		h.nodeOf[r], h.lrank[r] = k, count[k]
		count[k]++
	}
	if len(count) == 1 || len(count) == n {
		return nil, nil // one node, or one member per node: nothing to gain
	}
	me := h.nodeOf[c.rank]
	if h.local, err = c.split(me, c.rank); err != nil {
		return nil, err
	}
	h.local.SetName(fmt.Sprintf("%s.node%d", c.name, me))
	color := Undefined
	if leader[me] == c.rank {
		color = 0
	}
	if h.leaders, err = c.split(color, c.rank); err != nil {
		return nil, err
	}
	if h.leaders != nil {
		h.leaders.SetName(c.name + ".leaders")
	}
	return h, nil
}

// hierFor returns c's hierarchy if the selection table picks the
// hierarchical algorithm for collective name in situation s.
func (c *Comm) hierFor(name string, s coll.Situation) (*hierarchy, error) {
	h, err := c.hierarchy()
	if err != nil || h == nil {
		return nil, err
	}
	s.Hier = true
	if coll.Select(name, s) != coll.AlgHierarchical {
		return nil, nil
	}
	return h, nil
}

// barrier is Barrier: within each node, among the leaders, and within
// each node again, so no rank leaves before every rank has arrived.
func (c *Comm) barrier() error {
	h, err := c.hierarchy()
	if err != nil {
		return err
	}
	tag := c.collTag()
	if h == nil && c.inProcess() {
		return c.barrierInProcess()
	}
	if h == nil {
		return coll.Barrier(c.coll(), tag)
	}
	if err := coll.Barrier(h.local.coll(), tag); err != nil {
		return err
	}
	if h.leaders != nil {
		if err := coll.Barrier(h.leaders.coll(), tag); err != nil {
			return err
		}
	}
	return coll.Barrier(h.local.coll(), tag+1)
}

// bcastFixed broadcasts buf, the same length on every rank, from root.
// Hierarchical: root's node first (reaching its leader), then the
// leaders, then every other node from its leader.
func (c *Comm) bcastFixed(cc *collCall, buf []byte, root int) error {
	// The last choice, if it was for this size (coll_choice.go).
	ch := c.bcChoice.Load()
	if ch == nil || ch.bytes != len(buf) {
		var err error
		if ch, err = c.chooseBcast(len(buf)); err != nil {
			return err
		}
	}
	h := ch.hier
	tag := c.collTag()
	if h == nil {
		return coll.BcastAlg(c.via(cc), ch.alg, buf, root, tag)
	}
	rootNode, mine := h.nodeOf[root], h.nodeOf[c.rank]
	if mine == rootNode && h.local.Size() > 1 {
		if err := coll.BcastAlg(h.local.via(cc), "", buf, h.lrank[root], tag); err != nil {
			return err
		}
	}
	if h.leaders != nil {
		if err := coll.BcastAlg(h.leaders.via(cc), "", buf, rootNode, tag+2); err != nil {
			return err
		}
	}
	if mine != rootNode && h.local.Size() > 1 {
		return coll.BcastAlg(h.local.via(cc), "", buf, 0, tag+4)
	}
	return nil
}

// allreduceVec combines src elementwise across c with the commutative op
// into buf; src nil means that buf holds the contribution (in place);
// scratch is as long as buf. Hierarchical: reduce to each node's leader,
// allreduce among the leaders, broadcast in each node.
func (c *Comm) allreduceVec(cc *collCall, src, buf, scratch []byte, esz int, op coll.VecOp) error {
	elems := 0
	if esz > 0 {
		elems = len(buf) / esz
	}
	// The last choice, if it was for this shape (coll_choice.go).
	ch := c.arChoice.Load()
	if ch == nil || ch.bytes != len(buf) || ch.elems != elems {
		var err error
		if ch, err = c.chooseAllreduce(len(buf), elems, esz); err != nil {
			return err
		}
	}
	h := ch.hier
	tag := c.collTag()
	if ch.inProcess && cc != nil {
		if done, err := c.reduceInProcess(cc, src, buf, scratch, esz, op, -1); done {
			return err
		}
	}
	if h == nil && ch.alg != "" && src != nil && !ch.rd {
		return coll.AllreduceVecChosenFrom(c.via(cc), ch.alg, src, buf, scratch, esz, op, tag)
	}
	if src != nil {
		copy(buf, src)
	}
	if h == nil {
		if ch.rd {
			// A direct call (not a stored func): op's closure stays on
			// the stack only if escape analysis can follow it.
			return coll.AllreduceVecRD(c.via(cc), buf, scratch, op, tag)
		}
		if ch.alg != "" {
			return coll.AllreduceVecChosen(c.via(cc), ch.alg, buf, scratch, esz, op, tag)
		}
		return coll.AllreduceVec(c.via(cc), "", buf, scratch, esz, op, tag)
	}
	if h.local.Size() > 1 {
		if err := coll.ReduceVec(h.local.via(cc), "", buf, scratch, esz, op, 0, tag); err != nil {
			return err
		}
	}
	if h.leaders != nil {
		if err := coll.AllreduceVec(h.leaders.via(cc), "", buf, scratch, esz, op, tag); err != nil {
			return err
		}
	}
	if h.local.Size() > 1 {
		return coll.BcastAlg(h.local.via(cc), "", buf, 0, tag+4)
	}
	return nil
}

// reduceVec combines buf elementwise into root's buf with the commutative
// op; other ranks' buf is clobbered. Hierarchical: reduce to each node's
// leader, reduce among the leaders to the leader of root's node, which
// hands the result to root if root is not itself.
func (c *Comm) reduceVec(cc *collCall, buf, scratch []byte, esz int, op coll.VecOp, root int) error {
	s := coll.Situation{Ranks: len(c.group), Bytes: len(buf), Commutative: true, Fixed: true, InProcess: c.inProcess()}
	if esz > 0 {
		s.Elems = len(buf) / esz
	}
	if s.InProcess && cc != nil && coll.Select(coll.CollReduce, s) == coll.AlgInProcess {
		// The ranks meet in memory (coll_meet.go); a long vector
		// may still go by messages once checked.
		if done, err := c.reduceInProcess(cc, nil, buf, scratch, esz, op, root); done {
			return err
		}
	}
	s.InProcess = false
	h, err := c.hierFor(coll.CollReduce, s)
	if err != nil {
		return err
	}
	tag := c.collTag()
	if h == nil {
		return coll.ReduceVec(c.via(cc), "", buf, scratch, esz, op, root, tag)
	}
	rootNode := h.nodeOf[root]
	if h.local.Size() > 1 {
		if err := coll.ReduceVec(h.local.via(cc), "", buf, scratch, esz, op, 0, tag); err != nil {
			return err
		}
	}
	if h.leaders != nil {
		if err := coll.ReduceVec(h.leaders.via(cc), "", buf, scratch, esz, op, rootNode, tag); err != nil {
			return err
		}
	}
	if lr := h.lrank[root]; lr != 0 && h.nodeOf[c.rank] == rootNode {
		switch h.local.rank {
		case 0:
			return h.local.via(cc).Send(buf, lr, tag+4)
		case lr:
			_, err := h.local.via(cc).Recv(buf, 0, tag+4)
			return err
		}
	}
	return nil
}

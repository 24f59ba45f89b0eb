package mpi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi/internal/checked"
	"github.com/mpigo/mpi/internal/coll"
)

// This file is the low-level collective layer: buffers with a count and a
// Datatype, shaped like the C API (MPI-3.1 chapter 5). Counts are in
// elements of the datatype; displacements (Gatherv, Scatterv, Allgatherv,
// Alltoallv) are in elements of the datatype too, and in bytes for
// Alltoallw, as in MPI; an element displacement steps by the datatype's
// extent. Every call takes any committed datatype, contiguous or not (see
// coll_noncontig.go), and the two sides may use different datatypes of the
// same type signature. Every call is collective: all ranks of c call it
// in the same order with matching arguments. Each has a non-blocking form
// (Ibarrier, Ibcast, ...) returning a *Request; the buffers must not be
// touched until it completes.

// InPlace, passed as the send buffer, makes a collective take its input
// from the receive buffer and leave the result there (MPI_IN_PLACE): for
// Gather(v) at root, root's block is already in place in recvbuf; for
// Scatter(v) at root, root's block stays in sendbuf and recvbuf is
// ignored; for Allgather(v), each rank's block is already in place; for
// Alltoall, recvbuf holds the blocks to send; for the reductions, recvbuf
// holds the input (Reduce: at root only). Only the identity of InPlace
// counts: do not modify or reslice it.
var InPlace = make([]byte, 0, 1)

func isInPlace(b []byte) bool {
	return cap(b) == cap(InPlace) && len(b) == 0 && unsafe.SliceData(b) == unsafe.SliceData(InPlace)
}

// Barrier blocks until every rank of c has called it (MPI_Barrier).
func (c *Comm) Barrier() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Barrier", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Barrier"); err != nil {
		return
	}
	defer c.exitColl()
	return barrierOf(c)
}

// Ibarrier starts a barrier (MPI_Ibarrier): the request completes once
// every rank has started it.
func (c *Comm) Ibarrier() (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ibarrier", c, Undefined, Undefined), &err)
	}
	return c.ibarrier()
}

// ibarrier is Ibarrier without the profiler hook, for the package's own use.
func (c *Comm) ibarrier() (*Request, error) {
	return c.startColl("Ibarrier", func(v *Comm) error { return Barrier(v) })
}

// Ibarrier is c.Ibarrier.
func Ibarrier(c *Comm) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ibarrier", c, Undefined, Undefined), &err)
	}
	return c.ibarrier()
}

func (c *Comm) argErr(op string, class error, format string, args ...any) error {
	return c.fail(op, class, loc{}, format, args...)
}

// lowOp checks a reduction's arguments and returns the bytes of count
// elements.
func (c *Comm) lowOp(name string, count int, dt *Datatype, op *ReduceOp) (int, error) {
	if err := c.intraOnly(name); err != nil {
		return 0, err
	}
	return c.lowOpArgs(name, count, dt, op)
}

// lowOpArgs is lowOp without the check of the communicator.
func (c *Comm) lowOpArgs(name string, count int, dt *Datatype, op *ReduceOp) (int, error) {
	if dt == nil {
		return 0, c.argErr(name, ErrType, "nil datatype")
	}
	if s := c.typeProblem(dt); s != "" {
		return 0, c.argErr(name, ErrType, "%s", s)
	}
	if count < 0 {
		return 0, c.argErr(name, ErrCount, "negative count %d", count)
	}
	if _, err := c.elemBytes(name, loc{}, count, dt); err != nil {
		return 0, err
	}
	if err := op.check(dt); err != nil {
		return 0, c.argErr(name, ErrOp, "%v", err)
	}
	n, ok := countBytes(count, dt.block())
	if !ok {
		return 0, c.argErr(name, ErrCount, "%d elements of %s overflow an int", count, dt.name)
	}
	return n, nil
}

// need checks that buf holds n bytes.
func (c *Comm) need(name, what string, buf []byte, n int) error {
	if len(buf) < n {
		return c.argErr(name, ErrBuffer, "%s has %d bytes, %d needed", what, len(buf), n)
	}
	return nil
}

// Bcast copies count elements of dt from root's buf into buf on every
// rank (MPI_Bcast). The algorithm (binomial tree or scatter+allgather)
// is chosen by size; see docs/collectives.md.
func (c *Comm) Bcast(buf []byte, count int, dt *Datatype, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Bcast", c, root, Undefined), &err)
	}
	return c.bcastBuf("Bcast", buf, count, dt, root)
}

// bcastBuf is Bcast for the call named op (BcastView's too).
func (c *Comm) bcastBuf(op string, buf []byte, count int, dt *Datatype, root int) error {
	if err := c.enterColl(op); err != nil {
		return err
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interBcastBuf(buf, count, dt, root)
	}
	if err := c.checkRoot(op, root); err != nil {
		return err
	}
	b, sp, err := c.collBuf(op, buf, count, dt, c.rank == root)
	if err != nil {
		return err
	}
	if c.mixed() {
		return c.hetLowBcast(buf, b, sp, count, dt, root) // hetero_coll.go
	}
	cc := c.lowCall(lowSig(dt, count), true).atRoot(root)
	if err := cc.done(op, c.bcastFixed(cc, b, root)); err != nil {
		return err
	}
	if sp != nil && c.rank != root {
		sp.unpack(b)
	}
	return nil
}

// Ibcast starts a Bcast (MPI_Ibcast).
func (c *Comm) Ibcast(buf []byte, count int, dt *Datatype, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ibcast", c, root, Undefined), &err)
	}
	return c.startColl("Ibcast", func(v *Comm) error { return v.Bcast(buf, count, dt, root) })
}

// blockRanges returns the byte ranges of the blocks of counts[i] elements
// of size bytes at element displacements displs (nil: packed in rank
// order), and the first block whose range overflows an int (-1: none).
func blockRanges(counts, displs []int, size int, scratch []int) (lo, hi []int, bad int) {
	n := len(counts)
	both := scratch
	if cap(both) < 2*n {
		both = make([]int, 2*n)
	}
	lo, hi = both[:n:n], both[n:2*n:2*n]
	off, elems := 0, false
	for i, n := range counts {
		if displs != nil {
			if n == 0 {
				// An empty block may lie anywhere, past the buffer's end
				// too (MPI puts no bound on its displacement): nothing is
				// read or written there.
				lo[i], hi[i] = 0, 0
				continue
			}
			off, elems = displs[i], true
		}
		var ok bool
		if lo[i], hi[i], ok = blockSpan(off, n, size, elems); !ok {
			return nil, nil, i
		}
		off, elems = hi[i], false
	}
	return lo, hi, -1
}

// rangesOnStack is the room a blocking collective keeps on its stack
// for the block ranges of checkV: those of up to 8 ranks, so that a
// low-level Gather, Scatter or Allgather of a few ranks allocates none.
const rangesOnStack = 16

func fill(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// Gather collects sendcount elements of sendtype from every rank into
// root's recvbuf, rank i's at element i·recvcount (MPI_Gather). recvbuf,
// recvcount and recvtype matter only at root. sendbuf may be InPlace at
// root.
func (c *Comm) Gather(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Gather", c, root, Undefined), &err)
	}
	if err = c.enterColl("Gather"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interGathervBuf("Gather", sendbuf, sendcount, sendtype, recvbuf, fill(c.members(), recvcount), nil, recvtype, root)
	}
	return c.gatherv("Gather", sendbuf, sendcount, sendtype, recvbuf, fill(c.members(), recvcount), nil, recvtype, root)
}

// Gatherv is Gather with a count and a displacement (in elements) per
// rank (MPI_Gatherv).
func (c *Comm) Gatherv(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Gatherv", c, root, Undefined), &err)
	}
	if err = c.enterColl("Gatherv"); err != nil {
		return
	}
	defer c.exitColl()
	return c.gatherv("Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root)
}

func (c *Comm) gatherv(name string, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, root int) error {
	if c.IsInter() {
		return c.interGathervBuf(name, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root)
	}
	if err := c.checkRoot(name, root); err != nil {
		return err
	}
	if c.mixed() {
		return c.hetGatherv(name, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root) // hetero_collv.go
	}
	var rb []byte
	var lo, hi []int
	var st *vStage
	var err error
	var ranges [rangesOnStack]int
	inPlace := c.rank == root && isInPlace(sendbuf)
	if c.rank == root {
		if rb, lo, hi, st, err = c.checkV(name, "receive", recvbuf, recvcounts, displs, recvtype, ranges[:]); err != nil {
			return err
		}
	}
	var sb []byte
	if inPlace {
		if st != nil {
			st.pack(root)
		}
		sb = rb[lo[root]:hi[root]]
	} else if sb, _, err = c.collBuf(name, sendbuf, sendcount, sendtype, true); err != nil {
		return err
	}
	// Gather checks whole signatures (every block has recvcount
	// elements); Gatherv the types' units, and the lengths below.
	full := name == "Gather"
	var cc *collCall
	switch {
	case c.rank != root && full:
		cc = c.lowCall(lowSig(sendtype, sendcount), true).atRoot(root)
	case c.rank != root:
		cc = c.lowCall(lowUnitSig(sendtype), false).atRoot(root)
	case full:
		cc = c.lowCall(lowSig(recvtype, recvcounts[root]), true).atRoot(root)
	default:
		cc = c.lowCall(lowUnitSig(recvtype), false).atRoot(root)
	}
	if c.rank == root && !inPlace {
		cc.checkOwn(recvtype, recvcounts[root], sendtype, sendcount, "its receive block")
	}
	if full {
		return c.gatherFixed(cc, name, sb, rb, lo, hi, st, recvcounts, recvtype, root, inPlace)
	}
	parts, err := coll.Gather(c.via(cc), sb, root, c.collTag())
	if err := cc.done(name, err); err != nil {
		return err
	}
	if c.rank != root {
		return nil
	}
	for i, b := range parts {
		if len(b) != hi[i]-lo[i] {
			return c.blockErr(name, fmt.Sprintf("rank %d", i), len(b), fmt.Sprintf("recvcounts[%d]", i), recvcounts[i], recvtype)
		}
		if i != root || !inPlace {
			copy(rb[lo[i]:hi[i]], b)
			if st != nil {
				st.unpack(i)
			}
		}
	}
	return nil
}

// gatherFixed is gatherv for Gather, whose blocks all have one length:
// the tree without block headers (coll.GatherFixed), straight into the
// receive buffer at root (rb, the blocks lo[i]:hi[i] in rank order; the
// staging buffer if st is not nil), with no allocation for two ranks.
// sb is this rank's block; cc is done here.
func (c *Comm) gatherFixed(cc *collCall, name string, sb, rb []byte, lo, hi []int, st *vStage, recvcounts []int, recvtype *Datatype, root int, inPlace bool) error {
	var out []byte
	own := len(sb)
	direct := true // out is rb
	if c.rank == root {
		n := hi[root] - lo[root]
		if own != n {
			// This rank's own arguments disagree (a Packed type, which
			// the signatures let through): a block of the length the
			// others send, and the error after the call, as before.
			sb = make([]byte, n)
		}
		if inOrder(lo, hi, n) {
			out = rb[:len(c.group)*n]
		} else {
			out, direct = make([]byte, len(c.group)*n), false // (checkV makes them in order)
		}
	}
	if err := cc.done(name, coll.GatherFixed(c.via(cc), sb, out, root, c.collTag())); err != nil {
		return err
	}
	if c.rank != root {
		return nil
	}
	n := hi[root] - lo[root]
	if own != n {
		return c.blockErr(name, fmt.Sprintf("rank %d", root), own, fmt.Sprintf("recvcounts[%d]", root), recvcounts[root], recvtype)
	}
	for i := range lo {
		if i == root && inPlace {
			continue
		}
		if !direct {
			copy(rb[lo[i]:hi[i]], out[i*n:(i+1)*n])
		}
		if st != nil {
			st.unpack(i)
		}
	}
	return nil
}

// Igather starts a Gather (MPI_Igather).
func (c *Comm) Igather(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Igather", c, root, Undefined), &err)
	}
	return c.startColl("Igather", func(v *Comm) error {
		return v.Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)
	})
}

// Igatherv starts a Gatherv (MPI_Igatherv).
func (c *Comm) Igatherv(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Igatherv", c, root, Undefined), &err)
	}
	return c.startColl("Igatherv", func(v *Comm) error {
		return v.Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root)
	})
}

// Scatter sends block i (sendcount elements at element i·sendcount) of
// root's sendbuf to rank i, into recvbuf (MPI_Scatter). sendbuf,
// sendcount and sendtype matter only at root; recvbuf may be InPlace at
// root.
func (c *Comm) Scatter(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Scatter", c, root, Undefined), &err)
	}
	if err = c.enterColl("Scatter"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interScattervBuf("Scatter", sendbuf, fill(c.members(), sendcount), nil, sendtype, recvbuf, recvcount, recvtype, root)
	}
	return c.scatterv("Scatter", sendbuf, fill(c.members(), sendcount), nil, sendtype, recvbuf, recvcount, recvtype, root)
}

// Scatterv is Scatter with a count and a displacement (in elements) per
// rank (MPI_Scatterv).
func (c *Comm) Scatterv(sendbuf []byte, sendcounts, displs []int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Scatterv", c, root, Undefined), &err)
	}
	if err = c.enterColl("Scatterv"); err != nil {
		return
	}
	defer c.exitColl()
	return c.scatterv("Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root)
}

func (c *Comm) scatterv(name string, sendbuf []byte, sendcounts, displs []int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) error {
	if c.IsInter() {
		return c.interScattervBuf(name, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root)
	}
	if err := c.checkRoot(name, root); err != nil {
		return err
	}
	if c.mixed() {
		return c.hetScatterv(name, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root) // hetero_collv.go
	}
	inPlace := c.rank == root && isInPlace(recvbuf)
	var rb []byte
	var rsp *dspan
	var err error
	if !inPlace {
		if rb, rsp, err = c.collBuf(name, recvbuf, recvcount, recvtype, false); err != nil {
			return err
		}
	}
	var parts [][]byte
	full := name == "Scatter"
	var in []byte // Scatter at root: the blocks in rank order, n bytes each
	n := len(rb)  // Scatter: the length of every block
	if c.rank == root {
		var ranges [rangesOnStack]int
		sb, lo, hi, st, err := c.checkV(name, "send", sendbuf, sendcounts, displs, sendtype, ranges[:])
		if err != nil {
			return err
		}
		for i := range lo {
			if st != nil && (i != root || !inPlace) {
				st.pack(i)
			}
		}
		switch {
		case !full:
			parts = make([][]byte, len(lo))
			for i := range lo {
				parts[i] = sb[lo[i]:hi[i]]
			}
		case inOrder(lo, hi, hi[root]-lo[root]):
			n = hi[root] - lo[root]
			in = sb[:len(lo)*n]
		default: // (checkV makes them in order)
			n = hi[root] - lo[root]
			for i := range lo {
				in = append(in, sb[lo[i]:hi[i]]...)
			}
		}
	}
	var cc *collCall
	switch {
	case c.rank == root && full:
		cc = c.lowCall(lowSig(sendtype, sendcounts[root]), true).atRoot(root)
	case c.rank == root:
		cc = c.lowCall(lowUnitSig(sendtype), false).atRoot(root)
	case full:
		cc = c.lowCall(lowSig(recvtype, recvcount), true).atRoot(root)
	default:
		cc = c.lowCall(lowUnitSig(recvtype), false).atRoot(root)
	}
	if c.rank == root && !inPlace {
		cc.checkOwn(sendtype, sendcounts[root], recvtype, recvcount, "its send block")
	}
	if full {
		// Every block has one length: the tree without block headers
		// (coll.ScatterFixed), straight into the receive buffer.
		out := rb
		switch {
		case inPlace:
			out = in[root*n : (root+1)*n]
		case len(rb) != n:
			out = make([]byte, n) // the root's own arguments disagree: the error below
		}
		if err := cc.done(name, coll.ScatterFixed(c.via(cc), in, out, root, c.collTag())); err != nil {
			return err
		}
		if inPlace {
			return nil
		}
		if len(rb) != n {
			return c.blockErr(name, "the root", n, "recvcount", recvcount, recvtype)
		}
		if rsp != nil {
			rsp.unpack(rb)
		}
		return nil
	}
	got, err := coll.Scatter(c.via(cc), parts, root, c.collTag())
	if err := cc.done(name, err); err != nil {
		return err
	}
	if inPlace {
		return nil
	}
	if len(got) != len(rb) {
		return c.blockErr(name, "the root", len(got), "recvcount", recvcount, recvtype)
	}
	copy(rb, got)
	if rsp != nil {
		rsp.unpack(rb)
	}
	return nil
}

// Iscatter starts a Scatter (MPI_Iscatter).
func (c *Comm) Iscatter(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iscatter", c, root, Undefined), &err)
	}
	return c.startColl("Iscatter", func(v *Comm) error {
		return v.Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)
	})
}

// Iscatterv starts a Scatterv (MPI_Iscatterv).
func (c *Comm) Iscatterv(sendbuf []byte, sendcounts, displs []int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iscatterv", c, root, Undefined), &err)
	}
	return c.startColl("Iscatterv", func(v *Comm) error {
		return v.Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root)
	})
}

// Allgather collects sendcount elements from every rank into recvbuf on
// every rank, rank i's at element i·recvcount (MPI_Allgather). sendbuf may
// be InPlace. The algorithm (Bruck, recursive doubling or ring) is chosen
// by size.
func (c *Comm) Allgather(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Allgather", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Allgather"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interAllgathervBuf("Allgather", sendbuf, sendcount, sendtype, recvbuf, fill(c.members(), recvcount), nil, recvtype)
	}
	return c.allgatherv("Allgather", sendbuf, sendcount, sendtype, recvbuf, fill(c.members(), recvcount), nil, recvtype)
}

// Allgatherv is Allgather with a count and a displacement (in elements)
// per rank (MPI_Allgatherv).
func (c *Comm) Allgatherv(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Allgatherv", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Allgatherv"); err != nil {
		return
	}
	defer c.exitColl()
	return c.allgatherv("Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)
}

func (c *Comm) allgatherv(name string, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) error {
	if c.IsInter() {
		return c.interAllgathervBuf(name, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)
	}
	if err := c.intraOnly(name); err != nil {
		return err
	}
	if c.mixed() {
		return c.hetAllgatherv(name, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype) // hetero_collv.go
	}
	var ranges [rangesOnStack]int
	rb, lo, hi, st, err := c.checkV(name, "receive", recvbuf, recvcounts, displs, recvtype, ranges[:])
	if err != nil {
		return err
	}
	r, p := c.rank, len(c.group)
	inPlace := isInPlace(sendbuf)
	// Allgather: every rank's blocks have one signature; Allgatherv: the
	// ranks must agree about every count (mixSig).
	var cc *collCall
	if name == "Allgather" {
		cc = c.lowCall(lowSig(recvtype, recvcounts[r]), true)
	} else {
		cc = c.lowCall(mixSig(recvtype, recvcounts), true)
		cc.mixed = true
	}
	if !inPlace {
		sb, _, err := c.collBuf(name, sendbuf, sendcount, sendtype, true)
		if err != nil {
			cc.done(name, nil)
			return err
		}
		cc.checkOwn(recvtype, recvcounts[r], sendtype, sendcount, "its receive block")
		if len(sb) == hi[r]-lo[r] {
			copy(rb[lo[r]:hi[r]], sb)
		}
	} else if st != nil {
		st.pack(r)
	}
	if c.inProcess() {
		// Among goroutine ranks that publish, every allgather counts as
		// a meeting (allgatherInProcess): a short one of contiguous
		// blocks in rank order is copied from the publications; any
		// other publishes that it goes by messages, and so then do the
		// others, where the signatures tell every rank of a mismatch.
		n := hi[r] - lo[r]
		if name == "Allgather" && st == nil && !cc.bad && n <= meetInline && inOrder(lo, hi, n) {
			if done, err := c.allgatherInProcess(cc, rb[lo[r]:hi[r]], rb, false); done {
				return cc.done(name, err)
			}
		} else {
			c.allgatherInProcess(cc, nil, nil, true)
		}
	}
	if st != nil { // the staged blocks are packed in rank order
		if err := cc.done(name, coll.AllgathervBuf(c.via(cc), "", rb, append([]int{0}, hi...), c.collTag())); err != nil {
			return err
		}
		for i := range p {
			if i != r || !inPlace {
				st.unpack(i)
			}
		}
		return nil
	}
	// Blocks packed in rank order: gather straight into recvbuf.
	offs := make([]int, p+1)
	packed := true
	for i := range p {
		offs[i+1] = hi[i]
		packed = packed && lo[i] == offs[i]
	}
	if packed {
		return cc.done(name, coll.AllgathervBuf(c.via(cc), "", recvbuf[:offs[p]], offs, c.collTag()))
	}
	for i := range p {
		offs[i+1] = offs[i] + hi[i] - lo[i]
	}
	tmp := make([]byte, offs[p])
	copy(tmp[offs[r]:], recvbuf[lo[r]:hi[r]])
	if err := cc.done(name, coll.AllgathervBuf(c.via(cc), "", tmp, offs, c.collTag())); err != nil {
		return err
	}
	for i := range p {
		copy(recvbuf[lo[i]:hi[i]], tmp[offs[i]:offs[i+1]])
	}
	return nil
}

// inOrder reports whether the blocks lo[i]:hi[i] are n bytes each, one
// after the other from byte 0 in rank order.
func inOrder(lo, hi []int, n int) bool {
	for i := range lo {
		if lo[i] != i*n || hi[i] != (i+1)*n {
			return false
		}
	}
	return true
}

// Iallgather starts an Allgather (MPI_Iallgather).
func (c *Comm) Iallgather(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iallgather", c, Undefined, Undefined), &err)
	}
	return c.startColl("Iallgather", func(v *Comm) error {
		return v.Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// Iallgatherv starts an Allgatherv (MPI_Iallgatherv).
func (c *Comm) Iallgatherv(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iallgatherv", c, Undefined, Undefined), &err)
	}
	return c.startColl("Iallgatherv", func(v *Comm) error {
		return v.Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)
	})
}

// Alltoall sends block j (sendcount elements at element j·sendcount) of
// sendbuf to rank j and receives rank j's block into block j of recvbuf
// (MPI_Alltoall). sendbuf may be InPlace. The algorithm (Bruck, scattered
// or pairwise) is chosen by block size.
func (c *Comm) Alltoall(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Alltoall", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Alltoall"); err != nil {
		return
	}
	defer c.exitColl()
	const name = "Alltoall"
	if c.IsInter() {
		return c.interAlltoallBuf(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	}
	if err := c.check(name); err != nil {
		return err
	}
	p := len(c.group)
	if c.mixed() {
		return c.hetAlltoallw(name, sendbuf, fill(p, sendcount), steps(p, sendcount), sameTypes(sendtype, p),
			recvbuf, fill(p, recvcount), steps(p, recvcount), sameTypes(recvtype, p), true) // hetero_collv.go
	}
	rn, err := c.mulCount(name, p, recvcount)
	if err != nil {
		return err
	}
	inPlace := isInPlace(sendbuf)
	rb, rsp, err := c.collBuf(name, recvbuf, rn, recvtype, inPlace)
	if err != nil {
		return err
	}
	var sb []byte
	if inPlace {
		sb = append([]byte(nil), rb...)
	} else if sn, err := c.mulCount(name, p, sendcount); err != nil {
		return err
	} else if sb, _, err = c.collBuf(name, sendbuf, sn, sendtype, true); err != nil {
		return err
	}
	cc := c.lowCall(lowSig(recvtype, recvcount), true)
	if !inPlace {
		cc.checkOwn(recvtype, recvcount, sendtype, sendcount, "its receive blocks")
	}
	if len(sb) != len(rb) {
		// The call is spoiled (checkOwn): take part with blocks of
		// the receive size, so that no rank waits for this one.
		sb = make([]byte, len(rb))
	}
	blk := len(rb) / max(p, 1)
	if err := cc.done(name, coll.AlltoallBuf(c.via(cc), c.alltoallAlg(blk), sb, rb, blk, c.collTag())); err != nil {
		return err
	}
	if rsp != nil {
		rsp.unpack(rb)
	}
	return nil
}

// Ialltoall starts an Alltoall (MPI_Ialltoall).
func (c *Comm) Ialltoall(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ialltoall", c, Undefined, Undefined), &err)
	}
	return c.startColl("Ialltoall", func(v *Comm) error {
		return v.Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// Alltoallv is Alltoall with a count and a displacement (in elements) per
// peer on both sides (MPI_Alltoallv).
func (c *Comm) Alltoallv(sendbuf []byte, sendcounts, sdispls []int, sendtype *Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Alltoallv", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Alltoallv"); err != nil {
		return
	}
	defer c.exitColl()
	p := c.members()
	st, rt := make([]*Datatype, p), make([]*Datatype, p)
	for i := range st {
		st[i], rt[i] = sendtype, recvtype
	}
	return c.alltoallw("Alltoallv", sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt, true)
}

// Alltoallw is Alltoallv with a datatype per peer and displacements in
// bytes (MPI_Alltoallw).
func (c *Comm) Alltoallw(sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Alltoallw", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Alltoallw"); err != nil {
		return
	}
	defer c.exitColl()
	return c.alltoallw("Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, false)
}

func (c *Comm) alltoallw(name string, sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype, elemDispl bool) error {
	if err := c.check(name); err != nil {
		return err
	}
	p := len(c.group)
	if c.inter == nil && c.mixed() {
		return c.hetAlltoallw(name, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, elemDispl) // hetero_collv.go
	}
	inPlace := isInPlace(sendbuf)
	// blocks returns the blocks of buf, each as contiguous bytes: the
	// buffer's own for a contiguous datatype, else a staging buffer of its
	// packed elements (packed from buf if pack is set) whose place in buf
	// is spans[i]. Displacements are bytes, or (elemDispl) extents of the
	// block's datatype.
	blocks := func(what string, buf []byte, counts, displs []int, types []*Datatype, pack bool) (parts [][]byte, spans []*dspan, err error) {
		if len(counts) != p || len(displs) != p || len(types) != p {
			return nil, nil, c.argErr(name, ErrCount, "%s: %d counts, %d displacements, %d types for %d ranks", what, len(counts), len(displs), len(types), p)
		}
		if isBottom(buf) {
			return nil, nil, c.argErr(name, ErrBuffer, "collectives do not take Bottom: pass the buffer")
		}
		parts, spans = make([][]byte, p), make([]*dspan, p)
		for i := range p {
			dt := types[i]
			if dt == nil {
				return nil, nil, c.argErr(name, ErrType, "%s: nil datatype for rank %d", what, i)
			}
			if s := c.typeProblem(dt); s != "" {
				return nil, nil, c.argErr(name, ErrType, "%s datatype for rank %d: %s", what, i, s)
			}
			if counts[i] < 0 || displs[i] < 0 {
				return nil, nil, c.argErr(name, ErrCount, "%s: negative count or displacement for rank %d", what, i)
			}
			org := displs[i]
			if elemDispl {
				if org = scaleDispl(org, int(dt.t.Extent())); org == displOverflow {
					return nil, nil, c.argErr(name, ErrCount, "%s: the block of rank %d (displacement %d of %s) lies beyond any buffer", what, i, displs[i], dt.name)
				}
			}
			if counts[i] == 0 {
				parts[i] = buf[:0:0] // an empty block may lie anywhere (blockRanges)
				continue
			}
			if b := dt.block(); b > 0 {
				n, ok := countBytes(counts[i], b)
				if ok {
					_, ok = checked.Add(org, n)
				}
				if !ok {
					return nil, nil, c.argErr(name, ErrCount, "%s: the block of rank %d (%d elements of %s) overflows an int", what, i, counts[i], dt.name)
				}
				if org > len(buf) || n > len(buf)-org {
					return nil, nil, c.argErr(name, ErrBuffer, "%s block %d (%d elements of %s at byte %d) does not fit the %d-byte buffer", what, i, counts[i], dt.name, org, len(buf))
				}
				parts[i] = buf[org : org+n]
				continue
			}
			n, ok := countBytes(counts[i], dt.size)
			if !ok {
				return nil, nil, c.argErr(name, ErrCount, "%s: the block of rank %d (%d elements of %s) overflows an int", what, i, counts[i], dt.name)
			}
			if s := dt.spanAt(org, counts[i], len(buf)); s != "" {
				return nil, nil, c.argErr(name, ErrBuffer, "%s block %d: %s", what, i, s)
			}
			spans[i] = &dspan{buf: buf, org: org, count: counts[i], dt: dt}
			parts[i] = make([]byte, n)
			if pack {
				spans[i].pack(parts[i])
			}
		}
		return parts, spans, nil
	}
	// The receive blocks are checked first; with InPlace they are also
	// what is sent.
	rparts, rspans, err := blocks("receive", recvbuf, recvcounts, rdispls, recvtypes, inPlace)
	if err != nil {
		return err
	}
	var parts [][]byte
	if inPlace { // the received blocks overwrite recvbuf: send copies
		parts = make([][]byte, p)
		for i, b := range rparts {
			if parts[i] = b; rspans[i] == nil {
				parts[i] = append([]byte(nil), b...)
			}
		}
	} else if parts, _, err = blocks("send", sendbuf, sendcounts, sdispls, sendtypes, true); err != nil {
		return err
	}
	var got [][]byte
	if c.inter != nil && inPlace {
		return c.argErr(name, ErrBuffer, "InPlace is not allowed on an intercommunicator")
	}
	// Every pair of ranks checks the signature of its own block.
	cc := c.lowCall(perPeerSig, true)
	cc.sendTo, cc.recvOf = make([]uint64, p), make([]uint64, p)
	for i := range p {
		cc.recvOf[i] = lowSig(recvtypes[i], recvcounts[i])
		if inPlace {
			cc.sendTo[i] = cc.recvOf[i]
		} else {
			cc.sendTo[i] = lowSig(sendtypes[i], sendcounts[i])
		}
	}
	if c.inter != nil {
		// p is the remote group's size: blocks go to and come from it.
		// Each is converted below, by its own datatype.
		got, err = c.interAlltoall(cc, name, parts, nil)
		for i := range got {
			if err == nil {
				got[i], err = c.hetFix(got[i], i, formConv(recvtypes[i], rspans[i] != nil)) // hetero_coll.go
			}
		}
	} else {
		// Contiguous blocks are received where they go (with InPlace
		// too: what is sent are copies).
		into := make([][]byte, p)
		for i := range p {
			if rspans[i] == nil {
				into[i] = rparts[i]
			}
		}
		got, err = coll.AlltoallInto(c.via(cc), parts, into, c.collTag())
		err = cc.done(name, err)
	}
	if err != nil {
		return err
	}
	for i, b := range got {
		n := recvcounts[i] * recvtypes[i].size
		if len(b) != n {
			return c.blockErr(name, fmt.Sprintf("rank %d", i), len(b), fmt.Sprintf("recvcounts[%d]", i), recvcounts[i], recvtypes[i])
		}
		if rspans[i] != nil {
			rspans[i].unpack(b)
		} else if len(b) > 0 && &b[0] != &rparts[i][0] {
			copy(rparts[i], b)
		}
	}
	return nil
}

// Ialltoallv starts an Alltoallv (MPI_Ialltoallv).
func (c *Comm) Ialltoallv(sendbuf []byte, sendcounts, sdispls []int, sendtype *Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ialltoallv", c, Undefined, Undefined), &err)
	}
	return c.startColl("Ialltoallv", func(v *Comm) error {
		return v.Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype)
	})
}

// Ialltoallw starts an Alltoallw (MPI_Ialltoallw).
func (c *Comm) Ialltoallw(sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ialltoallw", c, Undefined, Undefined), &err)
	}
	return c.startColl("Ialltoallw", func(v *Comm) error {
		return v.Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)
	})
}

// input returns the reduction input: sendbuf, or recvbuf when sendbuf is
// InPlace.
func (c *Comm) input(name string, sendbuf, recvbuf []byte, n int) ([]byte, error) {
	if isInPlace(sendbuf) {
		if err := c.need(name, "recvbuf", recvbuf, n); err != nil {
			return nil, err
		}
		return recvbuf[:n], nil
	}
	if err := c.need(name, "sendbuf", sendbuf, n); err != nil {
		return nil, err
	}
	return sendbuf[:n], nil
}

// Reduce combines count elements of dt from every rank with op into
// root's recvbuf (MPI_Reduce); recvbuf matters only at root. sendbuf may
// be InPlace at root. Non-commutative operations are applied in rank
// order.
func (c *Comm) Reduce(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Reduce", c, root, Undefined), &err)
	}
	const name = "Reduce"
	if dt != nil && dt.block() == 0 {
		sendCount, recvCount := count, -1
		if c.IsInter() {
			if root < 0 { // Root and the rest of its group send nothing
				sendbuf, sendCount = nil, -1
			}
			if root == Root {
				recvCount = count
			}
		} else if c.rank == root {
			recvCount = count
		}
		pdt, sb, rb, rsp, err := c.stageReduction(name, sendbuf, sendCount, recvbuf, recvCount, dt)
		if err != nil {
			return err
		}
		if err := c.Reduce(sb, rb, count, pdt, op, root); err != nil {
			return err
		}
		if rsp != nil {
			rsp.unpackResult(rb)
		}
		return nil
	}
	// Not before the staging above, which calls this again on c.
	if err = c.enterColl("Reduce"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interReduceBuf(name, sendbuf, recvbuf, count, dt, op, root, false)
	}
	n, err := c.lowOp(name, count, dt, op)
	if err != nil {
		return err
	}
	if err := c.checkRoot(name, root); err != nil {
		return err
	}
	var in []byte
	if c.rank == root {
		if err := c.need(name, "recvbuf", recvbuf, n); err != nil {
			return err
		}
		in, err = c.input(name, sendbuf, recvbuf, n)
	} else {
		err = c.need(name, "sendbuf", sendbuf, n)
		in = sendbuf[:min(n, len(sendbuf))]
	}
	if err != nil {
		return err
	}
	if c.mixed() {
		return c.hetLowReduce(name, in[:n], recvbuf, dt, op, root, false) // hetero_coll.go
	}
	cc := c.lowCall(lowSig(dt, count), true).atRoot(root)
	if op.commutative { // in place, binomial, nothing allocated
		sp := getScratch(2 * n)
		defer putScratch(sp)
		work, scratch := (*sp)[:n], (*sp)[n:2*n]
		if c.rank == root {
			work = recvbuf[:n]
		}
		copy(work, in)
		f, _ := op.vec(dt)
		return cc.done(name, c.reduceVec(cc, work, scratch, dt.block(), f, root))
	}
	f, _ := op.combine(dt)
	res, err := coll.Reduce(c.via(cc), in, cc.combine(f), op.commutative, root, c.collTag())
	if err := cc.done(name, err); err != nil {
		return err
	}
	if c.rank == root {
		copy(recvbuf[:n], res)
	}
	return nil
}

// Ireduce starts a Reduce (MPI_Ireduce).
func (c *Comm) Ireduce(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, root int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ireduce", c, root, Undefined), &err)
	}
	return c.startColl("Ireduce", func(v *Comm) error { return v.Reduce(sendbuf, recvbuf, count, dt, op, root) })
}

// Allreduce combines count elements of dt from every rank with op into
// recvbuf on every rank (MPI_Allreduce). sendbuf may be InPlace. For
// commutative operations the algorithm (recursive doubling, Rabenseifner,
// ring) is chosen by size and runs in recvbuf; others are reduced in rank
// order and broadcast.
func (c *Comm) Allreduce(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Allreduce", c, Undefined, Undefined), &err)
	}
	const name = "Allreduce"
	if dt != nil && dt.block() == 0 {
		pdt, sb, rb, rsp, err := c.stageReduction(name, sendbuf, count, recvbuf, count, dt)
		if err != nil {
			return err
		}
		if err := c.Allreduce(sb, rb, count, pdt, op); err != nil {
			return err
		}
		rsp.unpackResult(rb)
		return nil
	}
	// Not before the staging above, which calls this again on c.
	if err = c.enterColl("Allreduce"); err != nil {
		return
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interReduceBuf(name, sendbuf, recvbuf, count, dt, op, 0, true)
	}
	n, err := c.lowOp(name, count, dt, op)
	if err != nil {
		return err
	}
	if err := c.need(name, "recvbuf", recvbuf, n); err != nil {
		return err
	}
	in, err := c.input(name, sendbuf, recvbuf, n)
	if err != nil {
		return err
	}
	out := recvbuf[:n]
	if c.mixed() {
		return c.hetLowReduce(name, in[:n], out, dt, op, 0, true) // hetero_coll.go
	}
	cc := c.lowCall(lowSig(dt, count), true)
	if op.commutative {
		f, _ := op.vec(dt)
		sp := getScratch(n)
		defer putScratch(sp)
		return cc.done(name, c.allreduceVec(cc, in[:n], out, (*sp)[:n], dt.block(), f))
	}
	f, _ := op.combine(dt)
	res, err := coll.Allreduce(c.via(cc), in, cc.combine(f), false, c.collTag())
	if err := cc.done(name, err); err != nil {
		return err
	}
	copy(out, res)
	return nil
}

// Iallreduce starts an Allreduce (MPI_Iallreduce).
func (c *Comm) Iallreduce(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iallreduce", c, Undefined, Undefined), &err)
	}
	return c.startColl("Iallreduce", func(v *Comm) error { return v.Allreduce(sendbuf, recvbuf, count, dt, op) })
}

// ReduceScatterBlock combines p·recvcount elements of dt from every rank
// with op and leaves block i (recvcount elements) of the result in rank
// i's recvbuf (MPI_Reduce_scatter_block). With sendbuf InPlace, recvbuf
// holds the whole input and gets the result in its first block.
func (c *Comm) ReduceScatterBlock(sendbuf, recvbuf []byte, recvcount int, dt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ReduceScatterBlock", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("ReduceScatterBlock"); err != nil {
		return
	}
	defer c.exitColl()
	if recvcount < 0 {
		return c.argErr("ReduceScatterBlock", ErrCount, "negative count %d", recvcount)
	}
	return c.reduceScatter("ReduceScatterBlock", sendbuf, recvbuf, fill(c.Size(), recvcount), dt, op)
}

// ReduceScatter combines Σ recvcounts elements of dt from every rank with
// op and leaves block i (recvcounts[i] elements, in order) of the result
// in rank i's recvbuf (MPI_Reduce_scatter). With sendbuf InPlace, recvbuf
// holds the whole input and gets the result at its start. Commutative
// operations use recursive halving; others a reduce in rank order and a
// scatter.
func (c *Comm) ReduceScatter(sendbuf, recvbuf []byte, recvcounts []int, dt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.ReduceScatter", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("ReduceScatter"); err != nil {
		return
	}
	defer c.exitColl()
	return c.reduceScatter("ReduceScatter", sendbuf, recvbuf, recvcounts, dt, op)
}

// countSum returns the sum of counts, refusing a negative one.
func (c *Comm) countSum(name string, counts []int) (int, error) {
	total, bad, ok := sumCounts(counts)
	if !ok {
		if counts[bad] < 0 {
			return 0, c.argErr(name, ErrCount, "negative count %d", counts[bad])
		}
		return 0, c.argErr(name, ErrCount, "the counts' sum overflows an int")
	}
	return total, nil
}

func (c *Comm) reduceScatter(name string, sendbuf, recvbuf []byte, recvcounts []int, dt *Datatype, op *ReduceOp) error {
	if dt != nil && dt.block() == 0 {
		total, err := c.countSum(name, recvcounts)
		if err != nil {
			return err
		}
		if len(recvcounts) != c.Size() {
			return c.argErr(name, ErrCount, "%d counts for %d ranks", len(recvcounts), c.Size())
		}
		pdt, sb, rb, rsp, err := c.stageReduction(name, sendbuf, total, recvbuf, recvcounts[c.Rank()], dt)
		if err != nil {
			return err
		}
		if err := c.reduceScatter(name, sb, rb, recvcounts, pdt, op); err != nil {
			return err
		}
		rsp.unpackResult(rb)
		return nil
	}
	if c.IsInter() {
		return c.interReduceScatterBuf(name, sendbuf, recvbuf, recvcounts, dt, op)
	}
	total, err := c.countSum(name, recvcounts)
	if err != nil {
		return err
	}
	n, err := c.lowOp(name, total, dt, op)
	if err != nil {
		return err
	}
	p, r := len(c.group), c.rank
	if len(recvcounts) != p {
		return c.argErr(name, ErrCount, "%d counts for %d ranks", len(recvcounts), p)
	}
	in, err := c.input(name, sendbuf, recvbuf, n)
	if err != nil {
		return err
	}
	mine := recvcounts[r] * dt.block()
	if err := c.need(name, "recvbuf", recvbuf, mine); err != nil {
		return err
	}
	offs := make([]int, p+1)
	for i, k := range recvcounts {
		offs[i+1] = offs[i] + k*dt.block()
	}
	if c.mixed() {
		return c.hetLowReduceScatter(name, in, recvbuf[:mine], offs, dt, op) // hetero_collv.go
	}
	tag := c.collTag()
	var cc *collCall
	if name == "ReduceScatterBlock" {
		cc = c.lowCall(lowSig(dt, total), true)
	} else { // the ranks must agree about every count
		cc = c.lowCall(mixSig(dt, recvcounts), true)
		cc.mixed = true
	}
	if op.commutative && coll.Select(coll.CollReduceScatter, coll.Situation{Ranks: p, Bytes: n, Commutative: true, Fixed: true, Elems: total}) == coll.AlgRecursiveHalving {
		buf := append([]byte(nil), in...)
		sp := getScratch(n)
		defer putScratch(sp)
		f, _ := op.vec(dt)
		if err := cc.done(name, coll.ReduceScatterVec(c.via(cc), buf, (*sp)[:n], offs, f, tag)); err != nil {
			return err
		}
		copy(recvbuf[:mine], buf[offs[r]:offs[r+1]])
		return nil
	}
	f, _ := op.combine(dt)
	res, err := coll.Reduce(c.via(cc), in, cc.combine(f), op.commutative, 0, tag)
	var parts [][]byte
	if r == 0 {
		parts = make([][]byte, p)
		for i := range p {
			if err == nil && len(res) >= offs[i+1] {
				parts[i] = res[offs[i]:offs[i+1]]
			} else { // the group still completes the scatter
				parts[i] = make([]byte, offs[i+1]-offs[i])
			}
		}
	}
	got, serr := coll.Scatter(c.via(cc), parts, 0, tag+2)
	if err == nil {
		err = serr
	}
	if err := cc.done(name, err); err != nil {
		return err
	}
	copy(recvbuf[:mine], got)
	return nil
}

// IreduceScatterBlock starts a ReduceScatterBlock (MPI_Ireduce_scatter_block).
func (c *Comm) IreduceScatterBlock(sendbuf, recvbuf []byte, recvcount int, dt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IreduceScatterBlock", c, Undefined, Undefined), &err)
	}
	return c.startColl("IreduceScatterBlock", func(v *Comm) error {
		return v.ReduceScatterBlock(sendbuf, recvbuf, recvcount, dt, op)
	})
}

// IreduceScatter starts a ReduceScatter (MPI_Ireduce_scatter).
func (c *Comm) IreduceScatter(sendbuf, recvbuf []byte, recvcounts []int, dt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IreduceScatter", c, Undefined, Undefined), &err)
	}
	return c.startColl("IreduceScatter", func(v *Comm) error {
		return v.ReduceScatter(sendbuf, recvbuf, recvcounts, dt, op)
	})
}

// Scan leaves in rank r's recvbuf the reduction with op of the sendbufs
// of ranks 0..r, in rank order (MPI_Scan). sendbuf may be InPlace.
func (c *Comm) Scan(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Scan", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Scan"); err != nil {
		return
	}
	defer c.exitColl()
	return c.scan("Scan", sendbuf, recvbuf, count, dt, op, true)
}

// Exscan leaves in rank r's recvbuf the reduction with op of the sendbufs
// of ranks 0..r-1 (MPI_Exscan); rank 0's recvbuf is not touched. sendbuf
// may be InPlace.
func (c *Comm) Exscan(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Exscan", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("Exscan"); err != nil {
		return
	}
	defer c.exitColl()
	return c.scan("Exscan", sendbuf, recvbuf, count, dt, op, false)
}

func (c *Comm) scan(name string, sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, inclusive bool) error {
	if dt != nil && dt.block() == 0 {
		pdt, sb, rb, rsp, err := c.stageReduction(name, sendbuf, count, recvbuf, count, dt)
		if err != nil {
			return err
		}
		if err := c.scan(name, sb, rb, count, pdt, op, inclusive); err != nil {
			return err
		}
		if inclusive || c.rank != 0 { // Exscan leaves rank 0's recvbuf alone
			rsp.unpackResult(rb)
		}
		return nil
	}
	n, err := c.lowOp(name, count, dt, op)
	if err != nil {
		return err
	}
	if err := c.need(name, "recvbuf", recvbuf, n); err != nil {
		return err
	}
	in, err := c.input(name, sendbuf, recvbuf, n)
	if err != nil {
		return err
	}
	if c.mixed() {
		return c.hetLowScan(name, in, recvbuf[:n], dt, op, inclusive) // hetero_collv.go
	}
	cc := c.lowCall(lowSig(dt, count), true)
	if op.commutative { // recursive doubling in place, nothing allocated
		sp := getScratch(3 * n)
		defer putScratch(sp)
		work := (*sp)[2*n : 3*n]
		copy(work, in)
		f, _ := op.vec(dt)
		have, err := coll.ScanVec(c.via(cc), work, (*sp)[:2*n], f, inclusive, c.collTag())
		if err := cc.done(name, err); err != nil {
			return err
		}
		if have {
			copy(recvbuf[:n], work)
		}
		return nil
	}
	f, _ := op.combine(dt)
	var res []byte
	if inclusive {
		res, err = coll.Scan(c.via(cc), in, cc.combine(f), op.commutative, c.collTag())
	} else {
		res, err = coll.Exscan(c.via(cc), in, cc.combine(f), op.commutative, c.collTag())
	}
	if err := cc.done(name, err); err != nil {
		return err
	}
	if res != nil {
		copy(recvbuf[:n], res)
	}
	return nil
}

// Iscan starts a Scan (MPI_Iscan).
func (c *Comm) Iscan(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iscan", c, Undefined, Undefined), &err)
	}
	return c.startColl("Iscan", func(v *Comm) error { return v.Scan(sendbuf, recvbuf, count, dt, op) })
}

// Iexscan starts an Exscan (MPI_Iexscan).
func (c *Comm) Iexscan(sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iexscan", c, Undefined, Undefined), &err)
	}
	return c.startColl("Iexscan", func(v *Comm) error { return v.Exscan(sendbuf, recvbuf, count, dt, op) })
}

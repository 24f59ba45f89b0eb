package mpi

import (
	"errors"

	"github.com/mpigo/mpi/internal/engine"
)

// Neighbourhood collectives (MPI-3.1 §7.6). Every rank exchanges data
// with its neighbours in c's topology only:
//
//   - Cartesian: for each dimension d, the rank below (-1) and then the
//     rank above (+1), as CartShift(d, 1) returns them. A neighbour beyond
//     a non-periodic edge is ProcNull: nothing is sent to it, and its
//     receive slot is kept but left untouched (zero in the typed forms).
//   - Graph: the node's neighbours as GraphNeighbors lists them, which are
//     both what it receives from and what it sends to.
//   - Distributed graph: it receives from its sources and sends to its
//     destinations, as DistGraphNeighbors lists them.
//
// The messages travel as point-to-point messages on c's private
// collective context, so they never match user receives, and each slot
// has a tag of its own (taken from c's collective sequence, like any
// collective), so a neighbour that appears twice (both neighbours in a
// periodic dimension of size 1 or 2, a repeated graph edge) gets each
// message in the right slot. Like every collective they take any
// committed datatype, contiguous or not; here no staging is needed, since
// every block is a point-to-point message of its own. Each call must be
// made by every rank of c, in the same order as c's other collectives.

// nbrBlk is the memory of one neighbour's block.
type nbrBlk struct {
	buf   []byte
	count int
	dt    *Datatype
}

// nbrTopo returns c's topology for a neighbourhood collective.
func (c *Comm) nbrTopo(op string) (*topology, error) { return c.topoOf(op, 0) }

// block returns the block of count elements of dt at byte offset off of
// buf, checking that it fits.
func (c *Comm) block(op, what string, slot int, buf []byte, off, count int, dt *Datatype) (nbrBlk, error) {
	if s := c.typeProblem(dt); s != "" {
		return nbrBlk{}, c.argErr(op, ErrType, "%s block %d: %s", what, slot, s)
	}
	if count < 0 {
		return nbrBlk{}, c.argErr(op, ErrCount, "%s block %d: negative count %d", what, slot, count)
	}
	if off == displOverflow {
		return nbrBlk{}, c.argErr(op, ErrCount, "%s block %d: the displacement in bytes overflows an int", what, slot)
	}
	if off < 0 {
		return nbrBlk{}, c.argErr(op, ErrArg, "%s block %d: negative displacement", what, slot)
	}
	if count == 0 {
		return nbrBlk{buf: nil, count: 0, dt: dt}, nil
	}
	if off > len(buf) {
		return nbrBlk{}, c.argErr(op, ErrBuffer, "%s block %d starts at byte %d, the buffer has %d", what, slot, off, len(buf))
	}
	b := buf[off:]
	if s, class := dt.fits(count, len(b)); class != nil {
		return nbrBlk{}, c.argErr(op, class, "%s block %d: %s", what, slot, s)
	}
	return nbrBlk{buf: b, count: count, dt: dt}, nil
}

// extentOf returns dt's extent, or 0 for a nil datatype (refused later).
func extentOf(dt *Datatype) int {
	if dt == nil {
		return 0
	}
	_, e := dt.Extent()
	return e
}

// exchange posts a receive for every in-neighbour and a send to every
// out-neighbour (ProcNull ones skipped), then waits for all of them.
func (c *Comm) exchange(op string, t *topology, sends, recvs []nbrBlk) error {
	base := c.nbrTag(t.units)
	sh := c.shadow
	return c.nbrErr(op, postAndWait(len(recvs), func(i int) (*Request, error) {
		if t.in[i] == ProcNull {
			return nil, nil
		}
		return sh.nbrRecv(op, i, recvs[i], t.in[i], base+t.inTag[i])
	}, len(t.sendOrder), func(k int) (*Request, error) {
		j := t.sendOrder[k]
		if t.out[j] == ProcNull {
			return nil, nil
		}
		b := sends[j]
		return sh.isendSig(b.buf, b.count, b.dt, lowSig(b.dt, b.count), t.out[j], base+t.outTag[j])
	}))
}

// postAndWait is the loop of a collective made of point-to-point blocks
// (the neighbourhood collectives, exchange; the mixed v and w forms,
// hetExchange): it starts receive i for i in 0..nr-1, then send k for k in
// 0..ns-1, so that every receive is posted before the first send; a start
// that returns a nil request and no error is skipped (a ProcNull peer).
// It stops starting at the first start that fails, waits for every
// request it started, and returns the first error, of a start or of a
// completion.
func postAndWait(nr int, recv func(i int) (*Request, error), ns int, send func(k int) (*Request, error)) error {
	reqs := make([]*Request, 0, nr+ns)
	var first error
	for i := 0; i < nr && first == nil; i++ {
		r, err := recv(i)
		if err != nil {
			first = err
		} else if r != nil {
			reqs = append(reqs, r)
		}
	}
	for k := 0; k < ns && first == nil; k++ {
		r, err := send(k)
		if err != nil {
			first = err
		} else if r != nil {
			reqs = append(reqs, r)
		}
	}
	for _, r := range reqs {
		if _, err := r.wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// isendSig is isend of a standard send whose message carries the
// signature sig.
func (c *Comm) isendSig(buf []byte, count int, dt *Datatype, sig uint64, dest, tag int) (*Request, error) {
	m, err := c.checkBuf("Isend", at("dest", dest, tag), buf, count, dt)
	if err != nil {
		return nil, err
	}
	r := c.newRequest("Isend", at("dest", dest, tag))
	r.er.Layout = m.lay
	c.startSend(r.er, m.b, sig, dest, tag, engine.Standard)
	return r, nil
}

// nbrRecv receives the block b of in-neighbour slot i from src. Its
// message carries the sender's signature (coll_bufsig.go), which must be the
// block's: the same basic types, as many of them.
func (c *Comm) nbrRecv(op string, i int, b nbrBlk, src, tag int) (*Request, error) {
	m, err := c.lowRecvBuf(op, b.buf, b.count, b.dt, src, tag)
	if err != nil {
		return nil, err
	}
	r := c.newRequest(op, at("source", src, tag))
	r.setElem(b.dt.size)
	r.er.Layout = m.lay
	r.x.conv = c.lowConv(b.buf, b.dt.t) // a mixed job: converted on completion (hetero.go)
	want := lowSig(b.dt, b.count)
	r.x.finish = func(st engine.Status) error {
		if st.Sig == want || st.Sig == 0 {
			return nil
		}
		wu, wn, _ := decodeSig(want)
		tu, tn, ok := decodeSig(st.Sig)
		class := ErrType
		if wu == nil || tu == nil || ok && wu.hash == tu.hash {
			class = ErrCount
		}
		theirs := "a datatype this process has not used (signature " + hex(st.Sig) + ")"
		if ok {
			theirs = tu.describe(int64(tn))
		}
		return c.errorf(op, class, at("source", src, tag), "in-neighbour %d (rank %d) sent %s, this rank's receive block is %s", i, src, theirs, wu.describe(int64(wn)))
	}
	c.startRecv(r.er, m.b, nil, 0, src, tag)
	return r, nil
}

// nbrErr reports a failed step of neighbourhood collective op, keeping the
// class of the step's error.
func (c *Comm) nbrErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var inner *Error
	if errors.As(err, &inner) && inner.Op == op && err == error(inner) {
		return c.handle(inner) // already says all (nbrRecv)
	}
	if errors.As(err, &inner) {
		e := c.errorf(op, inner.Class, loc{}, "").(*Error)
		e.Cause = err
		return c.handle(e)
	}
	return c.fail(op, ErrOther, loc{}, "%v", err)
}

// sameBlocks returns n copies of one block.
func sameBlocks(b nbrBlk, n int) []nbrBlk {
	s := make([]nbrBlk, n)
	for i := range s {
		s[i] = b
	}
	return s
}

// NeighborAllgather sends the same sendcount elements of sendtype to
// every out-neighbour and receives recvcount elements of recvtype from
// in-neighbour i into recvbuf at i·recvcount·extent(recvtype)
// (MPI_Neighbor_allgather).
func (c *Comm) NeighborAllgather(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAllgather", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAllgather"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAllgather"
	t, err := c.nbrTopo(op)
	if err != nil {
		return err
	}
	ext := extentOf(recvtype)
	displs := make([]int, len(t.in))
	for i := range displs {
		displs[i] = scaleDispl(i, recvcount)
	}
	return c.neighborAllgatherv(op, t, sendbuf, sendcount, sendtype, recvbuf, fill(len(t.in), recvcount), displs, ext, recvtype)
}

// NeighborAllgatherv is NeighborAllgather with a count and a displacement
// (in extents of recvtype) per in-neighbour (MPI_Neighbor_allgatherv).
func (c *Comm) NeighborAllgatherv(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAllgatherv", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAllgatherv"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAllgatherv"
	t, err := c.nbrTopo(op)
	if err != nil {
		return err
	}
	return c.neighborAllgatherv(op, t, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, extentOf(recvtype), recvtype)
}

func (c *Comm) neighborAllgatherv(op string, t *topology, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, ext int, recvtype *Datatype) error {
	n := len(t.in)
	if len(recvcounts) != n || len(displs) != n {
		return c.argErr(op, ErrCount, "%d counts and %d displacements for %d in-neighbours", len(recvcounts), len(displs), n)
	}
	s, err := c.block(op, "send", 0, sendbuf, 0, sendcount, sendtype)
	if err != nil {
		return err
	}
	recvs := make([]nbrBlk, n)
	for i := range recvs {
		if recvs[i], err = c.block(op, "receive", i, recvbuf, scaleDispl(displs[i], ext), recvcounts[i], recvtype); err != nil {
			return err
		}
	}
	return c.exchange(op, t, sameBlocks(s, len(t.out)), recvs)
}

// NeighborAlltoall sends block j (sendcount elements of sendtype at
// j·sendcount·extent(sendtype)) of sendbuf to out-neighbour j and receives
// block i of recvbuf from in-neighbour i (MPI_Neighbor_alltoall).
func (c *Comm) NeighborAlltoall(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAlltoall", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAlltoall"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAlltoall"
	t, err := c.nbrTopo(op)
	if err != nil {
		return err
	}
	sd := make([]int, len(t.out))
	for j := range sd {
		sd[j] = scaleDispl(scaleDispl(j, sendcount), extentOf(sendtype))
	}
	rd := make([]int, len(t.in))
	for i := range rd {
		rd[i] = scaleDispl(scaleDispl(i, recvcount), extentOf(recvtype))
	}
	return c.neighborAlltoallw(op, t, sendbuf, fill(len(t.out), sendcount), sd, sameTypes(sendtype, len(t.out)),
		recvbuf, fill(len(t.in), recvcount), rd, sameTypes(recvtype, len(t.in)))
}

// NeighborAlltoallv is NeighborAlltoall with a count and a displacement
// (in extents of the datatype) per neighbour on both sides
// (MPI_Neighbor_alltoallv).
func (c *Comm) NeighborAlltoallv(sendbuf []byte, sendcounts, sdispls []int, sendtype *Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtype *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAlltoallv", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAlltoallv"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAlltoallv"
	t, err := c.nbrTopo(op)
	if err != nil {
		return err
	}
	return c.neighborAlltoallw(op, t, sendbuf, sendcounts, scaled(sdispls, extentOf(sendtype)), sameTypes(sendtype, len(sendcounts)),
		recvbuf, recvcounts, scaled(rdispls, extentOf(recvtype)), sameTypes(recvtype, len(recvcounts)))
}

// NeighborAlltoallw is NeighborAlltoallv with a datatype per neighbour and
// displacements in bytes (MPI_Neighbor_alltoallw).
func (c *Comm) NeighborAlltoallw(sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.NeighborAlltoallw", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAlltoallw"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAlltoallw"
	t, err := c.nbrTopo(op)
	if err != nil {
		return err
	}
	return c.neighborAlltoallw(op, t, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)
}

func sameTypes(dt *Datatype, n int) []*Datatype {
	s := make([]*Datatype, n)
	for i := range s {
		s[i] = dt
	}
	return s
}

// scaled returns displs multiplied by ext (nil stays nil).
func scaled(displs []int, ext int) []int {
	if displs == nil {
		return nil
	}
	s := make([]int, len(displs))
	for i, d := range displs {
		s[i] = scaleDispl(d, ext)
	}
	return s
}

func (c *Comm) neighborAlltoallw(op string, t *topology, sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype) error {
	blocks := func(what string, buf []byte, counts, displs []int, types []*Datatype, n int) ([]nbrBlk, error) {
		if len(counts) != n || len(displs) != n || len(types) != n {
			return nil, c.argErr(op, ErrCount, "%s: %d counts, %d displacements and %d datatypes for %d neighbours", what, len(counts), len(displs), len(types), n)
		}
		bs := make([]nbrBlk, n)
		for i := range bs {
			var err error
			if bs[i], err = c.block(op, what, i, buf, displs[i], counts[i], types[i]); err != nil {
				return nil, err
			}
		}
		return bs, nil
	}
	sends, err := blocks("send", sendbuf, sendcounts, sdispls, sendtypes, len(t.out))
	if err != nil {
		return err
	}
	recvs, err := blocks("receive", recvbuf, recvcounts, rdispls, recvtypes, len(t.in))
	if err != nil {
		return err
	}
	return c.exchange(op, t, sends, recvs)
}

// startNbr starts body as a non-blocking neighbourhood collective: its
// tags are taken now, on the caller's goroutine, from the non-blocking
// count (nbCollTag).
func (c *Comm) startNbr(op string, body func(v *Comm) error) (*Request, error) {
	t, err := c.nbrTopo(op)
	if err != nil {
		return nil, err
	}
	return c.startCollAt(op, c.nbCollTag(t.units), body), nil
}

// IneighborAllgather starts a NeighborAllgather (MPI_Ineighbor_allgather).
func (c *Comm) IneighborAllgather(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IneighborAllgather", c, Undefined, Undefined), &err)
	}
	return c.startNbr("IneighborAllgather", func(v *Comm) error {
		return v.NeighborAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// IneighborAllgatherv starts a NeighborAllgatherv (MPI_Ineighbor_allgatherv).
func (c *Comm) IneighborAllgatherv(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IneighborAllgatherv", c, Undefined, Undefined), &err)
	}
	return c.startNbr("IneighborAllgatherv", func(v *Comm) error {
		return v.NeighborAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)
	})
}

// IneighborAlltoall starts a NeighborAlltoall (MPI_Ineighbor_alltoall).
func (c *Comm) IneighborAlltoall(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IneighborAlltoall", c, Undefined, Undefined), &err)
	}
	return c.startNbr("IneighborAlltoall", func(v *Comm) error {
		return v.NeighborAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
	})
}

// IneighborAlltoallv starts a NeighborAlltoallv (MPI_Ineighbor_alltoallv).
func (c *Comm) IneighborAlltoallv(sendbuf []byte, sendcounts, sdispls []int, sendtype *Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtype *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IneighborAlltoallv", c, Undefined, Undefined), &err)
	}
	return c.startNbr("IneighborAlltoallv", func(v *Comm) error {
		return v.NeighborAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype)
	})
}

// IneighborAlltoallw starts a NeighborAlltoallw (MPI_Ineighbor_alltoallw).
func (c *Comm) IneighborAlltoallw(sendbuf []byte, sendcounts, sdispls []int, sendtypes []*Datatype, recvbuf []byte, recvcounts, rdispls []int, recvtypes []*Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IneighborAlltoallw", c, Undefined, Undefined), &err)
	}
	return c.startNbr("IneighborAlltoallw", func(v *Comm) error {
		return v.NeighborAlltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes)
	})
}

// Typed forms.

// nbrTyped exchanges typed values: out[j] (the bytes of a value) goes to
// out-neighbour j; the result holds one decoded value per in-neighbour,
// the zero value for a ProcNull neighbour.
func nbrTyped[T any](c *Comm, op string, t *topology, out [][]byte, sig uint64) ([]T, error) {
	base := c.nbrTag(t.units)
	sh := c.shadow
	res := make([]T, len(t.in))
	pend := make([]*Pending[T], len(t.in))
	for i, src := range t.in {
		if src == ProcNull {
			continue
		}
		p, err := irecvT[T](sh, src, base+t.inTag[i])
		if err != nil {
			return nil, c.nbrErr(op, err)
		}
		pend[i] = p
	}
	sends := make([]*Request, 0, len(t.out))
	for _, j := range t.sendOrder {
		dst := t.out[j]
		if dst == ProcNull {
			continue
		}
		tag := base + t.outTag[j]
		r := sh.newRequest(op, at("dest", dst, tag))
		sh.startSend(r.er, out[j], sig, dst, tag, engine.Standard)
		sends = append(sends, r)
	}
	var first error
	for i, p := range pend {
		if p == nil {
			continue
		}
		v, _, err := p.wait()
		if err != nil && first == nil {
			first = err
		}
		res[i] = v
	}
	for _, r := range sends {
		if _, err := r.wait(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, c.nbrErr(op, first)
	}
	return res, nil
}

// NeighborAllgather sends v to every out-neighbour of c and returns the
// values of its in-neighbours, one per slot in the topology's order
// (MPI_Neighbor_allgather, and MPI_Neighbor_allgatherv since values may
// differ in size). A ProcNull neighbour's slot holds the zero value.
func NeighborAllgather[T any](c *Comm, v T) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NeighborAllgather", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAllgather"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAllgather"
	t, err := c.nbrTopo(op)
	if err != nil {
		return nil, err
	}
	ti := typeOf[T]()
	b, err := viewBytes(ti, &v, nil)
	if err != nil {
		return nil, c.typeErr(op, loc{}, err)
	}
	out := make([][]byte, len(t.out))
	for j := range out {
		out[j] = b
	}
	return nbrTyped[T](c, op, t, out, ti.sig)
}

// NeighborAlltoall sends vs[j] to out-neighbour j of c and returns the
// value each in-neighbour sent to the caller, one per slot in the
// topology's order (MPI_Neighbor_alltoall, and MPI_Neighbor_alltoallv
// since values may differ in size). vs must have one value per
// out-neighbour (the one for a ProcNull neighbour is not sent); a ProcNull
// neighbour's slot holds the zero value.
func NeighborAlltoall[T any](c *Comm, vs []T) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NeighborAlltoall", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("NeighborAlltoall"); err != nil {
		return
	}
	defer c.exitColl()
	const op = "NeighborAlltoall"
	t, err := c.nbrTopo(op)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(t.out) {
		return nil, c.argErr(op, ErrCount, "%d values for %d out-neighbours", len(vs), len(t.out))
	}
	ti := typeOf[T]()
	out := make([][]byte, len(vs))
	for j := range vs {
		if out[j], err = viewBytes(ti, &vs[j], nil); err != nil {
			return nil, c.typeErr(op, loc{}, err)
		}
	}
	return nbrTyped[T](c, op, t, out, ti.sig)
}

// IneighborAllgather starts a NeighborAllgather (MPI_Ineighbor_allgather).
// If v is a slice, its elements must not be modified until the Future
// completes.
func IneighborAllgather[T any](c *Comm, v T) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IneighborAllgather", c, Undefined, Undefined), &err)
	}
	return futureOf(c.startNbr, "IneighborAllgather", func(w *Comm) ([]T, error) { return NeighborAllgather(w, v) })
}

// IneighborAlltoall starts a NeighborAlltoall (MPI_Ineighbor_alltoall).
// vs and its elements must not be modified until the Future completes.
func IneighborAlltoall[T any](c *Comm, vs []T) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IneighborAlltoall", c, Undefined, Undefined), &err)
	}
	return futureOf(c.startNbr, "IneighborAlltoall", func(w *Comm) ([]T, error) { return NeighborAlltoall(w, vs) })
}

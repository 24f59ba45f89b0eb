package mpi

// Views: non-contiguous parts of a Go slice, counted in elements.

import (
	"github.com/mpigo/mpi/internal/engine"
)

// A View selects elements of a slice of plain values (numbers, bools, and
// arrays and structs of those) that need not be contiguous: a column of a
// row-major matrix, a block of a 2-D or 3-D array, the halo of a grid.
// Strided, Subarray and ViewOf make one; SendView, RecvView,
// SendrecvView, IsendView, IrecvView, BcastView, GatherView, ScatterView
// and AllgatherView move exactly the selected elements, in order, as a
// message of []E. The other side may
// receive it into a View of another shape, or as a plain []E (Recv,
// RecvInto), and a View receives what Send of a []E sent: only the
// elements travel, never the gaps.
//
// A View needs no Commit and no Free: it is usable as soon as it is made,
// and the garbage collector takes it back. It holds the slice, so the
// elements it selects are read or written at each call (make it once and
// reuse it in a loop). Datatype and Bytes give the same selection to the
// low-level calls that have no View form (Gatherv, Alltoallw, windows).
//
// A View that could not be made (a bad shape, or one that does not fit
// in the slice) carries its error, which every call that uses it
// returns.
type View[E any] struct {
	buf []E
	dt  *Datatype // committed; nil if err is set
	n   int       // elements selected
	err error
}

// Strided returns the View of count blocks of blocklen consecutive
// elements of s, the starts of consecutive blocks stride elements apart,
// from s[0] on (MPI_Type_vector over E). Column j of a row-major matrix u
// of rows rows of ld elements is Strided(u[j:], rows, 1, ld).
func Strided[E any](s []E, count, blocklen, stride int) View[E] {
	et, err := viewElem[E]("Strided")
	if err != nil {
		return View[E]{err: err}
	}
	dt, err := NewVector(count, blocklen, stride, et)
	if err != nil {
		return View[E]{err: err}
	}
	n, ok := countBytes(count, blocklen)
	if !ok {
		return View[E]{err: (*Comm)(nil).errorf("Strided", ErrCount, loc{}, "%d blocks of %d elements overflow", count, blocklen)}
	}
	return newView(s, dt, n, "Strided")
}

// Subarray returns the View of the block of s that starts at starts and
// has subsizes elements along each dimension, where s holds an array of
// sizes elements along each dimension in row-major order (the last index
// varies fastest, as in Go's [][]... flattened, and C):
// MPI_Type_create_subarray over E with MPI_ORDER_C. The block of rows 1..2
// and columns 3..5 of a 4x8 array u is Subarray(u, []int{4, 8}, []int{2,
// 3}, []int{1, 3}).
func Subarray[E any](s []E, sizes, subsizes, starts []int) View[E] {
	et, err := viewElem[E]("Subarray")
	if err != nil {
		return View[E]{err: err}
	}
	dt, err := NewSubarray(sizes, subsizes, starts, OrderC, et)
	if err != nil {
		return View[E]{err: err}
	}
	n := 1
	for _, k := range subsizes {
		var ok bool
		if n, ok = countBytes(n, k); !ok {
			return View[E]{err: (*Comm)(nil).errorf("Subarray", ErrCount, loc{}, "subsizes %v overflow", subsizes)}
		}
	}
	return newView(s, dt, n, "Subarray")
}

// ViewOf returns the View of s that dt selects, where dt is any datatype
// whose elements are E's: one made from DatatypeOf[E] (or E's predefined
// datatype, such as Float64 for float64) with NewVector, NewIndexed,
// NewSubarray, NewDarray, NewResized, ... It need not be committed; a
// datatype of other elements gives ErrType.
func ViewOf[E any](s []E, dt *Datatype) View[E] {
	et, err := viewElem[E]("ViewOf")
	if err != nil {
		return View[E]{err: err}
	}
	if err := dt.usable("ViewOf"); err != nil {
		return View[E]{err: err}
	}
	if dt.sig != et.sig || et.size == 0 || dt.size%et.size != 0 {
		return View[E]{err: (*Comm)(nil).errorf("ViewOf", ErrType, loc{}, "datatype %s is not made of elements of %s", dt.name, et.name)}
	}
	d, err := dt.Dup()
	if err != nil {
		return View[E]{err: err}
	}
	return newView(s, d, dt.size/et.size, "ViewOf")
}

// newView commits dt and checks that it fits in s.
func newView[E any](s []E, dt *Datatype, n int, op string) View[E] {
	if err := dt.Commit(); err != nil {
		return View[E]{err: err}
	}
	lb, extent := dt.t.LB, dt.t.Extent()
	if lb < 0 || lb+extent > int64(len(AsBytes(s))) {
		return View[E]{err: (*Comm)(nil).errorf(op, ErrBuffer, loc{}, "the view spans bytes %d to %d, but the slice has %d", lb, lb+extent, len(AsBytes(s)))}
	}
	return View[E]{buf: s, dt: dt, n: n}
}

// viewElem returns the datatype of one E for the View constructor op.
func viewElem[E any](op string) (*Datatype, error) {
	t := typeOf[E]()
	if t.shape != shapePlain {
		return nil, (*Comm)(nil).typeErr(op, loc{}, errNotPlain(t))
	}
	return DatatypeOf[E]()
}

// Len returns the number of elements the view selects (0 if it carries an
// error).
func (v View[E]) Len() int { return v.n }

// Err returns the error the view was made with, or nil if it is usable.
func (v View[E]) Err() error { return v.err }

// Datatype returns the committed datatype that selects the view's
// elements from Bytes (one instance of it), for the low-level calls; nil
// if the view carries an error.
func (v View[E]) Datatype() *Datatype { return v.dt }

// Bytes returns the memory of the viewed slice, as the low-level calls
// take it with Datatype.
func (v View[E]) Bytes() []byte { return AsBytes(v.buf) }

// usable returns the error a call named op using v must return: the one
// v was made with, or ErrArg for the zero View, which selects nothing.
func (v View[E]) usable(op string) error {
	if v.err != nil {
		return v.err
	}
	if v.dt == nil {
		return (*Comm)(nil).errorf(op, ErrArg, loc{}, "the view was not made by Strided, Subarray or ViewOf")
	}
	return nil
}

// elemSize is the size of one E, by which a view's receive counts.
func (v View[E]) elemSize() int { return v.dt.size / max(v.n, 1) }

// SendView sends the elements v selects to rank dest with tag, as a
// message of []E (MPI_Send with the view's datatype).
func SendView[E any](c *Comm, v View[E], dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("SendView", c, dest, tag), &err)
	}
	if err := v.usable("SendView"); err != nil {
		return err
	}
	return c.lowSend("SendView", v.Bytes(), 1, v.dt, dest, tag, engine.Standard)
}

// IsendView starts sending the elements v selects and returns at once
// (MPI_Isend); the viewed elements must not change until the request
// completes.
func IsendView[E any](c *Comm, v View[E], dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IsendView", c, dest, tag), &err)
	}
	if err := v.usable("IsendView"); err != nil {
		return nil, err
	}
	return c.isend(nil, "IsendView", v.Bytes(), 1, v.dt, dest, tag, engine.Standard)
}

// RecvView receives a message of []E from rank source (or AnySource) with
// tag (or AnyTag) into the elements v selects, in order (MPI_Recv with the
// view's datatype). Status.Count gives the elements received; a message
// of more elements than v selects fills the view and fails with
// ErrTruncate, and a message of another element type fails with ErrType.
func RecvView[E any](c *Comm, v View[E], source, tag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RecvView", c, source, tag), &err)
	}
	if err := v.usable("RecvView"); err != nil {
		return Status{}, err
	}
	return c.recvView("RecvView", v.Bytes(), v.dt, v.elemSize(), source, tag, nil)
}

// IrecvView starts receiving into the elements v selects and returns at
// once (MPI_Irecv); they must not be used until the request completes.
func IrecvView[E any](c *Comm, v View[E], source, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IrecvView", c, source, tag), &err)
	}
	if err := v.usable("IrecvView"); err != nil {
		return nil, err
	}
	return c.irecvElem(nil, nil, "IrecvView", v.Bytes(), 1, v.dt, source, tag, v.elemSize())
}

// SendrecvView sends the elements send selects to dest and receives into
// the elements recv selects from source at the same time, so that ranks
// can exchange halos without deadlock (MPI_Sendrecv with the views'
// datatypes). The two views must not overlap.
func SendrecvView[E any](c *Comm, send View[E], dest, sendtag int, recv View[E], source, recvtag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("SendrecvView", c, dest, sendtag), &err)
	}
	if err := send.usable("SendrecvView"); err != nil {
		return Status{}, err
	}
	if err := recv.usable("SendrecvView"); err != nil {
		return Status{}, err
	}
	sendFn := func() error {
		return c.lowSend("SendrecvView", send.Bytes(), 1, send.dt, dest, sendtag, engine.Standard)
	}
	if c.ftReposts(source) {
		rr, err := c.irecvElem(nil, nil, "SendrecvView", recv.Bytes(), 1, recv.dt, source, recvtag, recv.elemSize())
		return sendrecvGeneral(rr, err, sendFn)
	}
	return c.recvView("SendrecvView", recv.Bytes(), recv.dt, recv.elemSize(), source, recvtag, sendFn)
}

// recvView is a blocking receive of one dt into buf for the call named
// op, counting elements of elem bytes, running send (if not nil) once the
// receive is posted, as Comm.Sendrecv does.
func (c *Comm) recvView(op string, buf []byte, dt *Datatype, elem, src, tag int, send func() error) (Status, error) {
	m, err := c.lowRecvBuf(op, buf, 1, dt, src, tag)
	if err != nil {
		return Status{}, err
	}
	st, err := c.recvMsgAfter(op, m, dt.sig, nil, "", elem, src, tag, send)
	if c.p.reprs != nil {
		c.lowConv(buf, dt.t).convert(c, st.Source, st.bytes)
	}
	return st, err
}

// BcastView copies the elements v selects on root into the elements v
// selects on every other rank (MPI_Bcast with the view's datatype). The
// views may differ in shape between ranks but must select the same
// number of elements.
func BcastView[E any](c *Comm, v View[E], root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("BcastView", c, root, Undefined), &err)
	}
	if err := v.usable("BcastView"); err != nil {
		return err
	}
	return c.bcastBuf("BcastView", v.Bytes(), 1, v.dt, root)
}

// GatherView gathers the elements send selects on every rank into recv on
// root, in rank order: rank i's n = send.Len() elements at recv[i*n:]
// (MPI_Gather with the view's datatype). Every rank's view selects the
// same number of elements; recv matters on root only.
func GatherView[E any](c *Comm, send View[E], recv []E, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("GatherView", c, root, Undefined), &err)
	}
	if err := send.usable("GatherView"); err != nil {
		return err
	}
	et, err := viewElem[E]("GatherView")
	if err != nil {
		return err
	}
	if err := c.check("GatherView"); err != nil {
		return err
	}
	if err := c.enterColl("GatherView"); err != nil {
		return err
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interGathervBuf("GatherView", send.Bytes(), 1, send.dt, AsBytes(recv), fill(c.members(), send.n), nil, et, root)
	}
	return c.gatherv("GatherView", send.Bytes(), 1, send.dt, AsBytes(recv), fill(c.members(), send.n), nil, et, root)
}

// ScatterView hands out send on root in rank order, n = recv.Len()
// elements to each rank, into the elements recv selects (MPI_Scatter with
// the view's datatype). send matters on root only.
func ScatterView[E any](c *Comm, send []E, recv View[E], root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ScatterView", c, root, Undefined), &err)
	}
	if err := recv.usable("ScatterView"); err != nil {
		return err
	}
	et, err := viewElem[E]("ScatterView")
	if err != nil {
		return err
	}
	if err := c.check("ScatterView"); err != nil {
		return err
	}
	if err := c.enterColl("ScatterView"); err != nil {
		return err
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interScattervBuf("ScatterView", AsBytes(send), fill(c.members(), recv.n), nil, et, recv.Bytes(), 1, recv.dt, root)
	}
	return c.scatterv("ScatterView", AsBytes(send), fill(c.members(), recv.n), nil, et, recv.Bytes(), 1, recv.dt, root)
}

// AllgatherView gathers the elements send selects on every rank into recv
// on every rank, in rank order (MPI_Allgather with the view's datatype).
func AllgatherView[E any](c *Comm, send View[E], recv []E) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllgatherView", c, Undefined, Undefined), &err)
	}
	if err := send.usable("AllgatherView"); err != nil {
		return err
	}
	et, err := viewElem[E]("AllgatherView")
	if err != nil {
		return err
	}
	if err := c.check("AllgatherView"); err != nil {
		return err
	}
	if err := c.enterColl("AllgatherView"); err != nil {
		return err
	}
	defer c.exitColl()
	if c.IsInter() {
		return c.interAllgathervBuf("AllgatherView", send.Bytes(), 1, send.dt, AsBytes(recv), fill(c.members(), send.n), nil, et)
	}
	return c.allgatherv("AllgatherView", send.Bytes(), 1, send.dt, AsBytes(recv), fill(c.members(), send.n), nil, et)
}

package mpi

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/engine"
)

// This file is the typed point-to-point layer. A value of type T travels
// in one of four ways, decided once per type:
//
//   - plain: T is fixed-size and holds no pointers (numbers, bool, arrays
//     and structs of those): its memory is sent as it is;
//   - plain slice: []E with plain E: the elements' memory is sent as it is;
//   - string: its bytes are sent as they are;
//   - encoded: anything else is encoded by the codec (internal/datatype).
//
// Every typed message carries the type signature of T (of E for slices,
// marked as a slice, and of a plain T marked as one value: typeInfo.msig),
// so a receive of another type fails with ErrType instead of decoding
// garbage.

type shape uint8

const (
	shapePlain shape = iota
	shapePlainSlice
	shapeString
	shapeEncoded
)

// typeInfo is what the typed layer needs to know about T.
type typeInfo struct {
	shape shape
	size  int    // plain: size of T; plain slice: size of E
	align int    // alignment of the element
	sig   uint64 // signature of T (E for a plain slice): collectives, windows, RecvInto
	info  *datatype.Info
	// msig is what a typed point-to-point message of T carries and what
	// a typed receive of T expects: sig marked as one value or a slice
	// (engine.ScalarSig, SliceSig), so that a float64 and a []float64 are
	// different types, as the docs say, while low-level calls (which
	// carry and expect sig) match either.
	msig uint64
}

func typeOf[T any]() *typeInfo {
	info := datatype.InfoFor[T]()
	if p := info.Ext(); p != nil {
		return (*typeInfo)(p)
	}
	t := summarize(info)
	info.SetExt(unsafe.Pointer(&t))
	return &t
}

// summarize computes the typeInfo of the type info describes.
func summarize(info *datatype.Info) typeInfo {
	switch {
	case info.Plain:
		return typeInfo{shapePlain, info.Size, info.Align, info.Sig, info, info.Sig ^ engine.ScalarSig}
	case info.Elem != nil && info.Elem.Plain && info.Elem.Size > 0 && info.Type.Kind() == reflect.Slice:
		return typeInfo{shapePlainSlice, info.Elem.Size, info.Elem.Align, info.Elem.Sig, info, info.Elem.Sig ^ engine.SliceSig}
	case info.Type.Kind() == reflect.String:
		return typeInfo{shapeString, 1, 1, info.Sig, info, info.Sig}
	}
	return typeInfo{shapeEncoded, 0, 1, info.Sig, info, info.Sig}
}

// elemSize is the unit Status.Count counts in.
func (t *typeInfo) elemSize() int {
	if t.shape == shapeEncoded {
		return 1
	}
	return t.size
}

type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// viewBytes returns the bytes a value of T sends, borrowing its memory
// where it can. For a plain value, scratch must hold at least t.size bytes
// unless it is nil, in which case a copy is allocated.
func viewBytes[T any](t *typeInfo, v *T, scratch []byte) ([]byte, error) {
	switch t.shape {
	case shapePlain:
		if t.size > len(scratch) {
			p := new(T)
			*p = *v
			return unsafe.Slice((*byte)(unsafe.Pointer(p)), t.size), nil
		}
		*(*T)(unsafe.Pointer(unsafe.SliceData(scratch))) = *v
		return scratch[:t.size], nil
	case shapePlainSlice:
		h := (*sliceHeader)(unsafe.Pointer(v))
		if h.len == 0 {
			return []byte{}, nil
		}
		return unsafe.Slice((*byte)(h.data), h.len*t.size), nil
	case shapeString:
		s := *(*string)(unsafe.Pointer(v))
		if len(s) == 0 {
			return []byte{}, nil
		}
		return unsafe.Slice(unsafe.StringData(s), len(s)), nil
	}
	vv := *v
	b, err := datatype.Encode(nil, &vv)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// fromBytes makes a T out of received bytes. For slices and strings the
// result shares b's memory, so b must belong to the caller.
func fromBytes[T any](t *typeInfo, b []byte, v *T) error { return decodeBytes(t, b, v, false) }

// decodeBytes is fromBytes; with own, b is the caller's for good (a
// receive buffer allocated for this message) and the strings of an encoded
// value may share it too.
func decodeBytes[T any](t *typeInfo, b []byte, v *T, own bool) error {
	switch t.shape {
	case shapePlain:
		if len(b) != t.size {
			return errTypeSize(t, len(b))
		}
		if !t.info.ValidBools(b) {
			return errBadBool(t.info.Type)
		}
		*v = *(*T)(unsafe.Pointer(unsafe.SliceData(b)))
		return nil
	case shapePlainSlice:
		if len(b)%t.size != 0 {
			return errTypeSize(t, len(b))
		}
		if !t.info.Elem.ValidBools(b) {
			return errBadBool(t.info.Type)
		}
		n := len(b) / t.size
		if n == 0 {
			h := (*sliceHeader)(unsafe.Pointer(v))
			*h = sliceHeader{data: unsafe.Pointer(&zeroBase), len: 0, cap: 0}
			return nil
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(t.align) != 0 {
			nb := make([]byte, len(b)+t.align)
			off := (t.align - int(uintptr(unsafe.Pointer(unsafe.SliceData(nb)))%uintptr(t.align))) % t.align
			nb = nb[off : off+len(b)]
			copy(nb, b)
			b = nb
		}
		*(*sliceHeader)(unsafe.Pointer(v)) = sliceHeader{data: unsafe.Pointer(unsafe.SliceData(b)), len: n, cap: n}
		return nil
	case shapeString:
		*(*string)(unsafe.Pointer(v)) = unsafe.String(unsafe.SliceData(b), len(b))
		return nil
	}
	p := new(T)
	decode := datatype.Decode
	if own {
		decode = datatype.DecodeOwned
	}
	if err := decode(b, p); err != nil {
		return err
	}
	*v = *p
	return nil
}

var zeroBase uint64

type typeSizeError struct {
	t *typeInfo
	n int
}

func (e *typeSizeError) Error() string {
	if e.t.shape == shapePlain {
		return "a " + strconv.Itoa(e.n) + "-byte message is not one " + e.t.info.Type.String() + " (" + strconv.Itoa(e.t.size) + " bytes)"
	}
	return "a " + strconv.Itoa(e.n) + "-byte message is not a whole number of " + e.t.info.Type.Elem().String() + " (" + strconv.Itoa(e.t.size) + " bytes each)"
}

func errTypeSize(t *typeInfo, n int) error { return &typeSizeError{t, n} }

type badBoolError struct{ t reflect.Type }

func (e badBoolError) Error() string {
	return "the message holds a byte other than 0 or 1 where " + e.t.String() + " has a bool"
}

func errBadBool(t reflect.Type) error { return badBoolError{t} }

// recvStatusErr is statusErr for a typed receive of t (written tname,
// if not as t's Go type): a message of another type gives ErrType naming
// both types.
func (c *Comm) recvStatusErr(op string, l loc, t *typeInfo, tname string, st engine.Status) error {
	if !errors.Is(st.Err, engine.ErrType) {
		return c.statusErr(op, l, st)
	}
	if tname == "" {
		tname = t.info.Type.String()
	} else if tname == "[]" { // a slice of t, named only here: no allocation per receive
		tname = "[]" + t.info.Type.String()
	}
	slice := t.shape == shapePlainSlice || strings.HasPrefix(tname, "[]")
	return c.errorf(op, ErrType, l, "message from rank %d (tag %d) was sent as %s, received as %s", st.Source, st.Tag, sentAs(st.Sig, slice), tname)
}

// sentAs names the type of a message of signature sig. A typed message
// says whether it holds one plain value or a slice of them (typeInfo.msig);
// a low-level one does not, and slice tells which to say.
func sentAs(sig uint64, slice bool) string {
	if rt := datatype.TypeBySig(sig ^ engine.ScalarSig); rt != nil {
		return rt.String()
	}
	if rt := datatype.TypeBySig(sig ^ engine.SliceSig); rt != nil {
		return "[]" + rt.String()
	}
	rt := datatype.TypeBySig(sig)
	switch {
	case rt == nil:
		return "a type this process has not used (signature " + hex(sig) + ")"
	case slice && rt.Kind() != reflect.Slice && datatype.InfoOf(rt).Plain:
		return "[]" + rt.String()
	}
	return rt.String()
}

// typeErr converts a typed-layer conversion error into an *Error.
func (c *Comm) typeErr(op string, l loc, err error) error {
	e := c.errorf(op, ErrType, l, "%v", err).(*Error)
	return c.handle(e)
}

func inlineBytes(s *slot) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&s.inline[0])), len(s.inline)*8)
}

// sendT is every typed blocking send.
func sendT[T any](c *Comm, op string, v *T, dest, tag int, mode engine.Mode) error {
	if !c.fine(dest, tag) {
		if err := c.checkDest(op, dest, tag); err != nil {
			return err
		}
	}
	if dest == ProcNull {
		return nil
	}
	t := typeOf[T]()
	if t.shape == shapePlainSlice || t.shape == shapeString {
		// The bytes are the caller's memory already: no slot needed.
		b, _ := viewBytes(t, v, nil)
		return c.send(op, b, t.msig, dest, tag, mode)
	}
	s := getSlot()
	b, err := viewBytes(t, v, inlineBytes(s))
	if err != nil {
		putSlot(s)
		return c.typeErr(op, at("dest", dest, tag), err)
	}
	// The same decision as for a slice: the short road if it may take it.
	if ok, err := c.p.SendShort(mode, c.ctx, c.rank, c.group[dest], tag, t.msig, b); ok {
		putSlot(s)
		if err != nil {
			return c.handle(c.shortErr(op, dest, tag, err))
		}
		return nil
	}
	c.startSend(&s.er, b, t.msig, dest, tag, mode)
	st := c.p.Wait(&s.er)
	if st.Err != nil {
		err = c.handle(c.statusErr(op, at("dest", dest, tag), st))
	}
	putSlot(s)
	return err
}

// Send sends v to rank dest of c with tag, and returns when v's memory may
// be reused (MPI_Send). v may be of any type: plain values and slices of
// them are sent from their memory with no encoding; anything else is
// encoded. A value that cannot be encoded (a channel, a function) gives
// ErrType naming its type.
func Send[T any](c *Comm, v T, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Send", c, dest, tag), &err)
	}
	return sendT(c, "Send", &v, dest, tag, engine.Standard)
}

// Ssend is Send that returns only once the receiver has matched the
// message (MPI_Ssend).
func Ssend[T any](c *Comm, v T, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ssend", c, dest, tag), &err)
	}
	return sendT(c, "Ssend", &v, dest, tag, engine.Synchronous)
}

// Rsend is a ready-mode Send (MPI_Rsend): the receive must already be posted.
func Rsend[T any](c *Comm, v T, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Rsend", c, dest, tag), &err)
	}
	return sendT(c, "Rsend", &v, dest, tag, engine.Ready)
}

// Bsend copies v into the buffer attached with BufferAttach and returns at
// once (MPI_Bsend).
func Bsend[T any](c *Comm, v T, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Bsend", c, dest, tag), &err)
	}
	if err := c.checkDest("Bsend", dest, tag); err != nil {
		return err
	}
	t := typeOf[T]()
	b, err := viewBytes(t, &v, nil)
	if err != nil {
		return c.typeErr("Bsend", at("dest", dest, tag), err)
	}
	return c.bsend("Bsend", b, t.msig, dest, tag)
}

// isendT starts a typed non-blocking send. into, if not nil, is the
// zeroed Request to use (a slot of a Requests set); the request returned
// may still be another one.
func isendT[T any](into *Request, c *Comm, op string, v T, dest, tag int, mode engine.Mode) (*Request, error) {
	if !c.fine(dest, tag) {
		if err := c.checkDest(op, dest, tag); err != nil {
			return nil, err
		}
	}
	if dest == ProcNull {
		return c.nullRequestIn(into, op, Status{}), nil
	}
	t := typeOf[T]()
	b, err := viewBytes(t, &v, nil)
	if err != nil {
		return nil, c.typeErr(op, at("dest", dest, tag), err)
	}
	if r := c.isendNow(into, op, b, t.msig, dest, tag, mode); r != nil {
		return r, nil
	}
	r := c.newPooledRequest(into, nil, op, whereDest, dest, tag)
	r.er.Cancellable = true
	c.startSend(r.er, b, t.msig, dest, tag, mode)
	return r, nil
}

// Isend starts sending v and returns at once (MPI_Isend). If v is a slice,
// its elements must not be modified until the request completes.
func Isend[T any](c *Comm, v T, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Isend", c, dest, tag), &err)
	}
	return isendT(nil, c, "Isend", v, dest, tag, engine.Standard)
}

// Issend starts a synchronous send (MPI_Issend).
func Issend[T any](c *Comm, v T, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Issend", c, dest, tag), &err)
	}
	return isendT(nil, c, "Issend", v, dest, tag, engine.Synchronous)
}

// recvArgs chooses the buffer a typed receive of T posts: a slot's inline
// room for small plain values, allocation on match otherwise.
func recvBuf(t *typeInfo, s *slot) ([]byte, func(int) []byte) {
	if t.shape == shapePlain {
		if t.size <= len(s.inline)*8 {
			return inlineBytes(s)[:t.size], nil
		}
		return make([]byte, t.size), nil
	}
	return nil, allocBytes
}

// finishRecv turns a completed typed receive into a T.
func finishRecv[T any](c *Comm, op string, l loc, t *typeInfo, er *engine.Request, v *T, blocking bool) (Status, error) {
	est := er.Status()
	st := statusOf(est, t.elemSize())
	if est.Err != nil {
		err := c.recvStatusErr(op, l, t, "", est)
		if blocking {
			err = blockingErr(err) // ft.go
		}
		return st, c.handle(err)
	}
	b := er.Buffer()
	if t.shape == shapePlain {
		if est.Size != t.size {
			return st, c.typeErr(op, l, errTypeSize(t, est.Size))
		}
	} else if b == nil {
		b = []byte{}
	}
	if err := decodeFrom(c, est.Source, t, b[:est.Count], v, true); err != nil {
		return st, c.typeErr(op, l, err)
	}
	return st, nil
}

// Recv receives a value of type T from rank source (or AnySource) with tag
// (or AnyTag) and returns it with its status (MPI_Recv). Slices and strings
// are allocated to the size of the message; to receive into memory you
// already have, use RecvInto. A message sent as another type gives ErrType.
func Recv[T any](c *Comm, source, tag int) (_ T, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Recv", c, source, tag), &err)
	}
	var v T
	if err := c.checkSource("Recv", source, tag); err != nil {
		return v, Status{}, err
	}
	if source == ProcNull {
		return v, procNullStatus, nil
	}
	t := typeOf[T]()
	s := getSlot()
	buf, alloc := recvBuf(t, s)
	c.startSlotRecv(s, buf, alloc, t.msig, source, tag)
	c.p.Wait(&s.er)
	st, err := finishRecv(c, "Recv", at("source", source, tag), t, &s.er, &v, true)
	putSlot(s)
	return v, st, err
}

// RecvInto receives a message of elements of E into buf, which must be
// large enough (MPI_Recv into an existing buffer); Status.Count says how
// many elements arrived. It allocates nothing. E must be plain
// (fixed-size, without pointers).
func RecvInto[E any](c *Comm, buf []E, source, tag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RecvInto", c, source, tag), &err)
	}
	return recvIntoAfter(c, "RecvInto", buf, source, tag, nil)
}

// recvIntoAfter is RecvInto for the call named op, running send (if not
// nil) once the receive is posted and before it waits for it, as
// Comm.recvMsgAfter does: SendrecvInto's blocking send.
func recvIntoAfter[E any](c *Comm, op string, buf []E, source, tag int, send func() error) (Status, error) {
	if !c.fine(source, tag) {
		if err := c.checkSource(op, source, tag); err != nil {
			return Status{}, err
		}
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return Status{}, c.typeErr(op, at("source", source, tag), errNotPlain(t))
	}
	b := datatype.SliceBytes(buf)
	st, err := c.recvMsgAfter(op, msg{b: b}, t.sig, t, "[]", t.size, source, tag, send)
	c.finishRecvInto(op, t, b, source, tag, st, &err)
	return st, err
}

// finishRecvInto puts the plain elements of t that a receive into b got
// (status st, error *err) in this machine's byte order, and makes *err a
// type error if they include bools that are neither 0 nor 1.
func (c *Comm) finishRecvInto(op string, t *typeInfo, b []byte, source, tag int, st Status, err *error) {
	if c.swapFrom(st.Source) {
		swapTyped(t, b[:min(st.Bytes(), len(b))/t.size*t.size])
	}
	if got := b[:min(st.Bytes(), len(b))]; *err == nil && !t.info.ValidBools(got) {
		t.info.FixBools(got)
		*err = c.typeErr(op, at("source", source, tag), errBadBool(t.info.Type))
	}
}

type notPlainError struct{ t *typeInfo }

func (e notPlainError) Error() string {
	return e.t.info.Type.String() + " is not a plain type (it holds pointers, strings, slices, maps or interfaces); use Recv"
}

func errNotPlain(t *typeInfo) error { return notPlainError{t} }

// Pending is a typed receive in flight, returned by Irecv. Wait returns the
// value.
type Pending[T any] struct {
	req *Request
	t   *typeInfo
	v   T
	st  Status
	err error
	got bool
}

// request returns p's request; a nil *Pending is a null request.
func (p *Pending[T]) request() *Request {
	if p == nil {
		return nil
	}
	return p.req
}

// Request returns the underlying request, for WaitAny, Cancel and the like.
func (p *Pending[T]) Request() *Request { return p.request() }

// Wait blocks until the value has arrived and returns it. A nil *Pending
// is a null request: Wait returns the zero value at once.
func (p *Pending[T]) Wait() (_ T, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Pending.Wait", p.comm(), Undefined, Undefined), &err)
	}
	return p.wait()
}

// wait is Wait for the package's own callers (not reported to a Profiler).
func (p *Pending[T]) wait() (T, Status, error) {
	if p == nil {
		var zero T
		return zero, emptyStatus, nil
	}
	if p.got {
		return p.v, p.st, p.err
	}
	st, err := p.req.wait()
	if err != nil || p.req.er == nil || st.Cancelled() {
		p.st, p.err = st, err
		if p.req.er == nil && err == nil && !st.Cancelled() { // ProcNull
			p.got = true
		}
		return p.v, st, err
	}
	p.st, p.err = finishRecv(p.req.c, p.req.opName(), p.req.at(), p.t, p.req.er, &p.v, false)
	p.got = true
	return p.v, p.st, p.err
}

// Test reports whether the value has arrived, without blocking, and if so returns it.
func (p *Pending[T]) Test() (_ bool, _ T, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Pending.Test", p.comm(), Undefined, Undefined), &err)
	}

	if p != nil && !p.req.done() {
		p.comm().missed()
		var zero T
		return false, zero, Status{}, nil
	}
	v, st, err := p.wait()
	return true, v, st, err
}

// Irecv starts receiving a value of type T and returns at once (MPI_Irecv).
func Irecv[T any](c *Comm, source, tag int) (_ *Pending[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Irecv", c, source, tag), &err)
	}
	return irecvT[T](c, source, tag)
}

// irecvT is Irecv without the profiler hook, for the package's own use.
func irecvT[T any](c *Comm, source, tag int) (*Pending[T], error) {
	if err := c.checkSource("Irecv", source, tag); err != nil {
		return nil, err
	}
	t := typeOf[T]()
	if source == ProcNull {
		return &Pending[T]{req: c.nullRequest("Irecv", procNullStatus), t: t}, nil
	}
	r := c.newRequest("Irecv", at("source", source, tag))
	r.setElem(t.elemSize())
	r.er.Note = t
	var buf []byte
	var alloc func(int) []byte
	if t.shape == shapePlain {
		buf = make([]byte, max(t.size, 1))[:t.size]
	} else {
		alloc = allocBytes
	}
	if c.ftReposts(source) { // ft.go
		r.x.repost = func(er *engine.Request) { c.startRecv(er, buf, alloc, t.msig, source, tag) }
	}
	c.startRecv(r.er, buf, alloc, t.msig, source, tag)
	return &Pending[T]{req: r, t: t}, nil
}

// Probe waits until a message from source with tag can be received and
// returns its status without receiving it (MPI_Probe).
func Probe(c *Comm, source, tag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Probe", c, source, tag), &err)
	}
	return c.probeCall(source, tag)
}

// Mprobe waits for a message and takes it out of matching, so that only
// Mrecv on the returned Message receives it (MPI_Mprobe). This is the safe
// way for several goroutines to receive messages of unknown size.
func Mprobe(c *Comm, source, tag int) (_ *Message, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Mprobe", c, source, tag), &err)
	}
	return c.mprobeCall(source, tag)
}

// Mrecv receives the message m as a value of type T (MPI_Mrecv).
func Mrecv[T any](m *Message) (_ T, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Mrecv", m.comm(), Undefined, Undefined), &err)
	}
	var v T
	em, err := m.take("Mrecv")
	if err != nil {
		return v, Status{}, err
	}
	if em == nil {
		return v, procNullStatus, nil
	}
	c := m.c
	t := typeOf[T]()
	s := getSlot()
	buf, alloc := recvBuf(t, s)
	c.startMRecv(em, &s.er, buf, alloc, t.msig)
	c.p.Wait(&s.er)
	st, err := finishRecv(c, "Mrecv", m.at, t, &s.er, &v, true)
	putSlot(s)
	return v, st, err
}

// Sendrecv sends v to dest and receives a value of type R from source at
// the same time (MPI_Sendrecv). Only R needs naming, the type of v is
// inferred: mpi.Sendrecv[[]float64](c, halo, right, 0, left, 0).
func Sendrecv[R, T any](c *Comm, v T, dest, sendtag, source, recvtag int) (_ R, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Sendrecv", c, dest, sendtag), &err)
	}

	var r R
	send := func() error { return sendT(c, "Send", &v, dest, sendtag, engine.Standard) }
	if c.ftReposts(source) {
		// Under fault tolerance an AnySource receive is the general
		// request, which a failure may post again (ft.go).
		p, err := irecvT[R](c, source, recvtag)
		if err != nil {
			return r, Status{}, err
		}
		if err := send(); err != nil {
			p.req.Cancel()
			p.req.wait()
			return r, Status{}, err
		}
		v, st, err := p.wait()
		return v, st, blockingErr(err)
	}
	// Recv's road, with the send between posting and waiting.
	if err := c.checkSource("Sendrecv", source, recvtag); err != nil {
		return r, Status{}, err
	}
	if source == ProcNull {
		if err := send(); err != nil {
			return r, Status{}, err
		}
		return r, procNullStatus, nil
	}
	t := typeOf[R]()
	s := getSlot()
	buf, alloc := recvBuf(t, s)
	c.startSlotRecv(s, buf, alloc, t.msig, source, recvtag)
	if err := send(); err != nil {
		c.cancelSlotRecv(s)
		return r, Status{}, err
	}
	c.p.Wait(&s.er)
	st, err := finishRecv(c, "Sendrecv", at("source", source, recvtag), t, &s.er, &r, true)
	putSlot(s)
	return r, st, err
}

// SendrecvInto sends v to dest and receives elements of E from source into
// buf at the same time (MPI_Sendrecv into an existing buffer): the form
// for halo exchanges in a loop, which allocates no result slice. E must be
// plain; the status counts the elements received.
func SendrecvInto[T, E any](c *Comm, v T, dest, sendtag int, buf []E, source, recvtag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("SendrecvInto", c, dest, sendtag), &err)
	}

	send := func() error { return sendT(c, "Send", &v, dest, sendtag, engine.Standard) }
	if c.ftReposts(source) {
		r, err := irecvInto(nil, nil, c, buf, source, recvtag)
		return sendrecvGeneral(r, err, send)
	}
	return recvIntoAfter(c, "SendrecvInto", buf, source, recvtag, send)
}

// IrecvInto starts receiving elements of E into buf and returns at once
// (MPI_Irecv into an existing buffer). buf must not be used until the
// request completes. E must be plain.
func IrecvInto[E any](c *Comm, buf []E, source, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IrecvInto", c, source, tag), &err)
	}
	return irecvInto(nil, nil, c, buf, source, tag)
}

// irecvInto is IrecvInto for the package's own callers, in into if not
// nil (a zeroed slot of a Requests set), with the engine request er if not
// nil (the slot's: see newPooledRequest).
func irecvInto[E any](into *Request, er *engine.Request, c *Comm, buf []E, source, tag int) (*Request, error) {
	if !c.fine(source, tag) {
		if err := c.checkSource("IrecvInto", source, tag); err != nil {
			return nil, err
		}
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return nil, c.typeErr("IrecvInto", at("source", source, tag), errNotPlain(t))
	}
	if source == ProcNull {
		return c.nullRequestIn(into, "IrecvInto", procNullStatus), nil
	}
	b := datatype.SliceBytes(buf)
	var r *Request
	if c.ftReposts(source) { // ft.go: a failure may post it again
		r = c.newRequest("IrecvInto", at("source", source, tag))
		r.x.repost = func(er *engine.Request) { c.startRecv(er, b, nil, t.sig, source, tag) }
	} else {
		r = c.newPooledRequest(into, er, "IrecvInto", whereSource, source, tag)
	}
	r.setElem(t.size)
	r.er.Note = t
	r.set(fSliceOf, true)
	if c.p.reprs != nil {
		r.more().conv = c.lowConv(b, t.info.TypeMap())
	}
	c.startRecv(r.er, b, nil, t.sig, source, tag)
	return r, nil
}

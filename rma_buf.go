package mpi

import (
	"bytes"
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/mpigo/mpi/internal/checked"
	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/rma"
)

// The low-level layer of one-sided communication: MPI's calls with a
// buffer, a count and a Datatype on the origin side and a count and a
// Datatype on the target side, both possibly derived and non-contiguous
// (MPI_Put(origin_addr, origin_count, origin_datatype, target_rank,
// target_disp, target_count, target_datatype, win) and its kin). They
// work on any Window[T]: the target displacement counts elements of T
// (the window's displacement unit, DispUnit), and the target datatype
// lays out bytes from there. A Window[byte] is MPI's window with
// disp_unit 1.
//
// The origin packs its data with the origin datatype; the target side is
// described as byte runs (vdesc) that an origin with direct access walks
// in the target's memory, and that travel with the request to a target
// served by messages, which checks every run against its window before
// touching memory.

// Operations of the low-level one-sided calls that MPI adds to those of
// the reductions (MPI_REPLACE and MPI_NO_OP). They are not defined in
// reductions.
var (
	OpReplace = &ReduceOp{name: "replace"} // MPI_REPLACE: the target element becomes the origin's
	OpNoOp    = &ReduceOp{name: "no_op"}   // MPI_NO_OP: the target element is left as it is
)

// rmaOpNames gives the low-level operations their codes in requests.
var rmaOpNames = []string{"sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc", "replace", "no_op"}

// Request kinds of the low-level calls (after those of rma_msg.go).
const (
	reqPutV byte = 64 + iota
	reqGetV
	reqAccV    // accumulate a predefined op; reply only for a dynamic window
	reqGaccV   // get-accumulate a predefined op; the old values back
	reqCasV    // compare and swap: data is compare then swap
	reqFetchV  // read under the accumulate mutex (user ops)
	reqSwapIfV // write new if the runs still hold old (user ops)
)

// noElem marks a request whose element datatype does not matter
// (REPLACE, NO_OP on any data).
const noElem = 255

// vdesc describes count values of a datatype as byte runs: the runs of
// one value, repeated every ext bytes.
type vdesc struct {
	count int64
	ext   int64
	segs  []datatype.Seg
	size  int64 // data bytes of one value
}

// descOf describes count values of dt; a contiguous dt is one run.
func descOf(dt *Datatype, count int) vdesc {
	t := dt.t
	if count == 0 || t.Size == 0 {
		return vdesc{}
	}
	if t.Contiguous() {
		n := int64(count) * t.Size
		return vdesc{count: 1, ext: n, segs: []datatype.Seg{{Off: 0, Len: n}}, size: n}
	}
	return vdesc{count: int64(count), ext: t.Extent(), segs: t.Segs, size: t.Size}
}

// run returns the one run of bytes the values make, relative to the
// first value's start, and false if they make several.
func (d *vdesc) run() (off, n int64, ok bool) {
	if len(d.segs) != 1 || (d.count > 1 && d.ext != d.segs[0].Len) {
		return 0, 0, false
	}
	return d.segs[0].Off, d.bytes(), true
}

// bytes returns the data bytes of all the values.
func (d *vdesc) bytes() int64 { return d.count * d.size }

// span returns the byte range [lo, hi) the values touch relative to the
// first value's start, and false if it overflows.
func (d *vdesc) span() (lo, hi int64, ok bool) {
	if d.count == 0 || d.size == 0 {
		return 0, 0, true
	}
	lo, hi = math.MaxInt64, math.MinInt64
	for _, s := range d.segs {
		e, ok := checked.Add64(s.Off, s.Len)
		if !ok {
			return 0, 0, false
		}
		lo, hi = min(lo, s.Off), max(hi, e)
	}
	last, ok := checked.Mul64(d.count-1, d.ext)
	if !ok {
		return 0, 0, false
	}
	if last < 0 {
		lo, ok = checked.Add64(lo, last)
	} else {
		hi, ok = checked.Add64(hi, last)
	}
	return lo, hi, ok
}

// move copies between the packed bytes p and the values in buf, the
// first value at byte origin of buf: out of buf (pack) or into it.
func (d *vdesc) move(p, buf []byte, origin int64, pack bool) {
	base := origin
	for k := int64(0); k < d.count; k++ {
		for _, s := range d.segs {
			a := base + s.Off
			if pack {
				copy(p[:s.Len], buf[a:a+s.Len])
			} else {
				copy(buf[a:a+s.Len], p[:s.Len])
			}
			p = p[s.Len:]
		}
		base += d.ext
	}
}

// Limits on what a request may describe; the target refuses more.
const (
	rmaMost = 1 << 40
	// rmaMostDisp bounds the byte displacement a request names: above
	// rmaMost, as a dynamic window's memory may be attached at its
	// address (AttachAt; the C ABI does), which lies above 2^40 on 64-bit
	// systems.
	rmaMostDisp = 1 << 56
	rmaDescHead = 24 // count, ext, number of runs
)

// appendDesc appends d to b in the wire form: count, extent, number of
// runs, then each run's offset and length (little-endian int64s).
func appendDesc(b []byte, d *vdesc) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, uint64(d.count))
	b = le.AppendUint64(b, uint64(d.ext))
	b = le.AppendUint64(b, uint64(len(d.segs)))
	for _, s := range d.segs {
		b = le.AppendUint64(b, uint64(s.Off))
		b = le.AppendUint64(b, uint64(s.Len))
	}
	return b
}

// parseDesc reads a description written by appendDesc, refusing one whose
// numbers are out of range; it returns the bytes after it.
func parseDesc(b []byte) (vdesc, []byte, bool) {
	le := binary.LittleEndian
	if len(b) < rmaDescHead {
		return vdesc{}, nil, false
	}
	count, ext, n := int64(le.Uint64(b)), int64(le.Uint64(b[8:])), le.Uint64(b[16:])
	b = b[rmaDescHead:]
	if count < 0 || count > rmaMost || ext < -rmaMost || ext > rmaMost || n > uint64(len(b)/16) {
		return vdesc{}, nil, false
	}
	d := vdesc{count: count, ext: ext, segs: make([]datatype.Seg, n)}
	for i := range d.segs {
		off, l := int64(le.Uint64(b)), int64(le.Uint64(b[8:]))
		b = b[16:]
		if l <= 0 || l > rmaMost || off < -rmaMost || off > rmaMost {
			return vdesc{}, nil, false
		}
		d.segs[i] = datatype.Seg{Off: off, Len: l}
		d.size += l
		if d.size > rmaMost {
			return vdesc{}, nil, false
		}
	}
	if t, ok := checked.Mul64(d.count, d.size); !ok || t > rmaMost {
		return vdesc{}, nil, false
	}
	return d, b, true
}

// view returns the memory that the values of d at byte base of m touch,
// with the offset of the first value in it, or false if they do not all
// lie inside the window (for a dynamic window: inside one attached
// region).
func (m *tmem) view(base int64, d *vdesc, esize int) ([]byte, int64, bool) {
	if d.bytes() == 0 {
		return nil, 0, true
	}
	lo, hi, ok := d.span()
	if !ok {
		return nil, 0, false
	}
	a, ok1 := checked.Add64(base, lo)
	z, ok2 := checked.Add64(base, hi)
	if !ok1 || !ok2 {
		return nil, 0, false
	}
	if m.dyn == nil {
		if a < 0 || z > int64(len(m.buf)) {
			return nil, 0, false
		}
		return m.buf, base, true
	}
	t := m.dyn
	t.mu.RLock()
	defer t.mu.RUnlock()
	if a >= z {
		return nil, 0, false
	}
	buf, rb, ok := t.cover(a, z, esize)
	if !ok {
		return nil, 0, false
	}
	return buf, base - rb, true
}

// rmaKernel returns inout = inout ⊕ in for the predefined operation name
// on packed elements of e (nil e: any bytes, for REPLACE and NO_OP), or
// nil if it is not defined there.
func rmaKernel(e *Datatype, name string) func(in, inout []byte) {
	switch name {
	case "replace":
		return func(in, inout []byte) { copy(inout, in) }
	case "no_op":
		return func(in, inout []byte) {}
	}
	if e == nil {
		return nil
	}
	k := e.opKernel(name)
	if k == nil {
		return nil
	}
	if b := e.block(); b > 0 && b != e.size {
		k = unpaddedKernel(k, e)
	}
	return func(in, inout []byte) { k(inout, in) }
}

// lowApply is one low-level operation on a target's memory, run by the
// origin where it reaches the memory and by the target's server
// otherwise. in is the origin's packed data (for a compare-and-swap:
// compare then swap); out receives the packed values read (Get, the old
// values of a get-accumulate, fetch, compare-and-swap). f combines for
// the accumulate kinds. It reports whether the runs held old, for
// reqSwapIfV (and true otherwise).
func lowApply(m *tmem, buf []byte, origin int64, d *vdesc, kind byte, f func(in, inout []byte), in, out []byte, giveUp func() error) (bool, error) {
	lock := func() error {
		if rma.TryAcc(m.acc) {
			return nil
		}
		return rma.AccLock(m.acc, giveUp)
	}
	switch kind {
	case reqPutV:
		d.move(in, buf, origin, false)
		return true, nil
	case reqGetV:
		d.move(out, buf, origin, true)
		return true, nil
	}
	n := d.bytes()
	if err := lock(); err != nil {
		return false, err
	}
	defer rma.AccUnlock(m.acc)
	if off, rn, ok := d.run(); ok && kind == reqAccV && out == nil && !overlap(in, buf[origin+off:origin+off+rn]) {
		// One run, nothing to give back: combine in place (in may be
		// the origin's own buffer, inPlace, hence the overlap check).
		a := origin + off
		f(in, buf[a:a+rn])
		return true, nil
	}
	cur := out
	if cur == nil {
		cur = make([]byte, n)
	}
	d.move(cur, buf, origin, true)
	switch kind {
	case reqAccV, reqGaccV:
		if out != nil {
			cur = bytes.Clone(cur)
		}
		f(in, cur)
		d.move(cur, buf, origin, false)
	case reqCasV, reqSwapIfV:
		if !bytes.Equal(cur, in[:n]) {
			return false, nil
		}
		d.move(in[n:], buf, origin, false)
	}
	return true, nil
}

// inPlace returns the first n bytes of buf, holding count values of dt,
// when an operation towards target can use them where they are: dt is
// contiguous (its packed form is those bytes) and target's memory is
// reached directly, so that the operation is over when its call returns
// (run's direct path). Else nil: the caller packs into a buffer of its
// own, which the message and fabric roads may keep past the call. A
// buffer of the packed size per call cost more than the copy itself: a
// Put, Get or Accumulate of 2 MiB to a window reached directly took
// 1.3-2.6 ms, its allocation, zeroing and the collector's work (MPICH's
// rma/rma_contig).
func (w *Window[T]) inPlace(target, disp int, d *vdesc, buf []byte, n int, dt *Datatype) []byte {
	if n == 0 || !dt.t.Contiguous() || len(buf) < n || w.c.swapFrom(target) {
		return nil
	}
	if w.directView(target, int64(disp)*int64(w.esize), d) == nil {
		return nil
	}
	return buf[:n:n]
}

// packedWithRoom packs n bytes of dt's values from origin into a buffer
// with room in front for the header and target description d of a
// request by message (rmaHdr and appendDesc's bytes), and returns the
// whole buffer and the packed part. The request is then that buffer:
// one buffer of the data's size per call instead of three (the packed
// data, the description with it, the request), each a copy and, for
// large calls, memory faulted in anew (a 2 MiB MPI_Put by message took
// 8-15 ms).
func packedWithRoom(origin []byte, n int, dt *Datatype, d *vdesc) (whole, in []byte) {
	head := rmaHdr + rmaDescHead + 16*len(d.segs)
	whole = make([]byte, head+n)
	in = whole[head:]
	dt.t.PackAt(in, origin, 0)
	return whole, in
}

// request returns c's request by message in c.whole when c.in still lies
// at its end (a byte-order conversion copies it elsewhere), else nil.
func (c *lowCall) request() []byte {
	head := len(c.whole) - len(c.in)
	if len(c.in) == 0 || head != rmaHdr+rmaDescHead+16*len(c.d.segs) || &c.whole[head] != &c.in[0] {
		return nil
	}
	b := c.whole
	clear(b[:rmaHdr])
	b[0], b[1], b[2] = c.kind, c.opk, c.elem
	binary.LittleEndian.PutUint64(b[8:], uint64(c.disp))
	appendDesc(b[rmaHdr:rmaHdr], &c.d)
	return b
}

// ensureOut makes out, for a Get whose answer was to go straight into
// its contiguous origin (dst) but takes a road that needs a buffer of
// its own (the fabric's).
func (c *lowCall) ensureOut() {
	if c.out != nil || c.dst == nil {
		return
	}
	out, dst := make([]byte, len(c.dst)), c.dst
	c.out = out
	c.done = func() { copy(dst, out) }
}

// overlap reports whether a and b share memory.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// lowCall is a checked low-level operation, ready to run.
type lowCall struct {
	name   string // "PutBuf", ...
	target int
	disp   int
	kind   byte
	d      vdesc
	in     []byte // packed origin data
	whole  []byte // in, with room in front for a request's header (packedWithRoom)
	out    []byte // packed result, unpacked into the origin's buffer by done
	done   func() // unpacks out
	dst    []byte // a Get's contiguous origin, when out is made only if needed (ensureOut)
	op     *ReduceOp
	opk    byte
	elem   byte
	ae     *Datatype // the predefined datatype of the target's elements (accumulate kinds), or nil
	noAtom bool      // never through the fabric's atomics (the misaligned part of a call, rma_atomic.go)
	f      func(in, inout []byte)

	// A target of the other byte order (hetero_rma.go): the datatypes
	// whose packed forms in and out are (nil: nothing to convert).
	inT, outT *Datatype
	hetDone   bool // hetLow has run
}

// lowTarget checks the target side of a low-level call and the epoch,
// and describes the target's values. It reports a ProcNull target as
// null.
func (w *Window[T]) lowTarget(name string, target, disp, count int, dt *Datatype) (vdesc, bool, error) {
	if null, err := w.check(name, target, 0, 0); null || err != nil {
		return vdesc{}, null, err
	}
	if s := dt.checkComm(); s != "" {
		return vdesc{}, false, w.errorf(name, ErrType, target, "target datatype: %s", s)
	}
	if count < 0 {
		return vdesc{}, false, w.errorf(name, ErrCount, target, "negative target count %d", count)
	}
	if _, ok := checked.Mul(count, dt.size); !ok {
		return vdesc{}, false, w.errorf(name, ErrCount, target, "%d elements of %s overflow an int", count, dt.name)
	}
	d := descOf(dt, count)
	lo, hi, ok := d.span()
	base, ok2 := checked.Mul(disp, w.esize)
	if disp < 0 || !ok || !ok2 {
		return vdesc{}, false, w.errorf(name, ErrRMARange, target, "displacement %d with %d element(s) of %s lies outside target %d's window", disp, count, dt.name, target)
	}
	if !w.dynamic && d.bytes() > 0 && (int64(base)+lo < 0 || int64(base)+hi > int64(w.sizes[target])*int64(w.esize)) {
		return vdesc{}, false, w.errorf(name, ErrRMARange, target, "displacement %d with %d element(s) of %s reaches bytes [%d, %d) of target %d's window of %d bytes", disp, count, dt.name, int64(base)+lo, int64(base)+hi, target, w.sizes[target]*w.esize)
	}
	return d, false, nil
}

// lowOrigin checks an origin buffer of count elements of dt and returns
// its packed size.
func (w *Window[T]) lowOrigin(name, what string, target int, buf []byte, count int, dt *Datatype) (int, error) {
	if s := dt.checkComm(); s != "" {
		return 0, w.errorf(name, ErrType, target, "%s datatype: %s", what, s)
	}
	if count < 0 {
		return 0, w.errorf(name, ErrCount, target, "negative %s count %d", what, count)
	}
	n, ok := checked.Mul(count, dt.size)
	if !ok {
		return 0, w.errorf(name, ErrCount, target, "%d elements of %s overflow an int", count, dt.name)
	}
	if isBottom(buf) {
		return 0, w.errorf(name, ErrBuffer, target, "Bottom is not supported in one-sided calls: pass the buffer")
	}
	if msg, class := dt.fits(count, len(buf)); class != nil {
		return 0, w.errorf(name, class, target, "%s buffer: %s", what, msg)
	}
	return n, nil
}

// matchTypes checks that origin and target data agree: the same number of
// bytes, and the same basic kind where both have one (Byte matches any).
func (w *Window[T]) matchTypes(name string, target int, n int, odt *Datatype, d *vdesc, tdt *Datatype) error {
	if int64(n) != d.bytes() {
		return w.errorf(name, ErrType, target, "the origin's data is %d bytes (%s), the target's %d bytes (%s)", n, odt.name, d.bytes(), tdt.name)
	}
	if n == 0 {
		// No data: the empty signatures match whatever the datatypes
		// (MPICH's rma/badrma mixes MPI_INT and MPI_DOUBLE in calls of
		// zero elements).
		return nil
	}
	ko, kt := odt.t.Uniform().Canon(), tdt.t.Uniform().Canon()
	if ko != 0 && kt != 0 && ko != kt && ko != datatype.BasicByte && kt != datatype.BasicByte {
		return w.errorf(name, ErrType, target, "origin datatype %s holds %s, target datatype %s holds %s", odt.name, ko, tdt.name, kt)
	}
	return nil
}

// lowOriginFor checks an origin-side buffer (lowOrigin) and that it
// matches the target's side d (matchTypes), and returns its size in bytes.
func (w *Window[T]) lowOriginFor(name, what string, target int, buf []byte, count int, dt *Datatype, d *vdesc, tdt *Datatype) (int, error) {
	n, err := w.lowOrigin(name, what, target, buf, count, dt)
	if err != nil {
		return 0, err
	}
	return n, w.matchTypes(name, target, n, dt, d, tdt)
}

// lowOp resolves the operation of an accumulate-kind call on elements of
// tdt into c.
func (w *Window[T]) lowOp(c *lowCall, op *ReduceOp, tdt *Datatype) error {
	if op == nil {
		return w.errorf(c.name, ErrOp, c.target, "nil operation")
	}
	c.op = op
	e := elemType(tdt)
	c.ae = e
	c.elem = noElem
	for i, p := range predefinedWithOps {
		if p == e {
			c.elem = byte(i)
		}
	}
	if op.user != nil {
		if e == nil {
			return w.errorf(c.name, ErrType, c.target, "a user operation needs target data of one predefined datatype, not %s", tdt.name)
		}
		f := op.user
		if b := e.block(); b > 0 && b != e.size {
			c.f = func(in, inout []byte) { userOnLayout(f, e, in, inout) }
		} else {
			c.f = func(in, inout []byte) { f(in, inout, len(inout)/e.size, e) }
		}
		return nil
	}
	for i, nm := range rmaOpNames {
		if nm == op.name {
			c.opk = byte(i)
		}
	}
	if op.name != "replace" && op.name != "no_op" && e == nil {
		return w.errorf(c.name, ErrType, c.target, "operation %s needs target data of one predefined datatype, not %s", op.name, tdt.name)
	}
	if c.f = rmaKernel(e, op.name); c.f == nil && c.d.bytes() > 0 {
		// With no elements there is nothing to combine, and MPICH and
		// Open MPI accept such a call (mpi4py probes Get_accumulate
		// with zero MPI_BYTEs and the default MPI_SUM).
		return w.errorf(c.name, ErrOp, c.target, "operation %s is not defined on %s", op.name, e.name)
	}
	return nil
}

// run carries out c: directly in the target's memory where this rank
// reaches it, else by message. With async it returns a request for a call
// that travels by message (nil when the call is complete already).
func (w *Window[T]) run(c *lowCall, async bool) (*Request, error) {
	if c.d.bytes() == 0 {
		return nil, nil
	}
	if ok, err := w.lowAtomic(c); ok { // rma_atomic.go
		return nil, err
	}
	if m := w.directView(c.target, int64(c.disp)*int64(w.esize), &c.d); m != nil {
		buf, origin, ok := m.view(int64(c.disp)*int64(w.esize), &c.d, w.esize)
		if !ok {
			return nil, w.errorf(c.name, ErrRMARange, c.target, "displacement %d lies outside target %d's attached memory", c.disp, c.target)
		}
		if _, err := lowApply(m, buf, origin, &c.d, c.kind, c.f, c.in, c.out, w.giveUp(c.target)); err != nil {
			return nil, w.failed(c.name, c.target, err)
		}
		if c.done != nil {
			c.done()
		}
		return nil, nil
	}
	if rm := w.remote(c.target); rm != nil && (c.kind == reqPutV || c.kind == reqGetV) {
		c.ensureOut()
		base := int64(c.disp) * int64(w.esize)
		size := int64(w.sizes[c.target]) * int64(w.esize)
		if off, n, ok := c.d.run(); ok {
			// One run of bytes at the target: through the fabric
			// (rma_fabric.go).
			off += base
			if off < 0 || off > size || n > size-off {
				return nil, w.errorf(c.name, ErrRMARange, c.target, "bytes %d to %d lie outside target %d's window of %d bytes", off, off+n, c.target, size)
			}
			if c.kind == reqPutV {
				return nil, w.fabPut(c.name, rm, c.target, int(off), c.in)
			}
			if err := w.fabGet(c.name, rm, c.target, int(off), c.out); err != nil {
				return nil, err
			}
			if c.done != nil {
				c.done()
			}
			return nil, nil
		}
		if lo, hi, ok := c.d.span(); ok && base+lo >= 0 && base+hi <= size {
			if runs, ok := fabRuns(&c.d, base); ok {
				// Several runs, long enough: one operation each.
				if c.kind == reqPutV {
					return nil, w.fabPutRuns(c.name, rm, c.target, runs, c.in)
				}
				if err := w.fabGetRuns(c.name, rm, c.target, runs, c.out); err != nil {
					return nil, err
				}
				if c.done != nil {
					c.done()
				}
				return nil, nil
			}
		}
	}
	if c.op != nil && c.op.user != nil {
		if async {
			return w.background(c.name, c.target, func() error { return w.remoteApplyV(c) })
		}
		return nil, w.remoteApplyV(c)
	}
	c.hetLow() // a target of the other byte order (hetero_rma.go)
	if (c.kind == reqPutV || c.kind == reqAccV) && !w.dynamic {
		b := c.request()
		if b == nil {
			b = rmaRequestV(c.kind, c.opk, c.elem, 0, c.disp, append(appendDesc(nil, &c.d), c.in...))
		}
		w.pend[c.target].Add(1)
		if async {
			r, err := w.isend(c.target, b)
			if err != nil {
				return nil, w.failed(c.name, c.target, err)
			}
			return r, nil
		}
		if err := w.send(c.target, b, true); err != nil {
			return nil, w.failed(c.name, c.target, err)
		}
		return nil, nil
	}
	data := appendDesc(nil, &c.d)
	data = append(data, c.in...)
	finish := func(rep []byte) error {
		if c.out == nil && c.dst != nil {
			if len(rep) != len(c.dst) {
				return w.errorf(c.name, ErrOther, c.target, "the target answered %d bytes, want %d", len(rep), len(c.dst))
			}
			copy(c.dst, rep)
			return nil
		}
		if c.out != nil {
			if len(rep) != len(c.out) {
				return w.errorf(c.name, ErrOther, c.target, "the target answered %d bytes, want %d", len(rep), len(c.out))
			}
			copy(c.out, rep)
			if c.done != nil {
				c.done()
			}
		}
		return nil
	}
	pr, err := w.startCall(c.name, c.target, func(tag int) []byte { return rmaRequestV(c.kind, c.opk, c.elem, tag, c.disp, data) })
	if err != nil {
		return nil, err
	}
	if async {
		return w.background(c.name, c.target, func() error {
			rep, _, err := w.endCall(c.name, c.target, pr)
			if err != nil {
				return err
			}
			return finish(rep)
		})
	}
	rep, _, err := w.endCall(c.name, c.target, pr)
	if err != nil {
		return nil, err
	}
	return nil, finish(rep)
}

// remoteApplyV applies a user operation at a target served by messages:
// it reads the target's values, combines them here and writes them back
// only if the target still holds what was read, retrying otherwise.
func (w *Window[T]) remoteApplyV(c *lowCall) error {
	desc := appendDesc(nil, &c.d)
	cur, err := w.call(c.name, c.target, reqFetchV, 0, c.disp, 0, desc)
	if err != nil {
		return err
	}
	n := int(c.d.bytes())
	for {
		if len(cur) != n {
			return w.errorf(c.name, ErrOther, c.target, "the target answered %d bytes, want %d", len(cur), n)
		}
		both := make([]byte, len(desc)+2*n)
		copy(both, desc)
		copy(both[len(desc):], cur) // as read: the target compares its own bytes
		upd := both[len(desc)+n:]
		// A target of the other byte order: combine in this rank's
		// order, and write back in the target's (hetero_rma.go).
		var ct *datatype.Type
		var cs int
		if c.inT != nil {
			ct, cs = c.inT.t, c.inT.size
		}
		mine := swapPacked(ct, cs, cur)
		copy(upd, mine)
		c.f(c.in, upd)
		if ct != nil {
			ct.SwapPacked(upd, n/cs)
		}
		rep, st, err := w.callStatus(c.name, c.target, reqSwapIfV, 0, c.disp, 0, both)
		if err != nil {
			return err
		}
		if st == repOK {
			if c.out != nil {
				copy(c.out, mine)
				if c.done != nil {
					c.done()
				}
			}
			return nil
		}
		cur = rep
	}
}

// rmaRequestV builds a low-level request: the header of rmaRequest with
// the element datatype's code in byte 2 and data after it.
func rmaRequestV(kind, opk, elem byte, tag, disp int, data []byte) []byte {
	b := rmaRequest(kind, opk, tag, disp, 0, data)
	b[2] = elem
	return b
}

// serveV serves a low-level request from origin: everything in it is
// checked against this rank's window before memory is touched.
func (w *Window[T]) serveV(origin int, b []byte, reply, replyIn func(byte, []byte), bad func(string, ...any)) {
	le := binary.LittleEndian
	kind, opk, elem := b[0], b[1], b[2]
	tag := int(le.Uint32(b[4:]))
	disp := le.Uint64(b[8:])
	d, data, ok := parseDesc(b[rmaHdr:])
	if !ok || disp > rmaMostDisp/uint64(w.esize) {
		bad("malformed request")
		return
	}
	n := d.bytes()
	need := int64(0)
	switch kind {
	case reqPutV, reqAccV, reqGaccV:
		need = n
	case reqCasV, reqSwapIfV:
		need = 2 * n
	}
	if int64(len(data)) != need {
		bad("request of %d bytes, want %d", len(data), need)
		return
	}
	buf, off, ok := w.me.view(int64(disp)*int64(w.esize), &d, w.esize)
	if !ok {
		bad("displacement %d lies outside rank %d's window", disp, w.c.rank)
		return
	}
	var f func(in, inout []byte)
	if kind == reqAccV || kind == reqGaccV {
		var e *Datatype
		if elem != noElem {
			if int(elem) >= len(predefinedWithOps) {
				bad("unknown datatype %d", elem)
				return
			}
			e = predefinedWithOps[elem]
		}
		if int(opk) >= len(rmaOpNames) {
			bad("unknown operation %d", opk)
			return
		}
		if f = rmaKernel(e, rmaOpNames[opk]); f == nil {
			bad("operation %s is not defined on the target's datatype", rmaOpNames[opk])
			return
		}
	}
	var whole, out []byte // the answer: a status byte, then out
	switch kind {
	case reqGetV, reqGaccV, reqCasV, reqFetchV, reqSwapIfV:
		whole = make([]byte, 1+n)
		out = whole[1:]
	}
	if kind == reqFetchV {
		kind = reqGaccV
		f = func(in, inout []byte) {}
	}
	held, err := lowApply(w.me, buf, off, &d, kind, f, data, out, nil)
	if err != nil {
		bad("%v", err)
		return
	}
	switch {
	case kind == reqSwapIfV && !held:
		replyIn(repChanged, whole)
	case kind == reqSwapIfV:
		reply(repOK, nil)
	case out != nil:
		replyIn(repOK, whole)
	case tag != 0:
		reply(repOK, nil)
	}
}

// PutBuf writes count elements of dt from origin into target's window
// (MPI_Put): the target's part is tcount elements of tdt laid out from
// element disp of the window (disp counts elements of T, the window's
// displacement unit). Both datatypes may be derived and non-contiguous;
// they must describe the same number of bytes, of the same basic kind
// where both have one. It is complete at the next Flush, Unlock or Fence;
// origin may be reused at once.
func (w *Window[T]) PutBuf(origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.PutBuf", nil, Undefined, Undefined), &err)
	}
	_, err = w.putBuf("PutBuf", origin, count, dt, target, disp, tcount, tdt, false)
	return err
}

// RputBuf is PutBuf returning a request (MPI_Rput): the request completes
// when origin may be reused. Towards a target served by messages the
// data is sent in the background.
func (w *Window[T]) RputBuf(origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.RputBuf", nil, Undefined, Undefined), &err)
	}
	r, err := w.putBuf("RputBuf", origin, count, dt, target, disp, tcount, tdt, true)
	return w.done("RputBuf", r, err)
}

func (w *Window[T]) putBuf(name string, origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype, async bool) (*Request, error) {
	d, null, err := w.lowTarget(name, target, disp, tcount, tdt)
	if null || err != nil {
		return nil, err
	}
	n, err := w.lowOriginFor(name, "origin", target, origin, count, dt, &d, tdt)
	if err != nil {
		return nil, err
	}
	var whole []byte
	in := w.inPlace(target, disp, &d, origin, n, dt)
	if in == nil {
		whole, in = packedWithRoom(origin, n, dt, &d)
	}
	c := &lowCall{name: name, target: target, disp: disp, kind: reqPutV, d: d, in: in, whole: whole}
	if err := w.mixLow(c, dt, nil, tdt); err != nil { // hetero_rma.go
		return nil, err
	}
	return w.run(c, async)
}

// GetBuf reads tcount elements of tdt, laid out from element disp of
// target's window, into count elements of dt in origin (MPI_Get). origin
// holds them at the next Flush, Unlock or Fence.
func (w *Window[T]) GetBuf(origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.GetBuf", nil, Undefined, Undefined), &err)
	}
	_, err = w.getBuf("GetBuf", origin, count, dt, target, disp, tcount, tdt, false)
	return err
}

// RgetBuf is GetBuf returning a request (MPI_Rget): origin holds the data
// when it completes. Towards a target served by messages the call
// returns at once and the answer arrives in the background.
func (w *Window[T]) RgetBuf(origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.RgetBuf", nil, Undefined, Undefined), &err)
	}
	r, err := w.getBuf("RgetBuf", origin, count, dt, target, disp, tcount, tdt, true)
	return w.done("RgetBuf", r, err)
}

func (w *Window[T]) getBuf(name string, origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype, async bool) (*Request, error) {
	d, null, err := w.lowTarget(name, target, disp, tcount, tdt)
	if null || err != nil {
		return nil, err
	}
	n, err := w.lowOriginFor(name, "origin", target, origin, count, dt, &d, tdt)
	if err != nil {
		return nil, err
	}
	var c *lowCall
	if out := w.inPlace(target, disp, &d, origin, n, dt); out != nil {
		c = &lowCall{name: name, target: target, disp: disp, kind: reqGetV, d: d, out: out}
	} else if dt.t.Contiguous() && n > 0 && len(origin) >= n && !w.c.swapFrom(target) {
		// The answer goes straight into origin (run's finish).
		c = &lowCall{name: name, target: target, disp: disp, kind: reqGetV, d: d, dst: origin[:n:n]}
	} else {
		out := make([]byte, n)
		c = &lowCall{name: name, target: target, disp: disp, kind: reqGetV, d: d, out: out,
			done: func() { dt.t.UnpackAt(out, origin, 0) }}
	}
	if err := w.mixLow(c, nil, dt, tdt); err != nil { // hetero_rma.go
		return nil, err
	}
	return w.run(c, async)
}

// AccumulateBuf combines count elements of dt from origin into tcount
// elements of tdt from element disp of target's window (MPI_Accumulate):
// each target element becomes origin ⊕ target, atomically per element
// with respect to the window's other accumulate-family calls. op is a
// predefined operation (OpSum, ..., OpReplace) or, beyond MPI, a user
// operation from NewReduceOp, called with in holding the origin's
// elements and inout the target's. The target datatype's elements must
// all be of one predefined datatype. Complete at the next Flush, Unlock
// or Fence.
func (w *Window[T]) AccumulateBuf(origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.AccumulateBuf", nil, Undefined, Undefined), &err)
	}
	_, err = w.accBuf("AccumulateBuf", origin, count, dt, nil, 0, nil, target, disp, tcount, tdt, op, false)
	return err
}

// RaccumulateBuf is AccumulateBuf returning a request (MPI_Raccumulate),
// which completes when origin may be reused.
func (w *Window[T]) RaccumulateBuf(origin []byte, count int, dt *Datatype, target, disp, tcount int, tdt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.RaccumulateBuf", nil, Undefined, Undefined), &err)
	}
	r, err := w.accBuf("RaccumulateBuf", origin, count, dt, nil, 0, nil, target, disp, tcount, tdt, op, true)
	return w.done("RaccumulateBuf", r, err)
}

// GetAccumulateBuf is AccumulateBuf that also stores the values the
// target elements held before into rcount elements of rdt in result,
// atomically (MPI_Get_accumulate). With OpNoOp it is an atomic read, and
// origin may then be nil. It is complete on return.
func (w *Window[T]) GetAccumulateBuf(origin []byte, count int, dt *Datatype, result []byte, rcount int, rdt *Datatype, target, disp, tcount int, tdt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.GetAccumulateBuf", nil, Undefined, Undefined), &err)
	}
	_, err = w.accBuf("GetAccumulateBuf", origin, count, dt, result, rcount, rdt, target, disp, tcount, tdt, op, false)
	return err
}

// RgetAccumulateBuf is GetAccumulateBuf returning a request
// (MPI_Rget_accumulate): result holds the old values when it completes.
func (w *Window[T]) RgetAccumulateBuf(origin []byte, count int, dt *Datatype, result []byte, rcount int, rdt *Datatype, target, disp, tcount int, tdt *Datatype, op *ReduceOp) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.RgetAccumulateBuf", nil, Undefined, Undefined), &err)
	}
	r, err := w.accBuf("RgetAccumulateBuf", origin, count, dt, result, rcount, rdt, target, disp, tcount, tdt, op, true)
	return w.done("RgetAccumulateBuf", r, err)
}

func (w *Window[T]) accBuf(name string, origin []byte, count int, dt *Datatype, result []byte, rcount int, rdt *Datatype, target, disp, tcount int, tdt *Datatype, op *ReduceOp, async bool) (*Request, error) {
	d, null, err := w.lowTarget(name, target, disp, tcount, tdt)
	if null || err != nil {
		return nil, err
	}
	c := &lowCall{name: name, target: target, disp: disp, kind: reqAccV, d: d}
	if err := w.lowOp(c, op, tdt); err != nil {
		return nil, err
	}
	get := rdt != nil
	if get {
		c.kind = reqGaccV
		n, err := w.lowOriginFor(name, "result", target, result, rcount, rdt, &d, tdt)
		if err != nil {
			return nil, err
		}
		out := make([]byte, n)
		c.out = out
		c.done = func() { rdt.t.UnpackAt(out, result, 0) }
	}
	if get && op.name == "no_op" && dt == nil {
		c.in = make([]byte, d.bytes())
	} else {
		n, err := w.lowOriginFor(name, "origin", target, origin, count, dt, &d, tdt)
		if err != nil {
			return nil, err
		}
		if c.in = w.inPlace(target, disp, &d, origin, n, dt); c.in == nil {
			c.whole, c.in = packedWithRoom(origin, n, dt, &d)
		}
	}
	inT := dt
	if get && op.name == "no_op" && dt == nil {
		inT = nil
	}
	if err := w.mixLow(c, inT, rdt, tdt); err != nil { // hetero_rma.go
		return nil, err
	}
	return w.run(c, async)
}

// FetchAndOpBuf is GetAccumulateBuf of one element of the predefined
// datatype dt (MPI_Fetch_and_op): the element at disp of target's window
// becomes origin ⊕ element, and result receives its old value. It is
// complete on return.
func (w *Window[T]) FetchAndOpBuf(origin, result []byte, dt *Datatype, target, disp int, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.FetchAndOpBuf", nil, Undefined, Undefined), &err)
	}
	if dt != nil && dt.derived {
		return w.errorf("FetchAndOpBuf", ErrType, target, "FetchAndOpBuf takes a predefined datatype, not %s", dt.name)
	}
	if op != nil && op.name == "no_op" && origin == nil {
		_, err = w.accBuf("FetchAndOpBuf", nil, 1, nil, result, 1, dt, target, disp, 1, dt, op, false)
		return err
	}
	_, err = w.accBuf("FetchAndOpBuf", origin, 1, dt, result, 1, dt, target, disp, 1, dt, op, false)
	return err
}

// CompareAndSwapBuf compares the element at disp of target's window with
// compare's, byte for byte, replaces it with origin's if they are equal,
// and stores its old value in result, atomically (MPI_Compare_and_swap).
// dt is a predefined datatype; each buffer holds one element. It is
// complete on return.
func (w *Window[T]) CompareAndSwapBuf(origin, compare, result []byte, dt *Datatype, target, disp int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.CompareAndSwapBuf", nil, Undefined, Undefined), &err)
	}
	const name = "CompareAndSwapBuf"
	if dt != nil && dt.derived {
		return w.errorf(name, ErrType, target, "CompareAndSwapBuf takes a predefined datatype, not %s", dt.name)
	}
	d, null, err := w.lowTarget(name, target, disp, 1, dt)
	if null || err != nil {
		return err
	}
	for _, b := range []struct {
		what string
		buf  []byte
	}{{"origin", origin}, {"compare", compare}, {"result", result}} {
		if _, err := w.lowOrigin(name, b.what, target, b.buf, 1, dt); err != nil {
			return err
		}
	}
	n := dt.size
	in := make([]byte, 2*n)
	copy(in, compare[:n])
	copy(in[n:], origin[:n])
	out := make([]byte, n)
	c := &lowCall{name: name, target: target, disp: disp, kind: reqCasV, d: d, in: in, out: out, ae: dt,
		done: func() { copy(result, out) }}
	if err := w.mixLow(c, dt, dt, dt); err != nil { // hetero_rma.go
		return err
	}
	_, err = w.run(c, false)
	return err
}

// done turns the result of an R call into its request: a complete one
// when the operation finished during the call.
func (w *Window[T]) done(name string, r *Request, err error) (*Request, error) {
	if err != nil {
		return nil, err
	}
	if r == nil {
		return w.c.nullRequest("Window."+name, emptyStatus), nil
	}
	return r, nil
}

// background returns a request that completes when f, run on a goroutine
// of its own, returns; Wait returns f's error.
// Flushes and unlocks towards target wait for it.
func (w *Window[T]) background(name string, target int, f func() error) (*Request, error) {
	var ferr error
	r, err := w.c.GrequestStart(func(st *Status) error { return ferr }, nil, nil)
	if err != nil {
		return nil, w.failed(name, noTarget, err)
	}
	w.bg[target].Add(1)
	go func() {
		ferr = f()
		w.bg[target].Done()
		r.GrequestComplete()
	}()
	return r, nil
}

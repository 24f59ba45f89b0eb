package mpi

import (
	"errors"
	"io"
	"sort"

	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/fileio"
)

// Collective data access (MPI-4.1 section 14.4.3) with collective
// buffering: when the ranks' accesses are non-contiguous or interleave
// in pieces under largePiece (and, for a read, span several nodes),
// the file range they cover is cut into one contiguous domain per
// aggregator (one rank per node by default, or cb_nodes), every rank
// sends each aggregator the pieces that fall in its domain (one
// Alltoallv of offsets, one of data), and the aggregators write their
// domains in large runs of up to cb_buffer_size bytes: two-phase I/O. A
// read runs the other way. Contiguous, disjoint accesses (a segmented
// pattern) are written directly by each rank, which is faster than any
// exchange. A collective read by ranks of one node goes independent
// too: each rank reading its own pieces (data sieving) was 1.0 to 3.1
// times faster than two-phase I/O there at every piece size measured,
// while a write by sieving, which reads and rewrites the holes between
// its pieces under a lock, was slower than two-phase for pieces under
// 1 MiB (docs/io.md). romio_cb_write / romio_cb_read = enable or disable
// force the choice.

// collective runs an access of x at stream position pos on every rank
// of f together; local is this rank's argument error (x is nil then).
// It runs on f's queue.
func (f *File) collective(op string, write bool, x *xfer, pos int64, local error) (Status, error) {
	var segs []fileio.Seg
	if local == nil && pos < 0 {
		local = fileErr(f.comm, "File."+op, f.name, ErrArg, nil, "negative offset %d", pos/x.view.fesize)
	}
	if local == nil {
		segs = x.view.plan.Map(pos, x.n, nil)
	}
	lo, hi := fileio.Span(segs)
	var bytes int64
	for _, s := range segs {
		bytes += s.Len
	}
	all, err := Allgather(f.comm, [5]int64{classIndex(local), lo, hi, int64(len(segs)), bytes})
	if err != nil {
		if x != nil {
			x.finish(0)
		}
		return Status{}, fileErr(f.comm, "File."+op, f.name, ErrorClass(err), err, "")
	}
	if local != nil {
		if x != nil {
			x.finish(0)
		}
		return Status{}, local
	}
	for r, a := range all {
		if a[0] != 0 {
			x.finish(0)
			return Status{}, fileErr(f.comm, "File."+op, f.name, classAt(a[0]), nil, "rank %d's arguments were refused; nothing was accessed", r)
		}
	}
	f.mu.Lock()
	h, atomicMode, aggrs := f.hints, f.atomic, f.aggrs
	f.mu.Unlock()
	mode := h.cbRead
	if write {
		mode = h.cbWrite
	}
	if mode == "disable" || (mode == "automatic" && ((f.nodes == 1 && !write) || !interleaved(all) || largePieces(all))) || atomicMode {
		st, err := f.independent(x, pos)
		return st, f.agree(op, err)
	}
	moved, err := f.twoPhase(write, x, segs, all, aggrs, h)
	f.busyBegin()
	ferr := x.finish(moved)
	f.busyEnd()
	if ferr != nil && err == nil {
		err = fileErr(f.comm, "File."+op, f.name, ErrConversion, ferr, "")
	}
	var me *Error
	if err != nil && !errors.As(err, &me) {
		err = fileErr(f.comm, "File."+op, f.name, osClass(err), err, "")
	}
	return x.status(moved), f.agree(op, err)
}

// largePiece is the mean piece size from which a collective access goes
// independent although the ranks' pieces interleave: each piece is then
// one large write or read of its own, which aggregation can only slow
// down with its copies and exchange (docs/io.md, "Collective buffering,
// and when it is skipped").
const largePiece = 1 << 20

// largePieces reports whether every rank that accesses anything does so
// in pieces of largePiece bytes or more on average.
func largePieces(all [][5]int64) bool {
	any := false
	for _, a := range all {
		if a[3] == 0 {
			continue
		}
		if a[4]/a[3] < largePiece {
			return false
		}
		any = true
	}
	return any
}

// interleaved reports whether the ranks' accesses need collective
// buffering: some rank's is non-contiguous, or two ranks' ranges overlap.
func interleaved(all [][5]int64) bool {
	type rng struct{ lo, hi int64 }
	var rs []rng
	for _, a := range all {
		if a[3] > 1 {
			return true
		}
		if a[3] == 1 {
			rs = append(rs, rng{a[1], a[2]})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	for i := 1; i < len(rs); i++ {
		if rs[i].lo < rs[i-1].hi {
			return true
		}
	}
	return false
}

// piece is a part of some rank's access in this aggregator's domain: its
// file range and where its bytes are in the exchange buffer.
type piece struct {
	fileio.Seg
	at int64
}

// twoPhaseHook, when set (by tests), is called by every rank entering
// twoPhase.
var twoPhaseHook func()

// twoPhase does the exchange and the aggregators' I/O. It returns the
// stream bytes this rank moved.
func (f *File) twoPhase(write bool, x *xfer, segs []fileio.Seg, all [][5]int64, aggrs []int, h fileHints) (int64, error) {
	if twoPhaseHook != nil {
		twoPhaseHook()
	}
	c := f.comm
	P := c.Size()
	gl, gh := int64(-1), int64(0)
	for _, a := range all {
		if a[3] == 0 {
			continue
		}
		if gl < 0 || a[1] < gl {
			gl = a[1]
		}
		gh = max(gh, a[2])
	}
	if gl < 0 {
		return 0, nil
	}
	align := h.stripeUnit
	if align <= 0 {
		align = 4096
	}
	bounds := fileio.Domains(gl, gh, len(aggrs), align)

	// Phase 1: what goes to which aggregator.
	metaN := make([]int64, P) // int64s of (offset, length) pairs
	dataN := make([]int64, P) // bytes of data
	fileio.Split(segs, bounds, func(d int, p fileio.Piece) {
		r := aggrs[d]
		metaN[r] += 2
		dataN[r] += p.Len
	})
	metaD, metaTot := displs(metaN)
	dataD, dataTot := displs(dataN)
	meta := make([]int64, metaTot)
	var data []byte
	if write {
		data = f.tpBuf(0, dataTot)
	}
	{
		mc := append([]int64(nil), metaD...)
		dc := append([]int64(nil), dataD...)
		fileio.Split(segs, bounds, func(d int, p fileio.Piece) {
			r := aggrs[d]
			meta[mc[r]], meta[mc[r]+1] = p.Off, p.Len
			mc[r] += 2
			if write {
				copy(data[dc[r]:dc[r]+p.Len], x.stream[p.Stream:p.Stream+p.Len])
			}
			dc[r] += p.Len
		})
	}
	rmetaN := make([]int64, P)
	if err := AlltoallInto(c, metaN, rmetaN); err != nil {
		return 0, err
	}
	rmetaD, rmetaTot := displs(rmetaN)
	rmeta := make([]int64, rmetaTot)
	if err := c.Alltoallv(datatype.SliceBytes(meta), ints(metaN, 8), ints(metaD, 8), Byte,
		datatype.SliceBytes(rmeta), ints(rmetaN, 8), ints(rmetaD, 8), Byte); err != nil {
		return 0, err
	}
	// What this aggregator holds: pieces and where their bytes are.
	rdataN := make([]int64, P)
	var ps []piece
	var at int64
	for r := 0; r < P; r++ {
		start := at
		for i := rmetaD[r]; i < rmetaD[r]+rmetaN[r]; i += 2 {
			ps = append(ps, piece{fileio.Seg{Off: rmeta[i], Len: rmeta[i+1]}, at})
			at += rmeta[i+1]
		}
		rdataN[r] = at - start
	}
	rdataD, rdataTot := displs(rdataN)
	rdata := f.tpBuf(1, rdataTot)

	if write {
		if err := c.Alltoallv(data, ints(dataN, 1), ints(dataD, 1), Byte, rdata, ints(rdataN, 1), ints(rdataD, 1), Byte); err != nil {
			return 0, err
		}
		f.busyBegin()
		ioErr := f.aggregate(true, ps, rdata, h)
		f.busyEnd()
		return x.n, ioErr
	}
	f.busyBegin()
	ioErr := f.aggregate(false, ps, rdata, h)
	f.busyEnd()
	// Send the data back: to rank r the bytes of its pieces, in its order.
	back := f.tpBuf(0, dataTot)
	if err := c.Alltoallv(rdata, ints(rdataN, 1), ints(rdataD, 1), Byte, back, ints(dataN, 1), ints(dataD, 1), Byte); err != nil {
		return 0, err
	}
	dc := append([]int64(nil), dataD...)
	fileio.Split(segs, bounds, func(d int, p fileio.Piece) {
		r := aggrs[d]
		copy(x.stream[p.Stream:p.Stream+p.Len], back[dc[r]:dc[r]+p.Len])
		dc[r] += p.Len
	})
	if ioErr != nil {
		return 0, ioErr
	}
	st, err := f.fd.Stat()
	if err != nil {
		return 0, err
	}
	var moved int64
	for _, s := range segs {
		if s.Off >= st.Size() {
			break
		}
		moved += min(s.End(), st.Size()) - s.Off
		if s.End() > st.Size() {
			break
		}
	}
	return moved, nil
}

// aggregate writes (or reads) the pieces of this aggregator's domain,
// whose bytes are in buf, in runs of at most cb_buffer_size bytes: one
// pwrite per run, after one pread where the pieces leave holes.
func (f *File) aggregate(write bool, ps []piece, buf []byte, h fileHints) error {
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Off < ps[j].Off })
	segs := make([]fileio.Seg, len(ps))
	for i, p := range ps {
		segs[i] = p.Seg
	}
	first := 0
	for _, end := range fileio.Groups(segs, h.cbBufferSize, h.cbBufferSize) {
		g := ps[first:end]
		first = end
		if len(g) == 1 {
			p := g[0]
			if write {
				if _, err := f.fd.WriteAt(buf[p.at:p.at+p.Len], p.Off); err != nil {
					return err
				}
			} else if _, err := f.fd.ReadAt(buf[p.at:p.at+p.Len], p.Off); err != nil && err != io.EOF {
				return err
			}
			continue
		}
		lo, hi := g[0].Off, g[0].End()
		covered, reach := int64(0), lo
		tiles := true // the pieces follow each other without holes or overlaps
		for _, p := range g {
			hi = max(hi, p.End())
			tiles = tiles && p.Off == reach
			if p.End() > reach {
				covered += p.End() - max(p.Off, reach)
				reach = p.End()
			}
		}
		if write && tiles {
			bufs := make([][]byte, len(g))
			for i, p := range g {
				bufs[i] = buf[p.at : p.at+p.Len]
			}
			if done, err := writeVec(f.fd, bufs, lo); done {
				if err != nil {
					return err
				}
				continue
			}
		}
		if write && covered < hi-lo && !f.canRead {
			// No read-modify-write without read access: piece by piece.
			for _, p := range g {
				if _, err := f.fd.WriteAt(buf[p.at:p.at+p.Len], p.Off); err != nil {
					return err
				}
			}
			continue
		}
		cover := f.tpBuf(2, hi-lo)
		if !write || covered < hi-lo {
			k, err := f.fd.ReadAt(cover, lo)
			if err != nil && err != io.EOF {
				return err
			}
			clear(cover[k:])
		}
		for _, p := range g {
			if write {
				copy(cover[p.Off-lo:p.End()-lo], buf[p.at:p.at+p.Len])
			} else {
				copy(buf[p.at:p.at+p.Len], cover[p.Off-lo:p.End()-lo])
			}
		}
		if write {
			if _, err := f.fd.WriteAt(cover, lo); err != nil {
				return err
			}
		}
	}
	return nil
}

// tpKeep is the largest two-phase buffer a File keeps from one
// collective call to the next; larger ones are the garbage collector's
// as soon as the call ends.
const tpKeep = 64 << 20

// tpBuf returns n bytes of f's two-phase buffer i (0: what this rank
// sends or gets back, 1: what an aggregator holds, 2: an aggregator's
// run of the file). Reusing them matters: a fresh buffer of some
// megabytes costs a page fault per 4 KiB page at its first write, which
// made two-phase I/O slower than its own copies. Only on f's queue.
func (f *File) tpBuf(i int, n int64) []byte {
	if n > tpKeep {
		return make([]byte, n)
	}
	if int64(cap(f.tp[i])) < n {
		f.tp[i] = make([]byte, n)
	}
	return f.tp[i][:n]
}

// displs returns the running sums of n and their total.
func displs(n []int64) ([]int64, int64) {
	d := make([]int64, len(n))
	var t int64
	for i, x := range n {
		d[i] = t
		t += x
	}
	return d, t
}

// ints scales int64 counts to int counts of unit bytes.
func ints(n []int64, unit int64) []int {
	out := make([]int, len(n))
	for i, x := range n {
		out[i] = int(x * unit)
	}
	return out
}

// collAccess is the body of every blocking collective access: kind says
// how the position is found.
type posKind int

const (
	atOffset posKind = iota
	atPointer
	atShared // ordered
)

func (f *File) collAccess(op string, write bool, kind posKind, off int64, buf []byte, count int, dt *Datatype) (Status, error) {
	x, local := f.prepare(op, write, buf, count, dt, kind == atShared)
	var pos int64
	switch kind {
	case atOffset:
		if local == nil && f.amode&ModeSequential != 0 {
			x.finish(0)
			x, local = nil, fileErr(f.comm, "File."+op, f.name, ErrUnsupportedOp, nil, "a file opened ModeSequential is accessed through the shared pointer only")
		}
		if local == nil {
			pos = off * x.view.fesize
		}
	case atPointer:
		if local == nil && f.amode&ModeSequential != 0 {
			x.finish(0)
			x, local = nil, fileErr(f.comm, "File."+op, f.name, ErrUnsupportedOp, nil, "a file opened ModeSequential has no individual pointer")
		}
		if local == nil {
			f.mu.Lock()
			pos = f.pos * x.view.fesize
			f.mu.Unlock()
		}
	case atShared:
		// Ordered: rank r's data follows ranks 0..r-1's from the shared
		// pointer, which then moves past all of it.
		n := int64(-1)
		if local == nil {
			n = x.n / x.view.fesize
		}
		base := int64(0)
		if f.comm.Rank() == 0 {
			base = f.shared.local(0, 0)
		}
		all, err := Allgather(f.comm, [2]int64{n, base})
		if err != nil {
			if x != nil {
				x.finish(0)
			}
			return Status{}, fileErr(f.comm, "File."+op, f.name, ErrorClass(err), err, "")
		}
		var before, total int64
		for r, a := range all {
			if r < f.comm.Rank() {
				before += max(a[0], 0)
			}
			total += max(a[0], 0)
		}
		if f.comm.Rank() == 0 {
			f.shared.set(base + total)
		}
		if local == nil {
			pos = (all[0][1] + before) * x.view.fesize
		}
	}
	st, err := f.collective(op, write, x, pos, local)
	if err == nil && kind == atPointer {
		f.mu.Lock()
		f.pos += int64(st.bytes) / x.view.esize
		f.mu.Unlock()
	}
	return st, err
}

// blockingColl runs a collective access on f's queue.
func (f *File) blockingColl(op string, write bool, kind posKind, off int64, buf []byte, count int, dt *Datatype) (Status, error) {
	if err := f.check(op); err != nil {
		return Status{}, err
	}
	var st Status
	err := f.q.do(func() error {
		var err error
		st, err = f.collAccess(op, write, kind, off, buf, count, dt)
		return err
	})
	return st, f.handle(err)
}

// ReadAtAll is the collective ReadAt (MPI_File_read_at_all): every rank
// of the file calls it, each with its own offset and buffer.
func (f *File) ReadAtAll(off int64, buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAtAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("ReadAtAll", false, atOffset, off, buf, count, dt)
}

// WriteAtAll is the collective WriteAt (MPI_File_write_at_all).
func (f *File) WriteAtAll(off int64, buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAtAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("WriteAtAll", true, atOffset, off, buf, count, dt)
}

// ReadAll is the collective Read at the individual pointers (MPI_File_read_all).
func (f *File) ReadAll(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("ReadAll", false, atPointer, 0, buf, count, dt)
}

// WriteAll is the collective Write at the individual pointers (MPI_File_write_all).
func (f *File) WriteAll(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("WriteAll", true, atPointer, 0, buf, count, dt)
}

// ReadOrdered reads at the shared pointer in rank order: rank r's data
// follows ranks 0..r-1's (MPI_File_read_ordered); collective.
func (f *File) ReadOrdered(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadOrdered", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("ReadOrdered", false, atShared, 0, buf, count, dt)
}

// WriteOrdered writes at the shared pointer in rank order
// (MPI_File_write_ordered); collective.
func (f *File) WriteOrdered(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteOrdered", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("WriteOrdered", true, atShared, 0, buf, count, dt)
}

package mpi

import (
	"io"
	"sync"

	"github.com/mpigo/mpi/internal/fileio"
)

// Independent data access (MPI-4.1 section 14.4): explicit offsets,
// individual and shared file pointers. Every access packs the memory
// datatype into the view's data stream (converting to external32 if the
// view asks), maps the stream through the flattened view to file
// ranges, and reads or writes them: one pread/pwrite per range, or, for
// many small ranges close together, one per sieving buffer (read the
// covering extent, patch it, write it back under a lock).

// inproc locks exclude ranks of one process from the same file's bytes
// (fcntl locks do not exclude threads of one process).
var inproc sync.Map // file id -> *sync.Mutex

func lockFile(f *File, lo, hi int64) (unlock func(), err error) {
	m, _ := inproc.LoadOrStore(f.id, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	if err := lockRange(f.fd, lo, hi, true); err != nil {
		mu.Unlock()
		return nil, err
	}
	return func() {
		_ = lockRange(f.fd, lo, hi, false)
		mu.Unlock()
	}, nil
}

// xfer is one access in flight: the caller's buffer and its packed stream.
type xfer struct {
	op     string
	write  bool
	buf    []byte
	count  int
	dt     *Datatype
	n      int64  // stream bytes
	stream []byte // packed data (buf itself when no packing is needed)
	// fileElem: bytes one element of dt takes in the file, in a
	// registered representation (n is then count*fileElem)
	fileElem int64
	pool     *[]byte
	view     fileView
}

// prepare validates an access of count elements of dt in buf and packs
// the data of a write, in a new transfer record or, where into is not
// nil, in *into. It returns an error of class ErrCount, ErrType,
// ErrBuffer, ErrReadOnly, ErrAccess or ErrUnsupportedOp.
func (f *File) prepare(op string, write bool, buf []byte, count int, dt *Datatype, pointer bool, into *xfer) (*xfer, error) {
	if err := f.check(op); err != nil {
		return nil, err
	}
	f.busyBegin() // packing a large buffer takes its time
	defer f.busyEnd()
	bad := func(class error, format string, args ...any) (*xfer, error) {
		return nil, fileErr(f.comm, "File."+op, f.name, class, nil, format, args...)
	}
	switch {
	case write && f.amode&ModeRdonly != 0:
		return bad(ErrReadOnly, "writing to a file opened ModeRdonly")
	case !write && f.amode&ModeWronly != 0:
		return bad(ErrAccess, "reading from a file opened ModeWronly")
	case !pointer && f.amode&ModeSequential != 0:
		return bad(ErrUnsupportedOp, "a file opened ModeSequential is accessed through the shared pointer only")
	case count < 0:
		return bad(ErrCount, "negative count %d", count)
	}
	if s := dt.checkComm(); s != "" {
		return bad(ErrType, "%s", s)
	}
	if s, class := dt.fits(count, len(buf)); class != nil {
		return bad(class, "%s", s)
	}
	f.mu.Lock()
	v := f.view
	f.mu.Unlock()
	n := int64(count) * int64(dt.size)
	if n%v.esize != 0 {
		return bad(ErrType, "%d elements of %s are %d bytes, not a whole number of etypes %s (%d bytes)", count, dt.name, n, v.etype.name, v.esize)
	}
	x := into
	if x == nil {
		x = new(xfer)
	}
	*x = xfer{op: op, write: write, buf: buf, count: count, dt: dt, n: n, view: v}
	if v.rep == nil && v.ext32 && dt.t.Narrowed() {
		// C longs in a view of other types: their file size is not
		// their memory size, which the path of the representations knows.
		x.view.rep = external32Rep
	}
	if x.view.rep != nil {
		return f.prepareRep(x)
	}
	if !v.ext32 && dt.t.Contiguous() && dt.t.LB == 0 {
		x.stream = buf[:n]
		return x, nil
	}
	x.pool = getScratch(int(n))
	x.stream = (*x.pool)[:n]
	if write {
		if v.ext32 {
			// Cannot fail: only C longs can, and they go by prepareRep.
			_ = dt.t.PackExternal(x.stream, buf, count)
		} else {
			dt.t.PackAt(x.stream, buf, 0)
		}
	}
	return x, nil
}

// prepareRep sizes x's stream in the view's registered representation
// and converts the data of a write into it.
func (f *File) prepareRep(x *xfer) (*xfer, error) {
	v := x.view
	fail := func(class error, cause error, format string, args ...any) (*xfer, error) {
		if x.pool != nil {
			putScratch(x.pool)
		}
		return nil, fileErr(f.comm, "File."+x.op, f.name, class, cause, format, args...)
	}
	per, err := v.rep.fileSize(x.dt)
	if err != nil {
		return fail(ErrConversion, err, "sizing %s in data representation %q", x.dt.name, v.datarep)
	}
	x.fileElem = per
	x.n = per * int64(x.count)
	if x.n%v.fesize != 0 {
		return fail(ErrType, nil, "%d elements of %s take %d bytes in data representation %q, not a whole number of etypes %s (%d bytes there)", x.count, x.dt.name, x.n, v.datarep, v.etype.name, v.fesize)
	}
	x.pool = getScratch(int(x.n))
	x.stream = (*x.pool)[:x.n]
	if x.write {
		if err := v.rep.toFile(x.stream, x.buf, x.count, x.dt); err != nil {
			return fail(ErrConversion, err, "converting to data representation %q", v.datarep)
		}
	}
	return x, nil
}

// status is the Status of x having moved moved stream bytes: in a
// registered representation, counted in the whole elements converted.
func (x *xfer) status(moved int64) Status {
	if x.view.rep != nil && x.fileElem > 0 {
		moved = moved / x.fileElem * int64(x.dt.size)
	}
	return accessStatus(moved, x.dt)
}

// finish unpacks what a read brought (moved stream bytes) and releases
// the scratch buffer.
func (x *xfer) finish(moved int64) error {
	if x.pool == nil {
		return nil
	}
	defer putScratch(x.pool)
	if x.write || moved == 0 {
		return nil
	}
	if x.view.rep != nil {
		if x.fileElem == 0 {
			return nil
		}
		whole := moved / x.fileElem
		return x.view.rep.fromFile(x.stream[:whole*x.fileElem], x.buf, int(whole), x.dt)
	}
	// Unpack whole elements only; a partial last element is left as it was.
	whole := moved / int64(x.dt.size)
	if x.view.ext32 {
		if err := x.dt.t.UnpackExternal(x.stream[:whole*int64(x.dt.size)], x.buf, int(whole)); err != nil {
			return err
		}
		return nil
	}
	x.dt.t.UnpackAt(x.stream[:moved], x.buf, 0)
	return nil
}

// status is the Status of an access that moved n bytes of elements of dt.
func accessStatus(n int64, dt *Datatype) Status {
	return Status{Source: AnySource, Tag: AnyTag, bytes: int(n), size: int(n), elem: dt.size}
}

// independent reads or writes x at stream position pos (bytes).
func (f *File) independent(x *xfer, pos int64) (Status, error) {
	return f.access(x, pos, false)
}

// independentDirect is independent without data sieving: each piece is
// written (read) by a call of its own, straight from (into) the stream.
func (f *File) independentDirect(x *xfer, pos int64) (Status, error) {
	return f.access(x, pos, true)
}

// access is independent, and independentDirect if direct.
func (f *File) access(x *xfer, pos int64, direct bool) (Status, error) {
	if pos < 0 {
		return Status{}, fileErr(f.comm, "File."+x.op, f.name, ErrArg, nil, "negative offset %d", pos/x.view.fesize)
	}
	f.busyBegin()
	defer f.busyEnd()
	sp := segPool.Get().(*[]fileio.Seg)
	segs := x.view.plan.Map(pos, x.n, (*sp)[:0])
	defer func() { *sp = segs[:0]; segPool.Put(sp) }()
	f.mu.Lock()
	atomicMode, h := f.atomic, f.hints
	f.mu.Unlock()
	if direct {
		h.dsRead, h.dsWrite = "disable", "disable"
	}
	var moved int64
	var err error
	if atomicMode && len(segs) > 0 {
		lo, hi := fileio.Span(segs)
		unlock, lerr := lockFile(f, lo, hi)
		if lerr != nil {
			return Status{}, fileErr(f.comm, "File."+x.op, f.name, ErrIO, lerr, "locking bytes %d to %d", lo, hi)
		}
		moved, err = f.rw(x.write, segs, x.stream, h, false)
		unlock()
	} else {
		moved, err = f.rw(x.write, segs, x.stream, h, true)
	}
	if ferr := x.finish(moved); ferr != nil && err == nil {
		return Status{}, fileErr(f.comm, "File."+x.op, f.name, ErrConversion, ferr, "")
	}
	if err != nil {
		return x.status(moved), fileErr(f.comm, "File."+x.op, f.name, osClass(err), err, "")
	}
	return x.status(moved), nil
}

// sieveSpan is the mean file bytes per piece (the piece and the hole
// after it) from which data sieving does not pay: reading or writing
// each piece with a call of its own is then faster than copying the
// holes, by measurement on the page cache (docs/io.md). Under it, pieces
// of a few KiB, sieving is up to 4 times faster; at 64 KiB pieces and
// holes, a call per piece is twice as fast.
const sieveSpan = 32 << 10

// sieveWritePiece is the mean piece from which a write does not sieve
// whatever the holes: a sieving write reads, merges and writes its span
// under the file's lock, which ranks writing interleaved pieces take in
// turn. Measured on the quiet machine (2026-11-30, `mpigo bench
// io_strided_write_ind`, pieces of 4 KiB and holes of (n-1)x4 KiB, under
// chrt -f 10, three alternating rounds): 2 ranks 1926-3360 MB/s sieving
// against 2954-4565 a write per piece, 4 ranks 1455-2088 against
// 3019-4017; at 16 KiB 4.1-4.4 against 9.9-10.8 GB/s; at 2 KiB level with
// 2 ranks and 1.3-1.8x faster with 4; at 256 bytes sieving still wins
// (395-428 against 252-323 MB/s).
const sieveWritePiece = 2 << 10

// pieceBytes is the bytes of the pieces of g.
func pieceBytes(g []fileio.Seg) int64 {
	var n int64
	for _, s := range g {
		n += s.Len
	}
	return n
}

// rw moves stream to or from the file ranges segs (in stream order) and
// returns the stream bytes moved: all of them for a write, the part
// before the end of the file for a read. sieveLock says whether sieving
// writes must lock (not when the caller holds a lock already).
func (f *File) rw(write bool, segs []fileio.Seg, stream []byte, h fileHints, sieveLock bool) (int64, error) {
	if len(segs) == 0 {
		return 0, nil
	}
	sieve := len(segs) > 1 && fileio.Sorted(segs)
	if write {
		sieve = sieve && h.dsWrite != "disable" && f.canRead
	} else {
		sieve = sieve && h.dsRead != "disable"
	}
	var groups []int
	if sieve {
		groups = fileio.Groups(segs, h.dsBuffer, 64<<10)
	} else {
		groups = make([]int, len(segs))
		for i := range groups {
			groups[i] = i + 1
		}
	}
	var at int64 // stream position
	// one moves the piece s by itself; false at the end of the file.
	one := func(s fileio.Seg) (bool, error) {
		if write {
			if _, err := f.fd.WriteAt(stream[at:at+s.Len], s.Off); err != nil {
				return false, err
			}
		} else {
			k, err := f.fd.ReadAt(stream[at:at+s.Len], s.Off)
			if err != nil && err != io.EOF {
				at += int64(k)
				return false, err
			}
			if int64(k) < s.Len {
				at += int64(k)
				return false, nil
			}
		}
		at += s.Len
		return true, nil
	}
	first := 0
	for _, end := range groups {
		g := segs[first:end]
		first = end
		if len(g) == 1 || g[len(g)-1].End()-g[0].Off >= int64(len(g))*sieveSpan || write && pieceBytes(g) >= int64(len(g))*sieveWritePiece {
			// One piece, or pieces far enough apart that a call each
			// costs less than the holes' copies, or written pieces long
			// enough that a call each costs less than the span's lock.
			for _, s := range g {
				if more, err := one(s); err != nil || !more {
					return at, err
				}
			}
			continue
		}
		if !write {
			// The pieces straight into the stream, the holes into
			// scratch: no copy of the pieces after the read.
			done, n, err := f.readSieved(g, stream[at:])
			if done {
				at += n
				if err != nil || n < pieceBytes(g) {
					return at, err
				}
				continue
			}
		}
		lo, hi := g[0].Off, g[len(g)-1].End()
		p := getScratch(int(hi - lo))
		cover := (*p)[:hi-lo]
		var unlock func()
		if write && sieveLock {
			u, err := lockFile(f, lo, hi)
			if err != nil {
				putScratch(p)
				return at, err
			}
			unlock = u
		}
		k, err := f.fd.ReadAt(cover, lo)
		if err != nil && err != io.EOF {
			if unlock != nil {
				unlock()
			}
			putScratch(p)
			return at, err
		}
		if write {
			clear(cover[k:])
			for _, s := range g {
				copy(cover[s.Off-lo:s.End()-lo], stream[at:at+s.Len])
				at += s.Len
			}
			_, err = f.fd.WriteAt(cover, lo)
			if unlock != nil {
				unlock()
			}
			putScratch(p)
			if err != nil {
				return at, err
			}
			continue
		}
		eof := lo + int64(k)
		for _, s := range g {
			if s.Off >= eof {
				putScratch(p)
				return at, nil
			}
			m := min(s.End(), eof) - s.Off
			copy(stream[at:at+m], cover[s.Off-lo:s.Off-lo+m])
			at += m
			if m < s.Len {
				putScratch(p)
				return at, nil
			}
		}
		putScratch(p)
	}
	return at, nil
}

// junkMax is the most scratch memory readSieved reads holes into: a
// longer hole takes several of its buffers, all the same memory.
const junkMax = 64 << 10

// readSieved reads the pieces g, in file order and disjoint, into stream
// (one after the other) with one preadv per IOV_MAX buffers, each piece
// straight into its place in the stream and each hole into one scratch
// buffer that every hole shares. Against data sieving's read of the
// span and copy of the pieces out of it, it saves the copy: 1.35x on 4
// KiB pieces with 4 KiB holes from the page cache (docs/io.md). It
// reports whether the platform could (done), and the stream bytes read,
// fewer than the pieces' only at the end of the file or on an error.
func (f *File) readSieved(g []fileio.Seg, stream []byte) (done bool, n int64, err error) {
	var hole int64
	for i := 1; i < len(g); i++ {
		hole = max(hole, g[i].Off-g[i-1].End())
	}
	var junk []byte
	if hole > 0 {
		p := getScratch(int(min(hole, junkMax)))
		defer putScratch(p)
		junk = (*p)[:min(hole, junkMax)]
	}
	bp := iovPool.Get().(*[][]byte)
	bufs := (*bp)[:0]
	var at int64
	for i, s := range g {
		if i > 0 {
			for h := s.Off - g[i-1].End(); h > 0; h -= min(h, junkMax) {
				bufs = append(bufs, junk[:min(h, junkMax)])
			}
		}
		bufs = append(bufs, stream[at:at+s.Len])
		at += s.Len
	}
	done, got, err := readVec(f.fd, bufs, g[0].Off)
	clear(bufs)
	*bp = bufs[:0]
	iovPool.Put(bp)
	if !done {
		return false, 0, nil
	}
	eof := g[0].Off + got
	for _, s := range g {
		if s.Off >= eof {
			break
		}
		n += min(s.End(), eof) - s.Off
	}
	return true, n, err
}

// iovPool recycles readSieved's lists of buffers.
var iovPool = sync.Pool{New: func() any { return new([][]byte) }}

// ReadAt reads count elements of dt into buf from offset off of the view
// (in etypes) (MPI_File_read_at). Reading past the end of the file is no
// error: the Status counts what was read.
func (f *File) ReadAt(off int64, buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAt", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.explicit("ReadAt", false, off, buf, count, dt)
}

// WriteAt writes count elements of dt from buf at offset off of the view
// (in etypes) (MPI_File_write_at).
func (f *File) WriteAt(off int64, buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAt", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.explicit("WriteAt", true, off, buf, count, dt)
}

func (f *File) explicit(op string, write bool, off int64, buf []byte, count int, dt *Datatype) (Status, error) {
	x, err := f.prepare(op, write, buf, count, dt, false, nil)
	if err != nil {
		return Status{}, f.handle(err)
	}
	if off < 0 {
		x.finish(0)
		return Status{}, f.fail(op, ErrArg, nil, "negative offset %d", off)
	}
	st, err := f.independent(x, off*x.view.fesize)
	return st, f.handle(err)
}

// Read reads count elements of dt into buf at the individual file
// pointer and advances it by the etypes read (MPI_File_read).
func (f *File) Read(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Read", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.viaPointer("Read", false, buf, count, dt)
}

// Write writes count elements of dt from buf at the individual file
// pointer and advances it (MPI_File_write).
func (f *File) Write(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Write", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.viaPointer("Write", true, buf, count, dt)
}

func (f *File) viaPointer(op string, write bool, buf []byte, count int, dt *Datatype) (Status, error) {
	if f != nil && f.amode&ModeSequential != 0 {
		return Status{}, f.fail(op, ErrUnsupportedOp, nil, "a file opened ModeSequential is accessed through the shared pointer only")
	}
	x, err := f.prepare(op, write, buf, count, dt, true, nil)
	if err != nil {
		return Status{}, f.handle(err)
	}
	f.mu.Lock()
	pos := f.pos
	f.mu.Unlock()
	st, err := f.independent(x, pos*x.view.fesize)
	f.mu.Lock()
	f.pos = pos + int64(st.bytes)/x.view.esize
	f.mu.Unlock()
	return st, f.handle(err)
}

// Seek moves the individual file pointer (MPI_File_seek): to off
// etypes with SeekSet, by off with SeekCur, to off past the end of the
// file (in the view) with SeekEnd. It returns the new position, so *File
// is an io.Seeker in etypes. A position before 0 is ErrArg.
func (f *File) Seek(off int64, whence int) (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Seek", nil, Undefined, Undefined), &err)
	}

	if err := f.check("Seek"); err != nil {
		return 0, err
	}
	if f.amode&ModeSequential != 0 {
		return 0, f.fail("Seek", ErrUnsupportedOp, nil, "a file opened ModeSequential has no individual pointer")
	}
	base := int64(0)
	switch whence {
	case SeekSet:
	case SeekCur:
		f.mu.Lock()
		base = f.pos
		f.mu.Unlock()
	case SeekEnd:
		b, err := f.endEtypes()
		if err != nil {
			return 0, f.handle(err)
		}
		base = b
	default:
		return 0, f.fail("Seek", ErrArg, nil, "whence %d (SeekSet, SeekCur or SeekEnd)", whence)
	}
	if base+off < 0 {
		return 0, f.fail("Seek", ErrArg, nil, "position %d is before the start of the view", base+off)
	}
	f.mu.Lock()
	f.pos = base + off
	f.mu.Unlock()
	return base + off, nil
}

// endEtypes is the end of the file as a position in the view: the etypes
// of the view before the file's size.
func (f *File) endEtypes() (int64, error) {
	st, err := f.fd.Stat()
	if err != nil {
		return 0, fileErr(f.comm, "File.Seek", f.name, osClass(err), err, "")
	}
	f.mu.Lock()
	v := f.view
	f.mu.Unlock()
	return streamBefore(v.plan, st.Size()) / v.fesize, nil
}

// streamBefore returns how many stream bytes of view p lie before file
// offset size.
func streamBefore(p *fileio.View, size int64) int64 {
	if size <= p.Disp || p.Size == 0 {
		return 0
	}
	rel := size - p.Disp
	tiles := rel / p.Extent
	n := tiles * p.Size
	in := rel % p.Extent
	for _, s := range p.Segs {
		if in <= s.Off {
			break
		}
		n += min(in, s.End()) - s.Off
	}
	return n
}

// Position returns the individual file pointer in etypes
// (MPI_File_get_position).
func (f *File) Position() (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Position", nil, Undefined, Undefined), &err)
	}

	if err := f.check("Position"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos, nil
}

// ByteOffset returns the absolute byte position in the file of view
// offset off (MPI_File_get_byte_offset).
func (f *File) ByteOffset(off int64) (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ByteOffset", nil, Undefined, Undefined), &err)
	}

	if err := f.check("ByteOffset"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.fail("ByteOffset", ErrArg, nil, "negative offset %d", off)
	}
	f.mu.Lock()
	v := f.view
	f.mu.Unlock()
	return v.plan.FileOffset(off * v.fesize), nil
}

// ReadShared reads count elements of dt at the shared file pointer and
// advances it for every rank (MPI_File_read_shared). Ranks calling it
// concurrently get disjoint parts of the file, in some order.
func (f *File) ReadShared(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadShared", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.viaShared("ReadShared", false, buf, count, dt)
}

// WriteShared writes count elements of dt at the shared file pointer and
// advances it for every rank (MPI_File_write_shared).
func (f *File) WriteShared(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteShared", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.viaShared("WriteShared", true, buf, count, dt)
}

func (f *File) viaShared(op string, write bool, buf []byte, count int, dt *Datatype) (Status, error) {
	x, err := f.prepare(op, write, buf, count, dt, true, nil)
	if err != nil {
		return Status{}, f.handle(err)
	}
	pos, err := f.shared.add(x.n / x.view.fesize)
	if err != nil {
		x.finish(0)
		return Status{}, f.fail(op, ErrorClass(err), err, "updating the shared file pointer")
	}
	st, err := f.independent(x, pos*x.view.fesize)
	return st, f.handle(err)
}

// SeekShared moves the shared file pointer (MPI_File_seek_shared);
// collective, with the same arguments on every rank.
func (f *File) SeekShared(off int64, whence int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.SeekShared", nil, Undefined, Undefined), &err)
	}

	if err := f.check("SeekShared"); err != nil {
		return err
	}
	return f.handle(f.q.do(func() error {
		args, err := Allgather(f.comm, [2]int64{off, int64(whence)})
		if err != nil {
			return fileErr(f.comm, "File.SeekShared", f.name, ErrorClass(err), err, "")
		}
		for r, a := range args {
			if a != args[0] {
				return fileErr(f.comm, "File.SeekShared", f.name, ErrArg, nil, "ranks passed different arguments (rank %d: %d, %d)", r, a[0], a[1])
			}
		}
		var local error
		if f.comm.Rank() == 0 {
			base := int64(0)
			switch whence {
			case SeekSet:
			case SeekCur:
				base = f.shared.local(0, 0)
			case SeekEnd:
				base, local = f.endEtypes()
			default:
				local = fileErr(f.comm, "File.SeekShared", f.name, ErrArg, nil, "whence %d", whence)
			}
			if local == nil && base+off < 0 {
				local = fileErr(f.comm, "File.SeekShared", f.name, ErrArg, nil, "position %d is before the start of the view", base+off)
			}
			if local == nil {
				f.shared.set(base + off)
			}
		}
		return f.agree("SeekShared", local)
	}))
}

// PositionShared returns the shared file pointer in etypes
// (MPI_File_get_position_shared).
func (f *File) PositionShared() (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.PositionShared", nil, Undefined, Undefined), &err)
	}

	if err := f.check("PositionShared"); err != nil {
		return 0, err
	}
	v, err := f.shared.add(0)
	if err != nil {
		return 0, f.fail("PositionShared", ErrorClass(err), err, "")
	}
	return v, nil
}

package mpi

import (
	"io"
	"reflect"
	"sync"

	"github.com/mpigo/mpi/internal/datatype"
)

// The typed layer of MPI-IO: slices of plain Go values (numbers, arrays
// and structs of them) read and written at offsets counted in etypes of
// the view, and views made from Go types.

// fileTypes caches fileType's datatypes by Go type, so a typed access
// allocates no datatype.
var fileTypes sync.Map // reflect.Type -> *Datatype

// fileType returns the datatype of E for file access.
func fileType[E any](f *File, op string) (*Datatype, error) {
	t := reflect.TypeFor[E]()
	if dt, ok := fileTypes.Load(t); ok {
		return dt.(*Datatype), nil
	}
	dt, err := DatatypeOf[E]()
	if err == nil {
		fileTypes.Store(t, dt)
	}
	if err != nil {
		if f == nil {
			return nil, err
		}
		return nil, f.fail(op, ErrType, err, "")
	}
	return dt, nil
}

// typedAccess runs one of the low-level calls on vals.
func typedAccess[E any](f *File, op string, vals []E, call func(buf []byte, count int, dt *Datatype) (Status, error)) (Status, error) {
	if err := f.check(op); err != nil {
		return Status{}, err
	}
	dt, err := fileType[E](f, op)
	if err != nil {
		return Status{}, err
	}
	return call(datatype.SliceBytes(vals), len(vals), dt)
}

// WriteAt writes vals at offset off of f's view, counted in etypes
// (bytes under the default view) (MPI_File_write_at). Status.Count() is
// the number of elements written.
func WriteAt[E any](f *File, off int64, vals []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WriteAt", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "WriteAt", vals, func(b []byte, n int, dt *Datatype) (Status, error) { return f.WriteAt(off, b, n, dt) })
}

// ReadAt reads into buf from offset off of f's view (MPI_File_read_at).
// At the end of the file it reads fewer elements than len(buf), with no
// error: Status.Count() says how many.
func ReadAt[E any](f *File, off int64, buf []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReadAt", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "ReadAt", buf, func(b []byte, n int, dt *Datatype) (Status, error) { return f.ReadAt(off, b, n, dt) })
}

// WriteAtAll is the collective WriteAt (MPI_File_write_at_all): every
// rank of the file calls it with its own offset and values; interleaved
// or non-contiguous views go through collective buffering.
func WriteAtAll[E any](f *File, off int64, vals []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WriteAtAll", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "WriteAtAll", vals, func(b []byte, n int, dt *Datatype) (Status, error) { return f.WriteAtAll(off, b, n, dt) })
}

// ReadAtAll is the collective ReadAt (MPI_File_read_at_all).
func ReadAtAll[E any](f *File, off int64, buf []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReadAtAll", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "ReadAtAll", buf, func(b []byte, n int, dt *Datatype) (Status, error) { return f.ReadAtAll(off, b, n, dt) })
}

// WriteShared writes vals at the shared file pointer (MPI_File_write_shared).
func WriteShared[E any](f *File, vals []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WriteShared", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "WriteShared", vals, f.WriteShared)
}

// ReadShared reads into buf at the shared file pointer (MPI_File_read_shared).
func ReadShared[E any](f *File, buf []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReadShared", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "ReadShared", buf, f.ReadShared)
}

// WriteOrdered writes vals at the shared pointer in rank order
// (MPI_File_write_ordered); collective.
func WriteOrdered[E any](f *File, vals []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WriteOrdered", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "WriteOrdered", vals, f.WriteOrdered)
}

// ReadOrdered reads into buf at the shared pointer in rank order
// (MPI_File_read_ordered); collective.
func ReadOrdered[E any](f *File, buf []E) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReadOrdered", nil, Undefined, Undefined), &err)
	}

	return typedAccess(f, "ReadOrdered", buf, f.ReadOrdered)
}

// SetViewBlock sets f's view to this rank's block of a global N-d array
// of E stored from byte disp in row-major (C) order: gsizes is the
// global shape, subsizes this rank's block and starts its corner
// (MPI_Type_create_subarray as the filetype, E as the etype). Offsets
// then count elements of the block; WriteAtAll(f, 0, block) writes the
// block where a C program with the same view writes it. Collective.
func SetViewBlock[E any](f *File, disp int64, gsizes, subsizes, starts []int, datarep string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("SetViewBlock", nil, Undefined, Undefined), &err)
	}

	if err := f.check("SetViewBlock"); err != nil {
		return err
	}
	et, err := fileType[E](f, "SetViewBlock")
	if err != nil {
		return err
	}
	ft, err := NewSubarray(gsizes, subsizes, starts, OrderC, et)
	if err == nil {
		err = ft.Commit()
	}
	if err != nil {
		// Take part in the collective anyway, so the others fail too.
		ft = nil
	}
	return f.SetView(disp, et, ft, datarep, nil)
}

// FileIO adapts a File to io.ReaderAt, io.WriterAt, io.Reader,
// io.Writer and io.Seeker: offsets are in bytes of the view's data (a
// multiple of the etype's size), reads at the end of the file return
// io.EOF as io.ReaderAt asks, and Read, Write and Seek use the
// individual file pointer. Every call is independent.
type FileIO struct{ f *File }

// IO returns f's io adapter; its calls on a nil *File fail with ErrFile.
func (f *File) IO() *FileIO { return &FileIO{f} }

// file returns the adapted file (nil for a nil adapter, which every
// call refuses with ErrFile).
func (a *FileIO) file() *File {
	if a == nil {
		return nil
	}
	return a.f
}

func (a *FileIO) etypes(op string, off int64) (int64, error) {
	if err := a.file().check(op); err != nil {
		return 0, err
	}
	a.f.mu.Lock()
	es := a.f.view.esize
	a.f.mu.Unlock()
	if off%es != 0 {
		return 0, a.f.fail(op, ErrArg, nil, "byte offset %d is not a multiple of the etype's size %d", off, es)
	}
	return off / es, nil
}

// ReadAt implements io.ReaderAt.
func (a *FileIO) ReadAt(p []byte, off int64) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FileIO.ReadAt", nil, Undefined, Undefined), &err)
	}

	o, err := a.etypes("ReadAt", off)
	if err != nil {
		return 0, err
	}
	st, err := a.f.ReadAt(o, p, len(p), Byte)
	if err == nil && st.Bytes() < len(p) {
		err = io.EOF
	}
	return st.Bytes(), err
}

// WriteAt implements io.WriterAt.
func (a *FileIO) WriteAt(p []byte, off int64) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FileIO.WriteAt", nil, Undefined, Undefined), &err)
	}

	o, err := a.etypes("WriteAt", off)
	if err != nil {
		return 0, err
	}
	st, err := a.f.WriteAt(o, p, len(p), Byte)
	return st.Bytes(), err
}

// Read implements io.Reader at the individual file pointer.
func (a *FileIO) Read(p []byte) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FileIO.Read", nil, Undefined, Undefined), &err)
	}

	if err := a.file().check("Read"); err != nil {
		return 0, err
	}
	st, err := a.f.Read(p, len(p), Byte)
	if err == nil && st.Bytes() == 0 && len(p) > 0 {
		err = io.EOF
	}
	return st.Bytes(), err
}

// Write implements io.Writer at the individual file pointer.
func (a *FileIO) Write(p []byte) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FileIO.Write", nil, Undefined, Undefined), &err)
	}

	if err := a.file().check("Write"); err != nil {
		return 0, err
	}
	st, err := a.f.Write(p, len(p), Byte)
	return st.Bytes(), err
}

// Seek implements io.Seeker in bytes of the view's data.
func (a *FileIO) Seek(off int64, whence int) (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FileIO.Seek", nil, Undefined, Undefined), &err)
	}

	o, err := a.etypes("Seek", off)
	if err != nil {
		return 0, err
	}
	pos, err := a.f.Seek(o, whence)
	a.f.mu.Lock()
	es := a.f.view.esize
	a.f.mu.Unlock()
	return pos * es, err
}

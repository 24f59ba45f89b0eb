//go:build cgo

package capi

/*
#include <stdint.h>
void mpigo_call_file_errhandler(void *fn, uintptr_t file, int code);
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// MPI-IO (MPI_File_*): every call maps onto the matching method of
// mpi.File, whose low-level layer takes a buffer, a count and a datatype
// as MPI does. What this file adds is the ABI's side: handles of their
// own kind, the access modes' and whence's values, and the error
// handlers of files, which differ from those of communicators in two
// ways the standard fixes: MPI_ERRORS_RETURN is the default, and errors
// with no file to blame (MPI_File_open, MPI_File_delete, a bad handle)
// go to MPI_FILE_NULL's handler, which MPI_File_open also copies to the
// files it opens.

// Kinds of the handles of files and of their error handlers. They follow
// win.go's (20-22) and come before mpit.go's (24-27).
const (
	kindFile           = 23
	kindFileErrhandler = 0x32 // after session.go's 0x30, 0x31
)

// fileEntry is a file behind a handle, or MPI_FILE_NULL (nullFile, whose
// f is nil) with the handler new files start with.
type fileEntry struct {
	f      *mpi.File
	h      uintptr
	ce     commEntry // the opening communicator, and the predefined handler
	errMu  sync.Mutex
	userH  uintptr        // the handle of a user error handler, or 0
	userFn unsafe.Pointer // its C function, kept here as the handle may be freed
}

var (
	files     = &table[*fileEntry]{kind: kindFile}
	fileErrhs = &table[unsafe.Pointer]{kind: kindFileErrhandler}
	nullFile  = &fileEntry{h: MPI_FILE_NULL}
	// quiet is a communicator entry whose handler returns: the shared
	// helpers (typeArg, bufType) raise on it, and the code they give is
	// then passed to the file's handler.
	quiet commEntry
)

func init() {
	nullFile.ce.errh.Store(MPI_ERRORS_RETURN)
	quiet.errh.Store(MPI_ERRORS_RETURN)
}

// fileCEs maps the commEntry of each open file (fileEntry.ce) to the
// file: the requests of a file carry that commEntry, and the calls that
// complete them raise their errors on it (raiseOn), which must reach the
// file's handler, a user one included.
var fileCEs sync.Map // *commEntry -> *fileEntry

// fileOf returns the open file whose commEntry ce is, or nil.
func fileOf(ce *commEntry) *fileEntry {
	if ce == nil {
		return nil
	}
	if fe, ok := fileCEs.Load(ce); ok {
		return fe.(*fileEntry)
	}
	return nil
}

// handler returns the file's user error handler, or nil.
func (fe *fileEntry) handler() unsafe.Pointer {
	fe.errMu.Lock()
	defer fe.errMu.Unlock()
	return fe.userFn
}

// dispatch passes code, an error raised on the file, to its handler and
// returns it: a user handler is called, MPI_ERRORS_ARE_FATAL and
// MPI_ERRORS_ABORT end the job.
func (fe *fileEntry) dispatch(code int32) int32 {
	if code == MPI_SUCCESS {
		return code
	}
	if f := fe.handler(); f != nil {
		C.mpigo_call_file_errhandler(f, C.uintptr_t(fe.h), C.int(code))
		return code
	}
	if fe.ce.errh.Load() == MPI_ERRORS_RETURN || !usable() {
		return code
	}
	class := classOfCode(code)
	s, _ := codeString(code)
	fmt.Fprintf(os.Stderr, "mpigo: %s; the file's error handler is fatal: aborting the job\n", s)
	c := fe.ce.c
	if c == nil {
		c = world.c
	}
	if c == nil {
		os.Exit(mpi.ExitStatus(int(class)))
	}
	abortJob(c, int(class))
	return code
}

// raise makes the code of err in call fn and passes it to the file's
// handler.
func (fe *fileEntry) raise(fn string, err error) int32 {
	return fe.dispatch(newCode(classOf(err), fn+": "+err.Error()))
}

func (fe *fileEntry) check(fn string, err error) int32 {
	if err == nil {
		return MPI_SUCCESS
	}
	return fe.raise(fn, err)
}

// fileArg returns the open file behind h, or nil and the code raised on
// MPI_FILE_NULL's handler (there is no file to take one from).
func fileArg(fn string, h uintptr) (*fileEntry, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	if h == MPI_FILE_NULL {
		return nil, nullFile.raise(fn, classErr(MPI_ERR_FILE, "MPI_FILE_NULL is not an open file"))
	}
	fe, ok := files.get(h)
	if !ok {
		return nil, nullFile.raise(fn, classErr(MPI_ERR_FILE, fmt.Sprintf("%#x is not a file handle (closed, garbage, or of another kind)", h)))
	}
	return fe, 0
}

// fileOrNull is fileArg for the error handler calls, which take
// MPI_FILE_NULL too.
func fileOrNull(fn string, h uintptr) (*fileEntry, int32) {
	if h == MPI_FILE_NULL {
		if rc := running(fn); rc != 0 {
			return nil, rc
		}
		return nullFile, 0
	}
	return fileArg(fn, h)
}

// typeArg resolves a datatype, raising on the file.
func (fe *fileEntry) typeArg(fn string, h uintptr) (*mpi.Datatype, int32) {
	t, rc := typeArg(fn, &quiet, h)
	if t == nil {
		return nil, fe.dispatch(rc)
	}
	return t, 0
}

// buf resolves the buffer of count elements of datatype at p: the
// memory and the datatype to give mpigo (bufType: MPI_BOTTOM and types
// reaching below p work).
func (fe *fileEntry) buf(fn string, p unsafe.Pointer, count int, datatype uintptr) ([]byte, *mpi.Datatype, int32) {
	t, rc := fe.typeArg(fn, datatype)
	if t == nil {
		return nil, nil, rc
	}
	if uintptr(p) == 1 {
		return nil, nil, fe.raise(fn, classErr(MPI_ERR_BUFFER, "MPI_IN_PLACE is not a buffer of file data"))
	}
	b, tt, rc := bufType(fn, &quiet, p, count, t)
	if rc != 0 {
		return nil, nil, fe.dispatch(rc)
	}
	return b, tt, 0
}

// Access modes: the ABI's values and mpigo's differ.
var amodeBits = [...]struct{ abi, gov int32 }{
	{MPI_MODE_RDONLY, mpi.ModeRdonly}, {MPI_MODE_RDWR, mpi.ModeRdwr}, {MPI_MODE_WRONLY, mpi.ModeWronly},
	{MPI_MODE_CREATE, mpi.ModeCreate}, {MPI_MODE_EXCL, mpi.ModeExcl}, {MPI_MODE_DELETE_ON_CLOSE, mpi.ModeDeleteOnClose},
	{MPI_MODE_UNIQUE_OPEN, mpi.ModeUniqueOpen}, {MPI_MODE_SEQUENTIAL, mpi.ModeSequential}, {MPI_MODE_APPEND, mpi.ModeAppend},
}

// goAmode is mpigo's access mode for the ABI's a. A bit the ABI does not
// define becomes one mpigo does not either, so that OpenFile refuses it
// on every rank (MPI_ERR_AMODE) rather than this rank alone.
func goAmode(a int32) int {
	g := int32(0)
	for _, b := range amodeBits {
		if a&b.abi != 0 {
			g |= b.gov
			a &^= b.abi
		}
	}
	if a != 0 {
		g |= 1 << 20
	}
	return int(g)
}

func abiAmode(g int) int32 {
	a := int32(0)
	for _, b := range amodeBits {
		if int32(g)&b.gov != 0 {
			a |= b.abi
		}
	}
	return a
}

// goWhence is mpigo's whence for MPI_SEEK_*; another value stays out of
// mpigo's range, which refuses it (MPI_ERR_ARG).
func goWhence(w int32) int {
	switch w {
	case MPI_SEEK_SET:
		return mpi.SeekSet
	case MPI_SEEK_CUR:
		return mpi.SeekCur
	case MPI_SEEK_END:
		return mpi.SeekEnd
	}
	return -1
}

// infoOrNil resolves an info argument: MPI_INFO_NULL is nil.
func infoOrNil(fn string, fe *fileEntry, h uintptr) (*mpi.Info, int32) {
	if h == MPI_INFO_NULL {
		return nil, 0
	}
	if h == MPI_INFO_ENV {
		return mpi.NewInfo(), 0
	}
	if in, ok := infos.get(h); ok {
		return in, 0
	}
	return nil, fe.raise(fn, classErr(MPI_ERR_INFO, fmt.Sprintf("%#x is not an info handle", h)))
}

// Opening, closing, deleting.

func implFile_open(comm uintptr, filename unsafe.Pointer, amode int32, info uintptr, fh unsafe.Pointer) int32 {
	const fn = "MPI_File_open"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if filename == nil || fh == nil {
		return nullFile.raise(fn, classErr(MPI_ERR_ARG, "filename or fh is NULL"))
	}
	in, rc := infoOrNil(fn, nullFile, info)
	if rc != 0 {
		return rc
	}
	f, err := mpi.OpenFile(ce.c, cString(filename), goAmode(amode), in)
	if err != nil {
		return nullFile.raise(fn, err)
	}
	fe := &fileEntry{f: f}
	fe.ce.c = ce.c
	// A new file starts with MPI_FILE_NULL's handler.
	fe.ce.errh.Store(nullFile.ce.errh.Load())
	nullFile.errMu.Lock()
	fe.userH, fe.userFn = nullFile.userH, nullFile.userFn
	nullFile.errMu.Unlock()
	fe.h = files.add(fe)
	fileCEs.Store(&fe.ce, fe)
	*(*uintptr)(fh) = fe.h
	return MPI_SUCCESS
}

func implFile_close(fh unsafe.Pointer) int32 {
	const fn = "MPI_File_close"
	if fh == nil {
		if rc := running(fn); rc != 0 {
			return rc
		}
		return nullFile.raise(fn, classErr(MPI_ERR_ARG, "fh is NULL"))
	}
	h := *(*uintptr)(fh)
	fe, rc := fileArg(fn, h)
	if fe == nil {
		return rc
	}
	err := fe.f.Close() // closes the file even when it fails
	files.remove(h)
	// Requests of the file that are still held (completed, not yet
	// freed) raise on the predefined handler from now on.
	fileCEs.Delete(&fe.ce)
	*(*uintptr)(fh) = MPI_FILE_NULL
	return fe.check(fn, err)
}

func implFile_delete(filename unsafe.Pointer, info uintptr) int32 {
	const fn = "MPI_File_delete"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if filename == nil {
		return nullFile.raise(fn, classErr(MPI_ERR_ARG, "filename is NULL"))
	}
	in, rc := infoOrNil(fn, nullFile, info)
	if rc != 0 {
		return rc
	}
	return nullFile.check(fn, mpi.DeleteFile(cString(filename), in))
}

// Size, group, mode, info.

func implFile_set_size(fh uintptr, size int64) int32 {
	const fn = "MPI_File_set_size"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	return fe.check(fn, fe.f.SetSize(size))
}

func implFile_preallocate(fh uintptr, size int64) int32 {
	const fn = "MPI_File_preallocate"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	return fe.check(fn, fe.f.Preallocate(size))
}

// outArg checks a file and an output pointer.
func outArg(fn string, fh uintptr, out unsafe.Pointer, what string) (*fileEntry, int32) {
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return nil, rc
	}
	if out == nil {
		return nil, fe.raise(fn, classErr(MPI_ERR_ARG, what+" is NULL"))
	}
	return fe, 0
}

// offsetOut stores the result of get at out (an MPI_Offset).
func offsetOut(fn string, fh uintptr, out unsafe.Pointer, what string, get func(*mpi.File) (int64, error)) int32 {
	fe, rc := outArg(fn, fh, out, what)
	if fe == nil {
		return rc
	}
	v, err := get(fe.f)
	if err != nil {
		return fe.raise(fn, err)
	}
	*(*int64)(out) = v
	return MPI_SUCCESS
}

func implFile_get_size(fh uintptr, size unsafe.Pointer) int32 {
	return offsetOut("MPI_File_get_size", fh, size, "size", (*mpi.File).Size)
}

func implFile_get_group(fh uintptr, group unsafe.Pointer) int32 {
	fe, rc := outArg("MPI_File_get_group", fh, group, "group")
	if fe == nil {
		return rc
	}
	newGroup(fe.f.Group(), group)
	return MPI_SUCCESS
}

func implFile_get_amode(fh uintptr, amode unsafe.Pointer) int32 {
	fe, rc := outArg("MPI_File_get_amode", fh, amode, "amode")
	if fe == nil {
		return rc
	}
	*(*int32)(amode) = abiAmode(fe.f.Amode())
	return MPI_SUCCESS
}

func implFile_set_info(fh, info uintptr) int32 {
	const fn = "MPI_File_set_info"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	in, rc := infoOrNil(fn, fe, info)
	if rc != 0 {
		return rc
	}
	if in == nil {
		in = mpi.NewInfo()
	}
	return fe.check(fn, fe.f.SetInfo(in))
}

func implFile_get_info(fh uintptr, info unsafe.Pointer) int32 {
	fe, rc := outArg("MPI_File_get_info", fh, info, "info_used")
	if fe == nil {
		return rc
	}
	in := fe.f.Info() // a copy of its own, which the program frees
	if in == nil {
		in = mpi.NewInfo()
	}
	*(*uintptr)(info) = infos.add(in)
	return MPI_SUCCESS
}

// Views.

func implFile_set_view(fh uintptr, disp int64, etype, filetype uintptr, datarep unsafe.Pointer, info uintptr) int32 {
	const fn = "MPI_File_set_view"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	// A refused argument still takes part, with a nil etype that mpigo
	// refuses on every rank, so that no rank waits for this one.
	refused := func(rc int32) int32 {
		_ = fe.f.SetView(0, nil, nil, "native", nil)
		return rc
	}
	et, rc := fe.typeArg(fn, etype)
	if et == nil {
		return refused(rc)
	}
	ft, rc := fe.typeArg(fn, filetype)
	if ft == nil {
		return refused(rc)
	}
	if datarep == nil {
		return refused(fe.raise(fn, classErr(MPI_ERR_ARG, "datarep is NULL")))
	}
	in, rc := infoOrNil(fn, fe, info)
	if rc != 0 {
		return refused(rc)
	}
	if disp == MPI_DISPLACEMENT_CURRENT {
		// Only for files of MPI_MODE_SEQUENTIAL: the view starts where
		// the shared pointer is.
		if fe.f.Amode()&mpi.ModeSequential == 0 {
			return fe.raise(fn, classErr(MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL"))
		}
		pos, err := fe.f.PositionShared()
		if err == nil {
			disp, err = fe.f.ByteOffset(pos)
		}
		if err != nil {
			return fe.raise(fn, err)
		}
	}
	return fe.check(fn, fe.f.SetView(disp, et, ft, cString(datarep), in))
}

// viewType is the handle MPI_File_get_view returns for t: a predefined
// datatype's own, a new handle (which the program frees) for a derived
// one, as the standard says.
func viewType(t *mpi.Datatype) (uintptr, error) {
	if h := typeHandle(t); h != MPI_DATATYPE_NULL && h>>kindShift == 0 {
		return h, nil
	}
	d, err := t.Dup()
	if err != nil {
		return 0, err
	}
	h := userTypes.add(d)
	typeHandles.Store(d, h)
	return h, nil
}

func implFile_get_view(fh uintptr, disp, etype, filetype, datarep unsafe.Pointer) int32 {
	const fn = "MPI_File_get_view"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	if disp == nil || etype == nil || filetype == nil || datarep == nil {
		return fe.raise(fn, classErr(MPI_ERR_ARG, "disp, etype, filetype or datarep is NULL"))
	}
	d, et, ft, rep, err := fe.f.GetView()
	if err != nil {
		return fe.raise(fn, err)
	}
	eh, err := viewType(et)
	if err != nil {
		return fe.raise(fn, err)
	}
	fth, err := viewType(ft)
	if err != nil {
		return fe.raise(fn, err)
	}
	*(*int64)(disp) = d
	*(*uintptr)(etype), *(*uintptr)(filetype) = eh, fth
	putString(datarep, nil, rep, MPI_MAX_DATAREP_STRING)
	return MPI_SUCCESS
}

func typeExtent(fn string, fh, datatype uintptr, extent unsafe.Pointer) int32 {
	fe, rc := outArg(fn, fh, extent, "extent")
	if fe == nil {
		return rc
	}
	t, rc := fe.typeArg(fn, datatype)
	if t == nil {
		return rc
	}
	e, err := fe.f.TypeExtent(t)
	if err != nil {
		return fe.raise(fn, err)
	}
	*(*int64)(extent) = e // MPI_Aint and MPI_Count are both 64 bits
	return MPI_SUCCESS
}

func implFile_get_type_extent(fh, datatype uintptr, extent unsafe.Pointer) int32 {
	return typeExtent("MPI_File_get_type_extent", fh, datatype, extent)
}

func implFile_get_type_extent_c(fh, datatype uintptr, extent unsafe.Pointer) int32 {
	return typeExtent("MPI_File_get_type_extent_c", fh, datatype, extent)
}

// Data access. Every blocking access is one of these shapes: an offset or
// none, a status out.

// accessFunc is a blocking access of mpi.File; off is ignored by the
// calls through a file pointer.
type accessFunc = func(f *mpi.File, off int64, b []byte, n int, t *mpi.Datatype) (mpi.Status, error)

// A collective call whose arguments this layer refuses on one rank still
// takes part, with a nil datatype, which mpigo refuses on every rank
// after agreeing (MPI_ERR_TYPE there, naming this rank): the other ranks
// fail instead of waiting for this one. That is collective (coll) below.

func access(fn string, fh uintptr, off int64, buf unsafe.Pointer, count int, datatype uintptr, st unsafe.Pointer, coll bool, do accessFunc) int32 {
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	b, t, rc := fe.buf(fn, buf, count, datatype)
	if rc != 0 {
		if coll {
			_, _ = do(fe.f, off, nil, 0, nil)
		}
		return rc
	}
	s, err := do(fe.f, off, b, count, t)
	rc = fe.check(fn, err)
	setStatus(st, s)
	return rc
}

// noOff adapts a call through a file pointer to accessFunc.
func noOff(do func(f *mpi.File, b []byte, n int, t *mpi.Datatype) (mpi.Status, error)) accessFunc {
	return func(f *mpi.File, _ int64, b []byte, n int, t *mpi.Datatype) (mpi.Status, error) {
		return do(f, b, n, t)
	}
}

var (
	readAt       accessFunc = (*mpi.File).ReadAt
	writeAt      accessFunc = (*mpi.File).WriteAt
	readAtAll    accessFunc = (*mpi.File).ReadAtAll
	writeAtAll   accessFunc = (*mpi.File).WriteAtAll
	readInd                 = noOff((*mpi.File).Read)
	writeInd                = noOff((*mpi.File).Write)
	readAll                 = noOff((*mpi.File).ReadAll)
	writeAll                = noOff((*mpi.File).WriteAll)
	readShared              = noOff((*mpi.File).ReadShared)
	writeShared             = noOff((*mpi.File).WriteShared)
	readOrdered             = noOff((*mpi.File).ReadOrdered)
	writeOrdered            = noOff((*mpi.File).WriteOrdered)
)

func implFile_read_at(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_at", fh, off, buf, int(count), dt, st, false, readAt)
}

func implFile_read_at_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_at_c", fh, off, buf, int(count), dt, st, false, readAt)
}

func implFile_write_at(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_at", fh, off, buf, int(count), dt, st, false, writeAt)
}

func implFile_write_at_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_at_c", fh, off, buf, int(count), dt, st, false, writeAt)
}

func implFile_read_at_all(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_at_all", fh, off, buf, int(count), dt, st, true, readAtAll)
}

func implFile_read_at_all_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_at_all_c", fh, off, buf, int(count), dt, st, true, readAtAll)
}

func implFile_write_at_all(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_at_all", fh, off, buf, int(count), dt, st, true, writeAtAll)
}

func implFile_write_at_all_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_at_all_c", fh, off, buf, int(count), dt, st, true, writeAtAll)
}

func implFile_read(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read", fh, 0, buf, int(count), dt, st, false, readInd)
}

func implFile_read_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_c", fh, 0, buf, int(count), dt, st, false, readInd)
}

func implFile_write(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write", fh, 0, buf, int(count), dt, st, false, writeInd)
}

func implFile_write_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_c", fh, 0, buf, int(count), dt, st, false, writeInd)
}

func implFile_read_all(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_all", fh, 0, buf, int(count), dt, st, true, readAll)
}

func implFile_read_all_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_all_c", fh, 0, buf, int(count), dt, st, true, readAll)
}

func implFile_write_all(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_all", fh, 0, buf, int(count), dt, st, true, writeAll)
}

func implFile_write_all_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_all_c", fh, 0, buf, int(count), dt, st, true, writeAll)
}

func implFile_read_shared(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_shared", fh, 0, buf, int(count), dt, st, false, readShared)
}

func implFile_read_shared_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_shared_c", fh, 0, buf, int(count), dt, st, false, readShared)
}

func implFile_write_shared(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_shared", fh, 0, buf, int(count), dt, st, false, writeShared)
}

func implFile_write_shared_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_shared_c", fh, 0, buf, int(count), dt, st, false, writeShared)
}

func implFile_read_ordered(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_ordered", fh, 0, buf, int(count), dt, st, true, readOrdered)
}

func implFile_read_ordered_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_read_ordered_c", fh, 0, buf, int(count), dt, st, true, readOrdered)
}

func implFile_write_ordered(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_ordered", fh, 0, buf, int(count), dt, st, true, writeOrdered)
}

func implFile_write_ordered_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, st unsafe.Pointer) int32 {
	return access("MPI_File_write_ordered_c", fh, 0, buf, int(count), dt, st, true, writeOrdered)
}

// Non-blocking data access: the requests of mpi.File are generalized
// requests, which MPI_Wait, MPI_Test and the calls on many requests
// complete like any other. They carry the file's commEntry, so that
// their errors go to the file's handler (fileOf).

type startAccessFunc = func(f *mpi.File, off int64, b []byte, n int, t *mpi.Datatype) (*mpi.Request, error)

func istart(fn string, fh uintptr, off int64, buf unsafe.Pointer, count int, datatype uintptr, request unsafe.Pointer, coll bool, do startAccessFunc) int32 {
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	var b []byte
	var t *mpi.Datatype
	if request == nil {
		rc = fe.raise(fn, classErr(MPI_ERR_ARG, "request is NULL"))
	} else {
		b, t, rc = fe.buf(fn, buf, count, datatype)
	}
	if rc != 0 {
		if coll {
			if r, err := do(fe.f, off, nil, 0, nil); err == nil {
				_, _ = r.Wait()
			}
		}
		return rc
	}
	r, err := do(fe.f, off, b, count, t)
	if err != nil {
		return fe.raise(fn, err)
	}
	*(*uintptr)(request) = addRequest(r, &fe.ce, false)
	return MPI_SUCCESS
}

func noOffI(do func(f *mpi.File, b []byte, n int, t *mpi.Datatype) (*mpi.Request, error)) startAccessFunc {
	return func(f *mpi.File, _ int64, b []byte, n int, t *mpi.Datatype) (*mpi.Request, error) {
		return do(f, b, n, t)
	}
}

var (
	ireadAt      startAccessFunc = (*mpi.File).IreadAt
	iwriteAt     startAccessFunc = (*mpi.File).IwriteAt
	ireadAtAll   startAccessFunc = (*mpi.File).IreadAtAll
	iwriteAtAll  startAccessFunc = (*mpi.File).IwriteAtAll
	iread                        = noOffI((*mpi.File).Iread)
	iwrite                       = noOffI((*mpi.File).Iwrite)
	ireadAll                     = noOffI((*mpi.File).IreadAll)
	iwriteAll                    = noOffI((*mpi.File).IwriteAll)
	ireadShared                  = noOffI((*mpi.File).IreadShared)
	iwriteShared                 = noOffI((*mpi.File).IwriteShared)
)

func implFile_iread_at(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_at", fh, off, buf, int(count), dt, req, false, ireadAt)
}

func implFile_iread_at_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_at_c", fh, off, buf, int(count), dt, req, false, ireadAt)
}

func implFile_iwrite_at(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_at", fh, off, buf, int(count), dt, req, false, iwriteAt)
}

func implFile_iwrite_at_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_at_c", fh, off, buf, int(count), dt, req, false, iwriteAt)
}

func implFile_iread_at_all(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_at_all", fh, off, buf, int(count), dt, req, true, ireadAtAll)
}

func implFile_iread_at_all_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_at_all_c", fh, off, buf, int(count), dt, req, true, ireadAtAll)
}

func implFile_iwrite_at_all(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_at_all", fh, off, buf, int(count), dt, req, true, iwriteAtAll)
}

func implFile_iwrite_at_all_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_at_all_c", fh, off, buf, int(count), dt, req, true, iwriteAtAll)
}

func implFile_iread(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread", fh, 0, buf, int(count), dt, req, false, iread)
}

func implFile_iread_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_c", fh, 0, buf, int(count), dt, req, false, iread)
}

func implFile_iwrite(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite", fh, 0, buf, int(count), dt, req, false, iwrite)
}

func implFile_iwrite_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_c", fh, 0, buf, int(count), dt, req, false, iwrite)
}

func implFile_iread_all(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_all", fh, 0, buf, int(count), dt, req, true, ireadAll)
}

func implFile_iread_all_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_all_c", fh, 0, buf, int(count), dt, req, true, ireadAll)
}

func implFile_iwrite_all(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_all", fh, 0, buf, int(count), dt, req, true, iwriteAll)
}

func implFile_iwrite_all_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_all_c", fh, 0, buf, int(count), dt, req, true, iwriteAll)
}

func implFile_iread_shared(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_shared", fh, 0, buf, int(count), dt, req, false, ireadShared)
}

func implFile_iread_shared_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iread_shared_c", fh, 0, buf, int(count), dt, req, false, ireadShared)
}

func implFile_iwrite_shared(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_shared", fh, 0, buf, int(count), dt, req, false, iwriteShared)
}

func implFile_iwrite_shared_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr, req unsafe.Pointer) int32 {
	return istart("MPI_File_iwrite_shared_c", fh, 0, buf, int(count), dt, req, false, iwriteShared)
}

// Split collectives: one may be active per file; _end takes the buffer
// _begin was given, which mpigo already holds.

type beginFunc = func(f *mpi.File, off int64, b []byte, n int, t *mpi.Datatype) error

// endFunc ends a split collective.
type endFunc = func(f *mpi.File, b []byte) (mpi.Status, error)

// begin starts a split collective; a refused one takes part with a nil
// datatype and is ended at once (undo), so that no split stays active.
func begin(fn string, fh uintptr, off int64, buf unsafe.Pointer, count int, datatype uintptr, do beginFunc, undo endFunc) int32 {
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	b, t, rc := fe.buf(fn, buf, count, datatype)
	if rc != 0 {
		if do(fe.f, off, nil, 0, nil) == nil {
			_, _ = undo(fe.f, nil)
		}
		return rc
	}
	return fe.check(fn, do(fe.f, off, b, count, t))
}

func end(fn string, fh uintptr, st unsafe.Pointer, do endFunc) int32 {
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	s, err := do(fe.f, nil)
	rc = fe.check(fn, err)
	setStatus(st, s)
	return rc
}

func noOffB(do func(f *mpi.File, b []byte, n int, t *mpi.Datatype) error) beginFunc {
	return func(f *mpi.File, _ int64, b []byte, n int, t *mpi.Datatype) error { return do(f, b, n, t) }
}

func implFile_read_at_all_begin(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr) int32 {
	return begin("MPI_File_read_at_all_begin", fh, off, buf, int(count), dt, (*mpi.File).ReadAtAllBegin, (*mpi.File).ReadAtAllEnd)
}

func implFile_read_at_all_begin_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr) int32 {
	return begin("MPI_File_read_at_all_begin_c", fh, off, buf, int(count), dt, (*mpi.File).ReadAtAllBegin, (*mpi.File).ReadAtAllEnd)
}

func implFile_read_at_all_end(fh uintptr, buf, st unsafe.Pointer) int32 {
	return end("MPI_File_read_at_all_end", fh, st, (*mpi.File).ReadAtAllEnd)
}

func implFile_write_at_all_begin(fh uintptr, off int64, buf unsafe.Pointer, count int32, dt uintptr) int32 {
	return begin("MPI_File_write_at_all_begin", fh, off, buf, int(count), dt, (*mpi.File).WriteAtAllBegin, (*mpi.File).WriteAtAllEnd)
}

func implFile_write_at_all_begin_c(fh uintptr, off int64, buf unsafe.Pointer, count int64, dt uintptr) int32 {
	return begin("MPI_File_write_at_all_begin_c", fh, off, buf, int(count), dt, (*mpi.File).WriteAtAllBegin, (*mpi.File).WriteAtAllEnd)
}

func implFile_write_at_all_end(fh uintptr, buf, st unsafe.Pointer) int32 {
	return end("MPI_File_write_at_all_end", fh, st, (*mpi.File).WriteAtAllEnd)
}

func implFile_read_all_begin(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr) int32 {
	return begin("MPI_File_read_all_begin", fh, 0, buf, int(count), dt, noOffB((*mpi.File).ReadAllBegin), (*mpi.File).ReadAllEnd)
}

func implFile_read_all_begin_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr) int32 {
	return begin("MPI_File_read_all_begin_c", fh, 0, buf, int(count), dt, noOffB((*mpi.File).ReadAllBegin), (*mpi.File).ReadAllEnd)
}

func implFile_read_all_end(fh uintptr, buf, st unsafe.Pointer) int32 {
	return end("MPI_File_read_all_end", fh, st, (*mpi.File).ReadAllEnd)
}

func implFile_write_all_begin(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr) int32 {
	return begin("MPI_File_write_all_begin", fh, 0, buf, int(count), dt, noOffB((*mpi.File).WriteAllBegin), (*mpi.File).WriteAllEnd)
}

func implFile_write_all_begin_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr) int32 {
	return begin("MPI_File_write_all_begin_c", fh, 0, buf, int(count), dt, noOffB((*mpi.File).WriteAllBegin), (*mpi.File).WriteAllEnd)
}

func implFile_write_all_end(fh uintptr, buf, st unsafe.Pointer) int32 {
	return end("MPI_File_write_all_end", fh, st, (*mpi.File).WriteAllEnd)
}

func implFile_read_ordered_begin(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr) int32 {
	return begin("MPI_File_read_ordered_begin", fh, 0, buf, int(count), dt, noOffB((*mpi.File).ReadOrderedBegin), (*mpi.File).ReadOrderedEnd)
}

func implFile_read_ordered_begin_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr) int32 {
	return begin("MPI_File_read_ordered_begin_c", fh, 0, buf, int(count), dt, noOffB((*mpi.File).ReadOrderedBegin), (*mpi.File).ReadOrderedEnd)
}

func implFile_read_ordered_end(fh uintptr, buf, st unsafe.Pointer) int32 {
	return end("MPI_File_read_ordered_end", fh, st, (*mpi.File).ReadOrderedEnd)
}

func implFile_write_ordered_begin(fh uintptr, buf unsafe.Pointer, count int32, dt uintptr) int32 {
	return begin("MPI_File_write_ordered_begin", fh, 0, buf, int(count), dt, noOffB((*mpi.File).WriteOrderedBegin), (*mpi.File).WriteOrderedEnd)
}

func implFile_write_ordered_begin_c(fh uintptr, buf unsafe.Pointer, count int64, dt uintptr) int32 {
	return begin("MPI_File_write_ordered_begin_c", fh, 0, buf, int(count), dt, noOffB((*mpi.File).WriteOrderedBegin), (*mpi.File).WriteOrderedEnd)
}

func implFile_write_ordered_end(fh uintptr, buf, st unsafe.Pointer) int32 {
	return end("MPI_File_write_ordered_end", fh, st, (*mpi.File).WriteOrderedEnd)
}

// File pointers, positions, consistency.

func implFile_seek(fh uintptr, off int64, whence int32) int32 {
	const fn = "MPI_File_seek"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	_, err := fe.f.Seek(off, goWhence(whence))
	return fe.check(fn, err)
}

func implFile_seek_shared(fh uintptr, off int64, whence int32) int32 {
	const fn = "MPI_File_seek_shared"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	return fe.check(fn, fe.f.SeekShared(off, goWhence(whence)))
}

func implFile_get_position(fh uintptr, off unsafe.Pointer) int32 {
	return offsetOut("MPI_File_get_position", fh, off, "offset", (*mpi.File).Position)
}

func implFile_get_position_shared(fh uintptr, off unsafe.Pointer) int32 {
	return offsetOut("MPI_File_get_position_shared", fh, off, "offset", (*mpi.File).PositionShared)
}

func implFile_get_byte_offset(fh uintptr, off int64, disp unsafe.Pointer) int32 {
	return offsetOut("MPI_File_get_byte_offset", fh, disp, "disp", func(f *mpi.File) (int64, error) { return f.ByteOffset(off) })
}

func implFile_set_atomicity(fh uintptr, flag int32) int32 {
	const fn = "MPI_File_set_atomicity"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	return fe.check(fn, fe.f.SetAtomicity(flag != 0))
}

func implFile_get_atomicity(fh uintptr, flag unsafe.Pointer) int32 {
	const fn = "MPI_File_get_atomicity"
	fe, rc := outArg(fn, fh, flag, "flag")
	if fe == nil {
		return rc
	}
	a, err := fe.f.Atomicity()
	if err != nil {
		return fe.raise(fn, err)
	}
	setFlag(flag, a)
	return MPI_SUCCESS
}

func implFile_sync(fh uintptr) int32 {
	const fn = "MPI_File_sync"
	fe, rc := fileArg(fn, fh)
	if fe == nil {
		return rc
	}
	return fe.check(fn, fe.f.Sync())
}

// Error handlers of files.

func implFile_create_errhandler(fnp, errhandler unsafe.Pointer) int32 {
	const fn = "MPI_File_create_errhandler"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if fnp == nil || errhandler == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "file_errhandler_fn or errhandler is NULL"))
	}
	*(*uintptr)(errhandler) = fileErrhs.add(fnp)
	return MPI_SUCCESS
}

func implFile_set_errhandler(file, errhandler uintptr) int32 {
	const fn = "MPI_File_set_errhandler"
	fe, rc := fileOrNull(fn, file)
	if fe == nil {
		return rc
	}
	switch errhandler {
	case MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT:
		fe.ce.errh.Store(errhandler)
		fe.errMu.Lock()
		fe.userH, fe.userFn = 0, nil
		fe.errMu.Unlock()
		return MPI_SUCCESS
	}
	f, ok := fileErrhs.get(errhandler)
	if !ok {
		return fe.raise(fn, classErr(MPI_ERR_ERRHANDLER, fmt.Sprintf("%#x is not an error handler for files", errhandler)))
	}
	fe.errMu.Lock()
	fe.userH, fe.userFn = errhandler, f
	fe.errMu.Unlock()
	return MPI_SUCCESS
}

func implFile_get_errhandler(file uintptr, errhandler unsafe.Pointer) int32 {
	const fn = "MPI_File_get_errhandler"
	fe, rc := fileOrNull(fn, file)
	if fe == nil {
		return rc
	}
	if errhandler == nil {
		return fe.raise(fn, classErr(MPI_ERR_ARG, "errhandler is NULL"))
	}
	fe.errMu.Lock()
	h := fe.userH
	fe.errMu.Unlock()
	if h == 0 {
		h = fe.ce.errh.Load()
	}
	*(*uintptr)(errhandler) = h
	return MPI_SUCCESS
}

func implFile_call_errhandler(file uintptr, code int32) int32 {
	const fn = "MPI_File_call_errhandler"
	fe, rc := fileOrNull(fn, file)
	if fe == nil {
		return rc
	}
	fe.dispatch(code)
	return MPI_SUCCESS
}

// freeFileErrhandler frees h if it is an error handler of
// MPI_File_create_errhandler, and reports whether it was (for
// MPI_Errhandler_free). Files that use the handler keep its function.
func freeFileErrhandler(h uintptr) bool {
	if _, ok := fileErrhs.get(h); !ok {
		return false
	}
	fileErrhs.remove(h)
	return true
}

package mpi

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/fileio"
)

// This file holds MPI-IO's file management and views (MPI-4.1 sections
// 14.2 and 14.3). Data access is in file_access.go (independent),
// file_coll.go (collective, two-phase) and file_nb.go (non-blocking and
// split collective); the planning that needs no I/O is internal/fileio.

// Error classes of MPI-IO (MPI-4.1 section 14.7). Errors of file calls
// wrap one of them, or one of the general classes (ErrArg, ErrCount,
// ErrType, ...), and name the file, the call and the rank.
var (
	ErrFile               = errors.New("invalid file handle")                    // MPI_ERR_FILE
	ErrNoSuchFile         = errors.New("no such file")                           // MPI_ERR_NO_SUCH_FILE
	ErrFileExists         = errors.New("file exists")                            // MPI_ERR_FILE_EXISTS
	ErrAccess             = errors.New("permission denied")                      // MPI_ERR_ACCESS
	ErrAmode              = errors.New("invalid access mode")                    // MPI_ERR_AMODE
	ErrReadOnly           = errors.New("read-only file or file system")          // MPI_ERR_READ_ONLY
	ErrNoSpace            = errors.New("no space left on device")                // MPI_ERR_NO_SPACE
	ErrBadFile            = errors.New("invalid file name")                      // MPI_ERR_BAD_FILE
	ErrIO                 = errors.New("I/O error")                              // MPI_ERR_IO
	ErrUnsupportedDatarep = errors.New("unsupported data representation")        // MPI_ERR_UNSUPPORTED_DATAREP
	ErrUnsupportedOp      = errors.New("operation not supported on this file")   // MPI_ERR_UNSUPPORTED_OPERATION
	ErrConversion         = errors.New("data conversion failed")                 // MPI_ERR_CONVERSION
	ErrDupDatarep         = errors.New("data representation registered already") // MPI_ERR_DUP_DATAREP
	ErrFileInUse          = errors.New("file in use")                            // MPI_ERR_FILE_IN_USE
	ErrQuota              = errors.New("quota exceeded")                         // MPI_ERR_QUOTA
)

// fileClasses is the order in which file calls report a class to the
// other ranks of a collective (its index; 0 is success).
var fileClasses = []error{nil, ErrFile, ErrNoSuchFile, ErrFileExists, ErrAccess, ErrAmode, ErrReadOnly,
	ErrNoSpace, ErrBadFile, ErrIO, ErrUnsupportedDatarep, ErrUnsupportedOp, ErrConversion, ErrDupDatarep,
	ErrFileInUse, ErrQuota, ErrArg, ErrCount, ErrType, ErrBuffer, ErrIntern, ErrOther, ErrProcFailed, ErrRevoked}

func classIndex(err error) int64 {
	if err == nil {
		return 0
	}
	c := ErrorClass(err)
	for i, x := range fileClasses {
		if i > 0 && c == x {
			return int64(i)
		}
	}
	return int64(len(fileClasses) - 3) // ErrOther
}

func classAt(i int64) error {
	if i <= 0 || i >= int64(len(fileClasses)) {
		return ErrOther
	}
	return fileClasses[i]
}

// Access modes of OpenFile (MPI_MODE_*), combined with |. Exactly one of
// ModeRdonly, ModeWronly and ModeRdwr must be given.
const (
	ModeRdonly        = 2   // read only
	ModeRdwr          = 8   // reading and writing
	ModeWronly        = 4   // write only
	ModeCreate        = 1   // create the file if it does not exist
	ModeExcl          = 64  // with ModeCreate: fail if the file exists
	ModeDeleteOnClose = 16  // delete the file when it is closed
	ModeUniqueOpen    = 32  // the file is not opened elsewhere at the same time (a hint)
	ModeSequential    = 256 // only shared-pointer access, as on a tape or a pipe
	ModeAppend        = 128 // the file pointers start at the end of the file
)

const modeAll = ModeRdonly | ModeRdwr | ModeWronly | ModeCreate | ModeExcl | ModeDeleteOnClose | ModeUniqueOpen | ModeSequential | ModeAppend

// Whence values of File.Seek and File.SeekShared (MPI_SEEK_SET, _CUR,
// _END); the same values as io.SeekStart, io.SeekCurrent and io.SeekEnd.
const (
	SeekSet = 0
	SeekCur = 1
	SeekEnd = 2
)

// File is a file opened together by every rank of a communicator
// (MPI_File). A nil *File is MPI_FILE_NULL: every method returns ErrFile.
// Its calls may be made from any goroutine; collective calls are run in
// the order each rank makes them, so a non-blocking collective started
// before a blocking one completes before it.
type File struct {
	comm  *Comm // a duplicate of the opening communicator: file traffic never matches the program's
	name  string
	amode int
	fd    *os.File
	id    string // identity of the file for in-process locks
	// canRead: fd can be read, which read-modify-write needs (a
	// ModeWronly file is opened for reading too where permissions allow)
	canRead bool

	mu     sync.Mutex // guards the fields below and serialises pointer-based access
	view   fileView
	pos    int64 // individual file pointer, in etypes
	atomic bool
	hints  fileHints
	info   *Info
	closed bool
	split  *Request // the split collective begun and not ended

	errh atomic.Pointer[ErrHandler]

	aggrs []int // ranks that aggregate for collective buffering (one per node by default)
	nodes int   // the nodes the file's ranks are on
	// syncs: this rank flushes the file for its node in Sync (the
	// lowest rank of the node's ranks).
	syncs  bool
	shared *sharedPtr
	// share is where the file's goroutine ranks publish their collective
	// writes (file_share.go); nil unless they meet in memory.
	share *fileShare
	q     *fileQueue
	// tp holds an aggregator's two-phase I/O buffers (a sieved window,
	// the others' bytes of two windows in turn) from
	// one collective call to the next, so that each call does not fault
	// in fresh pages: on f's queue only (file_coll.go, tpBuf).
	tp [3][]byte
	// agreed is agree's contribution and result.
	agreed [2]int64
	// collMine and collAll are the first step's contribution and the
	// ranks' arguments (collective, file_coll.go), kept from one call to
	// the next: only f's collective calls use them, one at a time.
	collMine [1]collArgs
	collAll  []collArgs
	collSegs []fileio.Seg // the file ranges of this rank's collective access
	// collX is the transfer record of the collective access under way:
	// collective accesses run one at a time, on the file's queue, and
	// nothing keeps their record past the call.
	collX xfer
}

// fileView is the current view (SetView).
type fileView struct {
	disp            int64
	etype, filetype *Datatype
	datarep         string
	plan            *fileio.View
	esize           int64 // etype size in bytes, in memory
	fesize          int64 // etype size in bytes in the file: the unit of stream positions
	ext32           bool
	rep             *dataRep // a registered representation (RegisterDatarep), or nil
}

// fileHints are the hints file calls act on, with the values reported
// by Info.
type fileHints struct {
	cbBufferSize int64  // cb_buffer_size: bytes an aggregator writes at once
	cbNodes      int    // cb_nodes: aggregators
	cbRead       string // romio_cb_read: enable, disable, automatic
	cbWrite      string // romio_cb_write
	dsRead       string // romio_ds_read: enable, disable, automatic
	dsWrite      string // romio_ds_write
	stripeFactor int64  // striping_factor (accepted and reported)
	stripeUnit   int64  // striping_unit: domain boundaries are aligned to it
	dsBuffer     int64  // ind_rd_buffer_size / ind_wr_buffer_size: data sieving buffer
}

func defaultHints(nodes int) fileHints {
	return fileHints{cbBufferSize: 16 << 20, cbNodes: nodes, cbRead: "automatic", cbWrite: "automatic",
		dsRead: "automatic", dsWrite: "automatic", dsBuffer: 4 << 20}
}

// apply takes the hints it knows from in; unknown keys are kept for Info
// only, as MPI asks. A bad value of a known hint is ignored (hints never
// make a call fail).
func (h *fileHints) apply(in *Info) {
	if in == nil {
		return
	}
	num := func(key string, dst *int64) {
		if v, ok := in.Get(key); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				*dst = n
			}
		}
	}
	mode := func(key string, dst *string) {
		if v, ok := in.Get(key); ok && (v == "enable" || v == "disable" || v == "automatic") {
			*dst = v
		}
	}
	num("cb_buffer_size", &h.cbBufferSize)
	var nodes int64
	num("cb_nodes", &nodes)
	if nodes > 0 {
		h.cbNodes = int(min(nodes, 1<<20))
	}
	mode("romio_cb_read", &h.cbRead)
	mode("romio_cb_write", &h.cbWrite)
	mode("romio_ds_read", &h.dsRead)
	mode("romio_ds_write", &h.dsWrite)
	num("striping_factor", &h.stripeFactor)
	num("striping_unit", &h.stripeUnit)
	num("ind_wr_buffer_size", &h.dsBuffer)
}

// report writes the hints in effect into in.
func (h *fileHints) report(in *Info) {
	_ = in.Set("cb_buffer_size", strconv.FormatInt(h.cbBufferSize, 10))
	_ = in.Set("cb_nodes", strconv.Itoa(h.cbNodes))
	_ = in.Set("romio_cb_read", h.cbRead)
	_ = in.Set("romio_cb_write", h.cbWrite)
	_ = in.Set("romio_ds_read", h.dsRead)
	_ = in.Set("romio_ds_write", h.dsWrite)
	_ = in.Set("ind_wr_buffer_size", strconv.FormatInt(h.dsBuffer, 10))
	if h.stripeFactor > 0 {
		_ = in.Set("striping_factor", strconv.FormatInt(h.stripeFactor, 10))
	}
	if h.stripeUnit > 0 {
		_ = in.Set("striping_unit", strconv.FormatInt(h.stripeUnit, 10))
	}
}

// fileErr builds the *Error of call op on file name; c may be nil.
func fileErr(c *Comm, op, name string, class error, cause error, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if name != "" {
		if msg != "" {
			msg = fmt.Sprintf("file %q: %s", name, msg)
		} else {
			msg = fmt.Sprintf("file %q", name)
		}
	}
	e := &Error{Class: class, Op: op, Rank: NoRank, Msg: msg, Cause: cause}
	if c != nil && c.p != nil {
		e.Rank = c.p.Rank
		e.Comm = c.Name()
	}
	return e
}

// osClass maps an operating-system error to its MPI-IO class.
func osClass(err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrNoSuchFile
	case errors.Is(err, fs.ErrExist):
		return ErrFileExists
	case errors.Is(err, fs.ErrPermission):
		return ErrAccess
	case errors.As(err, &errno):
		switch errno {
		case syscall.ENOSPC:
			return ErrNoSpace
		case syscall.EDQUOT:
			return ErrQuota
		case syscall.EROFS:
			return ErrReadOnly
		case syscall.ENAMETOOLONG, syscall.EISDIR, syscall.ENOTDIR:
			return ErrBadFile
		case syscall.EBUSY, syscall.ETXTBSY:
			return ErrFileInUse
		}
	}
	return ErrIO
}

// errorf builds the error of call op on f, passed through f's handler.
func (f *File) fail(op string, class error, cause error, format string, args ...any) error {
	if f == nil {
		return fileErr(nil, "File."+op, "", ErrFile, nil, "nil file (FileNull)")
	}
	return f.handle(fileErr(f.comm, "File."+op, f.name, class, cause, format, args...))
}

// handle passes a failed call's error through f's error handler.
func (f *File) handle(err error) error {
	if err == nil || f == nil {
		return err
	}
	h := f.errh.Load()
	if h == nil || h == ErrorsReturn {
		return err
	}
	if h.fn != nil {
		h.fn(f.comm, err)
	}
	if h.fatal {
		f.comm.p.job.abort(f.comm.p.Rank, 1, fmt.Errorf("file error handler ErrorsAreFatal: %w", err))
	}
	return err
}

// check refuses a nil or closed file.
func (f *File) check(op string) error {
	if f == nil {
		return fileErr(nil, "File."+op, "", ErrFile, nil, "nil file (FileNull)")
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return fileErr(f.comm, "File."+op, f.name, ErrFile, nil, "the file is closed")
	}
	return nil
}

// SetErrHandler sets the handler called when a call on f fails
// (MPI_File_set_errhandler); its function receives the file's
// communicator (a duplicate of the one that opened it). The default is
// ErrorsReturn, as MPI says for files. On a nil *File it does nothing.
func (f *File) SetErrHandler(h *ErrHandler) {
	if f == nil {
		return
	}
	f.errh.Store(h)
}

// ErrHandler returns f's error handler (MPI_File_get_errhandler);
// ErrorsReturn for a nil *File.
func (f *File) ErrHandler() *ErrHandler {
	if f == nil {
		return ErrorsReturn
	}
	if h := f.errh.Load(); h != nil {
		return h
	}
	return ErrorsReturn
}

// CallErrHandler passes err through f's error handler
// (MPI_File_call_errhandler) and returns it; ErrFile on a nil *File.
func (f *File) CallErrHandler(e error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.CallErrHandler", nil, Undefined, Undefined), &err)
	}

	if f == nil {
		return fileErr(nil, "File.CallErrHandler", "", ErrFile, nil, "nil file (FileNull)")
	}
	return f.handle(e)
}

func nameHash(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() >> 1)
}

// amodeErr says what is wrong with amode, or "".
func amodeErr(amode int) string {
	if amode&^modeAll != 0 {
		return fmt.Sprintf("unknown bits %#x in access mode", amode&^modeAll)
	}
	n := 0
	for _, m := range []int{ModeRdonly, ModeWronly, ModeRdwr} {
		if amode&m != 0 {
			n++
		}
	}
	switch {
	case n != 1:
		return "exactly one of ModeRdonly, ModeWronly and ModeRdwr must be given"
	case amode&ModeRdonly != 0 && amode&(ModeCreate|ModeExcl) != 0:
		return "ModeRdonly cannot be combined with ModeCreate or ModeExcl"
	case amode&ModeRdwr != 0 && amode&ModeSequential != 0:
		return "ModeRdwr cannot be combined with ModeSequential"
	}
	return ""
}

// OpenFile opens the file name on every rank of c (MPI_File_open); it is
// collective, and every rank must pass the same name and amode: if they
// differ, or amode is invalid, every rank fails (ErrArg or ErrAmode)
// rather than some hanging. A failure on one rank (a missing file, no
// permission) is reported by every rank, naming the rank. With
// ModeCreate rank 0 creates the file before anyone opens it; ModeExcl
// then fails with ErrFileExists if it existed. info's hints
// (cb_buffer_size, cb_nodes, romio_cb_read/write, romio_ds_read/write,
// striping_factor, striping_unit) tune collective buffering and data
// sieving; File.Info reports the values in effect.
func OpenFile(c *Comm, name string, amode int, info *Info) (_ *File, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("OpenFile", c, Undefined, Undefined), &err)
	}
	const op = "OpenFile"
	if err := c.intraOnly(op); err != nil {
		return nil, err
	}
	fc, err := c.Dup()
	if err != nil {
		return nil, err
	}
	fc.SetErrHandler(fileCommErrors)
	fc.SetName(c.Name() + " (file)")
	fail := func(class error, cause error, format string, args ...any) (*File, error) {
		_ = fc.Free()
		return nil, c.handle(fileErr(c, op, name, class, cause, format, args...))
	}

	// Agree on the arguments first: a rank that disagrees must not leave
	// the others waiting in a later step.
	bad := int64(0)
	if amodeErr(amode) != "" {
		bad = 1
	}
	all, err := Allgather(fc, [3]int64{int64(amode), nameHash(name), bad})
	if err != nil {
		return fail(ErrProcFailed, err, "agreeing on the arguments")
	}
	for r, a := range all {
		if a[2] != 0 {
			if r == fc.Rank() {
				return fail(ErrAmode, nil, "%s (amode %#x)", amodeErr(amode), amode)
			}
			return fail(ErrAmode, nil, "rank %d passed an invalid access mode %#x", r, a[0])
		}
	}
	for r, a := range all {
		if a[0] != all[0][0] {
			return fail(ErrArg, nil, "ranks passed different access modes (rank 0: %#x, rank %d: %#x)", all[0][0], r, a[0])
		}
		if a[1] != all[0][1] {
			return fail(ErrArg, nil, "ranks passed different file names (rank %d's differs from rank 0's)", r)
		}
	}

	// Rank 0 creates; then everyone opens the existing file.
	var createErr error
	if fc.Rank() == 0 && amode&ModeCreate != 0 {
		fl := os.O_CREATE | os.O_WRONLY
		if amode&ModeExcl != 0 {
			fl |= os.O_EXCL
		}
		cf, err := os.OpenFile(name, fl, 0o666)
		if err == nil {
			err = cf.Close()
		}
		createErr = err
	}
	code, err := Bcast(fc, classIndex(wrapOS(createErr)), 0)
	if err != nil {
		return fail(ErrProcFailed, err, "creating the file")
	}
	if code != 0 {
		if createErr != nil {
			return fail(osClass(createErr), createErr, "creating the file")
		}
		return fail(classAt(code), nil, "rank 0 could not create the file")
	}
	fl := os.O_RDWR
	switch {
	case amode&ModeRdonly != 0:
		fl = os.O_RDONLY
	case amode&ModeWronly != 0:
		fl = os.O_WRONLY
	}
	fd, openErr := os.OpenFile(name, fl, 0)
	canRead := fl != os.O_WRONLY
	if fl == os.O_WRONLY {
		// Data sieving and the aggregators' read-modify-write read the
		// file: open it for reading too where permissions allow.
		if rw, err := os.OpenFile(name, os.O_RDWR, 0); err == nil {
			if fd != nil {
				fd.Close()
			}
			fd, openErr, canRead = rw, nil, true
		}
	}
	codes, err := Allgather(fc, classIndex(wrapOS(openErr)))
	if err != nil {
		if fd != nil {
			fd.Close()
		}
		return fail(ErrProcFailed, err, "opening the file")
	}
	for r, code := range codes {
		if code == 0 {
			continue
		}
		if fd != nil {
			fd.Close()
		}
		if r == fc.Rank() {
			return fail(osClass(openErr), openErr, "opening the file")
		}
		return fail(classAt(code), nil, "rank %d could not open the file", r)
	}

	f := &File{comm: fc, name: name, amode: amode, fd: fd, id: fileID(fd, name), canRead: canRead}
	f.view = fileView{etype: Byte, filetype: Byte, datarep: "native", esize: 1, fesize: 1, plan: contiguousPlan(0)}
	aggrs, nodes, leader, err := pickAggregators(fc)
	if err != nil {
		fd.Close()
		return fail(ErrProcFailed, err, "choosing aggregators")
	}
	f.hints = defaultHints(nodes)
	f.hints.apply(info)
	f.aggrs, f.nodes, f.syncs = aggrs, nodes, leader
	if f.hints.cbNodes != nodes {
		f.aggrs = spread(fc.Size(), f.hints.cbNodes)
	}
	f.info = info.Dup()
	f.shared = newSharedPtr(f)
	if amode&ModeAppend != 0 {
		if st, err := fd.Stat(); err == nil {
			f.pos = st.Size()
			if fc.Rank() == 0 {
				f.shared.val = st.Size()
			}
		}
	}
	f.q = newFileQueue()
	var shareID int64
	if fc.inProcess() {
		if f.share, shareID, err = shareFile(fc); err != nil {
			endShare(fc, shareID)
			f.q.stop()
			f.shared.stop()
			fd.Close()
			return fail(ErrProcFailed, err, "opening the file")
		}
	}
	// Everyone has opened before anyone may use the file (a shared
	// pointer request must find rank 0's server running).
	err = fc.Barrier()
	endShare(fc, shareID)
	if err != nil {
		f.q.stop()
		f.shared.stop()
		fd.Close()
		return fail(ErrProcFailed, err, "opening the file")
	}
	return f, nil
}

// fileCommErrors is the error handler of a file's own communicator: it
// returns every error, and revokes the communicator when a step on it
// meets a failed process (under fault tolerance). A rank that dies
// during a collective access fails the steps of only the ranks that wait
// for it directly; the others would wait for those ranks, which have
// given up, and the program cannot revoke a communicator it never sees.
// Revoked, every step of every rank on it fails with ErrRevoked at once,
// so every rank's call returns an error, and the file can only be
// closed.
var fileCommErrors = NewErrHandler(func(c *Comm, err error) {
	if c.p.ft != nil && (errors.Is(err, ErrProcFailed) || errors.Is(err, ErrRevoked)) && !c.IsRevoked() {
		_ = c.Revoke()
	}
})

// wrapOS turns an OS error into an error of its class, for classIndex.
func wrapOS(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Class: osClass(err), Cause: err}
}

// pickAggregators returns one rank per node of c (the lowest rank of
// each), the number of nodes, and whether this rank is its node's.
func pickAggregators(c *Comm) ([]int, int, bool, error) {
	node, err := c.SplitType(SplitTypeShared, 0, nil)
	if err != nil {
		return nil, 0, false, err
	}
	leader := node.Rank() == 0
	if err := node.Free(); err != nil {
		return nil, 0, false, err
	}
	flags, err := Allgather(c, leader)
	if err != nil {
		return nil, 0, false, err
	}
	var aggrs []int
	for r, l := range flags {
		if l {
			aggrs = append(aggrs, r)
		}
	}
	return aggrs, len(aggrs), leader, nil
}

// spread returns n ranks of size spread evenly (n at most size).
func spread(size, n int) []int {
	n = max(1, min(n, size))
	out := make([]int, n)
	for i := range out {
		out[i] = i * size / n
	}
	return out
}

// busyBegin marks f's rank busy with file work until busyEnd: the hang
// watcher then takes a rank parked in a Wait for a non-blocking access
// for running (device.Waits.BusyBegin). Only around file system calls
// and packing, never around a wait for another rank.
func (f *File) busyBegin() {
	f.comm.p.Blk.BusyBegin()
	if fileIOHook != nil {
		fileIOHook()
	}
}

// fileIOHook, when set (by tests), is called at the start of every
// section marked by busyBegin, as if its I/O took that long.
var fileIOHook func()

func (f *File) busyEnd() { f.comm.p.Blk.BusyEnd() }

func contiguousPlan(disp int64) *fileio.View {
	v, _ := fileio.NewView(disp, []fileio.Seg{{Off: 0, Len: 1}}, 1, false)
	return v
}

// Close closes f on every rank (MPI_File_close); it is collective. Data
// written by every rank is in the file when Close returns on any rank.
// A file opened with ModeDeleteOnClose is deleted once all have closed
// it. A split collective still begun is an error (ErrFile... as MPI asks
// programs to end it first): Close ends it.
func (f *File) Close() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Close", f.commOrNil(), Undefined, Undefined), &err)
	}
	if err := f.check("Close"); err != nil {
		return err
	}
	f.mu.Lock()
	split := f.split
	f.split = nil
	f.mu.Unlock()
	if split != nil {
		_, _ = split.Wait()
	}
	err = f.q.do(func() error {
		e1 := f.comm.Barrier() // everyone is done with the file
		f.shared.stop()
		e2 := f.fd.Close()
		e3 := f.comm.Barrier() // everyone has closed it
		var e4 error
		if f.amode&ModeDeleteOnClose != 0 && f.comm.Rank() == 0 {
			e4 = os.Remove(f.name)
		}
		switch {
		case e1 != nil:
			return fileErr(f.comm, "File.Close", f.name, ErrProcFailed, e1, "")
		case e2 != nil:
			return fileErr(f.comm, "File.Close", f.name, osClass(e2), e2, "")
		case e3 != nil:
			return fileErr(f.comm, "File.Close", f.name, ErrProcFailed, e3, "")
		case e4 != nil:
			return fileErr(f.comm, "File.Close", f.name, osClass(e4), e4, "deleting it on close")
		}
		return nil
	})
	f.q.stop()
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	_ = f.comm.Free()
	return f.handle(err)
}

func (f *File) commOrNil() *Comm {
	if f == nil {
		return nil
	}
	return f.comm
}

// DeleteFile deletes the file name (MPI_File_delete): ErrNoSuchFile if
// it does not exist, ErrAccess without permission. It is not collective.
func DeleteFile(name string, info *Info) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("DeleteFile", nil, Undefined, Undefined), &err)
	}
	if name == "" {
		return fileErr(nil, "DeleteFile", name, ErrBadFile, nil, "empty file name")
	}
	if err := os.Remove(name); err != nil {
		return fileErr(nil, "DeleteFile", name, osClass(err), err, "")
	}
	return nil
}

// Name returns the name f was opened with (MPI_File_get_filename is not
// in MPI; ROMIO's MPI_File_get_info reports "filename"); "" for nil.
func (f *File) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}

// Size returns the size of the file in bytes (MPI_File_get_size).
func (f *File) Size() (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Size", f.commOrNil(), Undefined, Undefined), &err)
	}
	if err := f.check("Size"); err != nil {
		return 0, err
	}
	st, err := f.fd.Stat()
	if err != nil {
		return 0, f.fail("Size", osClass(err), err, "")
	}
	return st.Size(), nil
}

// agree runs a collective step on f: every rank passes its local error,
// and every rank returns an error if any rank had one (naming it), so a
// collective never leaves some ranks behind.
// It allocates nothing: each rank contributes its class index and rank
// (class<<32 | rank+1, 0 for success) to a maximum, in f.agreed, which
// only f's collective calls use, one at a time.
func (f *File) agree(op string, local error) error {
	f.agreed[0] = 0
	if local != nil {
		f.agreed[0] = classIndex(local)<<32 | int64(f.comm.Rank()+1)
	}
	if err := AllreduceSliceInto(f.comm, f.agreed[:1], f.agreed[1:], maxInt64); err != nil {
		return fileErr(f.comm, "File."+op, f.name, ErrorClass(err), err, "")
	}
	if local != nil {
		return local
	}
	if m := f.agreed[1]; m != 0 {
		return fileErr(f.comm, "File."+op, f.name, classAt(m>>32), nil, "the call failed on rank %d", int(m&(1<<32-1))-1)
	}
	return nil
}

// maxInt64 is agree's reduction.
var maxInt64 = Max[int64]()

// SetSize truncates or extends the file to size bytes
// (MPI_File_set_size); collective, and every rank must pass the same
// size (ErrArg on every rank otherwise).
func (f *File) SetSize(size int64) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.SetSize", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.resize("SetSize", size, false)
}

// Preallocate makes sure the file has at least size bytes of storage
// (MPI_File_preallocate): it grows the file to size if it is smaller and
// leaves it alone otherwise. Collective, with the same size on every rank.
func (f *File) Preallocate(size int64) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Preallocate", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.resize("Preallocate", size, true)
}

func (f *File) resize(op string, size int64, grow bool) error {
	if err := f.check(op); err != nil {
		return err
	}
	return f.handle(f.q.do(func() error {
		var local error
		switch {
		case size < 0:
			local = fileErr(f.comm, "File."+op, f.name, ErrArg, nil, "negative size %d", size)
		case f.amode&ModeRdonly != 0:
			local = fileErr(f.comm, "File."+op, f.name, ErrReadOnly, nil, "the file was opened ModeRdonly")
		case f.amode&ModeSequential != 0:
			local = fileErr(f.comm, "File."+op, f.name, ErrUnsupportedOp, nil, "the file was opened ModeSequential")
		}
		sizes, err := Allgather(f.comm, size)
		if err != nil {
			return fileErr(f.comm, "File."+op, f.name, ErrorClass(err), err, "")
		}
		for r, s := range sizes {
			if s != size && local == nil {
				local = fileErr(f.comm, "File."+op, f.name, ErrArg, nil, "ranks passed different sizes (%d here, %d on rank %d)", size, s, r)
			}
		}
		if local == nil && f.comm.Rank() == 0 {
			st, err := f.fd.Stat()
			if err == nil && (!grow || st.Size() < size) {
				err = f.fd.Truncate(size)
			}
			if err != nil {
				local = fileErr(f.comm, "File."+op, f.name, osClass(err), err, "")
			}
		}
		return f.agree(op, local)
	}))
}

// Group returns the group of the communicator that opened f
// (MPI_File_get_group); nil for a nil *File.
func (f *File) Group() *Group {
	if f == nil {
		return nil
	}
	return f.comm.Group()
}

// Amode returns the access mode f was opened with (MPI_File_get_amode);
// 0 for a nil *File.
func (f *File) Amode() int {
	if f == nil {
		return 0
	}
	return f.amode
}

// Sync flushes what this rank wrote to the storage device
// (MPI_File_sync); collective. Sync, Barrier, Sync makes one rank's
// writes visible to another's reads in non-atomic mode, as MPI's
// consistency rules say.
func (f *File) Sync() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Sync", f.commOrNil(), Undefined, Undefined), &err)
	}
	if err := f.check("Sync"); err != nil {
		return err
	}
	return f.handle(f.q.do(func() error {
		if f.amode&ModeRdonly != 0 {
			return f.agree("Sync", nil)
		}
		if f.nodes == f.comm.Size() {
			// A rank per node: each flushes its own.
			return f.agree("Sync", f.flush())
		}
		// Several ranks share a node, and so the file's pages in its
		// cache: once every rank's writes before this call are done
		// (the first agreement), one flush of the file per node
		// writes them all, where concurrent fsyncs of one file wait
		// for each other (2 goroutine ranks' fsyncs of one file after
		// 64 KiB writes each: 130 to 430 µs, against 100 for one).
		if err := f.agree("Sync", nil); err != nil {
			return err
		}
		var local error
		if f.syncs {
			local = f.flush()
		}
		return f.agree("Sync", local)
	}))
}

// flush writes f's data and metadata in the file system's cache to its
// storage (fsync), for Sync.
func (f *File) flush() error {
	if err := f.fd.Sync(); err != nil {
		return fileErr(f.comm, "File.Sync", f.name, osClass(err), err, "")
	}
	return nil
}

// Info returns the hints in effect on f (MPI_File_get_info): the ones
// mpigo acts on with their current values, and whatever else was given.
func (f *File) Info() *Info {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.info.Dup()
	if in == nil {
		in = NewInfo()
	}
	f.hints.report(in)
	return in
}

// SetInfo adds hints to f (MPI_File_set_info); collective.
func (f *File) SetInfo(info *Info) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.SetInfo", f.commOrNil(), Undefined, Undefined), &err)
	}
	if err := f.check("SetInfo"); err != nil {
		return err
	}
	return f.handle(f.q.do(func() error {
		f.mu.Lock()
		f.setHints(info)
		f.mu.Unlock()
		return f.agree("SetInfo", nil)
	}))
}

// setHints merges info into f's hints; f.mu is held.
func (f *File) setHints(info *Info) {
	if info == nil {
		return
	}
	nodes := f.hints.cbNodes
	f.hints.apply(info)
	if f.hints.cbNodes != nodes {
		f.aggrs = spread(f.comm.Size(), f.hints.cbNodes)
	}
	if f.info == nil {
		f.info = NewInfo()
	}
	for _, k := range info.Keys() {
		v, _ := info.Get(k)
		_ = f.info.Set(k, v)
	}
}

// SetView sets the view of f (MPI_File_set_view): the data this rank
// sees starts disp bytes into the file and is the data of filetype tiled
// from there; offsets count etypes. filetype must be built from etype (a
// multiple of it, of the same kind), its displacements non-decreasing and
// not before disp; datarep is "native", "internal" (the same as native)
// or "external32" (every number big-endian, so files move between
// machines). Collective: every rank must pass the same datarep and an
// etype of the same size (ErrArg on every rank otherwise); the file
// pointers are reset to 0.
func (f *File) SetView(disp int64, etype, filetype *Datatype, datarep string, info *Info) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.SetView", f.commOrNil(), Undefined, Undefined), &err)
	}
	if err := f.check("SetView"); err != nil {
		return err
	}
	return f.handle(f.q.do(func() error {
		v, local := f.makeView(disp, etype, filetype, datarep)
		all, err := Allgather(f.comm, [3]int64{classIndex(local), nameHash(datarep), int64(etype.Size())})
		if err != nil {
			return fileErr(f.comm, "File.SetView", f.name, ErrorClass(err), err, "")
		}
		if local != nil {
			return local
		}
		for r, a := range all {
			switch {
			case a[0] != 0:
				return fileErr(f.comm, "File.SetView", f.name, classAt(a[0]), nil, "rank %d's view was refused", r)
			case a[1] != all[0][1]:
				return fileErr(f.comm, "File.SetView", f.name, ErrArg, nil, "ranks passed different data representations (rank %d's differs from rank 0's)", r)
			case a[2] != all[0][2]:
				return fileErr(f.comm, "File.SetView", f.name, ErrArg, nil, "ranks passed etypes of different sizes (rank 0: %d, rank %d: %d)", all[0][2], r, a[2])
			}
		}
		f.mu.Lock()
		f.view = v
		f.pos = 0
		f.setHints(info)
		f.mu.Unlock()
		if f.comm.Rank() == 0 {
			f.shared.set(0)
		}
		return f.agree("SetView", f.comm.Barrier())
	}))
}

// makeView checks and flattens a view.
func (f *File) makeView(disp int64, etype, filetype *Datatype, datarep string) (fileView, error) {
	bad := func(class error, format string, args ...any) (fileView, error) {
		return fileView{}, fileErr(f.comm, "File.SetView", f.name, class, nil, format, args...)
	}
	var rep *dataRep
	switch datarep {
	case "native", "internal", "external32":
	default:
		if rep = lookupDatarep(datarep); rep == nil {
			return bad(ErrUnsupportedDatarep, "data representation %q (native, internal, external32 and those registered by RegisterDatarep are supported)", datarep)
		}
	}
	if s := etype.checkComm(); s != "" {
		return bad(ErrType, "etype: %s", s)
	}
	if s := filetype.checkComm(); s != "" {
		return bad(ErrType, "filetype: %s", s)
	}
	if etype.size == 0 {
		return bad(ErrType, "etype %s has no data", etype.name)
	}
	if datarep == "external32" && (etype.t.Narrowed() || filetype.t.Narrowed()) {
		rep = external32Rep // C longs: 4 bytes in the file, 8 in memory
	}
	if disp < 0 {
		return bad(ErrArg, "negative displacement %d", disp)
	}
	if f.amode&ModeSequential != 0 && filetype.t.Size != filetype.t.Extent() {
		return bad(ErrUnsupportedOp, "a file opened ModeSequential takes only contiguous filetypes")
	}
	// The etype's and the filetype's layouts: displacements that are
	// negative or go backwards are refused, and overlapping regions
	// unless the file is read-only (MPI-4.1 section 14.3). The class is
	// MPI_ERR_IO, as ROMIO gives.
	readOnly := f.amode&ModeRdonly != 0
	if s := layoutErr(etype.t.Segs, readOnly); s != "" {
		return bad(ErrIO, "etype %s %s", etype.name, s)
	}
	if s := layoutErr(filetype.t.Segs, readOnly); s != "" {
		return bad(ErrIO, "filetype %s %s", filetype.name, s)
	}
	if err := builtFrom(filetype, etype); err != "" {
		return bad(ErrType, "filetype %s is not built from etype %s: %s", filetype.name, etype.name, err)
	}
	ft, fesize := filetype, int64(etype.size)
	if rep != nil {
		// The layout in the file: the filetype rebuilt with the
		// representation's sizes of its basic elements.
		var err error
		if ft, err = rep.fileType(filetype); err != nil {
			return fileView{}, fileErr(f.comm, "File.SetView", f.name, ErrConversion, err, "laying out filetype %s in data representation %q", filetype.name, datarep)
		}
		if fesize, err = rep.fileSize(etype); err != nil {
			return fileView{}, fileErr(f.comm, "File.SetView", f.name, ErrConversion, err, "sizing etype %s in data representation %q", etype.name, datarep)
		}
		if fesize == 0 || ft.t.Size%fesize != 0 {
			return bad(ErrType, "in data representation %q the etype %s takes %d bytes and the filetype %s %d: not a whole number of etypes", datarep, etype.name, fesize, filetype.name, ft.t.Size)
		}
	}
	// The type map's displacements are relative to each tile's origin,
	// disp + i*extent, whatever the lower bound (MPI-4.1 section 14.3):
	// a filetype resized to lb 4 and extent 12 over one int puts the
	// ints at bytes 0, 12, 24, ... of the view.
	segs := make([]fileio.Seg, len(ft.t.Segs))
	for i, s := range ft.t.Segs {
		segs[i] = fileio.Seg{Off: s.Off, Len: s.Len}
	}
	plan, err := fileio.NewView(disp, segs, ft.t.Extent(), readOnly)
	if err != nil {
		return bad(ErrIO, "filetype %s: %v", filetype.name, err)
	}
	return fileView{disp: disp, etype: etype, filetype: filetype, datarep: datarep, plan: plan,
		esize: int64(etype.size), fesize: fesize, ext32: datarep == "external32", rep: rep}, nil
}

// layoutErr says what is wrong with the layout of an etype or filetype
// (its byte runs in type-map order), or "": a negative displacement, a
// run that starts before the previous one (displacements must be
// monotonically non-decreasing), or, unless overlap is allowed, a run
// that starts before the previous ones end.
func layoutErr(segs []datatype.Seg, overlap bool) string {
	var prevStart, maxEnd int64
	for i, s := range segs {
		switch {
		case s.Off < 0:
			return fmt.Sprintf("has a negative displacement (%d bytes)", s.Off)
		case i > 0 && s.Off < prevStart:
			return fmt.Sprintf("has decreasing displacements (byte %d after byte %d): they must be monotonically non-decreasing", s.Off, prevStart)
		case i > 0 && s.Off < maxEnd && !overlap:
			return fmt.Sprintf("has overlapping regions (bytes from %d, before %d), which only a file opened ModeRdonly allows", s.Off, maxEnd)
		}
		prevStart, maxEnd = s.Off, max(maxEnd, s.Off+s.Len)
	}
	return ""
}

// builtFrom says why filetype is not made of etypes, or "". The sizes
// must agree; where the etype is one contiguous run, every run of the
// filetype must be whole etypes; and the basic kinds must be the
// etype's, except under an etype of MPI_BYTE, which is untyped (ROMIO
// checks only the sizes: a filetype of MPI_CHAR under an etype of
// MPI_BYTE is common in C programs, MPICH's io/i_hindexed among them).
func builtFrom(filetype, etype *Datatype) string {
	if filetype.t.Size%int64(etype.size) != 0 {
		return fmt.Sprintf("its size %d is not a multiple of the etype's %d", filetype.t.Size, etype.size)
	}
	if filetype == etype {
		return ""
	}
	if etype.t.Contiguous() {
		for _, s := range filetype.t.Segs {
			if s.Len%int64(etype.size) != 0 {
				return fmt.Sprintf("it has a run of %d bytes, not a whole number of etypes", s.Len)
			}
		}
	}
	k := etype.t.Uniform().Canon()
	if k != 0 && k != datatype.BasicByte && k != filetype.t.Uniform().Canon() && filetype.t.Size > 0 {
		return fmt.Sprintf("its elements are not all %s", k)
	}
	return ""
}

// GetView returns f's view (MPI_File_get_view).
func (f *File) GetView() (disp int64, etype, filetype *Datatype, datarep string, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.GetView", nil, Undefined, Undefined), &err)
	}

	if err := f.check("GetView"); err != nil {
		return 0, nil, nil, "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.disp, f.view.etype, f.view.filetype, f.view.datarep, nil
}

// TypeExtent returns the extent of dt in the file's data representation
// (MPI_File_get_type_extent). In external32 it is dt's extent, unless
// dt holds CLong or CUlong (4 bytes there, 8 in memory); then, as in a
// representation of RegisterDatarep, it is the extent of dt laid out with
// the sizes the representation gives its basic elements.
func (f *File) TypeExtent(dt *Datatype) (_ int64, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.TypeExtent", nil, Undefined, Undefined), &err)
	}

	if err := f.check("TypeExtent"); err != nil {
		return 0, err
	}
	if dt == nil {
		return 0, f.fail("TypeExtent", ErrType, nil, "nil datatype")
	}
	if dt.isFreed() {
		return 0, f.fail("TypeExtent", ErrType, nil, "datatype %s has been freed", dt.name)
	}
	f.mu.Lock()
	rep := f.view.rep
	if rep == nil && f.view.ext32 && dt.t.Narrowed() {
		rep = external32Rep
	}
	f.mu.Unlock()
	if rep != nil {
		ft, err := rep.fileType(dt)
		if err != nil {
			return 0, f.fail("TypeExtent", ErrConversion, err, "")
		}
		return ft.t.Extent(), nil
	}
	return dt.t.Extent(), nil
}

// SetAtomicity sets atomic mode (MPI_File_set_atomicity); collective,
// with the same flag on every rank. In atomic mode each access is done
// under a lock of the bytes it touches, so overlapping writes of
// different ranks are sequentially consistent.
func (f *File) SetAtomicity(flag bool) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.SetAtomicity", f.commOrNil(), Undefined, Undefined), &err)
	}
	if err := f.check("SetAtomicity"); err != nil {
		return err
	}
	return f.handle(f.q.do(func() error {
		flags, err := Allgather(f.comm, flag)
		if err != nil {
			return fileErr(f.comm, "File.SetAtomicity", f.name, ErrorClass(err), err, "")
		}
		for r, x := range flags {
			if x != flag {
				return fileErr(f.comm, "File.SetAtomicity", f.name, ErrArg, nil, "ranks passed different flags (rank %d: %v)", r, x)
			}
		}
		f.mu.Lock()
		f.atomic = flag
		f.mu.Unlock()
		return nil
	}))
}

// Atomicity reports whether f is in atomic mode (MPI_File_get_atomicity).
func (f *File) Atomicity() (_ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Atomicity", nil, Undefined, Undefined), &err)
	}

	if err := f.check("Atomicity"); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.atomic, nil
}

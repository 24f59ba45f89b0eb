//go:build cgo

package capi

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/progress"
)

// Phases of the library: MPI_Init moves it from before to running,
// MPI_Finalize to after.
const (
	phaseBefore = iota
	phaseRunning
	phaseAfter
)

var (
	phase    atomic.Int32
	initMu   sync.Mutex // serializes Init and Finalize
	provided int32      // the thread level Init_thread granted
)

// commEntry is a communicator behind a handle, with its ABI error handler
// (mpigo's own handler of the communicator stays ErrorsReturn: the ABI
// layer raises errors itself, with the code it returns).
type commEntry struct {
	c    *mpi.Comm
	errh atomic.Uintptr
	// errhSet: the program set errh (MPI_Comm_set_errhandler), for
	// raise's choice of handler for errors tied to no communicator.
	errhSet atomic.Bool
}

var (
	world, self commEntry
	comms       = &table[*commEntry]{kind: kindComm}
)

// noComm is the communicator argument of a call that has none: its errors
// go to MPI_COMM_SELF's handler, as MPI-4 says of errors not tied to an
// object; but while the program has set no handler on MPI_COMM_SELF and
// has set one on MPI_COMM_WORLD, to that one, which MPI-3.1 named for
// them, as MPICH does for programs written before MPI-4 (MPICH's
// attr/attrerrtype and spawn/namepub set MPI_ERRORS_RETURN on world and
// expect the error codes of MPI_Type_set_attr and MPI_Lookup_name).
const noComm uintptr = 0

// notRunning is the error of a call before MPI_Init or after MPI_Finalize.
func notRunning() error {
	if phase.Load() == phaseBefore {
		return classErr(MPI_ERR_OTHER, "called before MPI_Init")
	}
	if goFinalized() {
		return classErr(MPI_ERR_OTHER, "called after the Go program's mpi.Finalize")
	}
	return classErr(MPI_ERR_OTHER, "called after MPI_Finalize")
}

// getComm returns the communicator behind h, or nil and the error code
// raised.
func getComm(fn string, h uintptr) (*commEntry, int32) {
	if !usable() {
		return nil, raise(fn, noComm, notRunning())
	}
	switch h {
	case MPI_COMM_WORLD, MPI_COMM_SELF:
		if phase.Load() != phaseRunning {
			// Sessions only: the world model's communicators do not exist.
			return nil, raise(fn, noComm, notRunning())
		}
		if h == MPI_COMM_WORLD {
			return &world, 0
		}
		return &self, 0
	case MPI_COMM_NULL:
		return nil, raise(fn, noComm, classErr(MPI_ERR_COMM, "MPI_COMM_NULL is not a communicator"))
	}
	if ce, ok := comms.get(h); ok {
		return ce, 0
	}
	return nil, raise(fn, noComm, classErr(MPI_ERR_COMM, fmt.Sprintf("%#x is not a communicator handle (freed, garbage, or of another kind)", h)))
}

// running returns 0 if the library is between Init and Finalize or a
// session is live (session.go), and the error code raised otherwise.
func running(fn string) int32 {
	if !usable() {
		return raise(fn, noComm, notRunning())
	}
	return 0
}

// check returns 0 for a nil err, and otherwise raises it on ce.
func (ce *commEntry) check(fn string, err error) int32 {
	if err == nil {
		return MPI_SUCCESS
	}
	return raiseOn(fn, ce, err)
}

func implInit(argc, argv unsafe.Pointer) int32 {
	return initThread("MPI_Init", MPI_THREAD_SINGLE, nil)
}

func implInit_thread(argc, argv unsafe.Pointer, required int32, prov unsafe.Pointer) int32 {
	return initThread("MPI_Init_thread", required, (*int32)(prov))
}

func initThread(fn string, required int32, prov *int32) int32 {
	initMu.Lock()
	defer initMu.Unlock()
	if phase.Load() != phaseBefore {
		return raise(fn, noComm, classErr(MPI_ERR_OTHER, "MPI may be initialized only once"))
	}
	// Every call from C runs on a goroutine locked to its thread: the
	// job's waits must not yield the Go way (progress.SetLockedCallers).
	progress.SetLockedCallers()
	w, err := mpi.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpigo: %s: %v\n", fn, err)
		phase.Store(phaseAfter)
		return newCode(MPI_ERR_OTHER, fn+": "+err.Error())
	}
	world.c, self.c = w, w.Self()
	noteMainThread()
	world.errh.Store(MPI_ERRORS_ARE_FATAL)
	self.errh.Store(MPI_ERRORS_ARE_FATAL)
	// mpigo's communicators are safe for concurrent use by any number of
	// threads, and so is this layer (its tables are locked).
	provided = threadLevel(required)
	if prov != nil {
		*prov = provided
	}
	phase.Store(phaseRunning)
	fastStart(w.Rank(), w.Size())
	return MPI_SUCCESS
}

func implFinalize() int32 {
	initMu.Lock()
	defer initMu.Unlock()
	if rc := running("MPI_Finalize"); rc != 0 {
		return rc
	}
	if attached.Load() {
		return raise("MPI_Finalize", noComm, classErr(MPI_ERR_OTHER, "MPI belongs to the Go program, which started it (capi.Attach) and ends it (mpi.Finalize)"))
	}
	fastStop()
	// The phase changes only when mpi.Finalize has returned: it first
	// deletes MPI_COMM_SELF's attributes, and their delete callbacks may
	// call MPI (MPI_Finalized must still answer false there).
	err := mpi.Finalize()
	phase.Store(phaseAfter)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpigo: MPI_Finalize: %v\n", err)
		return newCode(MPI_ERR_OTHER, "MPI_Finalize: "+err.Error())
	}
	return MPI_SUCCESS
}

func setFlag(p unsafe.Pointer, b bool) {
	if p == nil {
		return
	}
	v := int32(0)
	if b {
		v = 1
	}
	*(*int32)(p) = v
}

func implInitialized(flag unsafe.Pointer) int32 {
	if flag == nil {
		return newCode(MPI_ERR_ARG, "MPI_Initialized: flag is NULL")
	}
	setFlag(flag, phase.Load() != phaseBefore)
	return MPI_SUCCESS
}

func implFinalized(flag unsafe.Pointer) int32 {
	if flag == nil {
		return newCode(MPI_ERR_ARG, "MPI_Finalized: flag is NULL")
	}
	setFlag(flag, phase.Load() == phaseAfter || goFinalized())
	return MPI_SUCCESS
}

func implQuery_thread(p unsafe.Pointer) int32 {
	if rc := running("MPI_Query_thread"); rc != 0 {
		return rc
	}
	if p == nil {
		return raise("MPI_Query_thread", noComm, classErr(MPI_ERR_ARG, "provided is NULL"))
	}
	*(*int32)(p) = provided
	return MPI_SUCCESS
}

func implAbort(comm uintptr, code int32) int32 {
	ce, rc := getComm("MPI_Abort", comm)
	if ce == nil {
		return rc
	}
	abortJob(ce.c, int(code))
	return MPI_SUCCESS
}

// abortJob ends the job with code (MPI_Abort): mpi.Abort stops every rank
// and, under a launcher, exits; in a singleton job it stops only the
// calling goroutine, so that runs on a goroutine of its own and the
// process then exits here.
func abortJob(c *mpi.Comm, code int) {
	if code == 0 {
		code = 1
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		mpi.Abort(c, code)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	os.Exit(mpi.ExitStatus(code))
}

// threadLevel is the level provided for required: the lowest standard
// level at or above it (every level is supported), so that a value
// between two levels never comes back as if it were one.
func threadLevel(required int32) int32 {
	for _, l := range [...]int32{MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED} {
		if required <= l {
			return l
		}
	}
	return MPI_THREAD_MULTIPLE
}

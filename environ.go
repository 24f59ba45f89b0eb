package mpi

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file holds the environment inquiries of MPI-3.1 chapter 8 (version,
// processor name, timers, initialization state), the thread-level
// inquiries of section 12.4 and MPI_Pcontrol of section 14.2.4.

// GetVersion returns the version of the MPI standard that mpigo follows,
// 3.1 (MPI_Get_version).
func GetVersion() (version, subversion int) { return StandardVersion, StandardSubversion }

// GetLibraryVersion returns a description of this library: its name and
// version, the Go release that built it, and the platform
// (MPI_Get_library_version). There is no MPI_MAX_LIBRARY_VERSION_STRING.
func GetLibraryVersion() string {
	return "mpigo " + Version + " (MPI " + strconv.Itoa(StandardVersion) + "." + strconv.Itoa(StandardSubversion) +
		", " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

// GetProcessorName returns the name of the machine the calling rank runs
// on: its host name (MPI_Get_processor_name). Goroutine ranks of one
// process share it. There is no MPI_MAX_PROCESSOR_NAME.
func GetProcessorName() (_ string, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("GetProcessorName", nil, Undefined, Undefined), &err)
	}

	h, err := os.Hostname()
	if err != nil {
		return "", &Error{Class: ErrOther, Op: "GetProcessorName", Cause: err}
	}
	return h, nil
}

// epoch is the origin of Wtime: the start of the process.
var epoch = time.Now()

// Wtime returns the seconds elapsed since a fixed time in the past, on a
// monotonic clock (MPI_Wtime): differences of two calls time the code
// between them. The origin is the start of the process, so clocks of
// different processes are not synchronised (AttrWtimeIsGlobal is false);
// goroutine ranks of one process share one clock.
func Wtime() float64 { return time.Since(epoch).Seconds() }

var tick = sync.OnceValue(func() float64 {
	// The monotonic clock counts nanoseconds; measure the smallest step it
	// actually takes, in case the platform's is coarser.
	best := time.Duration(1 << 62)
	for range 16 {
		t0 := time.Now()
		t1 := time.Now()
		for t1 == t0 || t1.Sub(t0) == 0 {
			t1 = time.Now()
		}
		if d := t1.Sub(t0); d < best {
			best = d
		}
	}
	return max(best.Seconds(), 1e-9)
})

// Wtick returns the resolution of Wtime in seconds (MPI_Wtick): the
// smallest step of the clock measured at the first call, at least 1e-9.
func Wtick() float64 { return tick() }

// Ranks of this process that are running their function, and whether any
// ever ran: Initialized and Finalized.
var (
	ranksRunning atomic.Int64
	everStarted  atomic.Bool
	mainRoutines sync.Map // goroutine id -> struct{}: the goroutines running a rank's function
)

// rankStarted records that the calling goroutine runs a rank's function;
// the returned function records its end.
func rankStarted() func() {
	everStarted.Store(true)
	ranksRunning.Add(1)
	id := goroutineID()
	mainRoutines.Store(id, struct{}{})
	return func() {
		mainRoutines.Delete(id)
		ranksRunning.Add(-1)
	}
}

// Initialized reports whether an mpi job has been started in this process
// (MPI_Initialized): true from the moment Main or Run starts a rank, and
// after the job ends. In Go, Main and Run are MPI_Init and MPI_Finalize:
// there is nothing to initialize by hand.
func Initialized() bool { return everStarted.Load() }

// Finalized reports whether a job has run in this process and none is
// running now (MPI_Finalized): true once every rank's function has
// returned. A process may run several jobs one after another with Run, so
// it can become false again when the next one starts.
func Finalized() bool { return everStarted.Load() && ranksRunning.Load() == 0 }

// ThreadLevel is a level of thread support (MPI_THREAD_SINGLE, ...).
type ThreadLevel int

// The thread levels, in increasing order.
const (
	ThreadSingle     ThreadLevel = iota // MPI_THREAD_SINGLE
	ThreadFunneled                      // MPI_THREAD_FUNNELED
	ThreadSerialized                    // MPI_THREAD_SERIALIZED
	ThreadMultiple                      // MPI_THREAD_MULTIPLE
)

// QueryThread returns the level of thread support (MPI_Query_thread):
// always ThreadMultiple, since any goroutine may call anything at any
// time. (MPI_Init_thread is Main or Run, which provide it.)
func QueryThread() ThreadLevel { return ThreadMultiple }

// IsThreadMain reports whether the calling goroutine is one on which Main
// or Run called a rank's function (MPI_Is_thread_main): MPI's main
// thread, one per rank. Goroutines the function starts are not. Since the
// level is ThreadMultiple, every goroutine may call mpi anyway.
func IsThreadMain() bool {
	_, ok := mainRoutines.Load(goroutineID())
	return ok
}

// goroutineID returns the calling goroutine's number, as its stack trace
// prints it.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// The profiling level and hook of Pcontrol.
var (
	pcontrolLevel atomic.Int64
	pcontrolHook  atomic.Pointer[func(level int, args ...any)]
)

func init() { pcontrolLevel.Store(1) }

// Pcontrol sets the profiling level (MPI_Pcontrol): by MPI's convention 0
// disables profiling, 1 enables it at the default detail, 2 and up flush
// or add detail. mpigo does nothing with it itself; a profiling or tracing
// layer observes it through SetPcontrolHook, and PcontrolLevel reports the
// last level set (1 before any call).
func Pcontrol(level int, args ...any) {
	pcontrolLevel.Store(int64(level))
	profPcontrol(level) // the Profiler in force (SetProfiler) sees it too
	if h := pcontrolHook.Load(); h != nil {
		(*h)(level, args...)
	}
}

// PcontrolLevel returns the level of the last Pcontrol call, 1 if none.
func PcontrolLevel() int { return int(pcontrolLevel.Load()) }

// SetPcontrolHook makes every later Pcontrol call f with its arguments,
// for a profiling layer; nil removes the hook. f may be called from any
// goroutine.
func SetPcontrolHook(f func(level int, args ...any)) {
	if f == nil {
		pcontrolHook.Store(nil)
		return
	}
	pcontrolHook.Store(&f)
}

//go:build cgo

package capi

import (
	"os"
	"runtime"
	"testing"
	"unsafe"
)

// MPI is initialised once for the package's tests (initOnce) and
// finalized after them: a process initialises MPI once.
var initialised bool

func initOnce(t *testing.T) {
	t.Helper()
	if initialised {
		return
	}
	if rc := implInit(nil, nil); rc != MPI_SUCCESS {
		t.Fatalf("MPI_Init: %d", rc)
	}
	initialised = true
}

func TestMain(m *testing.M) {
	code := m.Run()
	if initialised {
		implFinalize()
	}
	os.Exit(code)
}

// The blocking reductions allocate nothing per call: C programs call them
// in loops, and each allocation made the runtime grow and sweep the heap
// (three closures a call cost a third of an 8-byte MPI_Allreduce). In a
// singleton job.
func TestReductionsAllocateNothing(t *testing.T) {
	initOnce(t)
	in, out := new(float64), new(float64)
	*in = 3
	for _, tc := range []struct {
		name string
		f    func(sb, rb unsafe.Pointer, count int32, dt, op, comm uintptr) int32
	}{{"MPI_Allreduce", implAllreduce}, {"MPI_Scan", implScan}, {"MPI_Exscan", implExscan}} {
		call := func() {
			if rc := tc.f(unsafe.Pointer(in), unsafe.Pointer(out), 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); rc != MPI_SUCCESS {
				t.Fatalf("%s: %d", tc.name, rc)
			}
		}
		call()
		// AllocsPerRun counts the whole process's allocations: the job's
		// own goroutines, late on a loaded machine, once added 100 of
		// theirs to a hundred calls (CI, under the race detector). An
		// allocation of the call itself shows in every attempt.
		n := testing.AllocsPerRun(1000, call)
		for i := 0; i < 2 && n != 0; i++ {
			n = min(n, testing.AllocsPerRun(1000, call))
		}
		if n != 0 {
			t.Errorf("%s allocates %.0f objects per call, want 0", tc.name, n)
		}
	}
	*out = 0
	if rc := implAllreduce(unsafe.Pointer(in), unsafe.Pointer(out), 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); rc != MPI_SUCCESS || *out != 3 {
		t.Errorf("MPI_Allreduce of 3 over one rank: %v (code %d)", *out, rc)
	}
}

// TestWindowAllocatesNothing: a window of MPI_Irecv and MPI_Isend
// completed by MPI_Waitall allocates nothing once warm: the requests the
// handles held go back to mpigo when the handles are released
// (bindhook.RecycleRequest); before, every 127 requests took a new block
// of 8 KiB, which the garbage collector swept a fifth of the message
// rate away on. In a singleton job, to itself.
func TestWindowAllocatesNothing(t *testing.T) {
	initOnce(t)
	const w, windows = 64, 200
	sb, rb := make([]float64, w), make([]float64, w)
	reqs := make([]uintptr, 2*w)
	window := func(k int) {
		for i := range w {
			sb[i] = float64(k*w + i)
			if rc := implIrecv(unsafe.Pointer(&rb[i]), 1, MPI_DOUBLE, 0, int32(i), MPI_COMM_WORLD, unsafe.Pointer(&reqs[i])); rc != MPI_SUCCESS {
				t.Fatalf("MPI_Irecv: %d", rc)
			}
		}
		for i := range w {
			if rc := implIsend(unsafe.Pointer(&sb[i]), 1, MPI_DOUBLE, 0, int32(i), MPI_COMM_WORLD, unsafe.Pointer(&reqs[w+i])); rc != MPI_SUCCESS {
				t.Fatalf("MPI_Isend: %d", rc)
			}
		}
		if rc := implWaitall(2*w, unsafe.Pointer(&reqs[0]), nil); rc != MPI_SUCCESS {
			t.Fatalf("MPI_Waitall: %d", rc)
		}
		for i := range w {
			if rb[i] != sb[i] || reqs[i] != MPI_REQUEST_NULL || reqs[w+i] != MPI_REQUEST_NULL {
				t.Fatalf("window %d, message %d: received %v, want %v; handles %#x %#x", k, i, rb[i], sb[i], reqs[i], reqs[w+i])
			}
		}
	}
	for k := range 4 {
		window(k)
	}
	// The least of three counts: the job's own goroutines may allocate
	// now and then (see TestReductionsAllocateNothing).
	least := uint64(1 << 62)
	var ms runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		for k := range windows {
			window(k)
		}
		runtime.ReadMemStats(&ms)
		least = min(least, ms.Mallocs-before)
	}
	if raceEnabled {
		return // the messages were checked; the count means nothing here
	}
	if least > windows/20 {
		t.Errorf("%d windows of %d requests allocated %d objects, want at most %d", windows, 2*w, least, windows/20)
	}
}

//go:build cgo

package capi

import (
	"testing"
	"unsafe"
)

// The blocking reductions allocate nothing per call: C programs call them
// in loops, and each allocation made the runtime grow and sweep the heap
// (three closures a call cost a third of an 8-byte MPI_Allreduce). In a
// singleton job.
func TestReductionsAllocateNothing(t *testing.T) {
	if rc := implInit(nil, nil); rc != MPI_SUCCESS {
		t.Fatalf("MPI_Init: %d", rc)
	}
	defer implFinalize()
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

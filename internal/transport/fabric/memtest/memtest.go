// Package memtest holds the tests every transport.RemoteMemory must pass
// (UCX's and libfabric's), for their packages' tests to run. Only tests
// import it.
package memtest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mpigo/mpi/internal/transport"
)

func payload(from, i, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(from*31 + i*7 + k)
	}
	return b
}

// Exercise has owner expose a little over 1 MiB and origin (which
// reaches owner as rank peer) write and read it: puts at offsets, in the
// memory after Flush; gets of what the owner wrote; puts and gets of
// several runs at once; eight goroutines at once; out-of-range access and
// runs that do not fit their buffer refused before the transport sees
// them; and a closed remote refused. It returns the exposure, still open, for the
// caller's checks of what its transport holds.
func Exercise(t *testing.T, owner, origin transport.RemoteMemory, peer int) transport.Exposure {
	t.Helper()
	mem := make([]byte, 1<<20+3)
	e, err := owner.ExposeMemory(mem)
	if err != nil {
		t.Fatal(err)
	}
	r, err := origin.OpenRemote(peer, e.Key())
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != len(mem) {
		t.Fatalf("remote length %d, want %d", r.Len(), len(mem))
	}
	for _, tc := range []struct{ off, n int }{{0, 8}, {5, 1}, {4096, 70000}, {0, len(mem)}, {len(mem) - 3, 3}} {
		src := payload(0, tc.off, tc.n)
		if err := r.Put(tc.off, src); err != nil {
			t.Fatalf("put %d at %d: %v", tc.n, tc.off, err)
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mem[tc.off:tc.off+tc.n], src) {
			t.Fatalf("put %d at %d: not in the peer's memory after Flush", tc.n, tc.off)
		}
		copy(mem[tc.off:], payload(1, tc.off, tc.n))
		dst := make([]byte, tc.n)
		if err := r.Get(tc.off, dst); err != nil {
			t.Fatalf("get %d at %d: %v", tc.n, tc.off, err)
		}
		if !bytes.Equal(dst, mem[tc.off:tc.off+tc.n]) {
			t.Fatalf("get %d at %d: other bytes", tc.n, tc.off)
		}
	}
	// Runs: small and large, out of order, one empty.
	for _, runs := range [][]transport.Run{
		{{Off: 100, Len: 8}, {Off: 0, Len: 16}, {Off: 4096, Len: 0}, {Off: 9000, Len: 100}},
		{{Off: 1 << 19, Len: 70000}, {Off: 1000, Len: 3}, {Off: 1 << 17, Len: 200000}},
	} {
		n := 0
		for _, run := range runs {
			n += run.Len
		}
		src := payload(3, len(runs), n)
		if err := r.PutRuns(runs, src); err != nil {
			t.Fatalf("PutRuns %v: %v", runs, err)
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		pos := 0
		for _, run := range runs {
			if !bytes.Equal(mem[run.Off:run.Off+run.Len], src[pos:pos+run.Len]) {
				t.Fatalf("PutRuns: run %+v not in the peer's memory after Flush", run)
			}
			copy(mem[run.Off:], payload(4, run.Off, run.Len))
			pos += run.Len
		}
		dst := make([]byte, n)
		if err := r.GetRuns(runs, dst); err != nil {
			t.Fatalf("GetRuns %v: %v", runs, err)
		}
		pos = 0
		for _, run := range runs {
			if !bytes.Equal(dst[pos:pos+run.Len], mem[run.Off:run.Off+run.Len]) {
				t.Fatalf("GetRuns: run %+v: other bytes", run)
			}
			pos += run.Len
		}
	}
	for _, bad := range []struct {
		runs []transport.Run
		n    int
	}{
		{[]transport.Run{{Off: 0, Len: 4}, {Off: len(mem) - 2, Len: 3}}, 7},
		{[]transport.Run{{Off: -1, Len: 4}}, 4},
		{[]transport.Run{{Off: 0, Len: 4}}, 5},
		{[]transport.Run{{Off: 0, Len: 4}, {Off: 8, Len: 4}}, 4},
	} {
		if err := r.PutRuns(bad.runs, make([]byte, bad.n)); err == nil {
			t.Errorf("PutRuns %v of %d bytes: no error", bad.runs, bad.n)
		}
		if err := r.GetRuns(bad.runs, make([]byte, bad.n)); err == nil {
			t.Errorf("GetRuns %v of %d bytes: no error", bad.runs, bad.n)
		}
	}
	// Eight goroutines put and get their own 64 KiB at once.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := g << 16
			src := payload(2, g, 1<<16)
			for i := 0; i < 20; i++ {
				if err := r.Put(off, src); err != nil {
					errs <- err
					return
				}
			}
			if err := r.Flush(); err != nil {
				errs <- err
				return
			}
			dst := make([]byte, 1<<16)
			if err := r.Get(off, dst); err != nil || !bytes.Equal(dst, src) {
				errs <- fmt.Errorf("goroutine %d: get %v, same bytes %v", g, err, bytes.Equal(dst, src))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("goroutines: %v", err)
	}
	for _, bad := range []struct{ off, n int }{{-1, 4}, {len(mem) - 2, 3}, {len(mem) + 1, 1}} {
		if err := r.Put(bad.off, make([]byte, bad.n)); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("put %d at %d: %v, want an out-of-range error", bad.n, bad.off, err)
		}
		if err := r.Get(bad.off, make([]byte, bad.n)); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("get %d at %d: %v, want an out-of-range error", bad.n, bad.off, err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(0, []byte{1}); err == nil {
		t.Error("put through a closed remote: no error")
	}
	return e
}

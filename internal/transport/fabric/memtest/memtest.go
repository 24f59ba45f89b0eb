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
// memory after Flush; gets of what the owner wrote; eight goroutines at
// once; out-of-range access refused before the transport sees it; and a
// closed remote refused. It returns the exposure, still open, for the
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

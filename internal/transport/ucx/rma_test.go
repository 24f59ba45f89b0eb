//go:build cgo && mpigo_ucx

package ucx

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport"
)

// A rank's exposed memory, written and read by its peer with UCX's puts
// and gets: puts at offsets, visible in the memory after Flush; gets of
// what the owner wrote; many goroutines at once; out-of-range access
// refused before UCX sees it; a closed remote refused; and Close of the
// transport releasing what is still exposed and unpacked.
func TestRemoteMemory(t *testing.T) {
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+"), func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			ts, _ := group(t, 2)
			// Over tcp no peer's memory is direct, known without a
			// connection; over shared memory every peer's is.
			if d := ts[0].DirectMemory(1); d != (tls != "tcp") || (tls == "tcp" && ts[0].eps.Has(1)) {
				t.Errorf("DirectMemory %v, endpoint made %v", d, ts[0].eps.Has(1))
			}
			mem := make([]byte, 1<<20+3)
			e, err := ts[1].ExposeMemory(mem)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ts[0].OpenRemote(1, e.Key())
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
						errs <- err
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
			// Another remote and the exposure stay until the transport
			// closes, which releases them.
			if _, err := ts[0].OpenRemote(1, e.Key()); err != nil {
				t.Fatal(err)
			}
			for _, tr := range ts {
				tr.Close()
			}
			if len(ts[0].remotes) != 0 || len(ts[1].exposed) != 0 {
				t.Errorf("after Close: %d remotes, %d exposures left", len(ts[0].remotes), len(ts[1].exposed))
			}
			if err := e.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// A peer killed while this rank reads its memory ends the read with an
// error that says the peer is lost (transport.ErrPeerLost), promptly.
func TestRemoteMemoryPeerKilled(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	tr, g, failed, cmd := helper(t, "expose", 2)
	g.mu.Lock()
	key := append([]byte(nil), g.frames[1].Payload...)
	g.mu.Unlock()
	r, err := tr.OpenRemote(1, key)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Get(0, make([]byte, 64<<20)) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("a read from a stopped peer ended: %v", err)
	default:
	}
	killed := time.Now()
	cmd.Process.Kill()
	select {
	case err := <-done:
		if !errors.Is(err, transport.ErrPeerLost) {
			t.Fatalf("the read from a killed peer: %v, want transport.ErrPeerLost", err)
		}
		t.Logf("read ended %v after the kill: %v", time.Since(killed), err)
	case <-time.After(5 * time.Second):
		t.Fatal("the read from a killed peer did not end within 5 s")
	}
	<-failed
	if err := r.Put(0, []byte{1}); !errors.Is(err, transport.ErrPeerLost) {
		t.Errorf("a put to the killed peer: %v, want transport.ErrPeerLost", err)
	}
}

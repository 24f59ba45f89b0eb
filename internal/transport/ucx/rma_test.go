//go:build cgo && mpigo_ucx

package ucx

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric/memtest"
)

// A rank's exposed memory, written and read by its peer with UCX's puts
// and gets (memtest.Exercise: puts, in the memory after Flush; gets;
// goroutines; bad ranges; a closed remote); and Close of the transport
// releasing what is still exposed and unpacked.
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
			e := memtest.Exercise(t, ts[1], ts[0], 1)
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

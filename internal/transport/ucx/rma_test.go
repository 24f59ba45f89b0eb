//go:build cgo && mpigo_ucx

package ucx

import (
	"errors"
	"os/exec"
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
// error that says the peer is lost (transport.ErrPeerLost), promptly:
// over UCX's tcp as UCX reports the death; over its shared memory, which
// reports nothing, as the job tells the transport (LosePeer). The read's
// destination, which UCX may still hold there, stays pinned until Close.
func TestRemoteMemoryPeerKilled(t *testing.T) {
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+"), func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
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
			killed := kill(t, tr, cmd, tls)
			select {
			case err := <-done:
				if !errors.Is(err, transport.ErrPeerLost) {
					t.Fatalf("the read from a killed peer: %v, want transport.ErrPeerLost", err)
				}
				t.Logf("read ended %v after the kill: %v", time.Since(killed), err)
			case <-time.After(5 * time.Second):
				t.Fatal("the read from a killed peer did not end within 5 s")
			}
			if tls == "tcp" {
				<-failed
			}
			if err := r.Put(0, []byte{1}); !errors.Is(err, transport.ErrPeerLost) {
				t.Errorf("a put to the killed peer: %v, want transport.ErrPeerLost", err)
			}
			if err := r.(transport.Atomics).Atomics(transport.AtomicAdd, 8, []transport.Atomic{{V: 1}}); !errors.Is(err, transport.ErrPeerLost) {
				t.Errorf("an atomic add to the killed peer: %v, want transport.ErrPeerLost", err)
			}
			closeAbandoned(t, tr, tls)
		})
	}
}

// kill kills the helper peer and, over shared memory, where UCX reports
// nothing, tells tr as the runtime would once the launcher saw it die;
// it returns when the peer was killed.
func kill(t *testing.T, tr *Transport, cmd *exec.Cmd, tls string) time.Time {
	t.Helper()
	killed := time.Now()
	cmd.Process.Kill()
	if tls != "tcp" {
		cmd.Wait()
		tr.LosePeer(1, errors.New("its process was killed"))
	}
	return killed
}

// closeAbandoned checks that Close, over shared memory, releases what
// UCX held of the operations abandoned to the lost peer, and does not
// wait for them.
func closeAbandoned(t *testing.T, tr *Transport, tls string) {
	t.Helper()
	tr.wmu.Lock()
	n := len(tr.abandoned)
	tr.wmu.Unlock()
	if tls != "tcp" && n == 0 {
		// Right too: UCX may end the abandoned operation itself soon
		// after the kill (cross-memory attach then finds no process), and
		// the transport releases it at once (checkAbandoned); seen on a
		// loaded machine.
		t.Log("nothing abandoned is held: UCX has ended it already")
	}
	start := time.Now()
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if len(tr.abandoned) != 0 {
		t.Errorf("after Close: %d requests abandoned still held", len(tr.abandoned))
	}
}

// Atomic operations in a rank's exposed memory, from its peer and from
// itself through an endpoint to itself (memtest.ExerciseAtomics), over
// each set of UCX transports.
func TestRemoteAtomics(t *testing.T) {
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+"), func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			ts, _ := group(t, 2)
			memtest.ExerciseAtomics(t, ts[1], []transport.RemoteMemory{ts[0], ts[1]}, 1)
			for _, tr := range ts {
				tr.Close()
			}
		})
	}
}

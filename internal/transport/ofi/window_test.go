//go:build cgo && mpigo_ofi

package ofi

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric/memtest"
	"github.com/mpigo/mpi/internal/wire"
)

// A rank's exposed memory, written and read by its peer with the
// provider's writes and reads (memtest.Exercise: puts, in the memory
// after Flush; gets; goroutines; bad ranges; a closed remote), over every
// setup; local registrations of the sources and destinations closed when
// their operation is over (FI_MR_LOCAL); bad keys refused; and Close of
// the transport releasing what is still exposed. A provider without
// remote writes exposes nothing; none of this machine's reaches memory
// directly.
func TestRemoteMemory(t *testing.T) {
	need(t)
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			ts, _ := group(t, 2, s.prov, s.noRMA, s.localMR)
			if s.noRMA {
				if ts[0].DirectMemory(1) {
					t.Error("DirectMemory without remote writes")
				}
				if _, err := ts[1].ExposeMemory(make([]byte, 8)); err == nil {
					t.Error("ExposeMemory without remote writes: no error")
				}
				return
			}
			if !ts[0].Writes() {
				t.Skipf("provider %s took no remote writes", ts[0].Provider())
			}
			if ts[0].DirectMemory(1) {
				t.Errorf("DirectMemory over %s", s.prov)
			}
			e := memtest.Exercise(t, ts[1], ts[0], 1)
			if _, live, _ := ts[0].regionStats(); live != 0 {
				t.Errorf("%d local registrations left after the operations", live)
			}
			if s.localMR && ts[0].localRegs() == 0 {
				t.Error("FI_MR_LOCAL: no source or destination was registered")
			}
			for _, key := range [][]byte{nil, e.Key()[:23], e.Key()[:24], append(bytes.Clone(e.Key()[:8]), make([]byte, 24)...), append(bytes.Clone(e.Key()[:24]), make([]byte, 8)...)} {
				if _, err := ts[0].OpenRemote(1, key); err == nil {
					t.Errorf("OpenRemote of a bad key %x: no error", key)
				}
			}
			// The exposure stays until the transport closes, which
			// releases it.
			for _, tr := range ts {
				tr.Close()
			}
			if len(ts[1].exposed) != 0 {
				t.Errorf("after Close: %d exposures left", len(ts[1].exposed))
			}
			if err := e.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// Atomic operations in a rank's exposed memory, from its peer and from
// itself through its endpoint to itself (memtest.ExerciseAtomics), over
// every provider with remote writes, with its buffers registered for
// local access too (FI_MR_LOCAL); none asked for, none given; and no
// local registration left behind.
func TestRemoteAtomics(t *testing.T) {
	need(t)
	for _, s := range setups {
		if s.noRMA {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			ts, _ := groupWith(t, 2, s.prov, func(c *Config) { c.LocalMR, c.Atomics = s.localMR, true })
			if !ts[0].Atomics() {
				t.Skipf("provider %s took no atomics", ts[0].Provider())
			}
			memtest.ExerciseAtomics(t, ts[1], []transport.RemoteMemory{ts[0], ts[1]}, 1)
			if _, live, _ := ts[0].regionStats(); live != 0 {
				t.Errorf("%d local registrations left after the operations", live)
			}
			if s.localMR && ts[0].localRegs() == 0 {
				t.Error("FI_MR_LOCAL: no operand or result was registered")
			}
		})
	}
	t.Run("not-asked", func(t *testing.T) {
		ts, _ := group(t, 2, "tcp;ofi_rxm", false, false)
		if ts[0].Atomics() {
			t.Error("atomics without Config.Atomics")
		}
		e, err := ts[1].ExposeMemory(make([]byte, 64))
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		r, err := ts[0].OpenRemote(1, e.Key())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, ok := r.(transport.Atomics); ok {
			t.Error("a remote with atomics from a transport without them")
		}
	})
}

func TestDirectProvider(t *testing.T) {
	for prov, want := range map[string]bool{
		"verbs;ofi_rxm/mlx5_0": true, "efa/rdmap0s6-rdm": true, "cxi/cxi0": true, "psm3/ib0": true,
		"tcp;ofi_rxm/eth0": false, "tcp/lo": false, "sockets/eth0": false, "udp;ofi_rxd/lo": false,
		"net;ofi_rxm/eth0": false, "shm/shm": false, "": false,
	} {
		if got := directProvider(prov); got != want {
			t.Errorf("directProvider(%q) = %v, want %v", prov, got, want)
		}
	}
}

// parseWinKey refuses keys that are not one of ExposeMemory's, whatever
// the bytes.
func FuzzParseWinKey(f *testing.F) {
	f.Add(make([]byte, winKeySize))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, key []byte) {
		raddr, n, _, base, err := parseWinKey(key)
		if err == nil && (n <= 0 || raddr+uint64(n) < raddr || base == 0 || base+uint64(n) < base || len(key) != winKeySize) {
			t.Fatalf("key %x: %d bytes at %#x accepted", key, n, raddr)
		}
	})
}

// TestExposeHelper is the helper process of TestRemoteMemoryPeerKilled:
// it exposes 64 MiB, prints its key and waits to be killed.
func TestExposeHelper(t *testing.T) {
	if os.Getenv("MPIGO_TEST_OFI_EXPOSE") == "" {
		t.Skip("helper process only")
	}
	var peer []byte
	tr, err := New(Config{Rank: 1, Size: 2, Handler: func(wire.Frame) {}, Addrs: func(int) ([]byte, error) { return peer, nil },
		ShmName: os.Getenv("MPIGO_TEST_OFI_SHMNAME"),
		Atomics: os.Getenv("MPIGO_TEST_OFI_ATOMICS") == "1"})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println(hex.EncodeToString(tr.Address()))
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	peer, _ = hex.DecodeString(strings.TrimSpace(line))
	e, err := tr.ExposeMemory(make([]byte, 64<<20))
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println(hex.EncodeToString(e.Key()))
	select {}
}

// exposedPeer starts TestExposeHelper over provider prov (its endpoint
// asking for atomic operations if atomics), makes this rank's endpoint
// (rank 0, its Config changed by set), opens the helper's memory and
// reads 8 bytes of it, which the helper's provider serves from its
// progress goroutine. It skips t where the provider has no remote writes,
// or no atomics when they are asked for.
func exposedPeer(t *testing.T, prov string, atomics bool, set func(*Config)) (*exec.Cmd, *Transport, transport.Remote) {
	t.Helper()
	cmd, in, lines, addr := startHelper(t, "TestExposeHelper", "MPIGO_TEST_OFI_EXPOSE=1", "FI_PROVIDER="+prov,
		fmt.Sprintf("MPIGO_TEST_OFI_ATOMICS=%d", map[bool]int{false: 0, true: 1}[atomics]))
	cfg := Config{Rank: 0, Size: 2, Handler: func(wire.Frame) {}, Provider: prov,
		Addrs: func(int) ([]byte, error) { return addr, nil }, Atomics: atomics}
	set(&cfg)
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if !tr.Writes() {
		t.Skip("no remote writes")
	}
	if atomics && !tr.Atomics() {
		t.Skip("no atomics")
	}
	fmt.Fprintln(in, hex.EncodeToString(tr.Address()))
	line, err := lines.ReadString('\n')
	key, kerr := hex.DecodeString(strings.TrimSpace(line))
	if err != nil || kerr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	r, err := tr.OpenRemote(1, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Get(0, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	return cmd, tr, r
}

// A peer killed while this rank reads its memory (tcp) or puts into it
// (shm), or applies atomic operations to it (both), ends the operation
// with an error that says the peer is lost (transport.ErrPeerLost),
// promptly, and later ones fail the same way. Over tcp the transport
// finds the death itself and reports it; over shm the provider says
// nothing of a dead peer, and the job tells the transport (LosePeer, as
// the runtime does when the launcher or another transport learns of
// it): the wait ends then.
func TestRemoteMemoryPeerKilled(t *testing.T) {
	need(t)
	for _, c := range []struct {
		prov    string
		atomics bool
	}{{"tcp;ofi_rxm", false}, {"shm", false}, {"tcp;ofi_rxm", true}, {"shm", true}} {
		prov := c.prov
		name := prov
		if c.atomics {
			name += "/atomics"
		}
		t.Run(name, func(t *testing.T) {
			failed := make(chan error, 4)
			cmd, tr, r := exposedPeer(t, prov, c.atomics, func(cfg *Config) {
				cfg.OnPeerError = func(peer int, err error) { failed <- fmt.Errorf("peer %d: %w", peer, err) }
			})
			done := make(chan error, 1)
			go func() {
				as := make([]transport.Atomic, 4096)
				for i := range as {
					as[i] = transport.Atomic{Off: 8 * i, V: 1}
				}
				for {
					var err error
					if c.atomics {
						err = r.(transport.Atomics).Atomics(transport.AtomicAdd, 8, as)
					} else if prov == "shm" {
						// A delivered put waits for the target's provider.
						if err = r.Put(0, make([]byte, 1<<20)); err == nil {
							err = r.Flush()
						}
					} else {
						err = r.Get(0, make([]byte, 64<<20))
					}
					if err != nil {
						done <- err
						return
					}
				}
			}()
			// Killed while an operation on its memory is under way.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				tr.wmu.Lock()
				if len(tr.rreads) > 0 {
					cmd.Process.Kill()
					tr.wmu.Unlock()
					break
				}
				tr.wmu.Unlock()
				if time.Now().After(deadline) {
					t.Fatal("no operation on the helper's memory under way within 10 s")
				}
			}
			killed := time.Now()
			if prov == "shm" {
				cmd.Wait()
				select {
				case err := <-done:
					t.Fatalf("an operation on a dead peer's memory ended before the job said it died: %v", err)
				case <-time.After(200 * time.Millisecond):
				}
				tr.LosePeer(1, errors.New("the launcher says it died"))
			}
			select {
			case err := <-done:
				if !errors.Is(err, transport.ErrPeerLost) {
					t.Fatalf("the operation on a killed peer's memory: %v, want transport.ErrPeerLost", err)
				}
				t.Logf("ended %v after the kill: %v", time.Since(killed), err)
			case <-time.After(5 * time.Second):
				t.Fatal("the operation on a killed peer's memory did not end within 5 s")
			}
			if prov != "shm" {
				select {
				case <-failed:
				case <-time.After(5 * time.Second):
					t.Fatal("the peer's death was not reported within 5 s")
				}
			}
			if err := r.Put(0, []byte{1}); !errors.Is(err, transport.ErrPeerLost) {
				t.Errorf("a put to the killed peer: %v, want transport.ErrPeerLost", err)
			}
			if err := r.Flush(); !errors.Is(err, transport.ErrPeerLost) {
				t.Errorf("a flush to the killed peer: %v, want transport.ErrPeerLost", err)
			}
			cmd.Wait()
		})
	}
}

// The cost of a window's 8-byte Put and Flush, and Get, between two
// endpoints of this process, each progressed by its own goroutine.
func BenchmarkRemoteMemory(b *testing.B) {
	for _, s := range setups {
		if s.noRMA {
			continue
		}
		b.Run(s.name, func(b *testing.B) {
			ts, _ := group(b, 2, s.prov, s.noRMA, s.localMR)
			e, err := ts[1].ExposeMemory(make([]byte, 1<<16))
			if err != nil {
				b.Fatal(err)
			}
			r, err := ts[0].OpenRemote(1, e.Key())
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range []int{8, 1 << 16} {
				buf := make([]byte, n)
				b.Run(fmt.Sprintf("put+flush/%d", n), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := r.Put(0, buf); err != nil {
							b.Fatal(err)
						}
						if err := r.Flush(); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run(fmt.Sprintf("get/%d", n), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := r.Get(0, buf); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// A send or atomic that waits for the provider's room (retry) ends when
// the job loses the peer. The helper is stopped first, so that its
// provider takes nothing more and the queue fills for certain (over shm,
// whose provider says nothing of a dead peer, only LosePeer ends the
// wait); then it is killed and the job told.
func TestFullQueuePeerLost(t *testing.T) {
	need(t)
	for _, what := range []string{"sends", "atomics"} {
		t.Run(what, func(t *testing.T) {
			const prov = "shm"
			atomics := what == "atomics"
			cmd, tr, r := exposedPeer(t, prov, atomics, func(cfg *Config) { cfg.NoGather = true })
			if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				as := make([]transport.Atomic, 64)
				for i := range as {
					as[i] = transport.Atomic{Off: 8 * i, V: 1}
				}
				msg := make([]byte, 64)
				for {
					var err error
					if atomics {
						err = r.(transport.Atomics).Atomics(transport.AtomicAdd, 8, as)
					} else {
						err = tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: int64(len(msg))}, From: 0, To: 1, Payload: msg})
					}
					if err != nil {
						done <- err
						return
					}
				}
			}()
			// Sends: until the sender is seen spinning for room, holding
			// the lock LosePeer takes (retry). Atomics: until the queue
			// was full once; they then wait for their completions, which
			// only the peer's provider gives.
			for deadline, last := time.Now().Add(10*time.Second), int64(0); ; time.Sleep(20 * time.Millisecond) {
				n := tr.full.Load()
				if n > 0 && (atomics || last > 0 && n > last) {
					break
				}
				last = n
				if time.Now().After(deadline) {
					t.Fatal("the stopped helper's queue did not fill within 10 s")
				}
				select {
				case err := <-done:
					t.Fatalf("the %s to a stopped helper ended: %v", what, err)
				default:
				}
			}
			cmd.Process.Kill()
			cmd.Wait()
			lost := time.Now()
			tr.LosePeer(1, errors.New("the launcher says it died"))
			select {
			case err := <-done:
				if !errors.Is(err, transport.ErrPeerLost) {
					t.Fatalf("the %s waiting for room: %v, want transport.ErrPeerLost", what, err)
				}
				t.Logf("ended %v after LosePeer (the provider had no room %d times): %v", time.Since(lost), tr.full.Load(), err)
			case <-time.After(5 * time.Second):
				t.Fatalf("the %s waiting for the provider's room did not end within 5 s of LosePeer", what)
			}
		})
	}
}

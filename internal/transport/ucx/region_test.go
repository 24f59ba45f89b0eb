//go:build cgo && mpigo_ucx

package ucx

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

var (
	_ transport.RegionReader  = (*Transport)(nil)
	_ transport.RegionStarter = (*Transport)(nil)
)

// exported waits up to 10 s for tr to have want regions exported.
func exported(t *testing.T, what string, tr *Transport, want int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); tr.nExported.Load() != want && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if n := tr.nExported.Load(); n != want {
		t.Fatalf("%s: %d regions exported, want %d", what, n, want)
	}
}

// A region is pulled whole, from an offset and truncated, straight into
// the destination; a pull of a token or range that is not the peer's
// ends in error; the region is released when its reader answers the RTS
// that named it (Fin, or CTS), whether or not it read it.
func TestRegions(t *testing.T) {
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+"), func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			ts, _ := group(t, 2)
			src := payload(0, 1, 3<<20+5)
			for _, tc := range []struct {
				name   string
				off, n int
			}{{"whole", 0, len(src)}, {"offset", 1000, len(src) - 1000}, {"truncated", 0, 70000}, {"small", 7, 1}} {
				tok, ok := ts[0].ExportRegion(1, src)
				if !ok {
					t.Fatal("ExportRegion refused")
				}
				dst := make([]byte, tc.n)
				if err := ts[1].ReadRegion(0, tok, tc.off, dst); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if !bytes.Equal(dst, src[tc.off:tc.off+tc.n]) {
					t.Fatalf("%s: other bytes read", tc.name)
				}
				// The RTS that named it, then the reader's Fin, release it.
				rts := wire.Frame{Header: wire.Header{Kind: wire.RTS, Flags: wire.FlagToken, Context: 3, SendID: tok + 100, Size: int64(len(src)), Token: tok}, From: 0, To: 1}
				if err := ts[0].Send(rts); err != nil {
					t.Fatal(err)
				}
				fin := wire.Frame{Header: wire.Header{Kind: wire.Fin, Context: 3, SendID: tok + 100, RecvID: 1}, From: 1, To: 0}
				if err := ts[1].Send(fin); err != nil {
					t.Fatal(err)
				}
				exported(t, tc.name, ts[0], 0)
			}
			// Bad pulls: an unknown token, a range past the region's end.
			tok, _ := ts[0].ExportRegion(1, src[:100])
			for _, bad := range []struct {
				tok      uint64
				off, n   int
				whatFail string
			}{{tok + 7, 0, 10, "unknown token"}, {tok, 50, 51, "past the end"}} {
				done := make(chan error, 1)
				if err := ts[1].StartRegion(0, bad.tok, bad.off, make([]byte, bad.n), func(err error) { done <- err }); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-done:
					if err == nil {
						t.Fatalf("%s: the read succeeded", bad.whatFail)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: the read did not end", bad.whatFail)
				}
			}
			// Answered by a CTS without a read.
			rts := wire.Frame{Header: wire.Header{Kind: wire.RTS, Flags: wire.FlagToken, Context: 4, SendID: 77, Size: 100, Token: tok}, From: 0, To: 1}
			if err := ts[0].Send(rts); err != nil {
				t.Fatal(err)
			}
			exported(t, "before the CTS", ts[0], 1)
			cts := wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: 4, SendID: 77, RecvID: 9, Size: 100}, From: 1, To: 0}
			if err := ts[1].Send(cts); err != nil {
				t.Fatal(err)
			}
			exported(t, "after the CTS", ts[0], 0)
		})
	}
}

// helper starts TestHelperPeer in mode as rank 1 and makes rank 0's
// transport, which has heard the helper's hello (and, in mode export, its
// frame with a token) when helper returns.
func helper(t *testing.T, mode string, frames int) (*Transport, *got, chan error, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPeer$")
	cmd.Env = append(os.Environ(), "MPIGO_TEST_UCX_HELPER="+mode)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr, err := hex.DecodeString(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	g := &got{}
	failed := make(chan error, 4)
	tr, err := New(Config{Rank: 0, Size: 2, Handler: g.handler,
		Addrs:       func(int) ([]byte, error) { return addr, nil },
		OnPeerError: func(peer int, err error) { failed <- fmt.Errorf("peer %d: %w", peer, err) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	fmt.Fprintln(in, hex.EncodeToString(tr.Address()))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if n, _ := g.count(); n >= frames {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d frames from the helper, want %d", len(g.frames), frames)
		}
	}
	return tr, g, failed, cmd
}

// A peer killed while this rank pulls its region ends the pull with an
// error, and a peer killed while it holds a region of this rank releases
// it: neither waits for the dead, nor stays pinned. Over UCX's shared
// memory, which reports nothing, the job tells the transport (LosePeer).
func TestRegionPeerKilled(t *testing.T) {
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+")+"/reader", func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			tr, g, failed, cmd := helper(t, "export", 2)
			g.mu.Lock()
			tok := binary.LittleEndian.Uint64(g.frames[1].Payload)
			g.mu.Unlock()
			done := make(chan error, 1)
			if err := tr.StartRegion(1, tok, 0, make([]byte, 64<<20), func(err error) { done <- err }); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			select {
			case err := <-done:
				t.Fatalf("a pull from a stopped peer ended: %v", err)
			default:
			}
			killed := kill(t, tr, cmd, tls)
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("the pull from a killed peer succeeded")
				}
				t.Logf("pull ended %v after the kill: %v", time.Since(killed), err)
			case <-time.After(5 * time.Second):
				t.Fatal("the pull from a killed peer did not end within 5 s")
			}
			if tls == "tcp" {
				<-failed
			}
		})
		t.Run(strings.ReplaceAll(tls, ",", "+")+"/exporter", func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			tr, _, failed, cmd := helper(t, "idle", 1)
			if _, ok := tr.ExportRegion(1, make([]byte, 1<<20)); !ok {
				t.Fatal("ExportRegion refused")
			}
			// A frame to the peer, so that a connection to it is in use.
			if err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 2}, From: 0, To: 1, Payload: []byte("hi")}); err != nil {
				t.Fatal(err)
			}
			kill(t, tr, cmd, tls)
			if tls == "tcp" {
				select {
				case err := <-failed:
					t.Logf("reported: %v", err)
				case <-time.After(5 * time.Second):
					t.Fatal("the peer's death was not reported within 5 s")
				}
			}
			exported(t, "after the reader died", tr, 0)
		})
	}
}

// A pull longer than a piece goes as several pulls, all under way at once,
// each counted by Moved when it ends; one piece past the region's end
// fails the whole read, after every piece has ended.
func TestRegionPieces(t *testing.T) {
	defer func(p int) { pullPiece = p }(pullPiece)
	pullPiece = 4 << 10
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+"), func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			ts, _ := group(t, 2)
			src := payload(0, 1, 1<<20+5)
			tok, ok := ts[0].ExportRegion(1, src)
			if !ok {
				t.Fatal("ExportRegion refused")
			}
			for _, tc := range []struct {
				name   string
				off, n int
				fails  bool
			}{{"whole", 0, len(src), false}, {"offset", 1000, len(src) - 1000, false}, {"past the end", 1000, len(src) - 999, true}} {
				before := ts[1].Moved()
				dst := make([]byte, tc.n)
				err := ts[1].ReadRegion(0, tok, tc.off, dst)
				if tc.fails {
					if err == nil {
						t.Fatalf("%s: the read succeeded", tc.name)
					}
				} else {
					if err != nil {
						t.Fatalf("%s: %v", tc.name, err)
					}
					if !bytes.Equal(dst, src[tc.off:tc.off+tc.n]) {
						t.Fatalf("%s: other bytes read", tc.name)
					}
				}
				if got, want := ts[1].Moved()-before, uint64((tc.n+pullPiece-1)/pullPiece); got != want {
					t.Errorf("%s: %d pieces ended, want %d", tc.name, got, want)
				}
			}
		})
	}
}

//go:build cgo && mpigo_ofi

package ofi

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

// tokenRTS is the RTS the engine sends for a message exported as tok.
func tokenRTS(from, to int, tok, sendID uint64, n int) wire.Frame {
	return wire.Frame{Header: wire.Header{Kind: wire.RTS, Flags: wire.FlagToken, Context: 7, Tag: int32(sendID), Size: int64(n), SendID: sendID, Token: tok}, From: from, To: to}
}

// rtsOf waits until g has a frame with SendID sendID and returns it.
func rtsOf(t *testing.T, g *got, sendID uint64) wire.Frame {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Microsecond) {
		g.mu.Lock()
		for _, f := range g.frames {
			if f.SendID == sendID {
				g.mu.Unlock()
				return f
			}
		}
		g.mu.Unlock()
	}
	t.Fatalf("the RTS of send %d never arrived", sendID)
	return wire.Frame{}
}

// settles waits until tr has no registration of the region road left
// and knows no region of a peer, and fails t if that does not come.
func settles(t *testing.T, name string, tr *Transport) {
	t.Helper()
	var live, rem int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if _, live, rem = tr.regionStats(); live == 0 && rem == 0 {
			return
		}
	}
	t.Errorf("%s: %d registrations of regions left, %d regions of peers known", name, live, rem)
}

// A message exported by one rank is read by the other straight into its
// buffer (the region road: the reader counts a read by fi_read), arrives
// intact, whole or truncated, and the exporter's registration ends once
// the reader is done.
func TestRegionRoad(t *testing.T) {
	cases := []struct {
		name      string
		n, off, k int // the region's size; the read: offset and length
	}{
		{"one byte", 1, 0, 1},
		{"100 KiB", 100 << 10, 0, 100 << 10},
		{"4 MiB and 3", 4<<20 + 3, 0, 4<<20 + 3},
		{"truncated", 4 << 20, 0, 1<<20 + 5},
		{"at an offset", 1 << 20, 4099, 300 << 10},
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			need(t)
			ts, gs := group(t, 2, s.prov, s.noRMA, s.localMR)
			if !ts[0].RMA() {
				if ts[0].Exports(1) {
					t.Error("Exports is true without remote reads")
				}
				if _, ok := ts[0].ExportRegion(1, make([]byte, 10)); ok {
					t.Error("ExportRegion succeeded without remote reads")
				}
				return
			}
			if !ts[0].Exports(1) || !ts[1].Exports(0) {
				t.Fatal("Exports is false with remote reads")
			}
			for i, c := range cases {
				buf := payload(0, i, c.n)
				tok, ok := ts[0].ExportRegion(1, buf)
				if !ok {
					t.Fatalf("%s: ExportRegion failed", c.name)
				}
				if err := ts[0].Send(tokenRTS(0, 1, tok, uint64(100+i), c.n)); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				f := rtsOf(t, gs[1], uint64(100+i))
				if f.Kind != wire.RTS || f.Flags&wire.FlagToken == 0 || f.Token != tok || f.Size != int64(c.n) || len(f.Payload) != 0 {
					t.Fatalf("%s: the RTS arrived as %+v", c.name, f.Header)
				}
				before, _, _ := ts[1].regionStats()
				dst := make([]byte, c.k)
				if err := ts[1].ReadRegion(0, f.Token, c.off, dst); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if !bytes.Equal(dst, buf[c.off:c.off+c.k]) {
					t.Fatalf("%s: the bytes read differ from the region's", c.name)
				}
				if after, _, _ := ts[1].regionStats(); after != before+1 {
					t.Fatalf("%s: %d reads by fi_read for one ReadRegion", c.name, after-before)
				}
				settles(t, c.name+", exporter", ts[0])
				settles(t, c.name+", reader", ts[1])
			}
			if _, fails := gs[0].count(); fails > 0 {
				t.Errorf("%d failures", fails)
			}
		})
	}
}

// A window of regions read with StartRegion: every read is under way at
// once (the reader's progress is held off until all have started), each
// done is told once, with no lock of the transport held (it takes one),
// the bytes arrive whole, truncated or from an offset, and every
// registration ends.
func TestStartRegion(t *testing.T) {
	cases := []struct {
		name      string
		n, off, k int // the region's size; the read: offset and length
	}{
		{"one byte", 1, 0, 1},
		{"4 MiB", 4 << 20, 0, 4 << 20},
		{"4 MiB and 3", 4<<20 + 3, 0, 4<<20 + 3},
		{"truncated", 4 << 20, 0, 1<<20 + 5},
		{"at an offset", 1 << 20, 4099, 300 << 10},
		{"2 MiB", 2 << 20, 0, 2 << 20},
	}
	for _, s := range setups {
		if s.noRMA {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			need(t)
			ts, gs := group(t, 2, s.prov, s.noRMA, s.localMR)
			bufs := make([][]byte, len(cases))
			for i, c := range cases {
				bufs[i] = payload(0, i, c.n)
				tok, ok := ts[0].ExportRegion(1, bufs[i])
				if !ok {
					t.Fatalf("%s: ExportRegion failed", c.name)
				}
				if err := ts[0].Send(tokenRTS(0, 1, tok, uint64(200+i), c.n)); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
			fs := make([]wire.Frame, len(cases))
			for i := range cases {
				fs[i] = rtsOf(t, gs[1], uint64(200+i))
			}
			dsts := make([][]byte, len(cases))
			told := make([]int, len(cases))
			ends := make(chan int, 2*len(cases))
			errs := make([]error, len(cases))
			var mu sync.Mutex
			// Held, the delivery lock keeps the progress goroutine and
			// polls from ending any read before all have started.
			ts[1].dmu.Lock()
			for i, c := range cases {
				dsts[i] = make([]byte, c.k)
				err := ts[1].StartRegion(0, fs[i].Token, c.off, dsts[i], func(err error) {
					ts[1].regionStats() // takes the transport's lock
					mu.Lock()
					told[i]++
					errs[i] = err
					mu.Unlock()
					ends <- i
				})
				if err != nil {
					ts[1].dmu.Unlock()
					t.Fatalf("%s: %v", c.name, err)
				}
			}
			ts[1].wmu.Lock()
			under := ts[1].started
			ts[1].wmu.Unlock()
			ts[1].dmu.Unlock()
			if under != len(cases) {
				t.Errorf("%d reads started, %d under way together", len(cases), under)
			}
			for range cases {
				select {
				case <-ends:
				case <-time.After(20 * time.Second):
					t.Fatal("the reads did not all end within 20 s")
				}
			}
			time.Sleep(10 * time.Millisecond) // a second report would come now
			mu.Lock()
			defer mu.Unlock()
			for i, c := range cases {
				if told[i] != 1 || errs[i] != nil {
					t.Errorf("%s: done told %d times, last with %v", c.name, told[i], errs[i])
					continue
				}
				if !bytes.Equal(dsts[i], bufs[i][c.off:c.off+c.k]) {
					t.Errorf("%s: the bytes read differ from the region's", c.name)
				}
			}
			if reads, _, _ := ts[1].regionStats(); reads != len(cases) {
				t.Errorf("%d regions, %d read by fi_read", len(cases), reads)
			}
			settles(t, "exporter", ts[0])
			settles(t, "reader", ts[1])
			if _, fails := gs[0].count(); fails > 0 {
				t.Errorf("%d failures", fails)
			}
		})
	}
}

// StartRegion refuses what ReadRegion refuses, and then tells no done: a
// token never exported, a read beyond the region's end (which still
// releases the region). A read of nothing is over at once.
func TestStartRegionRefused(t *testing.T) {
	need(t)
	ts, gs := group(t, 2, "tcp;ofi_rxm", false, false)
	if !ts[0].RMA() {
		t.Skip("no remote reads")
	}
	told := 0
	done := func(error) { told++ }
	if err := ts[1].StartRegion(0, 12345, 0, make([]byte, 10), done); err == nil {
		t.Error("a read of a token never exported started")
	}
	for i, k := range []int{2 << 20, 0} {
		tok, ok := ts[0].ExportRegion(1, payload(0, i, 1<<20))
		if !ok {
			t.Fatal("ExportRegion failed")
		}
		if err := ts[0].Send(tokenRTS(0, 1, tok, uint64(1+i), 1<<20)); err != nil {
			t.Fatal(err)
		}
		f := rtsOf(t, gs[1], uint64(1+i))
		err := ts[1].StartRegion(0, f.Token, 0, make([]byte, k), done)
		switch {
		case k > 0 && err == nil:
			t.Error("a read beyond the region's end started")
		case k == 0 && err != nil:
			t.Errorf("a read of nothing: %v", err)
		}
		settles(t, fmt.Sprintf("exporter, read of %d bytes", k), ts[0])
	}
	if told != 1 {
		t.Errorf("done told %d times, want once (the read of nothing)", told)
	}
	if err := ts[1].StartRegion(0, 1, 0, make([]byte, 10), nil); err == nil {
		t.Error("StartRegion without a done function started")
	}
}

// Many regions exported at once, of many sizes, read by several
// goroutines at once, all arrive intact, and all are released.
func TestRegionsInFlight(t *testing.T) {
	for _, s := range setups {
		if s.noRMA {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			need(t)
			ts, gs := group(t, 2, s.prov, s.noRMA, s.localMR)
			const n = 48
			bufs := make([][]byte, n)
			for i := range bufs {
				bufs[i] = payload(0, i, 1+(i*37<<10)%(3<<20))
				tok, ok := ts[0].ExportRegion(1, bufs[i])
				if !ok {
					t.Fatalf("ExportRegion %d failed", i)
				}
				if err := ts[0].Send(tokenRTS(0, 1, tok, uint64(1+i), len(bufs[i]))); err != nil {
					t.Fatal(err)
				}
			}
			if _, live, _ := ts[0].regionStats(); live != n {
				t.Errorf("%d regions exported, %d registered", n, live)
			}
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < n; i += 6 {
						f := rtsOf(t, gs[1], uint64(1+i))
						dst := make([]byte, f.Size)
						if err := ts[1].ReadRegion(0, f.Token, 0, dst); err != nil {
							t.Errorf("region %d: %v", i, err)
							return
						}
						if !bytes.Equal(dst, bufs[i]) {
							t.Errorf("region %d: the bytes read differ", i)
						}
					}
				}()
			}
			wg.Wait()
			if reads, _, _ := ts[1].regionStats(); reads != n {
				t.Errorf("%d regions, %d read by fi_read", n, reads)
			}
			settles(t, "exporter", ts[0])
			settles(t, "reader", ts[1])
		})
	}
}

// A region that is not read is released all the same: when the reader
// answers its RTS with a CTS (its engine streams the message instead),
// when its read fails (the engine then falls back to CTS and Data), and
// when the exporter closes.
func TestRegionNotRead(t *testing.T) {
	need(t)
	ts, gs := group(t, 3, "tcp;ofi_rxm", false, false)
	if !ts[0].RMA() {
		t.Skip("no remote reads")
	}
	export := func(to int, sendID uint64) uint64 {
		t.Helper()
		tok, ok := ts[0].ExportRegion(to, payload(0, int(sendID), 1<<20))
		if !ok {
			t.Fatal("ExportRegion failed")
		}
		if err := ts[0].Send(tokenRTS(0, to, tok, sendID, 1<<20)); err != nil {
			t.Fatal(err)
		}
		return tok
	}

	// Answered by a CTS.
	export(1, 1)
	f := rtsOf(t, gs[1], 1)
	if err := ts[1].Send(wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: f.Context, SendID: f.SendID, RecvID: 9, Size: f.Size}, From: 1, To: 0}); err != nil {
		t.Fatal(err)
	}
	settles(t, "exporter, after a CTS", ts[0])
	settles(t, "reader, after a CTS", ts[1])

	// A read that fails: beyond the region's end, then of a token
	// already done with.
	export(1, 2)
	f = rtsOf(t, gs[1], 2)
	if err := ts[1].ReadRegion(0, f.Token, 1, make([]byte, 1<<20)); err == nil {
		t.Error("a read beyond the region's end succeeded")
	}
	settles(t, "exporter, after a failed read", ts[0])
	if err := ts[1].ReadRegion(0, f.Token, 0, make([]byte, 10)); err == nil {
		t.Error("a second read of a token succeeded")
	}
	if err := ts[1].ReadRegion(0, 12345, 0, make([]byte, 10)); err == nil {
		t.Error("a read of a token never exported succeeded")
	}
	if reads, _, _ := ts[1].regionStats(); reads != 0 {
		t.Errorf("%d reads by fi_read counted, none succeeded", reads)
	}

	// Never read nor answered, to two peers: the exporter closes.
	export(1, 3)
	export(2, 4)
	rtsOf(t, gs[1], 3)
	rtsOf(t, gs[2], 4)
	if _, live, _ := ts[0].regionStats(); live != 2 {
		t.Errorf("2 regions exported and not read, %d registered", live)
	}
	if err := ts[0].Close(); err != nil {
		t.Fatal(err)
	}
	if _, live, _ := ts[0].regionStats(); live != 0 {
		t.Errorf("%d registrations of regions left after Close", live)
	}
	if _, ok := ts[0].ExportRegion(1, make([]byte, 10)); ok {
		t.Error("ExportRegion succeeded after Close")
	}
	for _, g := range gs[:1] {
		if _, fails := g.count(); fails > 0 {
			t.Errorf("%d failures", fails)
		}
	}
}

// Where local buffers must be registered (FI_MR_LOCAL), a read's
// destination is registered for the read and no longer.
func TestRegionReadRegistersDestination(t *testing.T) {
	need(t)
	ts, gs := group(t, 2, "tcp;ofi_rxm", false, true)
	if !ts[0].RMA() {
		t.Skip("no remote reads")
	}
	buf := payload(0, 1, 2<<20)
	tok, ok := ts[0].ExportRegion(1, buf)
	if !ok {
		t.Fatal("ExportRegion failed")
	}
	if err := ts[0].Send(tokenRTS(0, 1, tok, 1, len(buf))); err != nil {
		t.Fatal(err)
	}
	f := rtsOf(t, gs[1], 1)
	before := ts[1].localRegs()
	dst := make([]byte, len(buf))
	if err := ts[1].ReadRegion(0, f.Token, 0, dst); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, buf) {
		t.Fatal("the bytes read differ")
	}
	if after := ts[1].localRegs(); after != before+1 {
		t.Errorf("a read made %d local registrations, want 1", after-before)
	}
	settles(t, "reader", ts[1])
	settles(t, "exporter", ts[0])
}

// The helper process of TestRegionPeerKilled: rank 1 of 2 over tcp. It
// prints its address and reads rank 0's; then, as "export", exports a
// 64 MiB region to rank 0, sends its RTS, stops progressing and says
// "stopped"; as "reader", waits for rank 0's RTS, says "got" and reads
// nothing.
func TestRegionHelper(t *testing.T) {
	mode := os.Getenv("MPIGO_TEST_OFI_REGION")
	if mode == "" {
		t.Skip("helper process only")
	}
	var peer []byte
	g := &got{}
	tr, err := New(Config{Rank: 1, Size: 2, Handler: g.handler, Addrs: func(int) ([]byte, error) { return peer, nil },
		ShmName: os.Getenv("MPIGO_TEST_OFI_SHMNAME")})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println(hex.EncodeToString(tr.Address()))
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	peer, _ = hex.DecodeString(strings.TrimSpace(line))
	if mode == "export" {
		big := make([]byte, 64<<20)
		tok, ok := tr.ExportRegion(0, big)
		if !ok {
			fmt.Println("ERR export")
			os.Exit(1)
		}
		if err := tr.Send(tokenRTS(1, 0, tok, 1, len(big))); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		time.Sleep(50 * time.Millisecond) // the RTS leaves
		tr.wmu.Lock()                     // nothing progresses the endpoint any more
		fmt.Println("stopped")
		select {}
	}
	for {
		if n, _ := g.count(); n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Println("got")
	select {}
}

// A peer killed while this rank reads its region (which it stopped
// serving) ends the read promptly with an error, and leaves nothing
// registered; a peer killed while it holds this rank's region unread
// is noticed (keep-alives) and the region released.
func TestRegionPeerKilled(t *testing.T) {
	need(t)
	for _, mode := range []string{"export", "export, started", "reader"} {
		t.Run(mode, func(t *testing.T) {
			started := strings.HasSuffix(mode, ", started") // the read by StartRegion
			mode := strings.TrimSuffix(mode, ", started")
			cmd, in, lines, addr := startHelper(t, "TestRegionHelper", "MPIGO_TEST_OFI_REGION="+mode, "FI_PROVIDER=tcp;ofi_rxm")
			g := &got{}
			failed := make(chan error, 4)
			tr, err := New(Config{Rank: 0, Size: 2, Handler: g.handler, Provider: "tcp;ofi_rxm", LocalMR: true,
				Addrs:       func(int) ([]byte, error) { return addr, nil },
				OnPeerError: func(peer int, err error) { failed <- fmt.Errorf("peer %d: %w", peer, err) }})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if !tr.RMA() {
				t.Skip("no remote reads")
			}
			fmt.Fprintln(in, hex.EncodeToString(tr.Address()))
			read := make(chan error, 1)
			if mode == "export" {
				if line, err := lines.ReadString('\n'); err != nil || strings.TrimSpace(line) != "stopped" {
					t.Fatalf("helper said %q (%v), want \"stopped\"", line, err)
				}
				f := rtsOf(t, g, 1)
				if started {
					if err := tr.StartRegion(1, f.Token, 0, make([]byte, f.Size), func(err error) { read <- err }); err != nil {
						t.Fatal(err)
					}
				} else {
					go func() { read <- tr.ReadRegion(1, f.Token, 0, make([]byte, f.Size)) }()
				}
				// Alive but stopped: the read waits, and the peer is not
				// taken for gone.
				time.Sleep(3 * stallProbe)
				select {
				case err := <-read:
					t.Fatalf("a read from a stopped peer ended: %v", err)
				case err := <-failed:
					t.Fatalf("a stopped peer was reported failed: %v", err)
				default:
				}
				if _, live, _ := tr.regionStats(); live != 1 {
					t.Errorf("a read under way with FI_MR_LOCAL: %d registrations, want 1", live)
				}
			} else {
				big := payload(0, 0, 64<<20)
				tok, ok := tr.ExportRegion(1, big)
				if !ok {
					t.Fatal("ExportRegion failed")
				}
				if err := tr.Send(tokenRTS(0, 1, tok, 1, len(big))); err != nil {
					t.Fatal(err)
				}
				if line, err := lines.ReadString('\n'); err != nil || strings.TrimSpace(line) != "got" {
					t.Fatalf("helper said %q (%v), want \"got\"", line, err)
				}
				time.Sleep(3 * keepAlive)
				if _, live, _ := tr.regionStats(); live != 1 {
					t.Fatalf("a region exported to a live peer: %d registrations, want 1", live)
				}
			}
			killed := killPeer(t, cmd, failed)
			if mode == "export" {
				select {
				case err := <-read:
					if err == nil {
						t.Error("the read from the killed peer succeeded")
					}
					t.Logf("read returned after %v: %v", time.Since(killed), err)
				case <-time.After(5 * time.Second):
					t.Fatal("the read from the killed peer did not return within 5 s")
				}
			}
			settles(t, mode, tr)
			cmd.Wait()
		})
	}
}

// A payload larger than a piece is read in pieces, each counted by Moved,
// whether the transport reads it for a frame (kRTS) or the engine reads a
// region. A piece the provider has no room for (refused here once at every
// tenth piece, the first included) is posted with the rest at a later
// step.
func TestReadsInPieces(t *testing.T) {
	defer func(m int) { maxRead, readRefused = m, nil }(maxRead)
	maxRead = 4 << 10
	const n = 1<<20 + 3
	pieces := uint64((n + maxRead - 1) / maxRead)
	var mu sync.Mutex
	refused := map[int]bool{}
	readRefused = func(off int) bool {
		mu.Lock()
		defer mu.Unlock()
		if off/maxRead%10 != 0 || refused[off] {
			return false
		}
		refused[off] = true
		return true
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			need(t)
			ts, gs := group(t, 2, s.prov, s.noRMA, s.localMR)
			if !ts[1].RMA() {
				t.Skip("no remote reads with this setup")
			}
			before := ts[1].Moved()
			buf := payload(0, 1, n)
			f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: 1, Size: n}, From: 0, To: 1, Payload: buf}
			if err := ts[0].Send(f); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if k, _ := gs[1].count(); k >= 1 {
					break
				}
			}
			gs[1].mu.Lock()
			if len(gs[1].frames) != 1 || !bytes.Equal(gs[1].frames[0].Payload, buf) {
				gs[1].mu.Unlock()
				t.Fatalf("the frame of %d bytes did not arrive whole (%d frames, failures %v)", n, len(gs[1].frames), gs[1].fails)
			}
			gs[1].mu.Unlock()
			if got := ts[1].Moved() - before; got != pieces {
				t.Errorf("a frame read in %d pieces counted %d moved", pieces, got)
			}
			mu.Lock()
			if len(refused) != int(pieces+9)/10 {
				t.Errorf("%d pieces refused, want %d", len(refused), (pieces+9)/10)
			}
			clear(refused)
			mu.Unlock()

			tok, ok := ts[0].ExportRegion(1, buf)
			if !ok {
				t.Fatal("ExportRegion failed")
			}
			if err := ts[0].Send(tokenRTS(0, 1, tok, 7, n)); err != nil {
				t.Fatal(err)
			}
			rf := rtsOf(t, gs[1], 7)
			before = ts[1].Moved()
			dst := make([]byte, n)
			if err := ts[1].ReadRegion(0, rf.Token, 0, dst); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst, buf) {
				t.Fatal("the region read in pieces differs from the region")
			}
			if got := ts[1].Moved() - before; got != pieces {
				t.Errorf("a region read in %d pieces counted %d moved", pieces, got)
			}
			settles(t, "exporter", ts[0])
			settles(t, "reader", ts[1])
		})
	}
}

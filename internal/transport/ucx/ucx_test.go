//go:build cgo && mpigo_ucx

package ucx

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric"
	"github.com/mpigo/mpi/internal/wire"
)

// tlsSets are the UCX transports of this machine the tests run over: its
// tcp, and shared memory with cross-memory attach.
var tlsSets = []string{"tcp", "posix,cma,self"}

type got struct {
	mu     sync.Mutex
	frames []wire.Frame
	fails  []error
}

func (g *got) handler(f wire.Frame) {
	f.Payload = bytes.Clone(f.Payload)
	g.mu.Lock()
	g.frames = append(g.frames, f)
	g.mu.Unlock()
}

func (g *got) count() (int, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.frames), len(g.fails)
}

// await waits up to 20 s for want frames, and fails t unless exactly
// those came, without failures.
func (g *got) await(t *testing.T, want int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if n, _ := g.count(); n >= want {
			break
		}
	}
	if n, fails := g.count(); n != want || fails > 0 {
		g.mu.Lock()
		defer g.mu.Unlock()
		t.Fatalf("got %d frames of %d, failures %v", n, want, g.fails)
	}
}

// need skips t when UCX opens no context here (no transports at all),
// unless MPIGO_REQUIRE_INTEGRATION=1 asks that every integration test
// run.
func need(t *testing.T) {
	t.Helper()
	if _, err := Available(); err != nil {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("UCX is unusable here: %v", err)
		}
		t.Skipf("UCX is unusable here: %v", err)
	}
}

// group makes n endpoints in this process that know each other's
// addresses.
func group(t *testing.T, n int) ([]*Transport, []*got) {
	ts := make([]*Transport, n)
	gs := make([]*got, n)
	for r := range ts {
		g := &got{}
		gs[r] = g
		tr, err := New(Config{Rank: r, Size: n, Handler: g.handler,
			Addrs: func(peer int) ([]byte, error) { return ts[peer].Address(), nil },
			OnPeerError: func(peer int, err error) {
				g.mu.Lock()
				g.fails = append(g.fails, fmt.Errorf("peer %d: %w", peer, err))
				g.mu.Unlock()
			}})
		if err != nil {
			t.Fatal(err)
		}
		ts[r] = tr
	}
	t.Cleanup(func() {
		for _, tr := range ts {
			if err := tr.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	return ts, gs
}

func payload(from, i, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(from*31 + i*7 + k)
	}
	return b
}

// Frames of every size (eager, copied or in place, and UCX's rendezvous)
// from two senders arrive whole, and in order per sender.
func TestFramesInOrder(t *testing.T) {
	sizes := []int{0, 1, 100, copyLimit, copyLimit + 1, 1 << 20, 4<<20 + 3}
	for _, tls := range tlsSets {
		t.Run(strings.ReplaceAll(tls, ",", "+"), func(t *testing.T) {
			t.Setenv("UCX_TLS", tls)
			need(t)
			ts, gs := group(t, 3)
			var wg sync.WaitGroup
			for _, from := range []int{0, 2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 2*len(sizes); i++ {
						n := sizes[(i+from)%len(sizes)]
						f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i), Src: int32(from), Size: int64(n)}, From: from, To: 1, Payload: payload(from, i, n)}
						if err := ts[from].Send(f); err != nil {
							t.Errorf("send %d from %d: %v", i, from, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			gs[1].await(t, 2*2*len(sizes))
			gs[1].mu.Lock()
			defer gs[1].mu.Unlock()
			next := map[int]int{}
			for _, f := range gs[1].frames {
				i := next[f.From]
				next[f.From]++
				n := sizes[(i+f.From)%len(sizes)]
				if int(f.Tag) != i || int(f.Src) != f.From || f.To != 1 || !bytes.Equal(f.Payload, payload(f.From, i, n)) {
					t.Fatalf("frame %d from %d: tag %d, %d bytes (want %d), payload right: %v", i, f.From, f.Tag, len(f.Payload), n, bytes.Equal(f.Payload, payload(f.From, i, n)))
				}
			}
		})
	}
}

// A large send completes while the rank's handler is stuck (as it is when
// the engine's reply queue is full and waits for that very send): the
// sender progresses the worker itself.
func TestSendWhileHandlerBlocked(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	release := make(chan struct{})
	blocked := make(chan struct{}, 1)
	var ts [2]*Transport
	for r := range ts {
		h := func(f wire.Frame) {}
		if r == 0 {
			h = func(f wire.Frame) {
				select {
				case blocked <- struct{}{}:
				default:
				}
				<-release
			}
		}
		tr, err := New(Config{Rank: r, Size: 2, Handler: h, Addrs: func(peer int) ([]byte, error) { return ts[peer].Address(), nil }})
		if err != nil {
			t.Fatal(err)
		}
		ts[r] = tr
	}
	defer func() {
		for _, tr := range ts {
			tr.Close()
		}
	}()
	defer close(release)
	if err := ts[1].Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 1}, From: 1, To: 0, Payload: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("the frame never reached rank 0's handler")
	}
	sent := make(chan error, 1)
	go func() {
		sent <- ts[0].Send(wire.Frame{Header: wire.Header{Kind: wire.Data, Size: 16 << 20}, From: 0, To: 1, Payload: make([]byte, 16<<20)})
	}()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a 16 MiB send did not complete while the sender's handler was stuck")
	}
}

// A peer that cannot be reached is an error naming it, not a hang.
func TestBadAddress(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	tr, err := New(Config{Rank: 0, Size: 2, Handler: func(wire.Frame) {},
		Addrs: func(peer int) ([]byte, error) { return nil, fmt.Errorf("no such key") }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	err = tr.Send(wire.Frame{To: 1})
	if err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("send to a rank without an address: %v", err)
	}
	if err := tr.Send(wire.Frame{To: 5}); err == nil {
		t.Fatal("send to rank 5 of 2 succeeded")
	}
}

// The helper process of TestPeerKilledMidRendezvous: rank 1 of 2 over
// UCX's tcp. It prints its address, reads rank 0's, says hello, then
// either stops itself (so rank 0's large send to it stays under way) or
// sends large frames until it is killed.
func TestHelperPeer(t *testing.T) {
	mode := os.Getenv("MPIGO_TEST_UCX_HELPER")
	if mode == "" {
		t.Skip("helper process only")
	}
	var peer []byte
	// NoGather: a helper that stops progressing right after its sends
	// needs them out when Send returns, not gathered for a next step.
	tr, err := New(Config{Rank: 1, Size: 2, Handler: func(wire.Frame) {}, NoGather: true,
		Addrs: func(int) ([]byte, error) { return peer, nil }})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println(hex.EncodeToString(tr.Address()))
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	peer, _ = hex.DecodeString(strings.TrimSpace(line))
	if err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 5}, From: 1, To: 0, Payload: []byte("hello")}); err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	if mode == "export" {
		// A region for rank 0 to pull, whose token goes in a frame; then
		// nothing progresses the worker, so the pull is never served.
		tok, ok := tr.ExportRegion(0, make([]byte, 64<<20))
		if !ok {
			fmt.Println("ERR export refused")
			os.Exit(1)
		}
		if err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 8}, From: 1, To: 0, Payload: binary.LittleEndian.AppendUint64(nil, tok)}); err != nil {
			os.Exit(1)
		}
		// Stopped at once: the frame is out (the send completed), and
		// the pull it leads to comes a round trip later, to a worker
		// nobody progresses.
		mode = "stop"
	}
	if mode == "expose" {
		// Memory for rank 0 to read, whose key goes in a frame; then
		// nothing progresses the worker, so the read is never served.
		e, err := tr.ExposeMemory(make([]byte, 64<<20))
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		if err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: int64(len(e.Key()))}, From: 1, To: 0, Payload: e.Key()}); err != nil {
			os.Exit(1)
		}
		mode = "stop"
	}
	if mode == "idle" {
		select {}
	}
	if mode == "stop" {
		tr.wmu.Lock() // nothing progresses the worker any more
		select {}
	}
	big := make([]byte, 64<<20)
	for {
		if err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Data, Size: int64(len(big))}, From: 1, To: 0, Payload: big}); err != nil {
			os.Exit(1)
		}
	}
}

// A peer killed while a large message goes to it, or comes from it,
// fails the transfer promptly with an error naming it: over UCX's tcp the
// send returns an error, and OnPeerError is told; over its shared memory,
// which reports nothing, the send returns once the job tells the
// transport (LosePeer), and Close does not wait for what UCX abandoned.
func TestPeerKilledMidRendezvous(t *testing.T) {
	for _, tls := range tlsSets {
		for _, mode := range []string{"stop", "send"} {
			t.Run(strings.ReplaceAll(tls, ",", "+")+"/"+mode, func(t *testing.T) {
				t.Setenv("UCX_TLS", tls)
				need(t)
				tr, _, failed, cmd := helper(t, mode, 1)
				sent := make(chan error, 1)
				if mode == "stop" {
					go func() {
						sent <- tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Data, Size: 64 << 20}, From: 0, To: 1, Payload: make([]byte, 64<<20)})
					}()
				}
				time.Sleep(200 * time.Millisecond)
				if mode == "stop" {
					select {
					case err := <-sent:
						t.Fatalf("a 64 MiB send to a stopped peer ended: %v", err)
					default:
					}
				}
				killed := kill(t, tr, cmd, tls)
				if tls == "tcp" {
					select {
					case err := <-failed:
						if !strings.Contains(err.Error(), "peer 1") {
							t.Errorf("failure reported: %v", err)
						}
						t.Logf("reported after %v: %v", time.Since(killed), err)
					case <-time.After(5 * time.Second):
						t.Fatal("the peer's death was not reported within 5 s")
					}
				}
				if mode == "stop" {
					select {
					case err := <-sent:
						if err == nil || !strings.Contains(err.Error(), "rank 1") {
							t.Errorf("send to the killed peer returned %v", err)
						}
						t.Logf("send ended %v after the kill: %v", time.Since(killed), err)
					case <-time.After(5 * time.Second):
						t.Fatal("the send to the killed peer did not return within 5 s")
					}
				}
				err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 2}, From: 0, To: 1, Payload: []byte("hi")})
				if !errors.Is(err, transport.ErrPeerLost) {
					t.Errorf("a send after the loss: %v, want transport.ErrPeerLost", err)
				}
				if mode == "stop" {
					closeAbandoned(t, tr, tls)
				} else if err := tr.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				cmd.Wait()
			})
		}
	}
}

// The cost of one step of an idle endpoint (progress, probe, checks):
// what a waiting rank pays per poll, cgo calls included.
func BenchmarkIdleStep(b *testing.B) {
	b.Setenv("UCX_TLS", "tcp")
	tr, err := New(Config{Rank: 0, Size: 1, Spin: -1, Handler: func(wire.Frame) {}, Addrs: func(int) ([]byte, error) { return nil, nil }})
	if err != nil {
		b.Skip(err)
	}
	defer tr.Close()
	for b.Loop() {
		tr.Poll()
	}
}

// Payloads sent apart from their headers (longer than copyLimit) by
// several goroutines of one rank at once each reach the receiver behind
// their own header: the two messages of a frame are posted together,
// and the receiver posts the payloads' receives in its headers' order.
func TestPayloadsApartPairUp(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	ts, gs := group(t, 2)
	const senders, each = 4, 12
	sizeOf := func(g, i int) int { return copyLimit + 1 + (g*each+i)*4099%(300<<10) }
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tag := g*each + i
				n := sizeOf(g, i)
				f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(tag), Size: int64(n)}, From: 0, To: 1, Payload: payload(g, i, n)}
				if err := ts[0].Send(f); err != nil {
					t.Errorf("send %d: %v", tag, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	gs[1].await(t, senders*each)
	gs[1].mu.Lock()
	defer gs[1].mu.Unlock()
	for _, f := range gs[1].frames {
		g, i := int(f.Tag)/each, int(f.Tag)%each
		if n := sizeOf(g, i); !bytes.Equal(f.Payload, payload(g, i, n)) {
			t.Fatalf("frame %d: %d bytes (want %d), payload not its own", f.Tag, len(f.Payload), n)
		}
	}
}

// The receive buffers kept between frames: a short frame takes the
// smallest that holds it (not the large one the next payload needs), a
// full list keeps the larger buffers, and none over keepMax is kept.
func TestReceiveBuffersKept(t *testing.T) {
	tr := &Transport{}
	defer tr.dropKept()
	big := tr.getBuf(4 << 20)
	small := tr.getBuf(100)
	if big.cap != 4<<20 || small.cap != 64<<10 {
		t.Fatalf("new buffers of %d and %d bytes, want %d and %d", big.cap, small.cap, 4<<20, 64<<10)
	}
	tr.putBuf(big)
	tr.putBuf(small)
	if b := tr.getBuf(64); b.cap != 64<<10 {
		t.Errorf("a 64-byte frame took a buffer of %d bytes, want the 64 KiB one", b.cap)
		tr.putBuf(b)
	} else {
		tr.putBuf(b)
	}
	huge := tr.getBuf(keepMax + 1)
	tr.putBuf(huge)
	for _, b := range tr.free {
		if b.cap > keepMax {
			t.Errorf("a buffer of %d bytes kept, more than keepMax", b.cap)
		}
	}
	for range 8 {
		tr.putBuf(tr.getBuf(1 << 20)) // each takes the 4 MiB one back, or a new 1 MiB
	}
	var smalls []cbuf
	for range 8 {
		smalls = append(smalls, newBuf(64<<10))
	}
	for _, b := range smalls {
		tr.putBuf(b)
	}
	if len(tr.free) > 8 {
		t.Fatalf("%d buffers kept, want at most 8", len(tr.free))
	}
	found := false
	for _, b := range tr.free {
		found = found || b.cap == 4<<20
	}
	if !found {
		t.Error("a full list dropped its 4 MiB buffer for small ones")
	}
}

// A poll that finds nothing allocates nothing: a waiting rank polls the
// worker millions of times a second.
func TestIdlePollAllocs(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	ts, _ := group(t, 2)
	if got := testing.AllocsPerRun(1000, func() { ts[0].Poll() }); got != 0 {
		t.Errorf("%v allocations per idle Poll, want 0", got)
	}
}

// A send of a short frame that UCX completes at once allocates nothing.
func TestShortSendAllocs(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	ts, gs := group(t, 2)
	f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 8}, From: 0, To: 1, Payload: make([]byte, 8)}
	if err := ts[0].Send(f); err != nil { // the endpoint, made once
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(200, func() {
		if err := ts[0].Send(f); err != nil {
			t.Error(err)
		}
	})
	gs[1].await(t, 202)
	if got != 0 {
		t.Errorf("%v allocations per short Send, want 0", got)
	}
}

// Each Poll (a wait's) marks the progress goroutine's loop, which then
// naps instead of stepping beside the waiter (fabric.Loop).
func TestPollMarksTheLoop(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	ts, _ := group(t, 2)
	for i := 0; i < 3; i++ {
		ts[0].loop.EndWait() // clears the mark, as a nap's end does
		naps := ts[0].loop.Naps()
		ts[0].Poll()
		// The progress goroutine may have taken the mark off already, to
		// nap: then it counted the nap first.
		if !ts[0].loop.Waiting() && ts[0].loop.Naps() == naps {
			t.Fatalf("poll %d left the loop unmarked", i)
		}
	}
}

// A burst of small frames sent while the sender's worker is not
// progressed goes gathered (fewer messages than frames), and arrives
// whole and in order, with larger frames among them that go alone; with
// NoGather, every frame goes alone.
func TestSmallFramesGathered(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	// Gathered at the limit, alone just past it, and a payload sent apart.
	sizes := []int{0, 8, 100, fabric.GatherFrame - wire.HeaderSize, fabric.GatherFrame - wire.HeaderSize + 1, 3000, copyLimit + 1, 8, 1}
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGather=%v", off), func(t *testing.T) {
			ts := make([]*Transport, 2)
			g := &got{}
			for r := range ts {
				tr, err := New(Config{Rank: r, Size: 2, NoGather: off, Handler: g.handler,
					Addrs: func(peer int) ([]byte, error) { return ts[peer].Address(), nil },
					OnPeerError: func(peer int, err error) {
						if r == 1 { // rank 0 learns at the end that rank 1 closed
							g.mu.Lock()
							g.fails = append(g.fails, err)
							g.mu.Unlock()
						}
					}})
				if err != nil {
					t.Fatal(err)
				}
				ts[r] = tr
				defer tr.Close()
			}
			const n = 400
			for i := range n {
				// The mark keeps the sender's progress goroutine napping,
				// as while a wait polls: nothing progresses its worker
				// during the burst.
				ts[0].MarkWait()
				m := sizes[i%len(sizes)]
				f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i), Size: int64(m)}, From: 0, To: 1, Payload: payload(0, i, m)}
				if err := ts[0].Send(f); err != nil {
					t.Fatal(err)
				}
			}
			ts[0].EndWait()
			g.await(t, n)
			for i, f := range g.frames {
				m := sizes[i%len(sizes)]
				if int(f.Tag) != i || !bytes.Equal(f.Payload, payload(0, i, m)) {
					t.Fatalf("frame %d: tag %d, %d bytes (want %d)", i, f.Tag, len(f.Payload), m)
				}
			}
			in := ts[1].gatheredIn.Load()
			t.Logf("%d frames came in %d messages of gathered frames", n, in)
			if off && in != 0 || !off && in == 0 {
				t.Fatalf("%d messages of gathered frames with NoGather %v", in, off)
			}
		})
	}
}

// A flush that finds the frame gathered last older than GatherIdle (the
// program computed after its sends) pauses gathering: frames then go
// alone until the pause ends.
func TestSlowFlushPausesGathering(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	ts, gs := group(t, 2)
	sent := 0
	burst := func(k int) {
		t.Helper()
		for range k {
			ts[0].MarkWait() // nothing progresses the worker meanwhile
			f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(sent), Size: 8}, From: 0, To: 1, Payload: payload(0, sent, 8)}
			if err := ts[0].Send(f); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	burst(1) // the endpoint
	// Frames gathered, then left longer than fabric.GatherIdle before the
	// flush (as if the program computed): the flush is slow. Left 10 ms,
	// they pause gathering for fabric.GatherPauseMax.
	ts[0].wmu.Lock()
	ts[0].gp.Take(1) // as if a frame went alone, if the last did not
	for i := range 2 {
		if !ts[0].gp.Take(1) {
			t.Fatal(i, "a frame after one alone was not gathered")
		}
		f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(sent), Size: 8}, From: 0, To: 1, Payload: payload(0, sent, 8)}
		if _, err := ts[0].gather(f, 1, 8); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	time.Sleep(10 * time.Millisecond)
	flushed := time.Now()
	ts[0].flushGathered()
	ts[0].wmu.Unlock()
	gs[1].await(t, sent)
	if n := ts[0].gp.SlowFlushes.Load(); n != 1 {
		t.Fatalf("%d slow flushes; want 1", n)
	}
	in := ts[1].gatheredIn.Load()
	burst(50)
	during := time.Since(flushed) < fabric.GatherPauseMax
	gs[1].await(t, sent)
	if got := ts[1].gatheredIn.Load(); got != in && during {
		t.Fatalf("%d messages of gathered frames during the pause", got-in)
	} else if !during {
		t.Logf("the burst took longer than the pause (a loaded machine): not checked")
	}
	// The pause over, a burst is gathered again.
	time.Sleep(time.Until(flushed.Add(fabric.GatherPauseMax)))
	burst(50)
	ts[0].EndWait()
	gs[1].await(t, sent)
	if got := ts[1].gatheredIn.Load(); got == in {
		t.Fatal("no gathering after the pause")
	}
	for i, f := range gs[1].frames {
		if int(f.Tag) != i || !bytes.Equal(f.Payload, payload(0, i, 8)) {
			t.Fatalf("frame %d: tag %d", i, f.Tag)
		}
	}
}

// A reply goes alone: a frame sent to a peer after one came from it is
// not gathered, though no wait of the sender's stepped in between (the
// progress goroutine took the peer's frame), so a ping-pong's latency is
// that of frames sent alone.
func TestReplyGoesAlone(t *testing.T) {
	t.Setenv("UCX_TLS", "tcp")
	need(t)
	ts, gs := group(t, 2)
	for i := range 50 {
		for _, from := range []int{0, 1} {
			to := 1 - from
			f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i), Size: 8}, From: from, To: to, Payload: payload(from, i, 8)}
			if err := ts[from].Send(f); err != nil {
				t.Fatal(err)
			}
			gs[to].await(t, i+1)
		}
	}
	if n := ts[0].gp.Frames.Load() + ts[1].gp.Frames.Load(); n != 0 {
		t.Fatalf("%d replies gathered", n)
	}
}

package shm

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/wire"
)

// memRing is a ring in ordinary memory, for the protocol tests.
func memRing(c int) (writer, reader) {
	mem := make([]uint64, ringBytes(c)/8)
	b := unsafeBytes(mem)
	return writer{ring: newRing(b, c)}, reader{ring: newRing(b, c), from: 0, self: 1}
}

func frame(i, n int) (wire.Header, []byte) {
	p := make([]byte, n)
	for k := range p {
		p[k] = byte(i*7 + k)
	}
	return wire.Header{Kind: wire.Eager, Tag: int32(i), Size: int64(n)}, p
}

// TestRingSequential: frames of every size around the capacity, written
// and read in turns, wrap around the data and come back whole and in
// order; the consumer sees a partial frame when the producer has only
// published part of it.
func TestRingSequential(t *testing.T) {
	const c = 4096
	w, rd := memRing(c)
	sizes := []int{0, 1, 7, 8, 100, 1000, c - wire.HeaderSize, c - wire.HeaderSize + 1, c, 3*c + 5, 17}
	var got []wire.Frame
	deliver := func(f wire.Frame) {
		f.Payload = append([]byte(nil), f.Payload...)
		got = append(got, f)
	}
	for round := 0; round < 5; round++ {
		for i, n := range sizes {
			h, p := frame(i, n)
			var hb [wire.HeaderSize]byte
			h.Marshal(hb[:], len(p))
			// The consumer runs whenever the producer waits for room, as
			// the receiving process would.
			wait := func(int) error {
				if _, err := rd.poll(deliver, nil, 1<<20); err != nil {
					return err
				}
				return nil
			}
			if err := w.writeFrame(hb[:], p, funcWaiter{wait}); err != nil {
				t.Fatal(err)
			}
			if _, err := rd.poll(deliver, nil, 1<<20); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("round %d size %d: %d frames delivered, want 1", round, n, len(got))
			}
			if got[0].Tag != int32(i) || !bytes.Equal(got[0].Payload, p) {
				t.Fatalf("round %d size %d: frame %d came back wrong", round, n, got[0].Tag)
			}
			got = got[:0]
		}
	}
	if w.pos != rd.pos {
		t.Errorf("tail %d, head %d", w.pos, rd.pos)
	}
}

// TestRingFull: a producer facing a full ring waits, and refuses when its
// wait says so; nothing is published twice.
func TestRingFull(t *testing.T) {
	const c = 4096
	w, rd := memRing(c)
	_, p := frame(1, c-wire.HeaderSize)
	var hb [wire.HeaderSize]byte
	(&wire.Header{Kind: wire.Eager, Size: int64(len(p))}).Marshal(hb[:], len(p))
	if err := w.writeFrame(hb[:], p, funcWaiter{func(int) error { return errors.New("full") }}); err != nil {
		t.Fatalf("a frame that fits exactly: %v", err)
	}
	stop := errors.New("stop")
	waits := 0
	err := w.writeFrame(hb[:], p[:10], funcWaiter{func(int) error { waits++; return stop }})
	if !errors.Is(err, stop) || waits != 1 {
		t.Fatalf("full ring: err %v after %d waits", err, waits)
	}
	n := 0
	rd.poll(func(f wire.Frame) { n++ }, nil, 1<<20)
	if n != 1 {
		t.Fatalf("%d frames, want 1", n)
	}
}

// TestRingConcurrent: a producer and a consumer goroutine stream frames
// of random sizes through a small ring; every frame arrives intact and in
// order (checked by CRC), with partial frames landing in placed buffers.
func TestRingConcurrent(t *testing.T) {
	const c = 8192
	const frames = 3000
	w, rd := memRing(c)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int, frames)
	for i := range sizes {
		switch rng.IntN(4) {
		case 0:
			sizes[i] = rng.IntN(16)
		case 1:
			sizes[i] = rng.IntN(c)
		case 2:
			sizes[i] = c + rng.IntN(3*c)
		default:
			sizes[i] = rng.IntN(200)
		}
	}
	done := make(chan error, 1)
	go func() {
		var hb [wire.HeaderSize]byte
		for i, n := range sizes {
			_, p := frame(i, n)
			(&wire.Header{Kind: wire.Data, Tag: int32(i), Size: int64(n), Sig: uint64(crc32.ChecksumIEEE(p))}).Marshal(hb[:], n)
			if err := w.writeFrame(hb[:], p, funcWaiter{func(int) error { runtime.Gosched(); return nil }}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	next := 0
	place := func(h *wire.Header, from, n int) []byte {
		if h.Tag%2 == 0 {
			return make([]byte, n)
		}
		return nil
	}
	// Stuck means no frame for 20 s (not a total: under qemu on a loaded
	// machine the whole run can take longer than that).
	deadline := time.Now().Add(20 * time.Second)
	for next < frames {
		before := next
		_, err := rd.poll(func(f wire.Frame) {
			if int(f.Tag) != next || len(f.Payload) != sizes[next] || uint64(crc32.ChecksumIEEE(f.Payload)) != f.Sig {
				t.Errorf("frame %d: tag %d, %d bytes, crc ok %v", next, f.Tag, len(f.Payload), uint64(crc32.ChecksumIEEE(f.Payload)) == f.Sig)
			}
			next++
		}, place, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if next != before {
			deadline = time.Now().Add(20 * time.Second)
		} else if time.Now().After(deadline) {
			t.Fatalf("stuck after %d frames: none for 20 s", next)
		}
		runtime.Gosched()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRingGarbage: a header that is not one fails the poll instead of
// delivering.
func TestRingGarbage(t *testing.T) {
	w, rd := memRing(4096)
	junk := bytes.Repeat([]byte{0xff}, wire.HeaderSize)
	w.writeFrame(junk, nil, funcWaiter{func(int) error { return nil }})
	if _, err := rd.poll(func(wire.Frame) { t.Error("garbage delivered") }, nil, 1<<20); err == nil {
		t.Error("garbage accepted")
	}
}

// endpoints builds n shm transports in one process (one "node"), as the
// runtime does for ranks in separate processes.
func endpoints(t *testing.T, n int, cfg Config, h func(rank int, f wire.Frame)) []*Transport {
	t.Helper()
	dir := t.TempDir()
	job := rand.Uint64()
	locals := make([]int, n)
	for i := range locals {
		locals[i] = i
	}
	ts := make([]*Transport, n)
	for r := range ts {
		c := cfg
		c.Rank, c.Size, c.JobID, c.Locals, c.Dir = r, n, job, locals, dir
		c.Handler = func(f wire.Frame) { h(r, f) }
		tr, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		ts[r] = tr
		t.Cleanup(func() { tr.Close() })
	}
	for _, tr := range ts {
		if err := tr.Attach(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range ts {
		tr.Ready()
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("inboxes left after Ready: %v", left)
	}
	return ts
}

// TestTransportStress: every rank sends checksummed frames of mixed sizes
// (half of them small enough for the fast box) to every other at once;
// all arrive, per-pair in order across box and ring, and the pollers
// sleep and wake without losing a frame (Spin -1 makes them sleep
// between almost every frame).
// needShm skips t where the platform has no shared-memory transport.
func needShm(t *testing.T) {
	t.Helper()
	if ok, why := Available(); !ok {
		t.Skip(why)
	}
}

func TestTransportStress(t *testing.T) {
	needShm(t)
	const n, per = 4, 400
	var mu sync.Mutex
	next := make([][]int, n)
	for i := range next {
		next[i] = make([]int, n)
	}
	var bad []string
	var wg sync.WaitGroup
	wg.Add(n * (n - 1) * per)
	ts := endpoints(t, n, Config{RingSize: 16 << 10, Spin: -1}, func(rank int, f wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		if int(f.Tag) != next[rank][f.From] || uint64(crc32.ChecksumIEEE(f.Payload)) != f.Sig ||
			(f.SendID != 0 && f.SendID != uint64(f.Tag)+1<<40) {
			bad = append(bad, fmt.Sprintf("%d->%d frame %d (want %d)", f.From, rank, f.Tag, next[rank][f.From]))
		}
		next[rank][f.From]++
		wg.Done()
	})
	for from := range ts {
		for to := range ts {
			if from == to {
				continue
			}
			go func() {
				rng := rand.New(rand.NewPCG(uint64(from), uint64(to)))
				for i := 0; i < per; i++ {
					// Half fit the fast box, a third of those in one cell:
					// ordering between box and ring is part of what is
					// checked.
					n := rng.IntN(40 << 10)
					switch rng.IntN(6) {
					case 0:
						n = rng.IntN(boxPayload + 2)
					case 1, 2:
						n = rng.IntN(boxMax + 2)
					}
					p := make([]byte, n)
					for k := range p {
						p[k] = byte(rng.Uint32())
					}
					f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i), Size: int64(len(p)), Sig: uint64(crc32.ChecksumIEEE(p))}, From: from, To: to, Payload: p}
					if i%3 == 0 { // a cancellable send's id: in a cell if its payload leaves room
						f.SendID = uint64(i) + 1<<40
					}
					if err := ts[from].Send(f); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatal("frames lost: the stress test did not finish")
	}
	if len(bad) > 0 {
		t.Fatalf("%d bad frames, first: %s", len(bad), bad[0])
	}
}

// TestFetch: cross-memory attach reads this process's memory, and the
// endpoints agree to use it (CMA is on by default where permitted).
func TestFetch(t *testing.T) {
	ok, why := CMAStatus()
	if !ok {
		t.Skipf("cross-memory attach not available: %s", why)
	}
	src := bytes.Repeat([]byte("mpigo"), 1000)
	dst := make([]byte, len(src))
	if err := Fetch(uint64(os.Getpid()), uint64(addrOf(src)), dst); err != nil || !bytes.Equal(src, dst) {
		t.Fatalf("Fetch: %v", err)
	}
	ts := endpoints(t, 2, Config{}, func(int, wire.Frame) {})
	tok, ok := ts[0].ExportRegion(1, src)
	if !ok {
		t.Fatal("endpoints in one process do not use cross-memory attach")
	}
	// Rank 1 reads rank 0's region through the token, whole and from an
	// offset, as the executor does for a matched RTS.
	clear(dst)
	if err := ts[1].ReadRegion(0, tok, 0, dst); err != nil || !bytes.Equal(src, dst) {
		t.Fatalf("ReadRegion: %v", err)
	}
	part := make([]byte, 7)
	if err := ts[1].ReadRegion(0, tok, 5, part); err != nil || !bytes.Equal(part, src[5:12]) {
		t.Fatalf("ReadRegion at offset 5: %q, %v", part, err)
	}
	if err := ts[1].ReadRegion(3, tok, 0, part); err == nil {
		t.Error("ReadRegion from a rank that is no peer succeeded")
	}
	if _, ok := ts[0].ExportRegion(1, nil); ok {
		t.Error("empty region exported")
	}
	if !ts[0].Exports(1) || !ts[1].Exports(0) || ts[0].Exports(5) {
		t.Errorf("Exports: %v %v %v, want true true false", ts[0].Exports(1), ts[1].Exports(0), ts[0].Exports(5))
	}
	ts2 := endpoints(t, 2, Config{NoCMA: true}, func(int, wire.Frame) {})
	if _, ok := ts2[0].ExportRegion(1, src); ok {
		t.Error("NoCMA ignored")
	}
	if ts2[0].Exports(1) {
		t.Error("Exports with NoCMA")
	}
}

// TestRemoveJob: the launcher's clean-up removes a job's leftover inboxes
// and nothing else.
func TestRemoveJob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{Name(dir, 7, 0), Name(dir, 7, 12), Name(dir, 77, 0)} {
		os.WriteFile(name, nil, 0o600)
	}
	if n := RemoveJob(dir, 7); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	if _, err := os.Stat(Name(dir, 77, 0)); err != nil {
		t.Error("another job's inbox was removed")
	}
}

func unsafeBytes(m []uint64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&m[0])), len(m)*8) }

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// TestDeadPeer: a peer whose process is gone is reported once, within
// about SleepTime, and sends to it fail instead of waiting for room that
// will never come.
func TestDeadPeer(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot start a process:", err)
	}
	gone := cmd.Process.Pid
	reported := make(chan int, 4)
	dir := t.TempDir()
	locals := []int{0, 1}
	var ts []*Transport
	for r := 0; r < 2; r++ {
		tr, err := New(Config{Rank: r, Size: 2, JobID: 99, Locals: locals, Dir: dir, RingSize: 4096,
			Handler: func(wire.Frame) {}, OnPeerError: func(peer int, err error) { reported <- peer }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		ts = append(ts, tr)
	}
	for _, tr := range ts {
		if err := tr.Attach(); err != nil {
			t.Fatal(err)
		}
	}
	ts[0].peers[1].pid = gone // rank 1's process "died"
	ts[0].Ready()             // rank 1 never polls: its ring fills
	select {
	case peer := <-reported:
		if peer != 1 {
			t.Errorf("reported rank %d, want 1", peer)
		}
	case <-time.After(10 * SleepTime):
		t.Fatal("the dead peer was not reported")
	}
	big := make([]byte, 8192)
	err := ts[0].Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: int64(len(big))}, From: 0, To: 1, Payload: big})
	if err == nil {
		t.Error("a send to a dead peer succeeded")
	}
	select {
	case <-reported:
		t.Error("reported twice")
	default:
	}
}

// funcWaiter adapts a function to the writer's roomWaiter.
type funcWaiter struct{ wait func(int) error }

func (f funcWaiter) waitRoom(spins int) error { return f.wait(spins) }
func (funcWaiter) wake()                      {}

// TestTrySend: TrySend sends a frame whole when there is room now and
// reports true; with the ring full, or with another goroutine sending to
// the peer, it sends nothing and reports false, never waiting. What it
// accepted arrives, in order, once the receiver consumes again.
func TestTrySend(t *testing.T) {
	needShm(t)
	release := make(chan struct{})
	got := make(chan wire.Frame, 1000)
	ts := endpoints(t, 2, Config{}, func(rank int, f wire.Frame) {
		if rank == 1 {
			<-release // the receiver consumes nothing until released
			got <- wire.Frame{Header: f.Header}
		}
	})
	payload := make([]byte, 100<<10)
	send := func(i int) bool {
		return ts[0].TrySend(wire.Frame{Header: wire.Header{Kind: wire.Data, Tag: int32(i), Size: int64(len(payload))},
			From: 0, To: 1, Payload: payload})
	}
	accepted := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for send(accepted) {
			accepted++
			if accepted > ts[0].RingSize()/len(payload)+1 {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("TrySend waited")
	}
	if accepted == 0 || accepted > ts[0].RingSize()/len(payload) {
		t.Fatalf("%d frames of %d bytes accepted into a ring of %d", accepted, len(payload), ts[0].RingSize())
	}
	p := ts[0].peer(1)
	p.mu.Lock()
	small := ts[0].TrySend(wire.Frame{Header: wire.Header{Kind: wire.Fin, Tag: -1}, From: 0, To: 1})
	p.mu.Unlock()
	if small {
		t.Error("TrySend sent while another goroutine held the peer")
	}
	if ts[0].TrySend(wire.Frame{Header: wire.Header{Kind: wire.Data}, From: 0, To: 7}) {
		t.Error("TrySend to a rank that is no peer reported true")
	}
	close(release)
	for i := 0; i < accepted; i++ {
		select {
		case f := <-got:
			if f.Tag != int32(i) || f.Size != int64(len(payload)) {
				t.Fatalf("frame %d: tag %d, %d bytes", i, f.Tag, f.Size)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("frame %d of %d never arrived", i, accepted)
		}
	}
	select {
	case f := <-got:
		t.Errorf("a refused frame arrived: tag %d", f.Tag)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestDefaultRingSize: rings are powers of two of at least 64 KiB; a
// node's rings take at most 48 MiB up to 4 ranks (a container's default
// /dev/shm is 64 MiB, and a page a full tmpfs cannot give kills the
// process that touches it), never more than they did with 1 MiB rings
// from 5 ranks on, and at most 256 MiB unless the 64 KiB floor forces more.
func TestDefaultRingSize(t *testing.T) {
	for n := 1; n <= 200; n++ {
		c := DefaultRingSize(n)
		total := n * (n - 1) * c
		old := 1 << 20
		for old > 64<<10 && n*n*old > 256<<20 {
			old >>= 1
		}
		switch {
		case c < 64<<10 || c&(c-1) != 0:
			t.Errorf("%d ranks: ring of %d bytes", n, c)
		case n <= 4 && total > 48<<20:
			t.Errorf("%d ranks: %d MiB of rings", n, total>>20)
		case n > 4 && c > old:
			t.Errorf("%d ranks: rings of %d KiB, more than the %d KiB before", n, c>>10, old>>10)
		case c > 64<<10 && total > 256<<20:
			t.Errorf("%d ranks: %d MiB of rings", n, total>>20)
		}
	}
	if DefaultRingSize(2) != 4<<20 || DefaultRingSize(5) != 1<<20 {
		t.Errorf("2 ranks: %d, 5 ranks: %d", DefaultRingSize(2), DefaultRingSize(5))
	}
}

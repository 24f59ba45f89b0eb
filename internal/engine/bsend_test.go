package engine

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// offsetIn returns where b starts in mem.
func offsetIn(t *testing.T, mem, b []byte) int {
	t.Helper()
	for i := range mem {
		if &mem[i] == &b[0] {
			return i
		}
	}
	t.Fatal("block not inside the attached buffer")
	return -1
}

func TestBsendAttach(t *testing.T) {
	var b BsendBuffer
	if _, _, err := b.Alloc(1); !errors.Is(err, ErrNoBuffer) {
		t.Fatalf("Alloc without a buffer: %v", err)
	}
	if _, err := b.Detach(); err == nil {
		t.Fatal("Detach with nothing attached succeeded")
	}
	if err := b.Attach(nil); err == nil {
		t.Fatal("Attach of an empty buffer succeeded")
	}
	mem := make([]byte, 1000)
	if err := b.Attach(mem); err != nil {
		t.Fatal(err)
	}
	if err := b.Attach(make([]byte, 10)); err == nil {
		t.Fatal("second Attach succeeded")
	}
	got, err := b.Detach()
	if err != nil || &got[0] != &mem[0] || len(got) != len(mem) {
		t.Fatalf("Detach: %v, %d bytes", err, len(got))
	}
	if _, _, err := b.Alloc(1); !errors.Is(err, ErrNoBuffer) {
		t.Fatalf("Alloc after Detach: %v", err)
	}
	if err := b.Attach(mem); err != nil {
		t.Fatalf("Attach after Detach: %v", err)
	}
}

// TestBsendAlloc: blocks are carved first fit, each with BsendOverhead
// bytes of bookkeeping; allocation fails with ErrBufferFull when no hole
// is large enough; released blocks are reused, the first hole that fits
// first; releasing twice is harmless.
func TestBsendAlloc(t *testing.T) {
	const blk = 100 + BsendOverhead
	var b BsendBuffer
	mem := make([]byte, 4*blk)
	b.Attach(mem)
	var rel []func()
	for i := range 4 {
		d, r, err := b.Alloc(100)
		if err != nil || len(d) != 100 || cap(d) != 100 {
			t.Fatalf("alloc %d: %v (%d bytes, cap %d)", i, err, len(d), cap(d))
		}
		if off := offsetIn(t, mem, d); off != i*blk+BsendOverhead {
			t.Fatalf("alloc %d at offset %d, want %d", i, off, i*blk+BsendOverhead)
		}
		rel = append(rel, r)
	}
	if _, _, err := b.Alloc(0); !errors.Is(err, ErrBufferFull) {
		t.Fatalf("full buffer: %v", err)
	}
	// Holes at blocks 0 and 2, each blk bytes.
	rel[0]()
	rel[0]() // harmless
	rel[2]()
	// Too large for either hole, though enough bytes are free in all.
	if _, _, err := b.Alloc(blk - BsendOverhead + 1); !errors.Is(err, ErrBufferFull) {
		t.Fatalf("oversized alloc: %v", err)
	}
	// First fit: a small block goes to the first hole, at its start.
	d, r0, err := b.Alloc(10)
	if err != nil || offsetIn(t, mem, d) != BsendOverhead {
		t.Fatalf("small alloc: %v", err)
	}
	// 90 bytes are left in the first hole; a block that needs 114 goes to
	// the second.
	d, r1, err := b.Alloc(50)
	if err != nil || offsetIn(t, mem, d) != 2*blk+BsendOverhead {
		t.Fatalf("alloc into the second hole: %v", err)
	}
	// One that needs exactly the 90 bytes left goes back to the first.
	d, r2, err := b.Alloc(90 - BsendOverhead)
	if err != nil || offsetIn(t, mem, d) != 10+2*BsendOverhead {
		t.Fatalf("exact fit in the first hole: %v", err)
	}
	// 50 bytes are left, in the second hole: too few for any block.
	if _, _, err := b.Alloc(0); !errors.Is(err, ErrBufferFull) {
		t.Fatalf("buffer should be full: %v", err)
	}
	for _, r := range []func(){r0, r1, r2, rel[1], rel[3]} {
		r()
	}
	// Everything free: the whole buffer in one block.
	d, r0, err = b.Alloc(4*blk - BsendOverhead)
	if err != nil || offsetIn(t, mem, d) != BsendOverhead {
		t.Fatalf("alloc of everything: %v", err)
	}
	r0()
	if _, err := b.Detach(); err != nil {
		t.Fatal(err)
	}
}

// blockedInDetach reports whether some goroutine is blocked in
// BsendBuffer.Detach, waiting for releases.
func blockedInDetach() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "(*BsendBuffer).Detach") && strings.Contains(g, "WaitGroup).Wait") {
			return true
		}
	}
	return false
}

// TestBsendDetachWaits: Detach returns only once every block is released.
// The test waits (yielding, with a safety timeout) until the goroutine
// calling Detach is blocked in it, checks it has not returned, and releases
// the blocks one by one.
func TestBsendDetachWaits(t *testing.T) {
	var b BsendBuffer
	mem := make([]byte, 1000)
	b.Attach(mem)
	var rel []func()
	for range 3 {
		_, r, err := b.Alloc(10)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	type result struct {
		mem []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := b.Detach()
		done <- result{m, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !blockedInDetach() {
		if time.Now().After(deadline) {
			t.Fatal("Detach is not blocked waiting for the releases")
		}
		runtime.Gosched()
	}
	for i, r := range rel {
		select {
		case <-done:
			t.Fatalf("Detach returned with %d blocks still in use", len(rel)-i)
		default:
		}
		r()
	}
	select {
	case res := <-done:
		if res.err != nil || &res.mem[0] != &mem[0] {
			t.Fatalf("Detach: %v", res.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Detach did not return after the last release")
	}
}

// TestBsendReleaseOnDone: the runtime releases a block from the send's
// OnDone; releasing from there (under the engine's lock) works.
func TestBsendReleaseOnDone(t *testing.T) {
	var b BsendBuffer
	b.Attach(make([]byte, 2*(64+BsendOverhead)))
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 16})
	for i := range 5 { // more sends than fit at once
		d, release, err := b.Alloc(64)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		copy(d, pattern(64))
		s := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: d, OnDone: func(*Request) { release() }}
		r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(64)}
		h.send(0, s)
		h.recv(1, r)
		h.drain()
		if !s.Done() || checkGuarded(r.Buf, 64, pattern(64)) != nil {
			t.Fatalf("send %d: done %v", i, s.Done())
		}
	}
	if _, err := b.Detach(); err != nil {
		t.Fatal(err)
	}
}

package mpi

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi/internal/engine"
)

// TestRequestBlock: a Request stays small (every non-blocking call
// allocates one, and the garbage collector's work grows with their
// bytes), and a block of reqBlock Requests fills the allocator's 8 KiB
// size class without spilling into the next.
func TestRequestBlock(t *testing.T) {
	size := int(unsafe.Sizeof(Request{}))
	if size > 64 {
		t.Errorf("Request is %d bytes, want at most 64 (a cache line): move what few requests use into reqMore", size)
	}
	// reqBlock is chosen for 64-bit platforms; a 32-bit one's smaller
	// Requests leave part of the block unused. An object of more than
	// 512 bytes with pointers carries an 8-byte header.
	if strconv.IntSize == 64 && (8+reqBlock*size > 8192 || 8+(reqBlock+1)*size <= 8192) {
		t.Errorf("reqBlock is %d, want %d: 8 KiB of %d-byte Requests after the allocator's header", reqBlock, (8192-8)/size, size)
	}
	// What a block really takes from the allocator: its size class.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	const n = 64
	keep := make([]*[reqBlock]Request, n)
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = new([reqBlock]Request)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 8192 {
		t.Errorf("a block of %d Requests takes %d bytes from the allocator, want at most 8192", reqBlock, per)
	}
	runtime.KeepAlive(keep)
}

// TestRequestLoc: a Request gives back the loc it was given, compact or
// not, for error messages.
func TestRequestLoc(t *testing.T) {
	locs := []loc{
		{},
		at("dest", 3, 7),
		at("source", AnySource, AnyTag),
		at("root", 0, TagUB),
		at("target", 2, 5),      // a name without a code
		{what: "root", peer: 4}, // no tag
		{peer: 5, tag: 6, hasTag: true},
	}
	pts := [][2]int{{2, 9}}
	if strconv.IntSize == 64 {
		// Values beyond int32: 1<<40 here; the shift keeps the constant
		// within a 32-bit int, where this branch does not run.
		wide := int(int64(1) << 40 >> (64 - strconv.IntSize))
		locs = append(locs, at("dest", wide, 2), at("source", 1, -wide))
		pts = append(pts, [2]int{wide >> 7, 1}, [2]int{1, wide >> 7})
	}
	for _, l := range locs {
		var r Request
		r.setAt(l)
		if got := r.at(); got != l {
			t.Errorf("setAt(%+v): at() = %+v", l, got)
		}
	}
	for _, w := range []uint8{whereDest, whereSource} {
		for _, pt := range pts {
			var r Request
			r.setOpPeer("", w, pt[0], pt[1])
			if want, got := at(whereNames[w], pt[0], pt[1]), r.at(); got != want {
				t.Errorf("setOpPeer(\"\", %d, %d, %d): at() = %+v, want %+v", w, pt[0], pt[1], got, want)
			}
			// setOpPeer, the hot paths' form, agrees with setOp and
			// setAt, for the names it knows and for the others.
			for _, name := range []string{"Isend", "IrecvInto", "Irecv", "Issend", "TestRequestLoc.x"} {
				var q Request
				q.setOpPeer(name, w, pt[0], pt[1])
				if want, got := at(whereNames[w], pt[0], pt[1]), q.at(); got != want || q.opName() != name {
					t.Errorf("setOpPeer(%q, %d, %d, %d): at() = %+v, opName() = %q; want %+v, %q", name, w, pt[0], pt[1], got, q.opName(), want, name)
				}
			}
		}
	}
}

// TestRequestStatus: a Request gives back the status it was given,
// whether it fits the compact fields or not (a generalized request's
// query function may set any Source and Tag).
func TestRequestStatus(t *testing.T) {
	sts := []Status{
		{},
		procNullStatus,
		emptyStatus,
		{Source: 3, Tag: 7, bytes: 24, size: 32, elem: 8},
		{Source: 1, Tag: TagUB, bytes: 1 << 20, size: 1 << 20, elem: 1, cancelled: true},
		{Source: -1 << 31, Tag: 1<<31 - 1},
	}
	if strconv.IntSize == 64 {
		wide := int(int64(1) << 40 >> (64 - strconv.IntSize))
		gib := wide >> 10
		sts = append(sts,
			Status{Source: wide, Tag: 2, bytes: 8, size: 8, elem: 8},
			Status{Source: 2, Tag: -wide},
			Status{Source: 1, Tag: 1, bytes: wide, size: wide, elem: wide},
			// A message of 3 GiB: counts past int32, the rest compact.
			Status{Source: 1, Tag: 1, bytes: 3 * gib, size: 3 * gib, elem: 8},
			Status{Source: 1, Tag: 1, bytes: 8, size: 3 * gib, elem: 8})
	}
	for _, st := range sts {
		var r Request
		r.setStatus(st)
		if got := r.status(); got != st {
			t.Errorf("setStatus(%+v): status() = %+v", st, got)
		}
		if got := r.elem(); got != st.elem {
			t.Errorf("setStatus(%+v): elem() = %d", st, got)
		}
		r.setStatus(Status{Source: 1}) // back to the compact fields
		if got := r.status(); got != (Status{Source: 1}) {
			t.Errorf("after %+v, setStatus({Source: 1}): status() = %+v", st, got)
		}
	}
}

// TestRequestOp: a Request gives back the name of the call that made it,
// whether the name has a fixed code, gets one when first used, or (the
// table full) is kept in reqMore.
func TestRequestOp(t *testing.T) {
	for _, name := range []string{"", "Isend", "IrecvInto", "Ibsend", "Window.Rput", "TestRequestOp.a", "TestRequestOp.a"} {
		var r Request
		r.setOp(name)
		if got := r.opName(); got != name {
			t.Errorf("setOp(%q): opName() = %q", name, got)
		}
	}
	// Goroutines naming new calls at once all get their own names back
	// (run with -race: the table is read without a lock).
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				name := "TestRequestOp.c" + strconv.Itoa(i)
				var r Request
				r.setOp(name)
				if got := r.opName(); got != name {
					t.Errorf("setOp(%q) on goroutine %d: opName() = %q", name, g, got)
				}
			}
		}()
	}
	wg.Wait()
	var r Request
	r.op, r.x = opWide, &reqMore{op: "Iwide"}
	if got := r.opName(); got != "Iwide" {
		t.Errorf("opWide: opName() = %q", got)
	}
}

// TestErBatch: WaitAll's batch gives each engine request back to its own
// rank's free list, cleared, whether requests of two lists alternate or
// more come than it holds; and a list keeps at most erKeep.
func TestErBatch(t *testing.T) {
	var a, b erFreeList
	var batch erBatch
	var wantA, wantB []*engine.Request
	for i := range 3 * len(batch.ers) {
		er := &engine.Request{Tag: i + 1}
		if i%3 == 0 || i > 2*len(batch.ers) { // alternating, then a long run of b
			batch.add(&b, er)
			wantB = append(wantB, er)
		} else {
			batch.add(&a, er)
			wantA = append(wantA, er)
		}
	}
	batch.flush()
	if batch.n != 0 {
		t.Errorf("after flush, the batch holds %d", batch.n)
	}
	for _, c := range []struct {
		name string
		l    *erFreeList
		want []*engine.Request
	}{{"a", &a, wantA}, {"b", &b, wantB}} {
		if len(c.l.free) != len(c.want) {
			t.Fatalf("list %s holds %d engine requests, want %d", c.name, len(c.l.free), len(c.want))
		}
		for i, er := range c.l.free {
			if er != c.want[i] {
				t.Fatalf("list %s's request %d is not the one given back", c.name, i)
			}
			if er.Tag != 0 {
				t.Errorf("list %s's request %d given back without being cleared (tag %d)", c.name, i, er.Tag)
			}
		}
	}
	for range 2 * erKeep {
		batch.add(&a, &engine.Request{})
	}
	batch.flush()
	if len(a.free) != erKeep {
		t.Errorf("list a keeps %d engine requests, want erKeep = %d", len(a.free), erKeep)
	}
}

// TestRequestSent: a short-road send's id is kept in the status fields
// and given back whole, while its status stays empty; a status set later
// (a cancelled send's) replaces it.
func TestRequestSent(t *testing.T) {
	for _, id := range []uint64{1, 1<<32 - 1, 1 << 32, 0xdead_beef_0123_4567, 1<<64 - 1} {
		var r Request
		r.setOpPeer("Isend", whereDest, 3, 9)
		r.setSent(id)
		if got := r.sentID(); got != id {
			t.Errorf("setSent(%#x): sentID() = %#x", id, got)
		}
		if st := r.status(); st != (Status{}) {
			t.Errorf("setSent(%#x): status() = %+v, want empty", id, st)
		}
		r.setStatus(Status{Source: 3, Tag: 9, cancelled: true})
		if got := r.sentID(); got != 0 {
			t.Errorf("after setStatus: sentID() = %#x, want 0", got)
		}
		if st := r.status(); st != (Status{Source: 3, Tag: 9, cancelled: true}) {
			t.Errorf("after setStatus: status() = %+v", st)
		}
	}
	var r Request
	r.setSent(0)
	if r.is(fSent) || r.sentID() != 0 {
		t.Error("setSent(0) marked the request")
	}
}

// TestRequestPins: the pin count saturates instead of wrapping, and a
// saturated count keeps the engine request away from the free list.
func TestRequestPins(t *testing.T) {
	var r Request
	for range 300 {
		r.pin()
	}
	if r.pins != pinMax {
		t.Fatalf("pins after 300 pins = %d, want %d", r.pins, pinMax)
	}
	r.unpin()
	if r.pins != pinMax {
		t.Fatalf("a saturated count went down to %d", r.pins)
	}
	var q Request
	q.pin()
	q.pin()
	q.unpin()
	if q.pins != 1 {
		t.Fatalf("pins = %d, want 1", q.pins)
	}
}

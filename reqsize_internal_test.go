package mpi

import (
	"testing"
	"unsafe"
)

// TestRequestBlock: a Request stays small (every non-blocking call
// allocates one, and the garbage collector's work grows with their
// bytes), and a block of reqBlock Requests fills the allocator's 8 KiB
// size class without spilling into the next.
func TestRequestBlock(t *testing.T) {
	size := int(unsafe.Sizeof(Request{}))
	if size > 136 {
		t.Errorf("Request is %d bytes, want at most 136: move what few requests use into reqMore", size)
	}
	if reqBlock*size > 8192 || (reqBlock+1)*size <= 8192 {
		t.Errorf("reqBlock is %d, want %d: 8 KiB of %d-byte Requests", reqBlock, 8192/size, size)
	}
}

// TestRequestLoc: a Request gives back the loc it was given, compact or
// not, for error messages.
func TestRequestLoc(t *testing.T) {
	locs := []loc{
		{},
		at("dest", 3, 7),
		at("source", AnySource, AnyTag),
		at("root", 0, TagUB),
		at("dest", 1<<40, 2),    // does not fit int32
		at("source", 1, -1<<40), // nor this
		at("target", 2, 5),      // a name without a code
		{what: "root", peer: 4}, // no tag
		{peer: 5, tag: 6, hasTag: true},
	}
	for _, l := range locs {
		var r Request
		r.setAt(l)
		if got := r.at(); got != l {
			t.Errorf("setAt(%+v): at() = %+v", l, got)
		}
	}
	for _, w := range []uint8{whereDest, whereSource} {
		for _, pt := range [][2]int{{2, 9}, {1 << 33, 1}, {1, 1 << 33}} {
			var r Request
			r.setPeer(w, pt[0], pt[1])
			if want, got := at(whereNames[w], pt[0], pt[1]), r.at(); got != want {
				t.Errorf("setPeer(%d, %d, %d): at() = %+v, want %+v", w, pt[0], pt[1], got, want)
			}
		}
	}
}

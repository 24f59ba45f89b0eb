package mpi

import (
	"strconv"
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
			r.setPeer(w, pt[0], pt[1])
			if want, got := at(whereNames[w], pt[0], pt[1]), r.at(); got != want {
				t.Errorf("setPeer(%d, %d, %d): at() = %+v, want %+v", w, pt[0], pt[1], got, want)
			}
		}
	}
}

// Package fileio plans MPI-IO accesses: it turns a file view (a
// displacement and a filetype tiled from it) into the byte ranges of the
// file that a run of the view's data occupies, splits accesses into the
// file domains of collective-buffering aggregators, and groups nearby
// ranges for data sieving. It is pure logic: no I/O, no clock, no
// globals; package mpi does the reads, writes and messages.
package fileio

import (
	"errors"
	"fmt"
	"sort"
)

// Seg is a run of Len bytes at offset Off (of a file, or of a value).
type Seg struct {
	Off, Len int64
}

// End returns Off+Len.
func (s Seg) End() int64 { return s.Off + s.Len }

// View is a file view flattened once: the data of the view is the
// filetype's segments, tiled every Extent bytes from the displacement.
// Positions in the view ("stream" positions) count data bytes only.
//
// Disp is where the first tile's data starts: the view's displacement
// plus the offset of the filetype's first data byte, and Segs are
// relative to it, so that every tile's data lies in [0, Extent) of its
// tile. Tiles start at multiples of the extent whatever the filetype's
// lower bound: MPI tiles a filetype as it does the elements of a
// contiguous type, the i-th copy's type map shifted by i*extent.
type View struct {
	Disp   int64
	Segs   []Seg   // one filetype value's data, in file order, relative to Disp
	start  []int64 // start[i]: stream offset of Segs[i] within one tile
	Size   int64   // data bytes in one tile
	Extent int64   // distance between tiles
}

// ErrView is wrapped by the errors of NewView.
var ErrView = errors.New("fileio: invalid view")

// NewView flattens a view: disp, the filetype's data segments in type-map
// order (their offsets are the type map's displacements, relative to the
// tile's origin, whatever the type's lower bound) and its extent. MPI
// requires the filetype's displacements to be non-negative and
// non-decreasing; a segment that starts before the previous one ends
// (an overlap), or tiles that share bytes (the data spans more than the
// extent, and a later tile's data falls on the first's), are accepted
// only when overlap is set (a file opened read-only: MPI forbids
// overlapping regions only where the file can be written). Tiles that
// interleave without sharing a byte are fine. Segments that break these
// rules are refused.
func NewView(disp int64, segs []Seg, extent int64, overlap bool) (*View, error) {
	if disp < 0 {
		return nil, fmt.Errorf("%w: negative displacement %d", ErrView, disp)
	}
	v := &View{Disp: disp, Extent: extent}
	var prevStart, maxEnd, first int64
	for i, s := range segs {
		if s.Len == 0 {
			continue
		}
		if s.Len < 0 || s.Off < 0 {
			return nil, fmt.Errorf("%w: filetype segment %d at offset %d of %d bytes has a negative displacement", ErrView, i, s.Off, s.Len)
		}
		if len(v.Segs) > 0 {
			if s.Off < prevStart {
				return nil, fmt.Errorf("%w: filetype displacements must be non-decreasing (segment %d at %d follows one at %d)", ErrView, i, s.Off, prevStart)
			}
			if s.Off < maxEnd && !overlap {
				return nil, fmt.Errorf("%w: filetype regions overlap (segment %d at %d, a previous one ends at %d), which only a read-only file allows", ErrView, i, s.Off, maxEnd)
			}
		}
		if n := len(v.Segs); n > 0 && v.Segs[n-1].End() == s.Off {
			v.Segs[n-1].Len += s.Len
		} else {
			if len(v.Segs) == 0 {
				first = s.Off
			}
			v.Segs = append(v.Segs, s)
			v.start = append(v.start, v.Size)
		}
		v.Size += s.Len
		prevStart = s.Off
		maxEnd = max(maxEnd, s.End())
	}
	if v.Size == 0 {
		return v, nil
	}
	if extent <= 0 {
		return nil, fmt.Errorf("%w: filetype extent %d", ErrView, extent)
	}
	v.Disp += first
	for i := range v.Segs {
		v.Segs[i].Off -= first
	}
	if span := maxEnd - first; span > extent && !overlap {
		// Tiles interleave: allowed as long as no byte of one is a
		// byte of another (the stream is then not in file order).
		if m, ok := tilesOverlap(v.Segs, extent, span); ok {
			return nil, fmt.Errorf("%w: filetype data spans %d bytes (from %d to %d), more than its extent %d, and tile %d overlaps the first: tiles may overlap only in a read-only file", ErrView, span, first, maxEnd, extent, m)
		}
	}
	return v, nil
}

// maxTileCheck bounds the work of tilesOverlap (segments times tiles
// compared); a view past it is taken to overlap.
const maxTileCheck = 1 << 24

// tilesOverlap reports whether the first tile of segs (sorted, disjoint,
// relative to the tile's origin, spanning span bytes) shares a byte with
// a later tile, every extent bytes, and the first such tile. Only tiles
// that start before span can.
func tilesOverlap(segs []Seg, extent, span int64) (int64, bool) {
	tiles := (span - 1) / extent
	if tiles > maxTileCheck/int64(len(segs)) {
		return 1, true
	}
	for m := int64(1); m <= tiles; m++ {
		shift := m * extent
		i, j := 0, 0
		for i < len(segs) && j < len(segs) {
			a, b := segs[i], Seg{segs[j].Off + shift, segs[j].Len}
			if a.Off < b.End() && b.Off < a.End() {
				return m, true
			}
			if a.End() <= b.End() {
				i++
			} else {
				j++
			}
		}
	}
	return 0, false
}

// Contiguous reports whether the view's data is one run of bytes from
// Disp on (the default view, or a contiguous filetype).
func (v *View) Contiguous() bool {
	return len(v.Segs) == 1 && v.Segs[0].Off == 0 && v.Segs[0].Len == v.Extent
}

// FileOffset returns the file offset of stream position pos.
func (v *View) FileOffset(pos int64) int64 {
	if v.Size == 0 {
		return v.Disp
	}
	tile, rem := pos/v.Size, pos%v.Size
	i := sort.Search(len(v.start), func(i int) bool { return v.start[i] > rem }) - 1
	return v.Disp + tile*v.Extent + v.Segs[i].Off + rem - v.start[i]
}

// Map appends to dst the file ranges of stream bytes [pos, pos+n), in
// stream order, adjacent ranges merged. Stream order is file order
// unless the view lets regions overlap (a read-only file): callers check
// Sorted before relying on it.
func (v *View) Map(pos, n int64, dst []Seg) []Seg {
	if n <= 0 || v.Size == 0 {
		return dst
	}
	if v.Contiguous() {
		return appendSeg(dst, Seg{v.Disp + pos, n})
	}
	tile, rem := pos/v.Size, pos%v.Size
	i := sort.Search(len(v.start), func(i int) bool { return v.start[i] > rem }) - 1
	in := rem - v.start[i]
	for n > 0 {
		s := v.Segs[i]
		take := min(s.Len-in, n)
		dst = appendSeg(dst, Seg{v.Disp + tile*v.Extent + s.Off + in, take})
		n -= take
		in = 0
		if i++; i == len(v.Segs) {
			i = 0
			tile++
		}
	}
	return dst
}

func appendSeg(dst []Seg, s Seg) []Seg {
	if n := len(dst); n > 0 && dst[n-1].End() == s.Off {
		dst[n-1].Len += s.Len
		return dst
	}
	return append(dst, s)
}

// Span returns the first byte and the end of segs (0, 0 for none).
func Span(segs []Seg) (lo, hi int64) {
	if len(segs) == 0 {
		return 0, 0
	}
	lo, hi = segs[0].Off, segs[0].End()
	for _, s := range segs[1:] {
		lo = min(lo, s.Off)
		hi = max(hi, s.End())
	}
	return lo, hi
}

// Domains splits the file range [lo, hi) into n contiguous file domains
// of nearly equal size, each boundary rounded up to a multiple of align
// (a file system block or stripe) where that keeps every domain
// non-empty; it returns the n+1 boundaries. Domains may be empty when
// the range is smaller than n aligned blocks.
func Domains(lo, hi int64, n int, align int64) []int64 {
	b := make([]int64, n+1)
	b[0], b[n] = lo, hi
	if n <= 0 || hi <= lo {
		for i := range b {
			b[i] = lo
		}
		return b
	}
	size := (hi - lo + int64(n) - 1) / int64(n)
	if align > 1 && size > align {
		size = (size + align - 1) / align * align
	}
	for i := 1; i < n; i++ {
		b[i] = min(lo+int64(i)*size, hi)
	}
	return b
}

// Piece is a part of one rank's access that falls in one domain: the
// file range and where its bytes are in the rank's packed stream.
type Piece struct {
	Seg
	Stream int64
}

// Split cuts segs (a rank's file ranges in stream order) at the domain
// boundaries bounds (from Domains) and calls fn with the domain index of
// every piece, in stream order.
func Split(segs []Seg, bounds []int64, fn func(domain int, p Piece)) {
	var stream int64
	nd := len(bounds) - 1
	for _, s := range segs {
		off, left := s.Off, s.Len
		d := sort.Search(nd, func(i int) bool { return bounds[i+1] > off })
		for left > 0 {
			if d >= nd {
				d = nd - 1 // past the last boundary (cannot happen for segs inside [lo, hi))
			}
			end := off + left
			if d < nd-1 && bounds[d+1] < end {
				end = bounds[d+1]
			}
			take := end - off
			fn(d, Piece{Seg{off, take}, stream})
			stream += take
			off += take
			left -= take
			d++
		}
	}
}

// SplitRounds is Split with every domain also cut into windows of at
// most size bytes from its start, the rounds of two-phase I/O: window w
// of domain d is [bounds[d]+w*size, min(bounds[d]+(w+1)*size,
// bounds[d+1])). It calls fn with the domain and window of every piece,
// in stream order; a piece never crosses a window's boundary.
func SplitRounds(segs []Seg, bounds []int64, size int64, fn func(domain, window int, p Piece)) {
	if size <= 0 || size > 1<<40 {
		size = 1 << 40
	}
	Split(segs, bounds, func(d int, p Piece) {
		base := bounds[d]
		for p.Len > 0 {
			w := (p.Off - base) / size
			if p.Off < base {
				w = 0 // only past the last boundary, which Split cannot give
			}
			take := min(p.Len, base+(w+1)*size-p.Off)
			fn(d, int(w), Piece{Seg{p.Off, take}, p.Stream})
			p.Off += take
			p.Stream += take
			p.Len -= take
		}
	})
}

// Window returns the window of offset off in the domain starting at
// base, for windows of size bytes (SplitRounds).
func Window(off, base, size int64) int {
	if size <= 0 || size > 1<<40 {
		size = 1 << 40
	}
	if off < base {
		return 0
	}
	return int((off - base) / size)
}

// Runs partitions segs (sorted by offset) into runs that tile the file:
// each segment of a run starts where the previous one ends. It returns
// the index just past each run; a run is one vectored read or write.
func Runs(segs []Seg) []int {
	var ends []int
	for i := 1; i <= len(segs); i++ {
		if i == len(segs) || segs[i].Off != segs[i-1].End() {
			ends = append(ends, i)
		}
	}
	return ends
}

// Groups partitions segs (sorted by offset, not overlapping) into runs
// that one data-sieving buffer covers: a run spans at most max bytes
// (or is a single segment larger than that), and its holes are at most
// gap bytes each, so sieving does not read far more than it uses. It
// returns the index just past each run.
func Groups(segs []Seg, max, gap int64) []int {
	var ends []int
	i := 0
	for i < len(segs) {
		j := i + 1
		for j < len(segs) && segs[j].End()-segs[i].Off <= max && segs[j].Off-segs[j-1].End() <= gap {
			j++
		}
		ends = append(ends, j)
		i = j
	}
	return ends
}

// Sorted reports whether segs are in increasing, non-overlapping order.
func Sorted(segs []Seg) bool {
	for i := 1; i < len(segs); i++ {
		if segs[i].Off < segs[i-1].End() {
			return false
		}
	}
	return true
}

package fileio

import (
	"reflect"
	"testing"
)

// brute maps stream bytes to file offsets one byte at a time, the
// definition Map must agree with.
func brute(disp int64, segs []Seg, extent, pos, n int64) []int64 {
	var perTile []int64
	for _, s := range segs {
		for b := s.Off; b < s.End(); b++ {
			perTile = append(perTile, b)
		}
	}
	var out []int64
	for p := pos; p < pos+n; p++ {
		t, r := p/int64(len(perTile)), p%int64(len(perTile))
		out = append(out, disp+t*extent+perTile[r])
	}
	return out
}

func expand(segs []Seg) []int64 {
	var out []int64
	for _, s := range segs {
		for b := s.Off; b < s.End(); b++ {
			out = append(out, b)
		}
	}
	return out
}

func TestViewMap(t *testing.T) {
	cases := []struct {
		name        string
		disp        int64
		segs        []Seg
		extent      int64
		pos, n      int64
		want        []Seg
		wantFileOff int64
	}{
		{"contiguous", 10, []Seg{{0, 8}}, 8, 3, 20, []Seg{{13, 20}}, 13},
		{"vector", 0, []Seg{{0, 4}, {16, 4}}, 32, 2, 12, []Seg{{2, 2}, {16, 4}, {32, 4}, {48, 2}}, 2},
		{"merged adjacent", 100, []Seg{{0, 2}, {2, 2}}, 8, 0, 8, []Seg{{100, 4}, {108, 4}}, 100},
		{"resized tail hole", 0, []Seg{{4, 4}}, 16, 5, 4, []Seg{{21, 3}, {36, 1}}, 21},
		{"zero length", 0, []Seg{{4, 4}}, 16, 5, 0, nil, 21},
		// A filetype resized to a lower bound past its data, or to an
		// extent below its last byte: tiles still start every extent
		// bytes from disp, the type map's offsets relative to each.
		{"resized lb past the data", 0, []Seg{{0, 4}}, 12, 0, 8, []Seg{{0, 4}, {12, 4}}, 0},
		{"data past the extent", 4, []Seg{{8, 4}, {16, 4}}, 12, 2, 12, []Seg{{14, 2}, {20, 8}, {32, 2}}, 14},
	}
	for _, c := range cases {
		v, err := NewView(c.disp, c.segs, c.extent, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := v.Map(c.pos, c.n, nil)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Map(%d, %d) = %v, want %v", c.name, c.pos, c.n, got, c.want)
		}
		if !reflect.DeepEqual(expand(got), brute(c.disp, c.segs, c.extent, c.pos, c.n)) {
			t.Errorf("%s: Map disagrees with the byte-by-byte mapping", c.name)
		}
		if fo := v.FileOffset(c.pos); fo != c.wantFileOff {
			t.Errorf("%s: FileOffset(%d) = %d, want %d", c.name, c.pos, fo, c.wantFileOff)
		}
	}
}

func TestNewViewRefuses(t *testing.T) {
	cases := []struct {
		name   string
		disp   int64
		segs   []Seg
		extent int64
	}{
		{"negative disp", -1, []Seg{{0, 1}}, 1},
		{"decreasing", 0, []Seg{{8, 4}, {0, 4}}, 16},
		{"overlapping", 0, []Seg{{0, 8}, {4, 4}}, 16},
		{"before disp", 0, []Seg{{-4, 4}}, 16},
		{"past extent", 0, []Seg{{0, 8}}, 4},
		{"span past extent", 0, []Seg{{8, 4}, {16, 4}}, 8},
	}
	for _, c := range cases {
		if _, err := NewView(c.disp, c.segs, c.extent, false); err == nil {
			t.Errorf("%s: NewView accepted %v", c.name, c.segs)
		}
	}
}

// TestViewOverlap: a read-only file's view may have regions that
// overlap, within a filetype or between tiles; Map still follows the
// byte-by-byte definition, in stream order. Negative and decreasing
// displacements stay refused.
func TestViewOverlap(t *testing.T) {
	for _, c := range []struct {
		name   string
		segs   []Seg
		extent int64
	}{
		{"overlap in a filetype", []Seg{{0, 12}, {4, 4}}, 16},
		{"tiles overlap", []Seg{{4, 4}, {12, 4}}, 8},
	} {
		if _, err := NewView(0, c.segs, c.extent, false); err == nil {
			t.Errorf("%s: accepted for a writable file", c.name)
		}
		v, err := NewView(0, c.segs, c.extent, true)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for pos := int64(0); pos < 20; pos++ {
			got := v.Map(pos, 30, nil)
			if !reflect.DeepEqual(expand(got), brute(0, c.segs, c.extent, pos, 30)) {
				t.Errorf("%s: Map(%d, 30) = %v disagrees with the byte-by-byte mapping", c.name, pos, got)
			}
		}
	}
	for _, segs := range [][]Seg{{{-4, 4}}, {{8, 4}, {0, 4}}} {
		if _, err := NewView(0, segs, 16, true); err == nil {
			t.Errorf("read-only view accepted %v", segs)
		}
	}
}

func TestDomainsAndSplit(t *testing.T) {
	b := Domains(0, 100, 3, 1)
	if !reflect.DeepEqual(b, []int64{0, 34, 68, 100}) {
		t.Fatalf("Domains = %v", b)
	}
	b = Domains(0, 10000, 2, 4096)
	if !reflect.DeepEqual(b, []int64{0, 8192, 10000}) {
		t.Fatalf("aligned Domains = %v", b)
	}
	b = Domains(0, 100, 3, 1)
	var got []Piece
	var doms []int
	Split([]Seg{{30, 10}, {60, 50}}, []int64{0, 34, 68, 110}, func(d int, p Piece) {
		doms = append(doms, d)
		got = append(got, p)
	})
	_ = b
	want := []Piece{{Seg{30, 4}, 0}, {Seg{34, 6}, 4}, {Seg{60, 8}, 10}, {Seg{68, 42}, 18}}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(doms, []int{0, 1, 1, 2}) {
		t.Fatalf("Split = %v in %v, want %v in [0 1 1 2]", got, doms, want)
	}
}

func TestGroups(t *testing.T) {
	segs := []Seg{{0, 4}, {8, 4}, {16, 4}, {1000, 4}, {1008, 4}}
	if g := Groups(segs, 64, 16); !reflect.DeepEqual(g, []int{3, 5}) {
		t.Fatalf("Groups = %v", g)
	}
	if g := Groups(segs, 10, 16); !reflect.DeepEqual(g, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("Groups with a small buffer = %v", g)
	}
}

// FuzzViewMap checks Map against the byte-by-byte definition, and Split
// for conservation: every byte lands in exactly the domain holding it.
func FuzzViewMap(f *testing.F) {
	f.Add(uint8(3), uint8(4), uint8(9), uint8(2), uint8(5), uint16(40), uint8(3))
	f.Fuzz(func(t *testing.T, nseg, blen, stride, disp, pos uint8, n uint16, ndom uint8) {
		k := int64(nseg%5) + 1
		l := int64(blen%7) + 1
		st := l + int64(stride%9)
		// The first segment need not be at the tile's origin (a
		// filetype resized to a lower bound other than its data's).
		lead := int64(ndom%3) * 3
		var segs []Seg
		for i := int64(0); i < k; i++ {
			segs = append(segs, Seg{lead + i*st, l})
		}
		ext := (k-1)*st + l + int64(stride%3)
		v, err := NewView(int64(disp), segs, ext, false)
		if err != nil {
			t.Fatal(err)
		}
		nn := int64(n % 300)
		got := v.Map(int64(pos), nn, nil)
		if !reflect.DeepEqual(expand(got), brute(int64(disp), segs, ext, int64(pos), nn)) && nn > 0 {
			t.Fatalf("Map(%d,%d) of %v ext %d = %v", pos, nn, segs, ext, got)
		}
		if !Sorted(got) {
			t.Fatalf("Map returned unsorted %v", got)
		}
		lo, hi := Span(got)
		nd := int(ndom%4) + 1
		b := Domains(lo, hi, nd, int64(ndom%5))
		var total, stream int64
		Split(got, b, func(d int, p Piece) {
			if p.Off < b[d] || p.End() > b[d+1] {
				t.Fatalf("piece %v outside domain %d [%d,%d)", p, d, b[d], b[d+1])
			}
			if p.Stream != stream {
				t.Fatalf("piece %v at stream %d, want %d", p, p.Stream, stream)
			}
			stream += p.Len
			total += p.Len
		})
		if total != nn {
			t.Fatalf("Split moved %d bytes of %d", total, nn)
		}
	})
}

// FuzzTiles checks NewView's tile-overlap rule against the definition:
// with an extent below the data's span, a writable view is accepted
// exactly when no byte belongs to two tiles, and Map follows the
// byte-by-byte mapping (in stream order, which need not be file order).
func FuzzTiles(f *testing.F) {
	f.Add(uint8(2), uint8(4), uint8(8), uint8(8), uint16(30))
	f.Add(uint8(2), uint8(4), uint8(12), uint8(8), uint16(30))
	f.Fuzz(func(t *testing.T, nseg, blen, stride, ext uint8, n uint16) {
		k := int64(nseg%4) + 1
		l := int64(blen%6) + 1
		st := l + int64(stride%12)
		var segs []Seg
		for i := int64(0); i < k; i++ {
			segs = append(segs, Seg{i * st, l})
		}
		e := int64(ext%40) + 1
		span := (k-1)*st + l
		// Which bytes do the tiles that can meet the first one cover?
		seen := map[int64]bool{}
		dup := false
		for m := int64(0); m*e < span+e; m++ {
			for _, b := range expand(segs) {
				if seen[b+m*e] {
					dup = true
				}
				seen[b+m*e] = true
			}
		}
		v, err := NewView(0, segs, e, false)
		if (err != nil) != dup {
			t.Fatalf("segs %v extent %d: NewView error %v, but tiles share a byte: %v", segs, e, err, dup)
		}
		if err != nil {
			if v, err = NewView(0, segs, e, true); err != nil {
				t.Fatalf("read-only view refused: %v", err)
			}
		}
		nn := int64(n % 200)
		for _, pos := range []int64{0, 1, l, k * l} {
			got := v.Map(pos, nn, nil)
			if nn > 0 && !reflect.DeepEqual(expand(got), brute(0, segs, e, pos, nn)) {
				t.Fatalf("Map(%d,%d) of %v ext %d = %v", pos, nn, segs, e, got)
			}
		}
	})
}

func TestSplitRounds(t *testing.T) {
	type cut struct {
		d, w int
		p    Piece
	}
	cases := []struct {
		name   string
		segs   []Seg
		bounds []int64
		size   int64
		want   []cut
	}{
		{"one window per domain", []Seg{{0, 10}}, []int64{0, 5, 10}, 100,
			[]cut{{0, 0, Piece{Seg{0, 5}, 0}}, {1, 0, Piece{Seg{5, 5}, 5}}}},
		{"a piece across windows", []Seg{{2, 9}}, []int64{0, 12}, 4,
			[]cut{{0, 0, Piece{Seg{2, 2}, 0}}, {0, 1, Piece{Seg{4, 4}, 2}}, {0, 2, Piece{Seg{8, 3}, 6}}}},
		{"windows from each domain's start", []Seg{{3, 4}, {9, 3}}, []int64{0, 5, 12}, 4,
			[]cut{{0, 0, Piece{Seg{3, 1}, 0}}, {0, 1, Piece{Seg{4, 1}, 1}}, {1, 0, Piece{Seg{5, 2}, 2}}, {1, 1, Piece{Seg{9, 3}, 4}}}},
		{"no size", []Seg{{3, 4}}, []int64{0, 12}, 0, []cut{{0, 0, Piece{Seg{3, 4}, 0}}}},
	}
	for _, c := range cases {
		var got []cut
		SplitRounds(c.segs, c.bounds, c.size, func(d, w int, p Piece) {
			got = append(got, cut{d, w, p})
			if ww := Window(p.Off, c.bounds[d], c.size); ww != w {
				t.Errorf("%s: Window(%d) = %d, SplitRounds said %d", c.name, p.Off, ww, w)
			}
		})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: SplitRounds = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRuns(t *testing.T) {
	cases := []struct {
		segs []Seg
		want []int
	}{
		{nil, nil},
		{[]Seg{{0, 4}}, []int{1}},
		{[]Seg{{0, 4}, {4, 4}, {8, 1}}, []int{3}},
		{[]Seg{{0, 4}, {5, 4}, {9, 1}, {20, 1}}, []int{1, 3, 4}},
		{[]Seg{{0, 4}, {2, 4}}, []int{1, 2}}, // overlapping: a new run
	}
	for _, c := range cases {
		if got := Runs(c.segs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Runs(%v) = %v, want %v", c.segs, got, c.want)
		}
	}
}

package datatype

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The type-map tests follow MPICH's test/mpi/datatype directory: each
// constructor's size, bounds and true bounds, and the exact bytes its
// packed form takes from a buffer whose byte i is i.

func must(t testing.TB) func(*Type, error) *Type {
	return func(ty *Type, err error) *Type {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ty
	}
}

// offsets returns the buffer offsets packing one value of ty reads, in order.
func offsets(ty *Type) []int64 {
	var o []int64
	for _, s := range ty.Segs {
		for i := range s.Len {
			o = append(o, s.Off+i)
		}
	}
	return o
}

func span(a, b int64) []int64 {
	var o []int64
	for i := a; i < b; i++ {
		o = append(o, i)
	}
	return o
}

func cat(parts ...[]int64) []int64 {
	var o []int64
	for _, p := range parts {
		o = append(o, p...)
	}
	return o
}

func TestTypeMaps(t *testing.T) {
	m := must(t)
	i8, i16, i32, f64 := NewBasic(BasicInt8), NewBasic(BasicInt16), NewBasic(BasicInt32), NewBasic(BasicFloat64)
	resized := m(NewResized(i32, -4, 12))
	tests := []struct {
		name                       string
		ty                         *Type
		size, lb, ub, tlb, tub, nb int64
		offs                       []int64 // nil: do not check
	}{
		{"contiguous", m(NewContiguous(4, i32)), 16, 0, 16, 0, 16, 4, span(0, 16)},
		{"contiguous-0", m(NewContiguous(0, i32)), 0, 0, 0, 0, 0, 0, nil},
		{"vector", m(NewVector(3, 2, 4, i32)), 24, 0, 40, 0, 40, 6, cat(span(0, 8), span(16, 24), span(32, 40))},
		{"vector-stride-1", m(NewVector(2, 3, 1, i8)), 6, 0, 4, 0, 4, 6, cat(span(0, 3), span(1, 4))},
		{"hvector-negative", m(NewHvector(2, 1, -8, f64)), 16, -8, 8, -8, 8, 2, nil},
		{"indexed", m(NewIndexed([]int{3, 1}, []int{4, 0}, i32)), 16, 0, 28, 0, 28, 4, cat(span(16, 28), span(0, 4))},
		{"hindexed", m(NewHindexed([]int{1, 2}, []int64{10, 2}, i16)), 6, 2, 12, 2, 12, 3, cat(span(10, 12), span(2, 6))},
		{"indexed-block", m(NewIndexedBlock(2, []int{0, 3}, i16)), 8, 0, 10, 0, 10, 4, cat(span(0, 4), span(6, 10))},
		{"hindexed-block", m(NewHindexedBlock(1, []int64{8, 0}, i32)), 8, 0, 12, 0, 12, 2, cat(span(8, 12), span(0, 4))},
		{"struct-padded", m(NewStruct([]int{1, 1}, []int64{0, 8}, []*Type{i8, f64})), 9, 0, 16, 0, 16, 2, cat(span(0, 1), span(8, 16))},
		{"struct-tail-padding", m(NewStruct([]int{1, 1}, []int64{0, 8}, []*Type{f64, i8})), 9, 0, 16, 0, 9, 2, span(0, 9)},
		{"struct-blocks", m(NewStruct([]int{2, 3}, []int64{0, 8}, []*Type{i16, i8})), 7, 0, 12, 0, 11, 5, cat(span(0, 4), span(8, 11))},
		{"resized", resized, 4, -4, 8, 0, 4, 1, span(0, 4)},
		{"contiguous-of-resized", m(NewContiguous(2, resized)), 8, -4, 20, 0, 16, 2, cat(span(0, 4), span(12, 16))},
		{"struct-keeps-explicit-bounds", m(NewStruct([]int{1, 1}, []int64{0, 100}, []*Type{resized, i8})), 5, -4, 8, 0, 101, 2, cat(span(0, 4), span(100, 101))},
		{"subarray-c", m(NewSubarray([]int{4, 5}, []int{2, 3}, []int{1, 2}, OrderC, i8)), 6, 0, 20, 7, 15, 6, cat(span(7, 10), span(12, 15))},
		{"subarray-fortran", m(NewSubarray([]int{4, 5}, []int{2, 3}, []int{1, 2}, OrderFortran, i8)), 6, 0, 20, 9, 19, 6, cat(span(9, 11), span(13, 15), span(17, 19))},
		{"subarray-3d", m(NewSubarray([]int{2, 3, 4}, []int{1, 2, 2}, []int{1, 1, 2}, OrderC, i16)), 8, 0, 48, 36, 48, 4, cat(span(36, 40), span(44, 48))},
		{"darray-block-block", m(NewDarray(4, 3, []int{4, 4}, []Distribution{DistributeBlock, DistributeBlock}, []int{DistributeDfltDarg, DistributeDfltDarg}, []int{2, 2}, OrderC, i8)), 4, 0, 16, 10, 16, 4, []int64{10, 11, 14, 15}},
		{"darray-cyclic", m(NewDarray(3, 0, []int{8}, []Distribution{DistributeCyclic}, []int{2}, []int{3}, OrderC, i8)), 4, 0, 8, 0, 8, 4, []int64{0, 1, 6, 7}},
		{"darray-cyclic-rank1", m(NewDarray(3, 1, []int{8}, []Distribution{DistributeCyclic}, []int{2}, []int{3}, OrderC, i8)), 2, 0, 8, 2, 4, 2, []int64{2, 3}},
		{"darray-fortran", m(NewDarray(2, 1, []int{2, 3}, []Distribution{DistributeBlock, DistributeNone}, []int{DistributeDfltDarg, DistributeDfltDarg}, []int{2, 1}, OrderFortran, i8)), 3, 0, 6, 1, 6, 3, []int64{1, 3, 5}},
		{"darray-cyclic-2d", m(NewDarray(4, 1, []int{4, 4}, []Distribution{DistributeCyclic, DistributeCyclic}, []int{1, 1}, []int{2, 2}, OrderC, i8)), 4, 0, 16, 1, 12, 4, []int64{1, 3, 9, 11}},
		{"darray-block-uneven", m(NewDarray(2, 1, []int{5}, []Distribution{DistributeBlock}, []int{DistributeDfltDarg}, []int{2}, OrderC, i32)), 8, 0, 20, 12, 20, 2, span(12, 20)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ty := tc.ty
			got := [6]int64{ty.Size, ty.LB, ty.UB, ty.TrueLB, ty.TrueUB, ty.NBasic}
			want := [6]int64{tc.size, tc.lb, tc.ub, tc.tlb, tc.tub, tc.nb}
			if got != want {
				t.Fatalf("size, lb, ub, true lb, true ub, basic elements = %v, want %v", got, want)
			}
			if tc.offs != nil && !reflect.DeepEqual(offsets(ty), tc.offs) {
				t.Fatalf("packs offsets %v, want %v", offsets(ty), tc.offs)
			}
			if tc.offs == nil || tc.lb < 0 {
				return
			}
			// Two values: the second one extent further.
			buf := make([]byte, 2*ty.Extent()+ty.TrueUB)
			for i := range buf {
				buf[i] = byte(i)
			}
			packed := make([]byte, 2*ty.Size)
			ty.PackAt(packed, buf, 0)
			var wantPacked []byte
			for e := range int64(2) {
				for _, o := range tc.offs {
					wantPacked = append(wantPacked, byte(o+e*ty.Extent()))
				}
			}
			if !bytes.Equal(packed, wantPacked) {
				t.Fatalf("packed %v, want %v", packed, wantPacked)
			}
		})
	}
}

func TestConstructorErrors(t *testing.T) {
	i32 := NewBasic(BasicInt32)
	for name, f := range map[string]func() (*Type, error){
		"negative count":    func() (*Type, error) { return NewContiguous(-1, i32) },
		"negative blocklen": func() (*Type, error) { return NewVector(2, -1, 1, i32) },
		"indexed lengths":   func() (*Type, error) { return NewIndexed([]int{1}, []int{1, 2}, i32) },
		"struct nil":        func() (*Type, error) { return NewStruct([]int{1}, []int64{0}, []*Type{nil}) },
		"subarray too big":  func() (*Type, error) { return NewSubarray([]int{4}, []int{3}, []int{2}, OrderC, i32) },
		"subarray no dims":  func() (*Type, error) { return NewSubarray(nil, nil, nil, OrderC, i32) },
		"subarray order":    func() (*Type, error) { return NewSubarray([]int{4}, []int{3}, []int{0}, 7, i32) },
		"darray grid": func() (*Type, error) {
			return NewDarray(3, 0, []int{4}, []Distribution{DistributeBlock}, []int{-1}, []int{2}, OrderC, i32)
		},
		"darray none with 2": func() (*Type, error) {
			return NewDarray(2, 0, []int{4}, []Distribution{DistributeNone}, []int{-1}, []int{2}, OrderC, i32)
		},
		"darray block too small": func() (*Type, error) {
			return NewDarray(2, 0, []int{8}, []Distribution{DistributeBlock}, []int{3}, []int{2}, OrderC, i32)
		},
		"too many runs": func() (*Type, error) { return NewVector(1<<23, 1, 2, i32) },
	} {
		if _, err := f(); !errors.Is(err, ErrType) {
			t.Errorf("%s: err %v, want ErrType", name, err)
		}
	}
}

// TestPackAtChunks: packing and unpacking in chunks of any size, at any
// offset, gives what packing the whole does, and unpacking writes exactly
// the type map's bytes.
func TestPackAtChunks(t *testing.T) {
	m := must(t)
	i16, f64 := NewBasic(BasicInt16), NewBasic(BasicFloat64)
	st := m(NewStruct([]int{3, 1, 2}, []int64{0, 8, 24}, []*Type{i16, f64, i16}))
	i8, i32 := NewBasic(BasicInt8), NewBasic(BasicInt32)
	types := []*Type{
		m(NewVector(5, 3, 7, i16)),
		st,
		m(NewIndexed([]int{2, 1, 3}, []int{9, 0, 4}, st)),
		m(NewSubarray([]int{6, 7}, []int{3, 4}, []int{2, 1}, OrderFortran, f64)),
		m(NewContiguous(3, m(NewResized(st, 0, 48)))),
		// Segments that go on at one stride from value to value (one
		// strided run for every value): a resized element of 1, 2, 4, 8
		// and 3 bytes, and vectors whose extent is count times stride.
		m(NewResized(i8, 0, 2)),
		m(NewResized(i16, 0, 6)),
		m(NewResized(i32, 0, 12)),
		m(NewResized(f64, 0, 24)),
		m(NewResized(m(NewContiguous(3, i8)), 0, 5)),
		m(NewResized(m(NewVector(4, 1, 2, i8)), 0, 8)),
		m(NewResized(m(NewVector(3, 2, 3, i16)), 0, 18)),
		// and one whose next value does not go on at the stride.
		m(NewResized(m(NewVector(3, 1, 2, i8)), 0, 7)),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for ti, ty := range types {
		for _, count := range []int{1, 3, 17} {
			lo, hi := ty.Span(count)
			if lo != 0 && lo < 0 {
				t.Fatalf("type %d reaches below 0", ti)
			}
			buf := make([]byte, hi)
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			n := int64(count) * ty.Size
			whole := make([]byte, n)
			ty.PackAt(whole, buf, 0)
			var want []byte // the packed form, byte by byte from the type map
			for e := range int64(count) {
				for _, o := range offsets(ty) {
					want = append(want, buf[e*ty.Extent()+o])
				}
			}
			if !bytes.Equal(whole, want) {
				t.Fatalf("type %d count %d: packed %v, want %v", ti, count, whole, want)
			}
			for trial := 0; trial < 20; trial++ {
				chunked := make([]byte, n)
				back := make([]byte, len(buf))
				for off := int64(0); off < n; {
					k := min(n-off, 1+rng.Int64N(40))
					ty.PackAt(chunked[off:off+k], buf, off)
					ty.UnpackAt(chunked[off:off+k], back, off)
					off += k
				}
				if !bytes.Equal(chunked, whole) {
					t.Fatalf("type %d count %d: chunked pack differs", ti, count)
				}
				mask := make([]bool, len(buf))
				for e := 0; e < count; e++ {
					for _, o := range offsets(ty) {
						mask[int64(e)*ty.Extent()+o] = true
					}
				}
				for i := range buf {
					if mask[i] && back[i] != buf[i] || !mask[i] && back[i] != 0 {
						t.Fatalf("type %d count %d: unpacked byte %d is %d (in map %v, source %d)", ti, count, i, back[i], mask[i], buf[i])
					}
				}
			}
		}
	}
}

// TestElements is MPI_Get_elements on partial receives.
func TestElements(t *testing.T) {
	st, err := NewStruct([]int{1, 2}, []int64{0, 8}, []*Type{NewBasic(BasicInt32), NewBasic(BasicFloat64)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ n, want int64 }{
		{0, 0}, {4, 1}, {6, -1}, {12, 2}, {20, 3}, {24, 4}, {30, -1}, {40, 6}, {44, 7}, {60, 9}, {61, -1},
	} {
		if got := st.Elements(tc.n); got != tc.want {
			t.Errorf("Elements(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	empty, _ := NewContiguous(0, NewBasic(BasicInt8))
	if empty.Elements(0) != 0 || empty.Elements(3) != -1 {
		t.Error("elements of an empty type")
	}
}

// TestExternal32 checks known byte layouts of the external32 format:
// big-endian, complex as two parts, bools as one byte, padding dropped.
func TestExternal32(t *testing.T) {
	type rec struct {
		A int32
		B bool
		C float64
		D complex64
		E [2]int16
		F uint64
	}
	info := InfoOf(reflect.TypeFor[rec]())
	ty := info.TypeMap()
	v := []rec{{A: 0x01020304, B: true, C: 1.0, D: 1 + 2i, E: [2]int16{-2, 0x0102}, F: 0x1122334455667788}}
	want := []byte{
		1, 2, 3, 4,
		1,
		0x3F, 0xF0, 0, 0, 0, 0, 0, 0,
		0x3F, 0x80, 0, 0, 0x40, 0, 0, 0,
		0xFF, 0xFE, 1, 2,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	}
	if ty.ExternalSize(1) != int64(len(want)) {
		t.Fatalf("external size %d, want %d", ty.ExternalSize(1), len(want))
	}
	got := make([]byte, len(want))
	if err := ty.PackExternal(got, SliceBytes(v), 1); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("external32\n got % x\nwant % x", got, want)
	}
	back := make([]rec, 1)
	if err := ty.UnpackExternal(got, SliceBytes(back), 1); err != nil || back[0] != v[0] {
		t.Fatalf("round trip: %+v, %v", back[0], err)
	}
	bad := bytes.Clone(got)
	bad[4] = 2
	if err := ty.UnpackExternal(bad, SliceBytes(back), 1); !errors.Is(err, ErrDecode) {
		t.Fatalf("bool 2 accepted: %v", err)
	}
	if err := ty.UnpackExternal(got[1:], SliceBytes(back), 1); !errors.Is(err, ErrDecode) {
		t.Fatalf("short input accepted: %v", err)
	}
}

// TestGoTypeMap: the type map derived from a Go struct has its fields at
// their offsets, Go's size as extent, and a field list naming each.
func TestGoTypeMap(t *testing.T) {
	type inner struct {
		X, Y float32
	}
	type outer struct {
		Flag bool
		Pos  [2]inner
		N    int64
		Tag  [3]byte
	}
	info := InfoOf(reflect.TypeFor[outer]())
	ty := info.TypeMap()
	if ty.Size != 1+16+8+3 || ty.LB != 0 || ty.UB != 40 || ty.NBasic != 1+4+1+3 {
		t.Fatalf("size %d lb %d ub %d nbasic %d", ty.Size, ty.LB, ty.UB, ty.NBasic)
	}
	wantFields := []Field{
		{"Flag", 0, BasicBool, 1},
		{"Pos[0].X", 4, BasicFloat32, 1}, {"Pos[0].Y", 8, BasicFloat32, 1},
		{"Pos[1].X", 12, BasicFloat32, 1}, {"Pos[1].Y", 16, BasicFloat32, 1},
		{"N", 24, BasicInt64, 1},
		{"Tag", 32, BasicUint8, 3},
	}
	if got := info.Fields(); !reflect.DeepEqual(got, wantFields) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, wantFields)
	}
	if want := []Block{{0, BasicBool, 1}, {4, BasicFloat32, 4}, {24, BasicInt64, 1}, {32, BasicUint8, 3}}; !reflect.DeepEqual(ty.Blocks, want) {
		t.Fatalf("blocks %+v, want %+v", ty.Blocks, want)
	}
	if InfoOf(reflect.TypeFor[string]()).TypeMap() != nil || InfoOf(reflect.TypeFor[string]()).Fields() != nil {
		t.Fatal("a string has a type map")
	}
	if InfoOf(reflect.TypeFor[outer]()).TypeMap() != ty {
		t.Fatal("type map not cached")
	}
}

// FuzzUnpackExternal: any bytes either unpack into a struct with bools,
// complex numbers and padding, and then pack back to themselves, or fail
// cleanly.
func FuzzUnpackExternal(f *testing.F) {
	type rec struct {
		B bool
		I int16
		C complex64
		F float64
	}
	ty := InfoOf(reflect.TypeFor[rec]()).TypeMap()
	f.Add(make([]byte, ty.ExternalSize(2)))
	f.Add([]byte{1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		count := len(b) / int(max(ty.Size, 1))
		out := make([]rec, count)
		err := ty.UnpackExternal(b, SliceBytes(out), count)
		if err != nil {
			if !errors.Is(err, ErrDecode) {
				t.Fatalf("error %v does not wrap ErrDecode", err)
			}
			return
		}
		again := make([]byte, len(b))
		if err := ty.PackExternal(again, SliceBytes(out), count); err != nil {
			t.Fatalf("packing what unpacked: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed % x to % x", b, again)
		}
	})
}

// TestDarraySubarrayBruteForce checks NewDarray and NewSubarray against a
// direct computation on many random shapes: each rank's darray holds
// exactly the elements its process-grid coordinates own, in memory order,
// the ranks' parts partition the array, and a subarray holds exactly its
// box.
func TestDarraySubarrayBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	i8 := NewBasic(BasicInt8)
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(3)
		order := Order(rng.IntN(2))
		gsizes, psizes, dargs := make([]int, n), make([]int, n), make([]int, n)
		distribs := make([]Distribution, n)
		size := 1
		for d := range n {
			gsizes[d] = 1 + rng.IntN(7)
			distribs[d] = Distribution(rng.IntN(3))
			psizes[d] = 1
			if distribs[d] != DistributeNone {
				psizes[d] = 1 + rng.IntN(3)
			}
			size *= psizes[d]
			switch {
			case distribs[d] == DistributeBlock && rng.IntN(2) == 0:
				dargs[d] = (gsizes[d]+psizes[d]-1)/psizes[d] + rng.IntN(2)
			case distribs[d] == DistributeCyclic && rng.IntN(2) == 0:
				dargs[d] = 1 + rng.IntN(3)
			default:
				dargs[d] = DistributeDfltDarg
			}
		}
		total := 1
		for _, g := range gsizes {
			total *= g
		}
		// index tuples of the array in memory order
		memOrder := func(f func(idx []int, lin int)) {
			idx := make([]int, n)
			for lin := 0; lin < total; lin++ {
				r := lin
				for _, d := range dimsFastFirst(n, order) {
					idx[d] = r % gsizes[d]
					r /= gsizes[d]
				}
				f(idx, lin)
			}
		}
		owner := make([]int, total)
		for i := range owner {
			owner[i] = -1
		}
		for rank := 0; rank < size; rank++ {
			ty, err := NewDarray(size, rank, gsizes, distribs, dargs, psizes, order, i8)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			coords := make([]int, n)
			r := rank
			for d := n - 1; d >= 0; d-- {
				coords[d] = r % psizes[d]
				r /= psizes[d]
			}
			var want []int64
			memOrder(func(idx []int, lin int) {
				for d := range n {
					b := dargs[d]
					var c int
					switch distribs[d] {
					case DistributeBlock:
						if b == DistributeDfltDarg {
							b = (gsizes[d] + psizes[d] - 1) / psizes[d]
						}
						c = idx[d] / b
					case DistributeCyclic:
						if b == DistributeDfltDarg {
							b = 1
						}
						c = idx[d] / b % psizes[d]
					}
					if c != coords[d] {
						return
					}
				}
				want = append(want, int64(lin))
			})
			if got := offsets(ty); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("trial %d rank %d (gsizes %v distribs %v dargs %v psizes %v order %d): offsets %v, want %v",
					trial, rank, gsizes, distribs, dargs, psizes, order, got, want)
			}
			if ty.LB != 0 || ty.Extent() != int64(total) {
				t.Fatalf("trial %d: lb %d extent %d", trial, ty.LB, ty.Extent())
			}
			for _, o := range want {
				if owner[o] != -1 {
					t.Fatalf("trial %d: element %d owned twice", trial, o)
				}
				owner[o] = rank
			}
		}
		for i, o := range owner {
			if o == -1 {
				t.Fatalf("trial %d: element %d owned by no rank", trial, i)
			}
		}
		// A random box of the same array as a subarray.
		subsizes, starts := make([]int, n), make([]int, n)
		for d := range n {
			starts[d] = rng.IntN(gsizes[d])
			subsizes[d] = rng.IntN(gsizes[d] - starts[d] + 1)
		}
		ty, err := NewSubarray(gsizes, subsizes, starts, order, i8)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		memOrder(func(idx []int, lin int) {
			for d := range n {
				if idx[d] < starts[d] || idx[d] >= starts[d]+subsizes[d] {
					return
				}
			}
			want = append(want, int64(lin))
		})
		if got := offsets(ty); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("trial %d subarray %v %v %v order %d: offsets %v, want %v", trial, gsizes, subsizes, starts, order, got, want)
		}
	}
}

// TestCopyDirect: copying between two regular type maps directly gives
// what packing from one and unpacking into the other gives, across value
// boundaries and for partial lengths; irregular maps are refused.
func TestCopyDirect(t *testing.T) {
	m := must(t)
	f64, i32 := NewBasic(BasicFloat64), NewBasic(BasicInt32)
	type side struct {
		ty    *Type
		count int
	}
	pairs := [][2]side{
		{{m(NewVector(5, 1, 3, f64)), 2}, {m(NewVector(10, 1, 2, f64)), 1}},
		{{m(NewVector(4, 2, 3, i32)), 3}, {m(NewVector(3, 2, 5, i32)), 4}}, // 8-byte segments of int32 pairs
		{{m(NewVector(9, 3, 4, NewBasic(BasicInt8))), 1}, {m(NewVector(3, 3, 9, NewBasic(BasicInt8))), 3}},
		{{m(NewHvector(6, 2, 40, f64)), 1}, {m(NewSubarray([]int{4, 6}, []int{2, 6}, []int{1, 0}, OrderFortran, f64)), 1}},
		// Values that go on at one stride (flowStep), on one side or both.
		{{m(NewResized(NewBasic(BasicInt8), 0, 2)), 40}, {m(NewVector(20, 1, 3, NewBasic(BasicInt8))), 2}},
		{{m(NewResized(f64, 0, 16)), 6}, {m(NewResized(m(NewVector(3, 1, 2, f64)), 0, 48)), 2}},
		{{m(NewResized(m(NewVector(3, 1, 2, f64)), 0, 48)), 4}, {m(NewVector(3, 1, 5, f64)), 4}},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for pi, p := range pairs {
		s, d := p[0], p[1]
		total := int64(s.count) * s.ty.Size
		if total != int64(d.count)*d.ty.Size {
			t.Fatalf("pair %d: sizes differ", pi)
		}
		_, shi := s.ty.Span(s.count)
		_, dhi := d.ty.Span(d.count)
		src := make([]byte, shi)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		for _, n := range []int64{total, total - 3, total / 2, 1} {
			want := make([]byte, dhi)
			packed := make([]byte, n)
			s.ty.PackAt(packed, src, 0)
			d.ty.UnpackAt(packed, want, 0)
			got := make([]byte, dhi)
			if !d.ty.CopyDirect(got, s.ty, src, n) {
				t.Fatalf("pair %d: refused", pi)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("pair %d, %d bytes: direct copy differs from pack+unpack", pi, n)
			}
		}
	}
	st := m(NewStruct([]int{1, 1}, []int64{0, 8}, []*Type{i32, f64}))
	if st.CopyDirect(make([]byte, 64), m(NewVector(2, 1, 2, f64)), make([]byte, 64), 8) {
		t.Fatal("an irregular map was copied directly")
	}
}

// TestPackFromOrigin: PackFrom and UnpackFrom place the first value at a
// byte origin, so a type map reaching below its start (here bytes -4..-1
// and 4..7 of each value, extent 12) works inside a buffer.
func TestPackFromOrigin(t *testing.T) {
	i32 := NewBasic(BasicInt32)
	back := must(t)(NewIndexed([]int{1, 1}, []int{1, -1}, i32))
	buf := make([]byte, 40)
	for i := range buf {
		buf[i] = byte(i)
	}
	// Two values, the first at origin 8: bytes 8+4..8+8, 8-4..8, then +12.
	want := []byte{12, 13, 14, 15, 4, 5, 6, 7, 24, 25, 26, 27, 16, 17, 18, 19}
	got := make([]byte, 16)
	back.PackFrom(got, buf, 8, 0)
	if !bytes.Equal(got, want) {
		t.Fatalf("PackFrom: %v, want %v", got, want)
	}
	// From a packed offset inside the second value.
	back.PackFrom(got[:6], buf, 8, 10)
	if !bytes.Equal(got[:6], want[10:]) {
		t.Fatalf("PackFrom at offset 10: %v, want %v", got[:6], want[10:])
	}
	out := make([]byte, 40)
	back.UnpackFrom(want, out, 8, 0)
	for i, b := range out {
		in := (i >= 4 && i < 8) || (i >= 12 && i < 16) || (i >= 16 && i < 20) || (i >= 24 && i < 28)
		if in && b != byte(i) || !in && b != 0 {
			t.Fatalf("UnpackFrom: byte %d = %d", i, b)
		}
	}
	// A contiguous type at an origin is a plain copy.
	c := must(t)(NewContiguous(3, i32))
	c.PackFrom(got[:12], buf, 20, 0)
	if !bytes.Equal(got[:12], buf[20:32]) {
		t.Fatalf("contiguous PackFrom: %v", got[:12])
	}
}

// The cost of packing 1 MiB of data from strided layouts: a resized
// element (one segment per value, each value one step on: a single
// strided run), and a vector of such elements, against a contiguous
// copy.
func BenchmarkPackStrided(b *testing.B) {
	m := must(b)
	i8, f64 := NewBasic(BasicInt8), NewBasic(BasicFloat64)
	for _, tc := range []struct {
		name string
		ty   *Type
	}{
		{"int8-extent2", m(NewResized(i8, 0, 2))},
		{"float64-extent16", m(NewResized(f64, 0, 16))},
		{"vector4x1of8-extent64", m(NewResized(m(NewVector(4, 1, 2, f64)), 0, 64))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			count := int((1 << 20) / tc.ty.Size)
			_, hi := tc.ty.Span(count)
			buf := make([]byte, hi)
			p := make([]byte, int64(count)*tc.ty.Size)
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				tc.ty.PackAt(p, buf, 0)
			}
		})
	}
}

package datatype

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

type celsius float64

type pair struct {
	A int32
	B [3]uint8
}

type diamond struct {
	P, Q pair // the same plain type twice
}

type embeds struct {
	pair
	C float32
}

type withString struct {
	N string
}

// node refers to itself through an exported pointer; lnode through an
// unexported one.
type node struct {
	Next *node
	V    int
}

type lnode struct {
	next *lnode //lint:ignore U1000 read by reflection only
}

type rslice []rslice // a slice of itself

type ma []mb // mutually recursive slices
type mb []ma

type tree struct {
	Kids map[string]tree
	F    func(tree) tree
}

func TestPlain(t *testing.T) {
	tests := []struct {
		t     reflect.Type
		plain bool
	}{
		{reflect.TypeFor[int](), true},
		{reflect.TypeFor[int8](), true},
		{reflect.TypeFor[uint64](), true},
		{reflect.TypeFor[bool](), true},
		{reflect.TypeFor[float32](), true},
		{reflect.TypeFor[complex128](), true},
		{reflect.TypeFor[[4]float64](), true},
		{reflect.TypeFor[[0]int](), true},
		{reflect.TypeFor[[2][3]complex64](), true},
		{reflect.TypeFor[struct {
			A int32
			B [3]uint8
		}](), true},
		{reflect.TypeFor[pair](), true},
		{reflect.TypeFor[[2]pair](), true},
		{reflect.TypeFor[diamond](), true},
		{reflect.TypeFor[embeds](), true},
		{reflect.TypeFor[struct{ a, b int }](), true}, // unexported fields are memory too
		{reflect.TypeFor[celsius](), true},
		{reflect.TypeFor[struct{}](), true},
		{reflect.TypeFor[withString](), false},
		{reflect.TypeFor[struct {
			A int
			S [2]string
		}](), false},
		{reflect.TypeFor[string](), false},
		{reflect.TypeFor[*int](), false},
		{reflect.TypeFor[[]int](), false},
		{reflect.TypeFor[[3][]int](), false},
		{reflect.TypeFor[map[int]int](), false},
		{reflect.TypeFor[any](), false},
		{reflect.TypeFor[error](), false},
		{reflect.TypeFor[uintptr](), false},
		{reflect.TypeFor[[2]uintptr](), false},
		{reflect.TypeFor[unsafe.Pointer](), false},
		{reflect.TypeFor[chan int](), false},
		{reflect.TypeFor[func()](), false},
		{reflect.TypeFor[node](), false},
		{reflect.TypeFor[lnode](), false},
		{reflect.TypeFor[rslice](), false},
		{reflect.TypeFor[tree](), false},
	}
	for _, tt := range tests {
		if got := InfoOf(tt.t).Plain; got != tt.plain {
			t.Errorf("%v: Plain = %v, want %v", tt.t, got, tt.plain)
		}
	}
}

func TestInfo(t *testing.T) {
	if unsafe.Sizeof(0) != 8 {
		t.Skip("sizes below are for 64-bit platforms")
	}
	tests := []struct {
		t           reflect.Type
		size, align int
		elem        reflect.Type // nil: no Elem
		elemPlain   bool
	}{
		{reflect.TypeFor[int32](), 4, 4, nil, false},
		{reflect.TypeFor[pair](), 8, 4, nil, false},
		{reflect.TypeFor[[4]float64](), 32, 8, nil, false}, // arrays have no Elem
		{reflect.TypeFor[[]int](), 24, 8, reflect.TypeFor[int](), true},
		{reflect.TypeFor[[]pair](), 24, 8, reflect.TypeFor[pair](), true},
		{reflect.TypeFor[[]string](), 24, 8, reflect.TypeFor[string](), false},
		{reflect.TypeFor[[][]int](), 24, 8, reflect.TypeFor[[]int](), false},
		{reflect.TypeFor[map[int]int](), 8, 8, nil, false},
	}
	for _, tt := range tests {
		info := InfoOf(tt.t)
		if info.Type != tt.t || info.Size != tt.size || info.Align != tt.align {
			t.Errorf("%v: Type %v, Size %d, Align %d; want %d, %d", tt.t, info.Type, info.Size, info.Align, tt.size, tt.align)
		}
		switch {
		case tt.elem == nil && info.Elem != nil:
			t.Errorf("%v: Elem = %v, want nil", tt.t, info.Elem.Type)
		case tt.elem != nil && (info.Elem == nil || info.Elem.Type != tt.elem || info.Elem.Plain != tt.elemPlain):
			t.Errorf("%v: Elem = %+v, want %v with Plain %v", tt.t, info.Elem, tt.elem, tt.elemPlain)
		case tt.elem != nil && info.Elem != InfoOf(tt.elem):
			t.Errorf("%v: Elem is not the cached Info of %v", tt.t, tt.elem)
		}
		if InfoOf(tt.t) != info {
			t.Errorf("%v: InfoOf returns a new Info on the second call", tt.t)
		}
	}
}

func TestRecursiveTypes(t *testing.T) {
	r := InfoOf(reflect.TypeFor[rslice]())
	if r.Elem != r {
		t.Errorf("rslice: Elem = %p, want itself (%p)", r.Elem, r)
	}
	a := InfoFor[ma]()
	if a.Elem == nil || a.Elem.Type != reflect.TypeFor[mb]() || a.Elem.Elem == nil || a.Elem.Elem.Type != a.Type {
		t.Errorf("ma: Elem chain %+v", a.Elem)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[node](), reflect.TypeFor[lnode](), reflect.TypeFor[tree](), reflect.TypeFor[[]*node]()} {
		if info := InfoOf(typ); info.Plain || info.Sig == 0 {
			t.Errorf("%v: %+v", typ, info)
		}
	}
}

func TestSig(t *testing.T) {
	distinct := []reflect.Type{
		reflect.TypeFor[int32](), reflect.TypeFor[uint32](),
		reflect.TypeFor[int](), reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uintptr](),
		reflect.TypeFor[float64](), reflect.TypeFor[celsius](),
		reflect.TypeFor[struct{ A int }](), reflect.TypeFor[struct{ B int }](), reflect.TypeFor[struct{ A int32 }](),
		reflect.TypeFor[struct{ A, B int }](), reflect.TypeFor[struct{ B, A int }](),
		reflect.TypeFor[pair](), reflect.TypeFor[struct {
			A int32
			B [3]uint8
		}](),
		reflect.TypeFor[embeds](), reflect.TypeFor[struct {
			pair pair
			C    float32
		}](),
		reflect.TypeFor[[3]int](), reflect.TypeFor[[4]int](), reflect.TypeFor[[]int](), reflect.TypeFor[*int](),
		reflect.TypeFor[map[string]int](), reflect.TypeFor[map[int]string](),
		reflect.TypeFor[node](), reflect.TypeFor[lnode](), reflect.TypeFor[rslice](), reflect.TypeFor[ma](), reflect.TypeFor[mb](),
		reflect.TypeFor[string](), reflect.TypeFor[[]string](), reflect.TypeFor[[]byte](),
		reflect.TypeFor[any](), reflect.TypeFor[error](), reflect.TypeFor[chan int](), reflect.TypeFor[chan string](),
		reflect.TypeFor[struct{}](), reflect.TypeFor[[0]int](),
	}
	seen := map[uint64]reflect.Type{}
	for _, typ := range distinct {
		s := InfoOf(typ).Sig
		if s == 0 {
			t.Errorf("%v: signature 0", typ)
		}
		if other, ok := seen[s]; ok {
			t.Errorf("%v and %v share signature %x", typ, other, s)
		}
		seen[s] = typ
		for range 3 {
			if signature(typ) != s {
				t.Errorf("%v: signature not stable", typ)
			}
		}
	}
	// Tags do not count: they change neither layout nor encoding.
	if a, b := InfoFor[struct{ A int }]().Sig, InfoFor[struct {
		A int `json:"a"`
	}]().Sig; a != b {
		t.Errorf("a struct tag changes the signature: %x != %x", a, b)
	}
}

// TestDescribe pins the canonical descriptions, so that a change that would
// make two builds disagree on signatures is noticed.
func TestDescribe(t *testing.T) {
	if unsafe.Sizeof(0) != 8 {
		t.Skip("descriptions below are for 64-bit platforms")
	}
	const pkg = "github.com/mpigo/mpi/internal/datatype."
	const pairDesc = pkg + "pair=struct{A int32=int32;B array[3]uint8=uint8;}"
	tests := []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[int](), "int=int:8"},
		{reflect.TypeFor[[]float64](), "slice(float64=float64)"},
		{reflect.TypeFor[celsius](), pkg + "celsius=float64"},
		{reflect.TypeFor[pair](), pairDesc},
		{reflect.TypeFor[diamond](), pkg + "diamond=struct{P " + pairDesc + ";Q " + pkg + "pair=@1;}"},
		{reflect.TypeFor[embeds](), pkg + "embeds=struct{^pair " + pairDesc + ";C float32=float32;}"},
		{reflect.TypeFor[node](), pkg + "node=struct{Next ptr(" + pkg + "node=@0);V int=int:8;}"},
		{reflect.TypeFor[rslice](), pkg + "rslice=slice(" + pkg + "rslice=@0)"},
		{reflect.TypeFor[map[string][]int](), "map(string=string,slice(int=int:8))"},
		{reflect.TypeFor[error](), "error=interface{Error;}"},
	}
	for _, tt := range tests {
		if got := string(describe(nil, tt.t, map[reflect.Type]int{})); got != tt.want {
			t.Errorf("%v:\n got %s\nwant %s", tt.t, got, tt.want)
		}
	}
}

func TestInfoFor(t *testing.T) {
	if InfoFor[pair]() != InfoOf(reflect.TypeFor[pair]()) || InfoFor[[]string]() != InfoOf(reflect.TypeFor[[]string]()) {
		t.Error("InfoFor and InfoOf disagree")
	}
	InfoFor[pair]()
	if n := testing.AllocsPerRun(100, func() { InfoFor[pair]() }); n != 0 {
		t.Errorf("InfoFor allocates %v times", n)
	}
	InfoOf(reflect.TypeFor[[]pair]())
	if n := testing.AllocsPerRun(100, func() { InfoOf(reflect.TypeFor[[]pair]()) }); n != 0 {
		t.Errorf("InfoOf allocates %v times", n)
	}
}

func infoForMany() []*Info {
	return []*Info{
		InfoFor[int](), InfoFor[int8](), InfoFor[int16](), InfoFor[int32](), InfoFor[int64](),
		InfoFor[uint](), InfoFor[uint8](), InfoFor[uint16](), InfoFor[uint32](), InfoFor[uint64](),
		InfoFor[float32](), InfoFor[float64](), InfoFor[complex64](), InfoFor[complex128](),
		InfoFor[[]int](), InfoFor[[]int8](), InfoFor[[]int16](), InfoFor[[]int32](), InfoFor[[]int64](),
		InfoFor[string](), InfoFor[[]string](), InfoFor[pair](), InfoFor[[]pair](), InfoFor[node](),
		InfoFor[rslice](), InfoFor[ma](), InfoFor[mb](), InfoFor[celsius](), InfoFor[map[string]int](),
	}
}

// TestInfoForConcurrent races first and later calls for many types (run
// with -race); every call must return the one cached Info of its type.
func TestInfoForConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	results := make([][]*Info, 8)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				results[g] = infoForMany()
			}
		}()
	}
	wg.Wait()
	for g := range results {
		for i, info := range results[g] {
			if info != results[0][i] || info != InfoOf(info.Type) {
				t.Errorf("goroutine %d: %v: a second Info", g, info.Type)
			}
		}
	}
}

func TestValueBytes(t *testing.T) {
	v := pair{A: 0x01020304, B: [3]uint8{5, 6, 7}}
	b := ValueBytes(&v)
	if len(b) != 8 || b[4] != 5 || b[6] != 7 {
		t.Errorf("ValueBytes: %v", b)
	}
	b[5] = 60
	if v.B[1] != 60 {
		t.Error("ValueBytes copies")
	}
	var e struct{}
	if b := ValueBytes(&e); len(b) != 0 {
		t.Errorf("ValueBytes(struct{}): %v", b)
	}
}

func TestSliceBytes(t *testing.T) {
	s := []int16{1, 2, 3}
	b := SliceBytes(s)
	if len(b) != 6 || &b[0] != (*byte)(unsafe.Pointer(&s[0])) {
		t.Errorf("SliceBytes: %v does not view s", b)
	}
	if b := SliceBytes(s[1:2]); len(b) != 2 || &b[0] != (*byte)(unsafe.Pointer(&s[1])) {
		t.Errorf("SliceBytes(s[1:2]): %v", b)
	}
	for name, b := range map[string][]byte{
		"nil":       SliceBytes([]int16(nil)),
		"empty":     SliceBytes([]pair{}),
		"zero-size": SliceBytes(make([]struct{}, 5)),
	} {
		if b == nil || len(b) != 0 {
			t.Errorf("SliceBytes(%s) = %#v, want empty non-nil", name, b)
		}
	}
}

func TestBytesToSlice(t *testing.T) {
	s, b := MakeSlice[float64](24)
	if len(s) != 3 || len(b) != 24 || &b[0] != (*byte)(unsafe.Pointer(&s[0])) {
		t.Fatalf("MakeSlice: %d elements, %d bytes", len(s), len(b))
	}
	s[1] = 2.5
	back := BytesToSlice[float64](b)
	if len(back) != 3 || &back[0] != &s[0] || back[1] != 2.5 {
		t.Errorf("BytesToSlice: %v", back)
	}
	if s, b := MakeSlice[pair](20); len(s) != 2 || len(b) != 16 {
		t.Errorf("MakeSlice rounds down: %d elements, %d bytes", len(s), len(b))
	}
	for _, n := range []int{0, -1} {
		if s, b := MakeSlice[pair](n); s == nil || b == nil || len(s) != 0 || len(b) != 0 {
			t.Errorf("MakeSlice(%d): %v %v", n, s, b)
		}
	}
	if s, b := MakeSlice[struct{}](10); len(s) != 0 || len(b) != 0 {
		t.Errorf("MakeSlice[struct{}]: %v %v", s, b)
	}
	if e := BytesToSlice[int64](nil); e == nil || len(e) != 0 {
		t.Errorf("BytesToSlice(nil) = %#v", e)
	}
	mustPanic(t, "bad length", "whole number", func() { BytesToSlice[int32](make([]byte, 6)) })
	mustPanic(t, "misaligned", "aligned", func() { BytesToSlice[int32](make([]byte, 12)[1:9]) })
	mustPanic(t, "zero-size", "whole number", func() { BytesToSlice[struct{}](make([]byte, 1)) })
}

func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Errorf("%s: panic %v, want one saying %q", name, r, want)
		}
	}()
	f()
}

func BenchmarkInfoFor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		InfoFor[pair]()
	}
}

func BenchmarkInfoOf(b *testing.B) {
	t := reflect.TypeFor[pair]()
	b.ReportAllocs()
	for b.Loop() {
		InfoOf(t)
	}
}

func BenchmarkSliceBytes(b *testing.B) {
	s := make([]float64, 1024)
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n += len(SliceBytes(s))
	}
	if n == 0 {
		b.Fatal("no bytes")
	}
}

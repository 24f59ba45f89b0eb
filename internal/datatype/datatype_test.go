package datatype

import (
	"errors"
	"reflect"
	"testing"
)

type celsius float64

type pair struct {
	A int32
	B [3]uint8
}

type withString struct {
	N string
}

type node struct {
	Next *node
	V    int
}

func TestPlain(t *testing.T) {
	tests := []struct {
		t     reflect.Type
		plain bool
	}{
		{reflect.TypeFor[int](), true},
		{reflect.TypeFor[bool](), true},
		{reflect.TypeFor[complex128](), true},
		{reflect.TypeFor[[4]float64](), true},
		{reflect.TypeFor[pair](), true},
		{reflect.TypeFor[[2]pair](), true},
		{reflect.TypeFor[celsius](), true},
		{reflect.TypeFor[struct{}](), true},
		{reflect.TypeFor[withString](), false},
		{reflect.TypeFor[string](), false},
		{reflect.TypeFor[*int](), false},
		{reflect.TypeFor[[]int](), false},
		{reflect.TypeFor[map[int]int](), false},
		{reflect.TypeFor[any](), false},
		{reflect.TypeFor[uintptr](), false},
		{reflect.TypeFor[node](), false},
		{reflect.TypeFor[chan int](), false},
	}
	for _, tt := range tests {
		if got := InfoOf(tt.t).Plain; got != tt.plain {
			t.Errorf("%v: Plain = %v, want %v", tt.t, got, tt.plain)
		}
	}
	if e := InfoFor[[]pair]().Elem; e == nil || !e.Plain || e.Size != 8 {
		t.Errorf("[]pair: Elem = %+v", e)
	}
}

func TestSig(t *testing.T) {
	distinct := []reflect.Type{
		reflect.TypeFor[int32](), reflect.TypeFor[uint32](), reflect.TypeFor[float64](), reflect.TypeFor[celsius](),
		reflect.TypeFor[struct{ A int }](), reflect.TypeFor[struct{ B int }](), reflect.TypeFor[[3]int](),
		reflect.TypeFor[[4]int](), reflect.TypeFor[[]int](), reflect.TypeFor[map[string]int](), reflect.TypeFor[node](),
		reflect.TypeFor[string](), reflect.TypeFor[[]string](),
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
		if s != signature(typ) {
			t.Errorf("%v: signature not stable", typ)
		}
	}
}

func TestInfoForAllocs(t *testing.T) {
	InfoFor[pair]()
	if n := testing.AllocsPerRun(100, func() { InfoFor[pair]() }); n != 0 {
		t.Errorf("InfoFor allocates %v times", n)
	}
}

func TestByteViews(t *testing.T) {
	v := pair{A: 1, B: [3]uint8{2, 3, 4}}
	if b := ValueBytes(&v); len(b) != 8 || b[4] != 2 {
		t.Errorf("ValueBytes: %v", b)
	}
	s := []int16{1, 2, 3}
	if b := SliceBytes(s); len(b) != 6 || b[2] != 2 {
		t.Errorf("SliceBytes: %v", b)
	}
	if b := SliceBytes([]int16(nil)); b == nil || len(b) != 0 {
		t.Errorf("SliceBytes(nil) = %v", b)
	}
	e, b := MakeSlice[float64](24)
	if len(e) != 3 || len(b) != 24 {
		t.Errorf("MakeSlice: %d elements, %d bytes", len(e), len(b))
	}
}

type rec struct {
	Name  string
	Tags  []string
	Score map[string]int
	Kids  []rec
	Ptr   *int
}

func TestRoundTrip(t *testing.T) {
	seven := 7
	values := []any{
		"", "hello", []string{}, []string{"a", "", "ccc"},
		map[string]int{"x": 1},
		rec{Name: "n", Tags: []string{"t"}, Score: map[string]int{"a": 2}, Kids: []rec{{Name: "k"}}, Ptr: &seven},
		[]rec{{Name: "one"}, {Name: "two"}},
		[]map[string][]int{{"a": {1, 2}}},
	}
	for _, v := range values {
		p := reflect.New(reflect.TypeOf(v))
		p.Elem().Set(reflect.ValueOf(v))
		b, err := Encode(nil, p.Interface())
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		out := reflect.New(reflect.TypeOf(v))
		if err := Decode(b, out.Interface()); err != nil {
			t.Fatalf("%T: decode: %v", v, err)
		}
		got := out.Elem().Interface()
		if !reflect.DeepEqual(got, v) && !(reflect.ValueOf(v).Kind() == reflect.Slice && reflect.ValueOf(v).Len() == 0) {
			t.Errorf("%T: got %#v, want %#v", v, got, v)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{new(chan int), "channels cannot be sent"},
		{new(func()), "functions cannot be sent"},
		{new(struct{ F func() }), "functions cannot be sent"},
		{new(struct{ a, b int }), "no exported fields"},
		{new(uintptr), "raw pointers"},
	}
	for _, tt := range tests {
		_, err := Encode(nil, tt.v)
		if !errors.Is(err, ErrEncode) || !contains(err.Error(), tt.want) {
			t.Errorf("%T: %v, want ErrEncode saying %q", tt.v, err, tt.want)
		}
	}
	if _, err := Encode(nil, 5); !errors.Is(err, ErrEncode) {
		t.Errorf("non-pointer: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	var ss []string
	for _, b := range [][]byte{{}, {5}, {2, 1, 'a'}, {1, 1, 'a', 'x'}} {
		if err := Decode(b, &ss); !errors.Is(err, ErrDecode) {
			t.Errorf("[]string from %v: %v", b, err)
		}
	}
	var m map[string]int
	if err := Decode([]byte("garbage"), &m); !errors.Is(err, ErrDecode) {
		t.Errorf("map from garbage: %v", err)
	}
	good, _ := Encode(nil, &map[string]int{"a": 1})
	if err := Decode(append(good, 0), &m); !errors.Is(err, ErrDecode) {
		t.Errorf("trailing byte: %v", err)
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || (len(s) >= len(sub) && index(s, sub) >= 0) }

func index(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// FuzzDecode feeds arbitrary bytes to Decode: it must return an error or a
// value, never panic.
func FuzzDecode(f *testing.F) {
	for _, v := range []any{&[]string{"a", "bc"}, &map[string][]int{"k": {1, 2}}, &rec{Name: "x", Tags: []string{"y"}}} {
		b, err := Encode(nil, v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var ss []string
		Decode(b, &ss)
		var m map[string][]int
		Decode(b, &m)
		var r rec
		Decode(b, &r)
		var s string
		Decode(b, &s)
	})
}

func BenchmarkInfoFor(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		InfoFor[pair]()
	}
}

func BenchmarkEncodeStrings(b *testing.B) {
	v := []string{"alpha", "beta", "gamma", "delta"}
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for i := 0; i < b.N; i++ {
		buf, _ = Encode(buf[:0], &v)
	}
}

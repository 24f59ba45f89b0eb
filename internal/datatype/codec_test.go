package datatype

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

type name string

type names []name

type floats []float64

// flags is plain and holds bools, which Decode validates.
type flags struct {
	N int32
	B [2]struct {
		On bool
		_  [3]byte
	}
}

type rec struct {
	Name  string
	Tags  []string
	Score map[string]int
	Kids  []rec
	Ptr   *int
	Pair  pair
	When  time.Time
	_     int // blank: nothing to send
	Extra any
}

type shape interface{ Area() float64 }

type square struct{ Side float64 }

func (s square) Area() float64 { return s.Side * s.Side }

type drawing struct {
	Shapes []shape
	Main   shape
}

func init() {
	gob.Register(square{})
	gob.Register(rec{})
}

// planned goes through the compiled codec: no interfaces.
type planned struct {
	Name string
	Tags []string
	Kids []planned
	Nil  []int
	Ptr  *int
	When time.Time
	Big  *big.Int
	M    map[string]pair
}

type scores map[string]int64 // a named map with a specialised plan

type list struct {
	V    int
	Next *list
}

// roundTrip encodes v after a prefix, checks that Encode appended, and
// decodes the result into a new value of v's type.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	prefix := []byte("prefix")
	b, err := Encode(prefix, p.Interface())
	if err != nil {
		t.Fatalf("%T: Encode: %v", v, err)
	}
	if !bytes.HasPrefix(b, []byte("prefix")) {
		t.Fatalf("%T: Encode did not append: %q", v, b)
	}
	out := reflect.New(reflect.TypeOf(v))
	if err := Decode(b[len(prefix):], out.Interface()); err != nil {
		t.Fatalf("%T: Decode: %v", v, err)
	}
	return out.Elem().Interface()
}

func TestRoundTrip(t *testing.T) {
	seven := 7
	pseven := &seven
	on := [2]struct {
		On bool
		_  [3]byte
	}{{On: true}, {On: true}}
	when := time.Date(2026, 11, 22, 12, 0, 0, 5, time.UTC)
	tests := []struct {
		v, want any // want nil: v itself
	}{
		{"", nil},
		{"hello, 世界", nil},
		{name("named"), nil},
		{[]string{}, nil},
		{[]string{"a", "", "ccc", strings.Repeat("x", 300)}, nil},
		{names{"x", "y"}, nil},
		{[]byte{}, nil},
		{[]byte{0, 1, 255}, nil},
		{42, nil},
		{true, nil},
		{pair{A: -1, B: [3]uint8{1, 2, 3}}, nil},
		{struct{ a, b int }{1, 2}, nil}, // plain: travels as memory
		{struct{}{}, nil},
		{[]pair{{A: 1}, {A: 2}}, nil},
		{[]bool{true, false}, nil},
		{[]flags{{N: 1}, {N: 2, B: on}}, nil},
		{floats{1.5, 2.5}, nil},
		{[]float64{}, nil},
		{[]struct{}{{}, {}, {}}, nil}, // zero-size elements: through gob
		{map[string]int{"x": 1, "y": -2}, nil},
		{map[string][]int{"a": {1, 2}, "b": {}, "c": nil}, nil}, // empty and nil stay apart
		{map[[2]int]string{{1, 2}: "a"}, nil},
		{rec{
			Name: "n", Tags: []string{"t"}, Score: map[string]int{"a": 2},
			Kids: []rec{{Name: "k", Tags: []string{}}, {Ptr: &seven}},
			Ptr:  &seven, Pair: pair{A: 3}, When: when, Extra: square{2},
		}, rec{
			Name: "n", Tags: []string{"t"}, Score: map[string]int{"a": 2},
			Kids: []rec{{Name: "k"}, {Ptr: &seven}}, // an empty slice arrives as nil (rec goes through gob: it has an interface)
			Ptr:  &seven, Pair: pair{A: 3}, When: when, Extra: square{2},
		}},
		{planned{Name: "p", Tags: []string{}, Kids: []planned{{Name: "k", Nil: nil}}, Ptr: &seven, When: when, Big: big.NewInt(7), M: map[string]pair{"x": {A: 1}}}, nil},
		{[]*int{nil, &seven}, nil},
		{map[string]string{"k": "v", "": "", "long": strings.Repeat("y", 200)}, nil},
		{scores{"a": 1, "b": -1}, nil},
		{map[string]uint8{"x": 255}, nil},
		{struct{ M, N map[string]float32 }{M: map[string]float32{}, N: nil}, nil},
		{[]rec{{Name: "one"}, {Name: "two", Kids: []rec{{Name: "three"}}}}, nil},
		{&list{1, &list{2, &list{3, nil}}}, nil},
		{(*list)(nil), nil},
		{&pseven, nil},
		{[]*int{&seven}, nil},
		{drawing{Shapes: []shape{square{1}, square{2}}, Main: square{3}}, nil},
		{drawing{}, nil},
		{[2]string{"a", "b"}, nil},
		{any(3.5), nil},
		{any(rec{Name: "boxed"}), nil},
		{big.NewInt(-12345), nil},
		{time.Duration(5), nil},
	}
	for _, tt := range tests {
		want := tt.want
		if want == nil {
			want = tt.v
		}
		if got := roundTrip(t, tt.v); !reflect.DeepEqual(got, want) {
			t.Errorf("%T: got %#v, want %#v", tt.v, got, want)
		}
	}
}

// TestFormats pins the formats that do not go through gob.
func TestFormats(t *testing.T) {
	i := int32(0x01020304)
	tests := []struct {
		v    any
		want []byte
	}{
		{"abc", []byte("abc")},
		{name("abc"), []byte("abc")},
		{[]string{"a", "", "bc"}, []byte{3, 1, 'a', 0, 2, 'b', 'c'}},
		{names{"a", "", "bc"}, []byte{3, 1, 'a', 0, 2, 'b', 'c'}},
		{[]string{}, []byte{0}},
		{[]string(nil), []byte{0}},
		{[]byte("xyz"), []byte("xyz")},
		{i, ValueBytes(&i)},
		{[]int16{1, 2}, SliceBytes([]int16{1, 2})},
		{[]int16(nil), []byte{}},
	}
	for _, tt := range tests {
		p := reflect.New(reflect.TypeOf(tt.v))
		p.Elem().Set(reflect.ValueOf(tt.v))
		got, err := Encode(nil, p.Interface())
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%T %v: %v, %v; want %v", tt.v, tt.v, got, err, tt.want)
		}
	}
	// Slices of plain elements and strings arrive empty, not nil.
	var f []float64
	var s []string
	if err := Decode(nil, &f); err != nil || f == nil || len(f) != 0 {
		t.Errorf("[]float64 from nothing: %#v, %v", f, err)
	}
	if err := Decode([]byte{0}, &s); err != nil || s == nil || len(s) != 0 {
		t.Errorf("[]string from count 0: %#v, %v", s, err)
	}
}

func TestDecodeReplaces(t *testing.T) {
	r := rec{Name: "old", Tags: []string{"old"}, Score: map[string]int{"old": 1}}
	b, err := Encode(nil, &rec{Score: map[string]int{"new": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Decode(b, &r); err != nil {
		t.Fatal(err)
	}
	if want := (rec{Score: map[string]int{"new": 2}}); !reflect.DeepEqual(r, want) {
		t.Errorf("Decode merged: %#v", r)
	}
	b, _ = Encode(nil, new(rec)) // the zero value
	if err := Decode(b, &r); err != nil || !reflect.DeepEqual(r, rec{}) {
		t.Errorf("zero value: %#v, %v", r, err)
	}
	// Failed decodes leave the target alone.
	r = rec{Name: "keep"}
	if err := Decode(b[:len(b)-1], &r); err == nil || r.Name != "keep" {
		t.Errorf("truncated: %v, %#v", err, r)
	}
	ss := []string{"keep"}
	if err := Decode([]byte{2, 1, 'a'}, &ss); err == nil || len(ss) != 1 || ss[0] != "keep" {
		t.Errorf("[]string: %v, %#v", err, ss)
	}
	fl := flags{N: 9}
	if err := Decode(make([]byte, 12), &fl); err != nil || fl.N != 0 {
		t.Errorf("flags: %v, %#v", err, fl)
	}
	// A plain value travels as its memory, in the machine's byte order.
	one := binary.NativeEndian.AppendUint32(nil, 1)
	if err := Decode(append(one, 2, 0, 0, 0, 0, 0, 0, 0), &fl); err == nil || fl.N != 0 {
		t.Errorf("flags with a bad bool: %v, %#v", err, fl)
	}
	// Only the bools are checked; the bytes of the blank field are not.
	if err := Decode(append(one, 1, 7, 7, 7, 0, 0, 0, 0), &fl); err != nil || fl.N != 1 || !fl.B[0].On {
		t.Errorf("flags: %v, %#v", err, fl)
	}
}

func TestDecodeDoesNotShare(t *testing.T) {
	b := []byte{2, 1, 'a', 1, 'b'}
	var ss []string
	var bs []byte
	var is []int8
	var s name
	if Decode(b, &ss) != nil || Decode(b, &bs) != nil || Decode(b, &is) != nil || Decode(b, &s) != nil {
		t.Fatal("decode failed")
	}
	b[2], b[4] = 'x', 'y'
	if ss[0] != "a" || ss[1] != "b" || bs[2] != 'a' || is[2] != 'a' || s[2] != 'a' {
		t.Errorf("results changed with the input: %q %q %v %q", ss, bs, is, s)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		t    reflect.Type
		want string // "" for no error; else the whole message, or a part of it
	}{
		{reflect.TypeFor[int](), ""},
		{reflect.TypeFor[struct{ a, b int }](), ""}, // plain: travels as memory
		{reflect.TypeFor[string](), ""},
		{reflect.TypeFor[withString](), ""},
		{reflect.TypeFor[rec](), ""},
		{reflect.TypeFor[node](), ""},
		{reflect.TypeFor[time.Time](), ""}, // no exported fields, but MarshalBinary
		{reflect.TypeFor[*big.Int](), ""},
		{reflect.TypeFor[struct{ T time.Time }](), ""},
		{reflect.TypeFor[any](), ""},
		{reflect.TypeFor[drawing](), ""},
		{reflect.TypeFor[rslice](), ""},
		{reflect.TypeFor[chan int](), "datatype: cannot encode chan int: channels cannot be sent"},
		{reflect.TypeFor[func()](), "datatype: cannot encode func(): functions cannot be sent"},
		{reflect.TypeFor[uintptr](), "datatype: cannot encode uintptr: addresses mean nothing on another rank"},
		{reflect.TypeFor[unsafe.Pointer](), "datatype: cannot encode unsafe.Pointer: addresses"},
		{reflect.TypeFor[struct{ F func() }](), "datatype: cannot encode struct { F func() }: func() at .F: functions cannot be sent"},
		{reflect.TypeFor[struct{ s string }](), "datatype: cannot encode struct { s string }: field s is unexported, and only exported fields of encoded types are sent (export it, or give struct { s string } a GobEncode or MarshalBinary method)"},
		{reflect.TypeFor[struct{ c chan int }](), "field c is unexported"}, // gob would refuse it
		{reflect.TypeFor[lnode](), "cannot encode datatype.lnode: field next is unexported"},
		{reflect.TypeFor[struct {
			A string
			b int
		}](), "field b is unexported"}, // gob would drop it silently
		{reflect.TypeFor[struct {
			A string
			_ int
			m struct{}
		}](), ""}, // nothing to lose
		{reflect.TypeFor[[]struct{ X struct{ C chan int } }](), "chan int at [].X.C: channels"},
		{reflect.TypeFor[map[chan int]int](), "chan int at (key): channels"},
		{reflect.TypeFor[*[]map[string]*uintptr](), "uintptr at [][]: addresses"},
		{reflect.TypeFor[tree](), "func(datatype.tree) datatype.tree at .F: functions"},
		{reflect.TypeFor[struct {
			A int
			L lnode
		}](), "datatype.lnode at .L: field next is unexported"},
	}
	for _, tt := range tests {
		err := Check(tt.t)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: %v", tt.t, err)
		case tt.want != "" && (!errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: %v, want ErrEncode saying %q", tt.t, err, tt.want)
		}
		if err != nil {
			// Encode and Decode refuse the type the same way.
			v := reflect.New(tt.t).Interface()
			if _, eerr := Encode(nil, v); !errors.Is(eerr, ErrEncode) || eerr.Error() != err.Error() {
				t.Errorf("%v: Encode: %v", tt.t, eerr)
			}
			if derr := Decode(nil, v); !errors.Is(derr, ErrDecode) || !strings.Contains(derr.Error(), "cannot decode "+tt.t.String()) {
				t.Errorf("%v: Decode: %v", tt.t, derr)
			}
		}
	}
}

type badMarshal struct{ X string } // not plain: goes through gob, which calls MarshalBinary

func (badMarshal) MarshalBinary() ([]byte, error) { panic("boom") }

type unregistered struct{ X int }

type unregisteredShape struct{ R float64 }

func (unregisteredShape) Area() float64 { return 0 }

func TestEncodeErrors(t *testing.T) {
	var nilp *string
	tests := []struct {
		v    any
		want string
	}{
		{5, "cannot encode int: Encode needs a non-nil pointer"},
		{nil, "cannot encode <nil>: Encode needs a non-nil pointer"},
		{nilp, "cannot encode *string: Encode needs a non-nil pointer"},
		{(*rec)(nil), "cannot encode *datatype.rec: Encode needs a non-nil pointer"},
		{&[]*rec{nil}, "cannot encode []*datatype.rec: gob: encodeArray: nil element"},
		{&drawing{Main: unregisteredShape{}}, "cannot encode datatype.drawing: gob: type not registered for interface: datatype.unregisteredShape"},
		{&rec{Extra: unregistered{}}, "cannot encode datatype.rec: gob: type not registered for interface: datatype.unregistered"},
		{&rec{Extra: unregistered{}}, "every rank registers its type first: gob.Register(datatype.unregistered{})"},
		{&badMarshal{}, "cannot encode datatype.badMarshal: boom"},
	}
	for _, tt := range tests {
		dst := []byte("keep")
		out, err := Encode(dst, tt.v)
		if !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%T: %v, want ErrEncode saying %q", tt.v, err, tt.want)
		}
		if string(out) != "keep" {
			t.Errorf("%T: dst changed to %q", tt.v, out)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	goodMap, _ := Encode(nil, &map[string]int{"a": 1})
	goodRec, _ := Encode(nil, &rec{Name: "x"})
	tests := []struct {
		target any
		b      []byte
		want   string
	}{
		{new([]string), nil, "cannot decode []string: bad count"},
		{new([]string), []byte{0x80}, "bad count"},
		{new([]string), []byte{5}, "count 5 exceeds the 0 bytes left"},
		{new([]string), []byte{3, 1, 'a'}, "count 3 exceeds the 2 bytes left"},
		{new([]string), []byte{2, 1, 'a'}, "bad length of element 1"},
		{new([]string), []byte{2, 1, 'a', 5}, "bad length of element 1"},
		{new([]string), []byte{1, 1, 'a', 'x'}, "1 trailing bytes"},
		{new(names), []byte{1, 1}, "cannot decode datatype.names: bad length of element 0"},
		{new(int32), []byte{1, 2, 3}, "cannot decode int32: 3 bytes, want 4"},
		{new(pair), nil, "cannot decode datatype.pair: 0 bytes, want 8"},
		{new([]int32), []byte{1, 2, 3, 4, 5}, "cannot decode []int32: 5 bytes are not a whole number of 4-byte elements"},
		{new(bool), []byte{2}, "cannot decode bool: a bool is neither 0 nor 1"},
		{new(flags), []byte{1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0}, "cannot decode datatype.flags: a bool is neither 0 nor 1"},
		{new([]bool), []byte{0, 1, 2}, "cannot decode []bool: a bool of element 2 is neither 0 nor 1"},
		{new([]flags), append(make([]byte, 12), 1, 0, 0, 0, 1, 0, 0, 0, 255, 0, 0, 0), "a bool of element 1 is neither 0 nor 1"},
		{new(map[string]int), nil, "cannot decode map[string]int: bad length"},
		{new(map[string]int), []byte{200, 1}, "cannot decode map[string]int: 199 elements cannot fit in the 0 bytes left"},
		{new(planned), []byte{1, 'x', 2}, "cannot decode datatype.planned: 1 elements cannot fit in the 0 bytes left"},
		{new(*int), []byte{2}, "bad pointer flag 2"},
		{new(map[string]int), []byte("garbage"), "cannot decode map[string]int"},
		{new(map[string]int), append(goodMap[:len(goodMap):len(goodMap)], 0), "cannot decode map[string]int: 1 trailing bytes"},
		{new(map[string]int), goodMap[:len(goodMap)-1], "cannot decode map[string]int"},
		{new(map[string]int), goodRec, "cannot decode map[string]int"}, // another type
		{new(rec), goodMap, "cannot decode datatype.rec"},
		{new(chan int), nil, "cannot decode chan int: channels cannot be sent"},
		{5, nil, "cannot decode int: Decode needs a non-nil pointer"},
		{(*[]string)(nil), nil, "cannot decode *[]string: Decode needs a non-nil pointer"},
	}
	for _, tt := range tests {
		err := Decode(tt.b, tt.target)
		if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%T from %q: %v, want ErrDecode saying %q", tt.target, tt.b, err, tt.want)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to Decode into several types: it must
// return a value or an error wrapping ErrDecode, never panic; and a value
// it returns must encode again.
func FuzzDecode(f *testing.F) {
	seven := 7
	for _, v := range []any{
		&[]string{"a", "bc"}, &[]string{}, new(string),
		&map[string][]int{"k": {1, 2}, "": nil},
		&rec{Name: "x", Tags: []string{"y"}, Kids: []rec{{Ptr: &seven}}, Score: map[string]int{"s": 1}, Extra: square{1}},
		&[]int32{1, 2, 3}, &pair{A: 9}, &[]flags{{N: 1}},
		&drawing{Shapes: []shape{square{2}}},
		&planned{Name: "p", Tags: []string{"a"}, Kids: []planned{{Name: "k"}}, Ptr: &seven, Big: big.NewInt(3), M: map[string]pair{"x": {A: 1}}},
		&map[string]float64{"a": 1, "b": 2},
		func() any { l := benchList(3); return &l }(), &selfSlice{{}, nil}, &selfMap{"k": {}},
	} {
		b, err := Encode(nil, v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		targets := []any{
			new([]string), new(string), new(map[string][]int), new(rec),
			new([]int32), new(pair), new([]flags), new(drawing),
			new(planned), new(map[string]float64), new(map[string]string),
			new(*list), new(selfSlice), new(selfMap),
		}
		for _, target := range targets {
			if err := Decode(b, target); err != nil {
				if !errors.Is(err, ErrDecode) {
					t.Errorf("%T: error %v does not wrap ErrDecode", target, err)
				}
				continue
			}
			if _, err := Encode(nil, target); err != nil {
				t.Errorf("%T: decoded a value that does not encode: %v", target, err)
			}
		}
	})
}

func BenchmarkEncodeStrings(b *testing.B) {
	v := []string{"alpha", "beta", "gamma", "delta"}
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf, _ = Encode(buf[:0], &v)
	}
}

func BenchmarkDecodeStrings(b *testing.B) {
	enc, _ := Encode(nil, &[]string{"alpha", "beta", "gamma", "delta"})
	var v []string
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(enc, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeNamedStrings(b *testing.B) {
	v := names{"alpha", "beta", "gamma", "delta"}
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf, _ = Encode(buf[:0], &v)
	}
}

func BenchmarkEncodeGob(b *testing.B) {
	v := rec{Name: "n", Tags: []string{"a", "b"}, Score: map[string]int{"x": 1}, Kids: []rec{{Name: "k"}}}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = Encode(buf[:0], &v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf)), "bytes")
}

func BenchmarkDecodeGob(b *testing.B) {
	enc, _ := Encode(nil, &rec{Name: "n", Tags: []string{"a", "b"}, Score: map[string]int{"x": 1}, Kids: []rec{{Name: "k"}}})
	b.ReportAllocs()
	for b.Loop() {
		var v rec
		if err := Decode(enc, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// benchItem is an ordinary value of the compiled codec: strings, a slice,
// a pointer and a map, as a typed Send of a record carries.
type benchItem struct {
	ID    int64
	Name  string
	Tags  []string
	Owner *pair
	Score map[string]int
}

func benchItems() []benchItem {
	items := make([]benchItem, 100)
	for i := range items {
		items[i] = benchItem{ID: int64(i), Name: "item", Tags: []string{"a", "b"}, Owner: &pair{A: int32(i)}, Score: map[string]int{"x": i}}
	}
	return items
}

// benchList is a linked list of n nodes: one pointer per level, the worst
// case for what the codec does per pointer.
func benchList(n int) *list {
	var l *list
	for i := range n {
		l = &list{V: i, Next: l}
	}
	return l
}

func BenchmarkEncodePlan(b *testing.B) {
	v := benchItems()
	b.ReportAllocs()
	buf, _ := Encode(nil, &v)
	for b.Loop() {
		buf, _ = Encode(buf[:0], &v)
	}
}

func BenchmarkDecodePlan(b *testing.B) {
	v := benchItems()
	enc, _ := Encode(nil, &v)
	b.ReportAllocs()
	for b.Loop() {
		var out []benchItem
		if err := Decode(enc, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeList(b *testing.B) {
	v := benchList(100)
	b.ReportAllocs()
	buf, _ := Encode(nil, &v)
	for b.Loop() {
		buf, _ = Encode(buf[:0], &v)
	}
}

func BenchmarkDecodeList(b *testing.B) {
	v := benchList(100)
	enc, _ := Encode(nil, &v)
	b.ReportAllocs()
	for b.Loop() {
		var out *list
		if err := Decode(enc, &out); err != nil {
			b.Fatal(err)
		}
	}
}

package datatype

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"testing"
	"unsafe"
)

type swapPlain struct {
	A int32
	B float64
	C [3]uint16
	D bool
	E complex64
	F int64
	G uint8
}

func bytesOf[T any](p *T) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p)) }

// bigEndianOf is v as a machine of the other byte order holds it,
// written field by field with encoding/binary (the reference).
func otherOrder() binary.ByteOrder {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func TestSwapPlainAgainstBinary(t *testing.T) {
	v := swapPlain{A: -7, B: math.Pi, C: [3]uint16{1, 0x1234, 0xfedc}, D: true, E: complex(1.5, -2), F: -1 << 40, G: 9}
	b := append([]byte(nil), bytesOf(&v)...)
	InfoOf(reflect.TypeFor[swapPlain]()).SwapPlain(b)
	o := otherOrder()
	off := func(f string) uintptr { sf, _ := reflect.TypeFor[swapPlain]().FieldByName(f); return sf.Offset }
	for _, tc := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"A", uint64(o.Uint32(b[off("A"):])), uint64(uint32(v.A))},
		{"B", o.Uint64(b[off("B"):]), math.Float64bits(v.B)},
		{"C[1]", uint64(o.Uint16(b[off("C")+2:])), 0x1234},
		{"D", uint64(b[off("D")]), 1},
		{"E.re", uint64(o.Uint32(b[off("E"):])), uint64(math.Float32bits(1.5))},
		{"E.im", uint64(o.Uint32(b[off("E")+4:])), uint64(math.Float32bits(-2))},
		{"F", o.Uint64(b[off("F"):]), uint64(v.F)},
		{"G", uint64(b[off("G")]), 9},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, tc.got, tc.want)
		}
	}
	// Padding is not data: it is left as it was.
	pad := off("B") - 4 // after A
	if !bytes.Equal(b[4:4+pad], bytesOf(&v)[4:4+pad]) {
		t.Errorf("padding changed")
	}
	// Twice is the identity.
	InfoOf(reflect.TypeFor[swapPlain]()).SwapPlain(b)
	if !bytes.Equal(b, bytesOf(&v)) {
		t.Errorf("swapping twice changed the value")
	}
}

func TestTypeSwapDerived(t *testing.T) {
	// A vector of 3 blocks of 2 int16, stride 3: bytes between blocks stay.
	vec, err := NewVector(3, 2, 3, NewBasic(BasicInt16))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2*(3*3))
	for i := range buf {
		buf[i] = byte(i)
	}
	vec.Swap(buf, 1)
	want := []byte{1, 0, 3, 2, 4, 5, 7, 6, 9, 8, 10, 11, 13, 12, 15, 14, 16, 17}
	if !bytes.Equal(buf, want) {
		t.Errorf("vector: %v, want %v", buf, want)
	}
	// A uniform contiguous run: the whole buffer.
	f := NewBasic(BasicComplex128)
	c := []complex128{complex(1, 2), complex(-3, 4)}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), 32)
	f.Swap(b, 2)
	if o := otherOrder(); math.Float64frombits(o.Uint64(b[8:])) != 2 || math.Float64frombits(o.Uint64(b[16:])) != -3 {
		t.Errorf("complex128 parts not swapped one by one: %v", b)
	}
}

type swapEnc struct {
	Name  string
	Vals  []float64
	M     map[int32]float32
	P     *swapPlain
	S     []swapPlain
	Arr   [2]map[string]uint16
	Bytes []byte
}

func TestDecodeSwapped(t *testing.T) {
	p := swapPlain{A: 3, B: -1, F: 1 << 50}
	v := swapEnc{Name: "n", Vals: []float64{1, math.Inf(-1)}, M: map[int32]float32{0x01020304: 0.5, -2: 3},
		P: &p, S: []swapPlain{p, {A: -1}}, Arr: [2]map[string]uint16{{"a": 0x0102}, nil}, Bytes: []byte{1, 2, 3}}
	// What a machine of the other order sends for v: the encoding of
	// v's numbers byte-reversed (SwapDecoded is its own inverse).
	w := v
	w.Vals, w.S = append([]float64(nil), v.Vals...), append([]swapPlain(nil), v.S...)
	w.M = map[int32]float32{}
	for k, x := range v.M {
		w.M[k] = x
	}
	pp := p
	w.P = &pp
	w.Arr = [2]map[string]uint16{{"a": 0x0102}, nil}
	SwapDecoded(&w)
	foreign, err := Encode(nil, &w)
	if err != nil {
		t.Fatal(err)
	}
	var got swapEnc
	if err := DecodeSwapped(foreign, &got, false); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Errorf("got %+v\nwant %+v", got, v)
	}
	if reflect.DeepEqual(w, v) {
		t.Errorf("the foreign value equals the native one: nothing was swapped")
	}
}

// FuzzDecodeSwapped: bytes from a peer of the other order never crash
// the decoder or the conversion.
func FuzzDecodeSwapped(f *testing.F) {
	p := swapPlain{A: 1}
	b, _ := Encode(nil, &swapEnc{Name: "x", Vals: []float64{1}, M: map[int32]float32{1: 2}, P: &p, S: []swapPlain{p}})
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var v swapEnc
		_ = DecodeSwapped(b, &v, false)
		var m map[int64][]float32
		_ = DecodeSwapped(b, &m, false)
		var s []swapPlain
		_ = DecodeSwapped(b, &s, false)
	})
}

// The cost of converting a message against copying it, per MiB (the
// emulator makes timings of the real mixed job meaningless; this is the
// conversion alone, in one process).
func BenchmarkConvert(b *testing.B) {
	const mib = 1 << 20
	f64 := InfoOf(reflect.TypeFor[float64]())
	st := InfoOf(reflect.TypeFor[swapPlain]())
	n := mib / int(unsafe.Sizeof(swapPlain{}))
	structs := make([]swapPlain, n)
	sb := unsafe.Slice((*byte)(unsafe.Pointer(&structs[0])), n*int(unsafe.Sizeof(swapPlain{})))
	buf := make([]byte, mib)
	dst := make([]byte, mib)
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(mib)
		for b.Loop() {
			copy(dst, buf)
		}
	})
	b.Run("float64", func(b *testing.B) {
		b.SetBytes(mib)
		for b.Loop() {
			f64.SwapPlain(buf)
		}
	})
	b.Run("struct", func(b *testing.B) {
		b.SetBytes(int64(len(sb)))
		for b.Loop() {
			st.SwapPlain(sb)
		}
	})
	b.Run("external32-float64", func(b *testing.B) {
		t := NewBasic(BasicFloat64)
		b.SetBytes(mib)
		for b.Loop() {
			t.UnpackExternal(buf, dst, mib/8)
		}
	})
}

// SwapPacked converts the packed form as Swap converts the values: pack
// after Swap and SwapPacked after pack give the same bytes.
func TestSwapPacked(t *testing.T) {
	vec, err := NewVector(3, 2, 3, NewBasic(BasicInt16))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2*vec.Extent())
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	packed := make([]byte, 2*vec.Size)
	vec.PackAt(packed, buf, 0)
	vec.SwapPacked(packed, 2)
	swapped := append([]byte(nil), buf...)
	vec.Swap(swapped, 2)
	want := make([]byte, len(packed))
	vec.PackAt(want, swapped, 0)
	if !bytes.Equal(packed, want) {
		t.Errorf("SwapPacked: %v, want %v", packed, want)
	}
	if !vec.Words() || NewBasic(BasicByte).Words() {
		t.Errorf("Words: int16 vector %v, byte %v", vec.Words(), NewBasic(BasicByte).Words())
	}
}

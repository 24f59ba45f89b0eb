package datatype

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// TestBasicSizes: every kind takes its memory size in external32 and is
// itself in signatures, except C's long and unsigned long, which take 4
// bytes there and match the 64-bit integers.
func TestBasicSizes(t *testing.T) {
	for k := BasicByte; k <= BasicLast; k++ {
		ext, canon := k.Size(), k
		switch k {
		case BasicCLong:
			ext, canon = 4, BasicInt64
		case BasicCUlong:
			ext, canon = 4, BasicUint64
		}
		if k.ExternalSize() != ext || k.Canon() != canon {
			t.Errorf("%s: external size %d, canon %s; want %d, %s", k, k.ExternalSize(), k.Canon(), ext, canon)
		}
	}
	if BasicCLong.Size() != 8 || BasicCUlong.Size() != 8 || BasicCLong.String() != "clong" || BasicCUlong.String() != "culong" {
		t.Fatalf("C long: sizes %d %d, names %s %s", BasicCLong.Size(), BasicCUlong.Size(), BasicCLong, BasicCUlong)
	}
}

// words64 lays out 64-bit integers in machine order.
func words64(vs ...uint64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.NativeEndian.PutUint64(b[8*i:], v)
	}
	return b
}

// TestExternalCLong packs C longs into their 4 big-endian bytes and back,
// sign-extending MPI_LONG and zero-extending MPI_UNSIGNED_LONG.
func TestExternalCLong(t *testing.T) {
	u := func(v int64) uint64 { return uint64(v) }
	cases := []struct {
		name string
		k    Basic
		vals []uint64
		want []byte
	}{
		{"long small", BasicCLong, []uint64{0, 1, u(-1), u(-2)}, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{"long limits", BasicCLong, []uint64{math.MaxInt32, u(math.MinInt32)}, []byte{0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0}},
		{"long order", BasicCLong, []uint64{0x01020304}, []byte{1, 2, 3, 4}},
		{"unsigned", BasicCUlong, []uint64{0, 0x01020304, math.MaxUint32}, []byte{0, 0, 0, 0, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff}},
		{"none", BasicCLong, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ty := NewBasic(c.k)
			n := len(c.vals)
			if got := ty.ExternalSize(n); got != int64(len(c.want)) {
				t.Fatalf("external size %d, want %d", got, len(c.want))
			}
			out := make([]byte, len(c.want))
			if err := ty.PackExternal(out, words64(c.vals...), n); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, c.want) {
				t.Fatalf("packed % x, want % x", out, c.want)
			}
			back := make([]byte, 8*n)
			if err := ty.UnpackExternal(out, back, n); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, words64(c.vals...)) {
				t.Fatalf("unpacked % x, want % x", back, words64(c.vals...))
			}
		})
	}
}

// TestExternalCLongRange: a value beyond 32 bits fails with ErrRange.
func TestExternalCLongRange(t *testing.T) {
	below := int64(math.MinInt32) - 1
	cases := []struct {
		name string
		k    Basic
		v    uint64
	}{
		{"long above", BasicCLong, math.MaxInt32 + 1},
		{"long below", BasicCLong, uint64(below)},
		{"long max", BasicCLong, math.MaxInt64},
		{"unsigned above", BasicCUlong, math.MaxUint32 + 1},
		{"unsigned -1", BasicCUlong, math.MaxUint64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The bad value is the second of three.
			in := words64(1, c.v, 2)
			out := make([]byte, 12)
			err := NewBasic(c.k).PackExternal(out, in, 3)
			if !errors.Is(err, ErrRange) {
				t.Fatalf("packing %#x: %v, want ErrRange", c.v, err)
			}
		})
	}
}

// TestExternalCLongStruct: C longs among other kinds, in a strided
// layout: the external form is the elements back to back at their
// external sizes, and unpacks to the same memory.
func TestExternalCLongStruct(t *testing.T) {
	// struct { long a; int b; unsigned long c; } of C (24 bytes, b padded),
	// as a vector of 2 of every other one.
	st, err := NewStruct([]int{1, 1, 1}, []int64{0, 8, 16}, []*Type{NewBasic(BasicCLong), NewBasic(BasicInt32), NewBasic(BasicCUlong)})
	if err != nil {
		t.Fatal(err)
	}
	vec, err := NewVector(2, 1, 2, st)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != 20 || st.ExternalSize(1) != 12 || vec.ExternalSize(3) != 72 {
		t.Fatalf("sizes: struct %d, external %d; vector external %d", st.Size, st.ExternalSize(1), vec.ExternalSize(3))
	}
	mem := make([]byte, 3*24)
	put := func(i int, a int64, b int32, c uint64) {
		binary.NativeEndian.PutUint64(mem[24*i:], uint64(a))
		binary.NativeEndian.PutUint32(mem[24*i+8:], uint32(b))
		binary.NativeEndian.PutUint64(mem[24*i+16:], c)
	}
	put(0, -3, 7, 9)
	put(1, 1<<40, 1<<20, 1<<40) // skipped by the vector
	put(2, 0x11223344, -1, 0xAABBCCDD)
	want := []byte{
		0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 7, 0, 0, 0, 9,
		0x11, 0x22, 0x33, 0x44, 0xff, 0xff, 0xff, 0xff, 0xAA, 0xBB, 0xCC, 0xDD,
	}
	out := make([]byte, vec.ExternalSize(1))
	if err := vec.PackExternal(out, mem, 1); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("packed\n got % x\nwant % x", out, want)
	}
	back := make([]byte, len(mem))
	if err := vec.UnpackExternal(out, back, 1); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if got, w := back[24*i:24*i+20], mem[24*i:24*i+20]; !bytes.Equal(got, w) {
			t.Errorf("struct %d: % x, want % x", i, got, w)
		}
	}
	if !bytes.Equal(back[24:48], make([]byte, 24)) {
		t.Errorf("the skipped struct was written: % x", back[24:48])
	}
	// The skipped struct is out of range but not packed; the second
	// value of a count of 2 reaches it.
	if err := st.PackExternal(make([]byte, 24), mem, 2); !errors.Is(err, ErrRange) {
		t.Fatalf("packing the struct of 2^40: %v, want ErrRange", err)
	}
	if err := vec.UnpackExternal(out[:len(out)-1], back, 1); !errors.Is(err, ErrDecode) {
		t.Fatalf("short input: %v, want ErrDecode", err)
	}
}

// TestSwapCLong: mixed byte orders reverse a C long's 8 bytes, as an
// int64's (its memory form is a 64-bit integer).
func TestSwapCLong(t *testing.T) {
	b := words64(0x0102030405060708)
	NewBasic(BasicCLong).Swap(b, 1)
	if got := binary.NativeEndian.Uint64(b); got != 0x0807060504030201 {
		t.Fatalf("swapped to %#x", got)
	}
}

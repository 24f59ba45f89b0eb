package datatype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
)

// ExternalSize returns the size of count values of t in the external32
// format: count times the sum of its basic elements' external sizes
// (Basic.ExternalSize), which is count*t.Size unless t holds C longs.
func (t *Type) ExternalSize(count int) int64 { return int64(count) * t.externalSize() }

// externalSize is the size of one value of t in external32.
func (t *Type) externalSize() int64 {
	if !t.Narrowed() {
		return t.Size
	}
	var n int64
	for _, b := range t.Blocks {
		n += b.N * int64(b.Basic.ExternalSize())
	}
	return n
}

// Narrowed reports whether some basic element of t is smaller in
// external32 than in memory.
func (t *Type) Narrowed() bool {
	for _, b := range t.Blocks {
		if b.Basic.ExternalSize() != b.Basic.Size() {
			return true
		}
	}
	return false
}

// ErrRange is wrapped by the errors of PackExternal: a value does not fit
// the size its kind has in external32 (a C long beyond 32 bits).
var ErrRange = errors.New("datatype: value out of the range of its external32 size")

// PackExternal writes count values of t in buf (the first at offset 0) to
// dst in the external32 format of MPI-4.1 section 14.5.2: the basic
// elements in type-map order, each big-endian (a complex number as its
// real then imaginary part), bools as one byte 0 or 1, C longs in 4
// bytes, with no padding. dst must hold t.ExternalSize(count) bytes and
// buf the span of the values. A C long that does not fit 32 bits fails
// with an error wrapping ErrRange, having written part of dst.
func (t *Type) PackExternal(dst, buf []byte, count int) error {
	ext := t.Extent()
	o := 0
	for e := 0; e < count; e++ {
		base := int64(e) * ext
		for _, b := range t.Blocks {
			at := base + b.Off
			if b.Basic.ExternalSize() != b.Basic.Size() {
				n := int(b.N)
				if err := narrow(dst[o:o+4*n], buf[at:at+8*int64(n)], b.Basic); err != nil {
					return fmt.Errorf("%w: value %d: %v", ErrRange, e, err)
				}
				o += 4 * n
				continue
			}
			n := int(b.N) * b.Basic.Size()
			swapWords(dst[o:o+n], buf[at:at+int64(n)], b.Basic)
			o += n
		}
	}
	return nil
}

// narrow writes the 8-byte integers of kind k in src (machine order) to
// dst as 4-byte big-endian ones, failing at the first that does not fit.
func narrow(dst, src []byte, k Basic) error {
	for i := 0; i+8 <= len(src); i += 8 {
		v := binary.NativeEndian.Uint64(src[i:])
		if k == BasicCLong {
			if s := int64(v); s < math.MinInt32 || s > math.MaxInt32 {
				return fmt.Errorf("the C long %d does not fit the 4 bytes of external32", s)
			}
		} else if v > math.MaxUint32 {
			return fmt.Errorf("the C unsigned long %d does not fit the 4 bytes of external32", v)
		}
		binary.BigEndian.PutUint32(dst[i/2:], uint32(v))
	}
	return nil
}

// widen writes the 4-byte big-endian integers of kind k in src to dst as
// 8-byte ones in machine order: sign-extended for BasicCLong,
// zero-extended for BasicCUlong.
func widen(dst, src []byte, k Basic) {
	for i := 0; i+4 <= len(src); i += 4 {
		u := binary.BigEndian.Uint32(src[i:])
		v := uint64(u)
		if k == BasicCLong {
			v = uint64(int64(int32(u)))
		}
		binary.NativeEndian.PutUint64(dst[2*i:], v)
	}
}

// UnpackExternal reads count values of t in the external32 format from src
// into buf (the first value at offset 0). It fails, having written only
// part of buf, if src is not exactly t.ExternalSize(count) bytes or holds
// a bool other than 0 or 1.
func (t *Type) UnpackExternal(src, buf []byte, count int) error {
	if int64(len(src)) != t.ExternalSize(count) {
		return fmt.Errorf("%w: external32 data of %d bytes, want %d", ErrDecode, len(src), t.ExternalSize(count))
	}
	ext := t.Extent()
	o := 0
	for e := 0; e < count; e++ {
		base := int64(e) * ext
		for _, b := range t.Blocks {
			at := base + b.Off
			if b.Basic.ExternalSize() != b.Basic.Size() {
				n := int(b.N)
				widen(buf[at:at+8*int64(n)], src[o:o+4*n], b.Basic)
				o += 4 * n
				continue
			}
			n := int(b.N) * b.Basic.Size()
			in := src[o : o+n]
			if b.Basic == BasicBool {
				for i, c := range in {
					if c > 1 {
						return fmt.Errorf("%w: external32 bool %d at byte %d", ErrDecode, c, o+i)
					}
				}
			}
			swapWords(buf[at:at+int64(n)], in, b.Basic)
			o += n
		}
	}
	return nil
}

// swapWords copies src to dst converting each word of kind k between the
// machine's byte order and big-endian (the same operation both ways).
func swapWords(dst, src []byte, k Basic) {
	w := k.word()
	if w == 1 || binary.NativeEndian.Uint16([]byte{0, 1}) == 1 { // bytes, or a big-endian machine
		copy(dst, src)
		return
	}
	switch w {
	case 2:
		for i := 0; i+2 <= len(src); i += 2 {
			binary.BigEndian.PutUint16(dst[i:], binary.LittleEndian.Uint16(src[i:]))
		}
	case 4:
		for i := 0; i+4 <= len(src); i += 4 {
			binary.BigEndian.PutUint32(dst[i:], binary.LittleEndian.Uint32(src[i:]))
		}
	case 8:
		for i := 0; i+8 <= len(src); i += 8 {
			binary.BigEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:]))
		}
	case 16:
		for i := 0; i+16 <= len(src); i += 16 {
			lo, hi := binary.LittleEndian.Uint64(src[i:]), binary.LittleEndian.Uint64(src[i+8:])
			binary.BigEndian.PutUint64(dst[i:], hi)
			binary.BigEndian.PutUint64(dst[i+8:], lo)
		}
	}
}

// Field describes one basic component of a plain Go type, in field order:
// the description a heterogeneous wire format needs to convert a value
// between machines whose byte order, int size or padding differ (see
// Info.Fields).
type Field struct {
	Path   string // as in "Pos[2].X": where it is in the value
	Offset int64  // byte offset in the value on this machine
	Basic  Basic  // kind of each element
	Count  int64  // consecutive elements (an array of basic elements)
}

// BasicOf returns the basic kind of a Go type of a basic kind, or 0.
func BasicOf(t reflect.Type) Basic {
	switch t.Kind() {
	case reflect.Bool:
		return BasicBool
	case reflect.Int8:
		return BasicInt8
	case reflect.Int16:
		return BasicInt16
	case reflect.Int32:
		return BasicInt32
	case reflect.Int64:
		return BasicInt64
	case reflect.Int:
		if t.Size() == 8 {
			return BasicInt64
		}
		return BasicInt32
	case reflect.Uint8:
		return BasicUint8
	case reflect.Uint16:
		return BasicUint16
	case reflect.Uint32:
		return BasicUint32
	case reflect.Uint64:
		return BasicUint64
	case reflect.Uint:
		if t.Size() == 8 {
			return BasicUint64
		}
		return BasicUint32
	case reflect.Float32:
		return BasicFloat32
	case reflect.Float64:
		return BasicFloat64
	case reflect.Complex64:
		return BasicComplex64
	case reflect.Complex128:
		return BasicComplex128
	}
	return 0
}

// goMap is the cached type map and field list of a plain Go type.
type goMap struct {
	once   sync.Once
	typ    *Type
	fields []Field
}

var goMaps sync.Map // reflect.Type -> *goMap

func goMapOf(t reflect.Type) *goMap {
	v, _ := goMaps.LoadOrStore(t, &goMap{})
	m := v.(*goMap)
	m.once.Do(func() {
		if !plain(t) {
			return
		}
		m.fields = appendFields(nil, t, "", 0)
		var b builder
		for _, f := range m.fields {
			b.block(Block{f.Offset, f.Basic, f.Count})
			b.t.Size += f.Count * int64(f.Basic.Size())
			b.t.NBasic += f.Count
			if a := int64(f.Basic.word()); a > b.t.Align {
				b.t.Align = a
			}
		}
		tm, _ := b.finish(false)
		if len(tm.Blocks) > 0 {
			tm.TrueLB = tm.Blocks[0].Off
			last := tm.Blocks[len(tm.Blocks)-1]
			tm.TrueUB = last.Off + last.N*int64(last.Basic.Size())
			for _, bl := range tm.Blocks {
				tm.TrueLB = min(tm.TrueLB, bl.Off)
				tm.TrueUB = max(tm.TrueUB, bl.Off+bl.N*int64(bl.Basic.Size()))
			}
		}
		// The extent is the Go size, trailing padding included, so that
		// count values are a Go array of them.
		tm.LB, tm.UB = 0, int64(t.Size())
		m.typ = tm
	})
	return m
}

// appendFields appends the basic components of the plain type t, found at
// path and byte offset off, in field order.
func appendFields(fs []Field, t reflect.Type, path string, off int64) []Field {
	if k := BasicOf(t); k != 0 {
		return append(fs, Field{Path: path, Offset: off, Basic: k, Count: 1})
	}
	switch t.Kind() {
	case reflect.Array:
		if k := BasicOf(t.Elem()); k != 0 {
			if t.Len() > 0 {
				fs = append(fs, Field{Path: path, Offset: off, Basic: k, Count: int64(t.Len())})
			}
			return fs
		}
		for i := range t.Len() {
			fs = appendFields(fs, t.Elem(), fmt.Sprintf("%s[%d]", path, i), off+int64(i)*int64(t.Elem().Size()))
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			fs = appendFields(fs, f.Type, p, off+int64(f.Offset))
		}
	}
	return fs
}

// TypeMap returns the type map of the plain type i describes: its basic
// fields at their offsets, with the Go size as extent (padding is not
// data). It returns nil for types that are not plain. The result is built
// once per type and shared.
func (i *Info) TypeMap() *Type {
	if !i.Plain {
		return nil
	}
	return goMapOf(i.Type).typ
}

// Fields returns the basic components of the plain type i describes, in
// field order, with their paths, offsets and kinds: the description a
// portable wire format would send instead of raw memory when the peers'
// architectures differ (mpigo's jobs are homogeneous today: plain values
// travel as memory). It returns nil for types that are not plain. The
// result is shared: do not modify it.
func (i *Info) Fields() []Field {
	if !i.Plain {
		return nil
	}
	return goMapOf(i.Type).fields
}

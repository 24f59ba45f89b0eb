package datatype

import (
	"encoding/binary"
	"math/bits"
	"reflect"
	"unsafe"
)

// This file converts received data between machines of different byte
// order (mixed-architecture jobs; docs/hetero.md). The receiver makes
// right: data travels in the sender's memory order, and a receiver whose
// order differs reverses the bytes of every basic element in place, using
// the type map it already knows. The unit reversed is the same as for
// external32 (Basic.word): a number, or one part of a complex number.
// Bytes and bools are left alone. Go's int, uint and uintptr are numbers
// of the machine's word size; jobs whose ranks differ in word size are
// refused before any data moves, so a type map means the same bytes on
// both sides.

// swapRun reverses the byte order of each w-byte word of b in place
// (w is 1, 2, 4, 8 or 16; len(b) a multiple of w).
func swapRun(b []byte, w int) {
	switch w {
	case 16:
		for i := 0; i+16 <= len(b); i += 16 {
			swapWord(b[i:i+16], 16)
		}
	case 2:
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%2 == 0 && len(b) >= 2 {
			ws := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
			for i, v := range ws {
				ws[i] = bits.ReverseBytes16(v)
			}
			return
		}
		for i := 0; i+2 <= len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 && len(b) >= 4 {
			ws := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
			for i, v := range ws {
				ws[i] = bits.ReverseBytes32(v)
			}
			return
		}
		for i := 0; i+4 <= len(b); i += 4 {
			v := binary.LittleEndian.Uint32(b[i:])
			binary.LittleEndian.PutUint32(b[i:], bits.ReverseBytes32(v))
		}
	case 8:
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 && len(b) >= 8 {
			ws := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
			for i, v := range ws {
				ws[i] = bits.ReverseBytes64(v)
			}
			return
		}
		for i := 0; i+8 <= len(b); i += 8 {
			v := binary.LittleEndian.Uint64(b[i:])
			binary.LittleEndian.PutUint64(b[i:], bits.ReverseBytes64(v))
		}
	}
}

// swapWord reverses the w-byte word at b[0:w].
func swapWord(b []byte, w int) {
	switch w {
	case 2:
		b[0], b[1] = b[1], b[0]
	case 4:
		binary.LittleEndian.PutUint32(b, bits.ReverseBytes32(binary.LittleEndian.Uint32(b)))
	case 8:
		binary.LittleEndian.PutUint64(b, bits.ReverseBytes64(binary.LittleEndian.Uint64(b)))
	case 16:
		lo, hi := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		binary.LittleEndian.PutUint64(b, bits.ReverseBytes64(hi))
		binary.LittleEndian.PutUint64(b[8:], bits.ReverseBytes64(lo))
	}
}

// Swap reverses, in place, the byte order of every basic element of count
// values of t in buf, the first value at offset 0 and the others at
// extent spacing (buf must hold their span, as for Unpack). Padding and
// bytes outside the type map are not touched.
func (t *Type) Swap(buf []byte, count int) {
	if count <= 0 || t.Size == 0 {
		return
	}
	if k := t.Uniform(); k != 0 && t.Contiguous() {
		if w := k.word(); w > 1 {
			swapRun(buf[:int64(count)*t.Size], w)
		}
		return
	}
	ext := t.Extent()
	for e := range int64(count) {
		base := e * ext
		for _, b := range t.Blocks {
			w := b.Basic.word()
			if w == 1 {
				continue
			}
			at := base + b.Off
			if b.N*int64(b.Basic.Size()) == int64(w) {
				swapWord(buf[at:at+int64(w)], w) // one number: most fields of a struct
				continue
			}
			swapRun(buf[at:at+b.N*int64(b.Basic.Size())], w)
		}
	}
}

// SwapPlain reverses the byte order of the basic elements of the values
// of the plain type i describes in b, a run of whole values in Go memory
// layout. It does nothing for types that are not plain.
func (i *Info) SwapPlain(b []byte) {
	tm := i.TypeMap()
	if tm == nil || i.Size == 0 {
		return
	}
	tm.Swap(b, len(b)/i.Size)
}

// SwapDecoded reverses the byte order of every number in the value v
// points to, which Decode made from the bytes of a machine of the other
// byte order. Only the parts Decode copied as memory are converted:
// strings, and values of types with their own marshaling methods or
// encoded by gob (both portable), are left alone. Maps are rebuilt, since
// their keys change.
func SwapDecoded(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	t := rv.Type().Elem()
	switch codecOf(t).method {
	case viaMemory, viaElems, viaPlan:
		swapValue(rv.Elem())
	}
}

// swapValue converts the addressable value v in place.
func swapValue(v reflect.Value) {
	t := v.Type()
	if plain(t) {
		if t.Size() > 0 {
			InfoOf(t).SwapPlain(unsafe.Slice((*byte)(v.Addr().UnsafePointer()), t.Size()))
		}
		return
	}
	if t.Kind() != reflect.Pointer && marshals(t) {
		return // bytes the type's own method made
	}
	switch t.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			return
		}
		if et := t.Elem(); plain(et) && et.Size() > 0 {
			InfoOf(et).SwapPlain(unsafe.Slice((*byte)(v.UnsafePointer()), v.Len()*int(et.Size())))
			return
		}
		for i := range v.Len() {
			swapValue(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			swapValue(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				swapValue(v.Field(i))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			swapValue(v.Elem())
		}
	case reflect.Map:
		if v.IsNil() || v.Len() == 0 {
			return
		}
		m := reflect.MakeMapWithSize(t, v.Len())
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(t.Key()).Elem()
			k.Set(it.Key())
			swapValue(k)
			e := reflect.New(t.Elem()).Elem()
			e.Set(it.Value())
			swapValue(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

// DecodeSwapped is Decode for bytes encoded on a machine of the other
// byte order: it decodes, then converts the numbers (see SwapDecoded).
func DecodeSwapped(b []byte, v any, own bool) error {
	if err := decode(b, v, own); err != nil {
		return err
	}
	SwapDecoded(v)
	return nil
}

// SwapPacked is Swap for count values of t in their packed form (Pack's
// output): the basic elements one after another in type-map order.
func (t *Type) SwapPacked(buf []byte, count int) {
	if count <= 0 || t.Size == 0 {
		return
	}
	var pos int64
	for range count {
		for _, b := range t.Blocks {
			n := b.N * int64(b.Basic.Size())
			if w := b.Basic.word(); w > 1 {
				swapRun(buf[pos:pos+n], w)
			}
			pos += n
		}
	}
}

// Words reports whether t has basic elements of more than one byte: the
// ones whose byte order differs between machines.
func (t *Type) Words() bool {
	for _, b := range t.Blocks {
		if b.Basic.word() > 1 {
			return true
		}
	}
	return false
}

package datatype

import (
	"hash/fnv"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Info describes how values of one Go type travel. It is computed once per
// type, cached, and never modified afterwards.
type Info struct {
	Type  reflect.Type
	Plain bool   // fixed size and no pointers anywhere (see the package doc)
	Size  int    // size in bytes of a value, as reflect reports it (meaningful for plain types)
	Align int    // alignment in bytes of a value
	Sig   uint64 // structural signature; never 0
	Elem  *Info  // for slices: the element's Info; nil for every other kind

	// bools checks the bools in one value of a plain type; nil when the
	// type holds none.
	bools func([]byte) bool

	ext unsafe.Pointer // see Ext
}

// Ext returns what SetExt stored for this type, or nil: a cache slot for
// the layer above (the typed layer keeps its per-type summary here, so
// that finding it costs one load after InfoFor).
func (i *Info) Ext() unsafe.Pointer { return atomic.LoadPointer(&i.ext) }

// SetExt stores p in the type's cache slot. p must point to a value that
// is never modified afterwards; racing stores of equal values are fine.
func (i *Info) SetExt(p unsafe.Pointer) { atomic.StorePointer(&i.ext, p) }

// ValidBools reports whether every bool in b, a run of whole values of the
// plain type i describes, is 0 or 1: the only bytes a Go bool may hold.
// Received memory of a type holding bools must pass it before a Go program
// reads it; for types without bools it costs nothing.
func (i *Info) ValidBools(b []byte) bool {
	if i.bools == nil || i.Size == 0 {
		return true
	}
	if i.Size == 1 { // bool itself, or a wrapper of one
		for _, c := range b {
			if c > 1 {
				return false
			}
		}
		return true
	}
	for off := 0; off+i.Size <= len(b); off += i.Size {
		if !i.bools(b[off : off+i.Size]) {
			return false
		}
	}
	return true
}

// FixBools rewrites every bool in b (a run of whole values of the plain
// type i describes) that is neither 0 nor 1 to 1, so that memory which
// failed ValidBools is safe for a Go program to read.
func (i *Info) FixBools(b []byte) {
	if i.bools == nil || i.Size == 0 {
		return
	}
	fixBools(i.Type, b)
}

var cache sync.Map // reflect.Type -> *Info

// InfoOf returns the Info of t. After the first call for a type it does
// not allocate.
func InfoOf(t reflect.Type) *Info {
	if v, ok := cache.Load(t); ok {
		return v.(*Info)
	}
	return build(t, nil)
}

// build computes the Info of t and caches it. pending holds the slice types
// whose Info is being built further up the stack, so that a recursive slice
// type (type T []T) is its own Elem instead of an endless recursion.
func build(t reflect.Type, pending map[reflect.Type]*Info) *Info {
	if v, ok := cache.Load(t); ok {
		return v.(*Info)
	}
	if info := pending[t]; info != nil {
		return info
	}
	info := &Info{Type: t, Plain: plain(t), Size: int(t.Size()), Align: t.Align(), Sig: signature(t)}
	if info.Plain {
		info.bools = boolCheck(t)
	}
	if t.Kind() == reflect.Slice {
		if pending == nil {
			pending = map[reflect.Type]*Info{}
		}
		pending[t] = info
		info.Elem = build(t.Elem(), pending)
	}
	v, loaded := cache.LoadOrStore(t, info)
	if !loaded {
		bySig.LoadOrStore(info.Sig, t)
	}
	return v.(*Info)
}

// bySig maps every signature computed in this process to its type, so that
// an error can name the type a mismatched message was sent as.
var bySig sync.Map // uint64 -> reflect.Type

var predeclared sync.Once

// TypeBySig returns the type whose signature is sig, if this process has
// met it (or it is a predeclared type, or a slice of one); nil otherwise.
// It is meant for error messages, not for hot paths.
func TypeBySig(sig uint64) reflect.Type {
	if v, ok := bySig.Load(sig); ok {
		return v.(reflect.Type)
	}
	predeclared.Do(func() {
		for _, v := range []any{false, int(0), int8(0), int16(0), int32(0), int64(0),
			uint(0), uint8(0), uint16(0), uint32(0), uint64(0), uintptr(0),
			float32(0), float64(0), complex64(0), complex128(0), "", any(nil)} {
			var t reflect.Type
			if v == nil {
				t = reflect.TypeFor[any]()
			} else {
				t = reflect.TypeOf(v)
			}
			InfoOf(t)
			InfoOf(reflect.SliceOf(t))
		}
	})
	if v, ok := bySig.Load(sig); ok {
		return v.(reflect.Type)
	}
	return nil
}

// RangeSigs calls f for every signature known to TypeBySig until f
// returns false.
func RangeSigs(f func(sig uint64, t reflect.Type) bool) {
	TypeBySig(0) // registers the predeclared types
	bySig.Range(func(k, v any) bool { return f(k.(uint64), v.(reflect.Type)) })
}

// fast is a direct-mapped cache in front of the sync.Map for InfoFor,
// keyed by the address of the type descriptor of *T, which the compiler
// puts in the interface word of any((*T)(nil)): finding it costs no call,
// and a hit costs a load and a compare. Two types sharing a slot only cost
// each other the slower lookup.
var fast [1024]atomic.Pointer[fastEntry]

type fastEntry struct {
	key  uintptr
	info *Info
}

// InfoFor returns the Info of T. After the first call for a T it does not
// allocate, and usually costs a nanosecond or two.
func InfoFor[T any]() *Info {
	var p any = (*T)(nil)
	key := (*[2]uintptr)(unsafe.Pointer(&p))[0]
	// Fibonacci hashing: the top 10 bits of the address times 2^64/phi.
	slot := &fast[uint64(key)*0x9E3779B97F4A7C15>>(64-10)]
	if e := slot.Load(); e != nil && e.key == key {
		return e.info
	}
	info := InfoOf(reflect.TypeFor[T]())
	slot.Store(&fastEntry{key, info})
	return info
}

// plain reports whether values of t are fixed-size memory with no pointers.
// It needs no guard against recursive types: a type can only contain itself
// through a pointer, slice, map, channel, function or interface, and plain
// stops at all of those.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false // uintptr, unsafe.Pointer, string, slice, map, pointer, interface, chan, func
}

// signature hashes the canonical description of t. It is never 0.
func signature(t reflect.Type) uint64 {
	h := fnv.New64a()
	h.Write(describe(nil, t, map[reflect.Type]int{}))
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}

// describe appends the canonical description of t to b. A type met again
// is written as a back-reference to the order in which it was first met,
// which keeps recursive types finite and the description deterministic.
func describe(b []byte, t reflect.Type, seen map[reflect.Type]int) []byte {
	if t.Name() != "" {
		if t.PkgPath() != "" { // not a predeclared type
			b = append(b, t.PkgPath()...)
			b = append(b, '.')
		}
		b = append(b, t.Name()...)
		b = append(b, '=')
	}
	if id, ok := seen[t]; ok {
		b = append(b, '@')
		return strconv.AppendInt(b, int64(id), 10)
	}
	seen[t] = len(seen)
	b = append(b, t.Kind().String()...)
	switch t.Kind() {
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(t.Size()), 10)
	case reflect.Array:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(t.Len()), 10)
		b = append(b, ']')
		b = describe(b, t.Elem(), seen)
	case reflect.Slice, reflect.Pointer, reflect.Chan:
		b = append(b, '(')
		b = describe(b, t.Elem(), seen)
		b = append(b, ')')
	case reflect.Map:
		b = append(b, '(')
		b = describe(b, t.Key(), seen)
		b = append(b, ',')
		b = describe(b, t.Elem(), seen)
		b = append(b, ')')
	case reflect.Struct:
		b = append(b, '{')
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				b = append(b, '^')
			}
			b = append(b, f.Name...)
			b = append(b, ' ')
			b = describe(b, f.Type, seen)
			b = append(b, ';')
		}
		b = append(b, '}')
	case reflect.Interface:
		b = append(b, '{')
		for i := range t.NumMethod() {
			b = append(b, t.Method(i).Name...)
			b = append(b, ';')
		}
		b = append(b, '}')
	}
	return b
}

// fixBools sets to 1 every bool byte above 1 in b, which holds whole values
// of the plain type t.
func fixBools(t reflect.Type, b []byte) {
	size := int(t.Size())
	if size == 0 {
		return
	}
	for off := 0; off+size <= len(b); off += size {
		v := b[off : off+size]
		switch t.Kind() {
		case reflect.Bool:
			if v[0] > 1 {
				v[0] = 1
			}
		case reflect.Array:
			fixBools(t.Elem(), v)
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				fixBools(f.Type, v[f.Offset:f.Offset+f.Type.Size()])
			}
		}
	}
}

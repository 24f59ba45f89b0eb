// Package datatype decides how a Go value becomes message bytes.
//
// A type is plain when its values are fixed-size memory without pointers:
// booleans, integers, floats, complex numbers, and arrays and structs made
// only of those, at any depth. Plain values, and slices of plain elements,
// travel as their raw memory with no encoding. Everything else (strings,
// slices of non-plain elements, maps, pointers, interfaces) is encoded by
// the codec in this package. uintptr and unsafe.Pointer are treated as
// pointers, so they are not plain: their values mean nothing on another
// rank.
//
// Every type has a 64-bit signature: a hash of a canonical description of
// its structure (kinds, sizes, array lengths, field names and types, in
// order, and the name of every named type). A message carries the
// signature of its type, so a receive of another type can be refused
// before it decodes garbage.
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
// type and cached.
type Info struct {
	Type  reflect.Type
	Plain bool   // fixed size, no pointers anywhere
	Size  int    // size in bytes of a value (meaningful for plain types)
	Align int    // alignment in bytes
	Sig   uint64 // structural signature; never 0
	Elem  *Info  // for slices and arrays: the element's Info
}

var cache sync.Map // reflect.Type -> *Info

// InfoOf returns the Info of t.
func InfoOf(t reflect.Type) *Info {
	if v, ok := cache.Load(t); ok {
		return v.(*Info)
	}
	info := &Info{Type: t, Plain: plain(t, map[reflect.Type]bool{}), Size: int(t.Size()), Align: t.Align(), Sig: signature(t)}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		info.Elem = InfoOf(t.Elem())
	}
	v, _ := cache.LoadOrStore(t, info)
	return v.(*Info)
}

// fast is a direct-mapped cache in front of the sync.Map, indexed by the
// address of the type descriptor: a hit costs a load and a compare.
var fast [1024]atomic.Pointer[Info]

func typeAddr(t reflect.Type) uintptr {
	// A reflect.Type made by the reflect package is a *rtype: the interface's
	// data word is the descriptor's address, unique per type.
	return (*[2]uintptr)(unsafe.Pointer(&t))[1]
}

// InfoFor returns the Info of T. After the first call for a T it does not
// allocate, and usually costs a few nanoseconds.
func InfoFor[T any]() *Info {
	t := reflect.TypeFor[T]()
	slot := &fast[(typeAddr(t)>>4)%uintptr(len(fast))]
	if info := slot.Load(); info != nil && info.Type == t {
		return info
	}
	info := InfoOf(t)
	slot.Store(info)
	return info
}

// plain reports whether values of t are fixed-size memory with no pointers.
func plain(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return plain(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			if !plain(t.Field(i).Type, seen) {
				return false
			}
		}
		return true
	}
	return false
}

// signature hashes a canonical description of t.
func signature(t reflect.Type) uint64 {
	h := fnv.New64a()
	var b []byte
	b = describe(b, t, map[reflect.Type]int{})
	h.Write(b)
	s := h.Sum64()
	if s == 0 {
		s = 1
	}
	return s
}

func describe(b []byte, t reflect.Type, seen map[reflect.Type]int) []byte {
	if t.Name() != "" {
		b = append(b, t.PkgPath()...)
		b = append(b, '.')
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
	case reflect.Slice, reflect.Pointer:
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
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			b = append(b, f.Name...)
			b = append(b, ' ')
			b = describe(b, f.Type, seen)
			b = append(b, ';')
		}
		b = append(b, '}')
	case reflect.Interface:
		b = append(b, '{')
		for i := 0; i < t.NumMethod(); i++ {
			b = append(b, t.Method(i).Name...)
			b = append(b, ';')
		}
		b = append(b, '}')
	}
	return b
}

// ValueBytes returns the memory of *p. It is meaningful only for plain T.
func ValueBytes[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// SliceBytes returns the memory of s's elements, without copying. It is
// meaningful only for plain E.
func SliceBytes[E any](s []E) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var e E
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(e)))
}

// MakeSlice allocates a []E of nbytes/sizeof(E) elements and returns it
// with its memory as bytes.
func MakeSlice[E any](nbytes int) ([]E, []byte) {
	var e E
	s := make([]E, nbytes/int(max(unsafe.Sizeof(e), 1)))
	return s, SliceBytes(s)
}

package datatype

import (
	"strconv"
	"unsafe"
)

// ValueBytes returns the memory of *p as bytes, without copying: writing
// to the result writes to *p. It is meaningful only for plain T.
func ValueBytes[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// SliceBytes returns the memory of s's elements (len(s)*sizeof(E) bytes) as
// bytes, without copying: writing to the result writes to the elements. An
// empty or nil s gives an empty, non-nil result. It is meaningful only for
// plain E.
func SliceBytes[E any](s []E) []byte {
	var e E
	if len(s) == 0 || unsafe.Sizeof(e) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(e)))
}

// BytesToSlice returns b's memory as a slice of len(b)/sizeof(E) elements,
// without copying. It is meaningful only for plain E. The caller must make
// sure that len(b) is a multiple of sizeof(E) and that b is aligned for E
// (the address of its first byte a multiple of unsafe.Alignof of an E);
// BytesToSlice panics otherwise, and when E has size 0 and b is not empty.
// Memory from MakeSlice, or SliceBytes or ValueBytes of E values, is
// aligned; so, with the current runtime, is a fresh make([]byte, n) with n
// a multiple of sizeof(E); a subslice b[k:] generally is not. An empty b
// gives an empty, non-nil result.
func BytesToSlice[E any](b []byte) []E {
	var e E
	size := int(unsafe.Sizeof(e))
	if len(b) == 0 {
		return []E{}
	}
	if size == 0 || len(b)%size != 0 {
		panic("datatype: BytesToSlice: " + strconv.Itoa(len(b)) + " bytes are not a whole number of " + strconv.Itoa(size) + "-byte elements")
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Alignof(e) != 0 {
		panic("datatype: BytesToSlice: bytes not aligned to " + strconv.Itoa(int(unsafe.Alignof(e))))
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

// MakeSlice allocates a []E of nbytes/sizeof(E) elements (rounding down)
// and returns it together with its memory as bytes: bytes received into
// the second are the elements of the first. For an E of size 0 it returns
// empty slices.
func MakeSlice[E any](nbytes int) ([]E, []byte) {
	var e E
	if unsafe.Sizeof(e) == 0 || nbytes <= 0 {
		return []E{}, []byte{}
	}
	s := make([]E, nbytes/int(unsafe.Sizeof(e)))
	return s, SliceBytes(s)
}

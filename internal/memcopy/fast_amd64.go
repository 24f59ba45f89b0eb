//go:build amd64 && !race && !purego

package memcopy

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// fast tells that the processor moves strings fast (ERMS).
var fast = cpu.X86.HasERMS

// repMovsb copies n bytes from src to dst with REP MOVSB.
//
//go:noescape
func repMovsb(dst, src unsafe.Pointer, n uintptr)

func move(dst, src []byte) {
	repMovsb(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), uintptr(len(dst)))
}

// overlap reports whether a and b, of equal length, share memory.
func overlap(a, b []byte) bool {
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// Package cnum holds the reduction kernels of the number types that Go
// has none of: C's long double (and its complex and MINLOC pair types)
// and Fortran's optional REAL2, REAL16, INTEGER16, COMPLEX4 and
// COMPLEX32. The mpi package moves such numbers as data; their arithmetic
// is written in C, and the standard ABI library (abi/capi, the only place
// that compiles C) registers it here when it loads. The mpi package looks
// a kernel up at each use, so an accumulate applied by a target's window
// server or a reduction step finds the same kernel as a collective on
// the calling rank, and a Go program, where nothing is registered, gets
// none (the operation is then not defined on the datatype: ErrOp).
package cnum

import "sync/atomic"

// Kind names one of the number types.
type Kind uint8

// The kinds.
const (
	LongDouble        Kind = iota + 1 // C's long double in 16 bytes
	LongDoubleComplex                 // C's long double _Complex
	LongDoubleInt                     // struct { long double v; int i; } (MPI_LONG_DOUBLE_INT)
	Real2                             // IEEE binary16 (Fortran REAL*2)
	Real16                            // IEEE binary128 (Fortran REAL*16)
	Integer16                         // a 128-bit two's complement integer (Fortran INTEGER*16)
	Complex4                          // two binary16 (Fortran COMPLEX*4)
	Complex32                         // two binary128 (Fortran COMPLEX*32)
	kindEnd
)

// Kernel sets inout[i] = inout[i] op in[i] for the elements of the two
// buffers, which have the same length, a whole number of elements.
type Kernel func(inout, in []byte)

// Kernels maps an operation's name ("sum", "prod", "min", "max", "land",
// "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc") to its kernel.
type Kernels map[string]Kernel

var table [kindEnd]atomic.Pointer[Kernels]

// Register makes ks the kernels of k, replacing any registered before.
// ks must not be changed afterwards.
func Register(k Kind, ks Kernels) {
	if k == 0 || k >= kindEnd {
		return
	}
	table[k].Store(&ks)
}

// Lookup returns the kernel of the operation op on k, or nil if none is
// registered.
func Lookup(k Kind, op string) Kernel {
	if k == 0 || k >= kindEnd {
		return nil
	}
	ks := table[k].Load()
	if ks == nil {
		return nil
	}
	return (*ks)[op]
}

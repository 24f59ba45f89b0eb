package mpi

import (
	"hash/fnv"

	"github.com/mpigo/mpi/internal/cnum"
	"github.com/mpigo/mpi/internal/datatype"
)

// The datatypes of numbers Go has no type of. mpigo moves them as data
// (sends, receives, the collectives that move data, Pack, derived
// datatypes built on them) but has no arithmetic of its own for them: in
// a Go program a predefined reduction or accumulate on them is ErrOp. The
// standard ABI library (abi/capi) computes on them in C and gives mpigo
// its kernels when it loads; reductions, collectives and one-sided
// accumulates then apply them as they apply Go's kernels (an accumulate
// under the window's accumulate lock, also when the target applies it).
var (
	// CLongDouble is C's long double where it takes 16 bytes of memory
	// (x87 extended precision on amd64 and 386, IEEE binary128 on arm64
	// and most others), aligned to 16 bytes: the standard ABI's
	// MPI_LONG_DOUBLE, for memory that C code laid out. Its bytes are not
	// converted between machines (external32 and mixed-architecture jobs
	// carry them as they are). The ABI library defines OpSum, OpProd,
	// OpMin and OpMax on it.
	CLongDouble = &Datatype{name: "CLongDouble", size: 16, sig: cTypeSig("C long double"), t: datatype.NewBasic(datatype.BasicLongDouble), committed: true, cnum: cnum.LongDouble}

	// CLongDoubleComplex is C's long double _Complex, two CLongDouble
	// (MPI_C_LONG_DOUBLE_COMPLEX): OpSum and OpProd in the ABI library.
	CLongDoubleComplex = pairOf("CLongDoubleComplex", datatype.BasicLongDouble, cnum.LongDoubleComplex)

	// CLongDoubleInt is C's struct { long double value; int loc; } where
	// long double takes 16 bytes: 20 bytes of data in 32 of memory
	// (MPI_LONG_DOUBLE_INT): OpMinLoc and OpMaxLoc in the ABI library.
	CLongDoubleInt = cLongDoubleInt()

	// Float16, Float128 and Int128 are IEEE binary16 and binary128
	// floating-point numbers and 128-bit two's complement integers
	// (Fortran's REAL*2, REAL*16 and INTEGER*16: the standard ABI's
	// MPI_REAL2, MPI_REAL16 and MPI_INTEGER16), aligned to their size.
	// Unlike CLongDouble their format is known: external32 and
	// mixed-architecture jobs reverse their bytes. The ABI library
	// defines the arithmetic operations on them where its C compiler has
	// such numbers (_Float16, __float128, __int128), and the bitwise and
	// logical ones on Int128.
	Float16  = &Datatype{name: "Float16", size: 2, sig: cTypeSig("float16"), t: datatype.NewBasic(datatype.BasicFloat16), committed: true, cnum: cnum.Real2}
	Float128 = &Datatype{name: "Float128", size: 16, sig: cTypeSig("float128"), t: datatype.NewBasic(datatype.BasicFloat128), committed: true, cnum: cnum.Real16}
	Int128   = &Datatype{name: "Int128", size: 16, sig: cTypeSig("int128"), t: datatype.NewBasic(datatype.BasicInt128), committed: true, cnum: cnum.Integer16}

	// Complex32 and Complex256 are complex numbers of two Float16 and of
	// two Float128 (Fortran's COMPLEX*4 and COMPLEX*32: MPI_COMPLEX4 and
	// MPI_COMPLEX32): OpSum and OpProd in the ABI library.
	Complex32  = pairOf("Complex32", datatype.BasicFloat16, cnum.Complex4)
	Complex256 = pairOf("Complex256", datatype.BasicFloat128, cnum.Complex32)
)

// CLong and CUlong are C's long and unsigned long where they take 8
// bytes (LP64: Linux, macOS and the BSDs on 64-bit machines; the standard
// ABI's MPI_LONG and MPI_UNSIGNED_LONG there). In memory, in messages and
// in reductions they are Int64 and Uint64, with the same type signatures,
// so a C long sent by one rank is received as a Go int64 by another. They
// differ only in external32 (PackExternal, MPI-IO views): there MPI's
// table gives them 4 bytes, so packing a value that does not fit 32 bits
// fails with ErrConversion, and unpacking sign-extends (CLong) or
// zero-extends (CUlong). Where C's long takes 4 bytes, use Int32 and
// Uint32.
var (
	CLong  = withOps(&Datatype{name: "CLong", size: 8, sig: datatype.InfoFor[int64]().Sig, t: datatype.NewBasic(datatype.BasicCLong), committed: true}, intOps[int64]())
	CUlong = withOps(&Datatype{name: "CUlong", size: 8, sig: datatype.InfoFor[uint64]().Sig, t: datatype.NewBasic(datatype.BasicCUlong), committed: true}, intOps[uint64]())
)

// pairOf is the predefined datatype of two consecutive numbers of kind k
// (a complex number), with a signature of its own and the kernels of kind.
func pairOf(name string, k datatype.Basic, kind cnum.Kind) *Datatype {
	t, err := datatype.NewContiguous(2, datatype.NewBasic(k))
	if err != nil {
		panic(err) // two basic elements always make a type
	}
	return &Datatype{name: name, size: int(t.Size), sig: cTypeSig(name), t: t, committed: true, cnum: kind}
}

// cLongDoubleInt makes CLongDoubleInt: a long double at 0 and a 32-bit int
// at 16, with C's size of the struct (32) as its extent, padded as the
// pair types are.
func cLongDoubleInt() *Datatype {
	s, err := datatype.NewStruct([]int{1, 1}, []int64{0, 16}, []*datatype.Type{datatype.NewBasic(datatype.BasicLongDouble), datatype.NewBasic(datatype.BasicInt32)})
	if err == nil {
		s, err = datatype.NewResized(s, 0, 32)
	}
	if err != nil {
		panic(err) // a fixed layout that always builds
	}
	return &Datatype{name: "CLongDoubleInt", size: int(s.Size), sig: cTypeSig("C long double int"), t: s, committed: true, padded: true, cnum: cnum.LongDoubleInt}
}

// opKernel returns d's kernel of the predefined operation name: its own,
// or for a number of cnum's the one the ABI library registered (nil if
// none is).
func (d *Datatype) opKernel(name string) func(inout, in []byte) {
	if d.cnum != 0 {
		return cnum.Lookup(d.cnum, name)
	}
	return d.ops[name]
}

// cTypeSig is the type signature of a C type Go has none of: a hash of
// its name, never 0.
func cTypeSig(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("mpigo C type: " + name))
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}

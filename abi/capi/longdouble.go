//go:build cgo

package capi

/*
#include <stddef.h>
#include <stdint.h>
size_t mpigo_ld_size(void);
size_t mpigo_ld_int_size(void);
size_t mpigo_ld_int_loc(void);
int mpigo_num_reduce(int op, int kind, void *in, void *inout, int64_t n);
*/
import "C"

import (
	"unsafe"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/cnum"
)

// The numbers Go has no type of: C's long double (mpi.CLongDouble, its
// complex and MPI_LONG_DOUBLE_INT) and Fortran's REAL*2, REAL*16,
// INTEGER*16, COMPLEX*4 and COMPLEX*32 (mpi.Float16, ...). mpigo moves
// them as opaque data; their predefined operations run in C
// (longdouble.c), and init gives mpigo those kernels (internal/cnum), so
// that reductions, collectives and one-sided accumulates (also those a
// target applies for another process) use them as they use Go's.

// cnumOps are the kernels' operation codes (longdouble.c's enum), by
// mpigo's names of the operations.
var cnumOps = []string{"sum", "prod", "min", "max", "minloc", "maxloc", "land", "lor", "lxor", "band", "bor", "bxor"}

// cnumKinds are the kinds whose kernels longdouble.c may have (its enum
// of kinds is cnum.Kind).
var cnumKinds = []cnum.Kind{cnum.LongDouble, cnum.LongDoubleComplex, cnum.LongDoubleInt,
	cnum.Real2, cnum.Real16, cnum.Integer16, cnum.Complex4, cnum.Complex32}

// cnumSizes are the bytes one element of each kind takes in memory (a
// pair with its padding, as the kernels get it).
var cnumSizes = map[cnum.Kind]int{cnum.LongDouble: 16, cnum.LongDoubleComplex: 32, cnum.LongDoubleInt: 32,
	cnum.Real2: 2, cnum.Real16: 16, cnum.Integer16: 16, cnum.Complex4: 4, cnum.Complex32: 32}

func init() {
	for _, k := range cnumKinds {
		size := cnumSizes[k]
		if (k == cnum.LongDouble || k == cnum.LongDoubleComplex || k == cnum.LongDoubleInt) && !ldIsCLongDouble() {
			continue // MPI_LONG_DOUBLE is not mpi.CLongDouble here
		}
		ks := cnum.Kernels{}
		for code, name := range cnumOps {
			if C.mpigo_num_reduce(C.int(code), C.int(k), nil, nil, 0) != 0 {
				continue
			}
			ks[name] = func(inout, in []byte) {
				if len(in) == 0 || len(inout) == 0 {
					return
				}
				C.mpigo_num_reduce(C.int(code), C.int(k), unsafe.Pointer(&in[0]), unsafe.Pointer(&inout[0]), C.int64_t(len(inout)/size))
			}
		}
		cnum.Register(k, ks)
	}
}

// ldIsCLongDouble reports whether C's long double and MPI_LONG_DOUBLE_INT
// have the layouts of mpi.CLongDouble and mpi.CLongDoubleInt.
func ldIsCLongDouble() bool {
	return C.mpigo_ld_size() == 16 && C.mpigo_ld_int_loc() == 16 && C.mpigo_ld_int_size() == 32
}

// longDoubleTypes returns the datatypes of MPI_LONG_DOUBLE, of the long
// double complex types and of MPI_LONG_DOUBLE_INT, laid out as this C
// compiler lays them out; nil where long double has no layout mpigo knows.
func longDoubleTypes() (ld, cplx, pair *mpi.Datatype) {
	switch {
	case ldIsCLongDouble():
		return mpi.CLongDouble, mpi.CLongDoubleComplex, mpi.CLongDoubleInt
	case C.mpigo_ld_size() == 8 && C.mpigo_ld_int_loc() == 8 && C.mpigo_ld_int_size() == 16: // long double is double here
		return mpi.Float64, mpi.Complex128, mpi.CDoubleInt
	}
	return nil, nil, nil
}

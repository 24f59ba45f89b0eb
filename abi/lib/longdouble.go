//go:build cgo

package main

/*
#include <stddef.h>
#include <stdint.h>
size_t mpigo_ld_size(void);
size_t mpigo_ld_int_size(void);
size_t mpigo_ld_int_loc(void);
int mpigo_ld_reduce(int op, int kind, void *in, void *inout, int64_t n);
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// C's long double types. mpigo moves long doubles as opaque data
// (mpi.CLongDouble); the predefined operations on them run in C
// (longdouble.c): a reduction with a predefined operation on one of these
// handles runs as a user operation that calls the C kernel.

// The kernels' operations and kinds (longdouble.c's enums).
const (
	ldSum = iota
	ldProd
	ldMin
	ldMax
	ldMinLoc
	ldMaxLoc
)

const (
	ldReal = iota
	ldComplex
	ldPair
)

// ldKinds maps each long double handle to its kind.
var ldKinds = map[uintptr]int{
	MPI_LONG_DOUBLE:             ldReal,
	MPI_C_LONG_DOUBLE_COMPLEX:   ldComplex,
	MPI_CXX_LONG_DOUBLE_COMPLEX: ldComplex,
	MPI_LONG_DOUBLE_INT:         ldPair,
}

// ldOpCodes maps the predefined operations to the kernels' codes.
var ldOpCodes = map[*mpi.ReduceOp]int{
	mpi.OpSum: ldSum, mpi.OpProd: ldProd, mpi.OpMin: ldMin, mpi.OpMax: ldMax,
	mpi.OpMinLoc: ldMinLoc, mpi.OpMaxLoc: ldMaxLoc,
}

var ldOps struct {
	sync.Mutex
	m map[[2]int]*mpi.ReduceOp
}

// longDoubleTypes returns the datatypes of MPI_LONG_DOUBLE, of the long
// double complex types and of MPI_LONG_DOUBLE_INT, laid out as this C
// compiler lays them out; nil where long double has no layout mpigo knows.
func longDoubleTypes() (ld, cplx, pair *mpi.Datatype) {
	switch C.mpigo_ld_size() {
	case 16:
		ld = mpi.CLongDouble
	case 8: // long double is double here
		ld = mpi.Float64
	default:
		return nil, nil, nil
	}
	cplx, err := mpi.NewContiguous(2, ld)
	if err != nil {
		panic(err)
	}
	loc, size := int(C.mpigo_ld_int_loc()), int(C.mpigo_ld_int_size())
	s, err := mpi.NewStruct([]int{1, 1}, []int{0, loc}, []*mpi.Datatype{ld, mpi.Int32})
	if err == nil {
		pair, err = mpi.NewResized(s, 0, size)
	}
	if err == nil {
		err = cplx.Commit()
	}
	if err == nil {
		err = pair.Commit()
	}
	if err != nil {
		panic(err)
	}
	return ld, cplx, pair
}

// ldOp returns the operation a reduction with the predefined o runs on
// the long double type t: o itself if t is none of them, the C kernel as
// a user operation if the kind has o, else the MPI_ERR_OP raised on ce.
func ldOp(fn string, ce *commEntry, o *mpi.ReduceOp, t *mpi.Datatype) (*mpi.ReduceOp, int32) {
	h, ok := typeHandles.Load(t)
	if !ok {
		return o, 0
	}
	kind, ok := ldKinds[h.(uintptr)]
	if !ok {
		return o, 0
	}
	code, ok := ldOpCodes[o]
	if !ok {
		if o.Name() == "user" {
			return o, 0
		}
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_OP, fmt.Sprintf("operation %s is not defined on %s", o.Name(), t.Name())))
	}
	ldOps.Lock()
	defer ldOps.Unlock()
	k := [2]int{kind, code}
	if op := ldOps.m[k]; op != nil {
		return op, 0
	}
	if C.mpigo_ld_reduce(C.int(code), C.int(kind), nil, nil, 0) != 0 {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_OP, fmt.Sprintf("operation %s is not defined on %s", o.Name(), t.Name())))
	}
	op := mpi.NewReduceOp(func(in, inout []byte, count int, _ *mpi.Datatype) {
		if count == 0 || len(in) == 0 || len(inout) == 0 {
			return
		}
		C.mpigo_ld_reduce(C.int(code), C.int(kind), unsafe.Pointer(&in[0]), unsafe.Pointer(&inout[0]), C.int64_t(count))
	}, true)
	if ldOps.m == nil {
		ldOps.m = map[[2]int]*mpi.ReduceOp{}
	}
	ldOps.m[k] = op
	return op, 0
}

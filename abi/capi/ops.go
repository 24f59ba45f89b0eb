//go:build cgo

package capi

/*
#include <stdint.h>
void mpigo_call_user_function(void *fn, void *in, void *inout, int len, uintptr_t dt);
void mpigo_call_user_function_c(void *fn, void *in, void *inout, int64_t len, uintptr_t dt);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The predefined operations; MPI_REPLACE and MPI_NO_OP are for one-sided
// accumulates only. mpigo defines each on the datatypes MPI allows it on
// (and refuses the others with MPI_ERR_OP): MPI_MINLOC and MPI_MAXLOC on
// the C pair types that setupPairTypes adds.
var predefOps = map[uintptr]*mpi.ReduceOp{
	MPI_SUM: mpi.OpSum, MPI_PROD: mpi.OpProd, MPI_MIN: mpi.OpMin, MPI_MAX: mpi.OpMax,
	MPI_LAND: mpi.OpLand, MPI_LOR: mpi.OpLor, MPI_LXOR: mpi.OpLxor,
	MPI_BAND: mpi.OpBand, MPI_BOR: mpi.OpBor, MPI_BXOR: mpi.OpBxor,
	MPI_MINLOC: mpi.OpMinLoc, MPI_MAXLOC: mpi.OpMaxLoc,
}

var userOps = &table[*mpi.ReduceOp]{kind: kindOp}

// pairTypes are the ABI's pair datatypes: the predefined operations on
// them are MPI_MINLOC and MPI_MAXLOC only (their duplicates would let
// mpigo apply the others to the members).
var pairTypes = map[*mpi.Datatype]bool{}

// opOnType checks that the predefined operation o is defined on t.
func opOnType(fn string, ce *commEntry, o *mpi.ReduceOp, t *mpi.Datatype) int32 {
	predefTypesMu.Do(setupTypes)
	if pairTypes[t] && o != mpi.OpMinLoc && o != mpi.OpMaxLoc && o.Name() != "user" {
		return raiseOn(fn, ce, classErr(MPI_ERR_OP, fmt.Sprintf("operation %s is not defined on the pair type %s (only MPI_MINLOC and MPI_MAXLOC are)", o.Name(), t.Name())))
	}
	return 0
}

func opArg(fn string, ce *commEntry, h uintptr) (*mpi.ReduceOp, int32) {
	if op, ok := predefOps[h]; ok {
		return op, 0
	}
	if op, ok := userOps.get(h); ok {
		return op, 0
	}
	return nil, raiseOn(fn, ce, classErr(MPI_ERR_OP, fmt.Sprintf("%#x is not an operation for reductions", h)))
}

// setupPairTypes gives the C pair types of MPI_MINLOC and MPI_MAXLOC
// their handles (setupTypes calls it). MPI_LONG_INT is mpigo's CLongInt
// only where C's long has 64 bits; MPI_LONG_DOUBLE_INT has no Go type.
func setupPairTypes() {
	pairs := []predef{
		{MPI_FLOAT_INT, "MPI_FLOAT_INT", mpi.CFloatInt},
		{MPI_DOUBLE_INT, "MPI_DOUBLE_INT", mpi.CDoubleInt},
		{MPI_2INT, "MPI_2INT", mpi.C2Int},
		{MPI_SHORT_INT, "MPI_SHORT_INT", mpi.CShortInt},
	}
	if unsafe.Sizeof(C.long(0)) == 8 {
		pairs = append(pairs, predef{MPI_LONG_INT, "MPI_LONG_INT", mpi.CLongInt})
	}
	registerPredef(pairs, true)
}

// opCreate wraps a C user function as an mpigo operation: mpigo calls it
// on its buffers through call, a C trampoline, with the handle of the
// datatype the reduction was called with.
func opCreate(fn string, userFn unsafe.Pointer, commute int32, op unsafe.Pointer,
	call func(userFn, in, inout unsafe.Pointer, count int, dt uintptr)) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if userFn == nil || op == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "user_fn or op is NULL"))
	}
	o := mpi.NewReduceOp(func(in, inout []byte, count int, dt *mpi.Datatype) {
		if count == 0 || len(in) == 0 || len(inout) == 0 {
			return
		}
		call(userFn, unsafe.Pointer(&in[0]), unsafe.Pointer(&inout[0]), count, typeHandle(dt))
	}, commute != 0)
	*(*uintptr)(op) = userOps.add(o)
	return MPI_SUCCESS
}

func implOp_create(userFn unsafe.Pointer, commute int32, op unsafe.Pointer) int32 {
	return opCreate("MPI_Op_create", userFn, commute, op, func(f, in, inout unsafe.Pointer, count int, dt uintptr) {
		C.mpigo_call_user_function(f, in, inout, C.int(count), C.uintptr_t(dt))
	})
}

func implOp_create_c(userFn unsafe.Pointer, commute int32, op unsafe.Pointer) int32 {
	return opCreate("MPI_Op_create_c", userFn, commute, op, func(f, in, inout unsafe.Pointer, count int, dt uintptr) {
		C.mpigo_call_user_function_c(f, in, inout, C.int64_t(count), C.uintptr_t(dt))
	})
}

func implOp_free(op unsafe.Pointer) int32 {
	const fn = "MPI_Op_free"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if op == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "op is NULL"))
	}
	h := *(*uintptr)(op)
	if _, ok := userOps.get(h); !ok {
		return raise(fn, noComm, classErr(MPI_ERR_OP, fmt.Sprintf("%#x is not a user-defined operation", h)))
	}
	userOps.remove(h)
	*(*uintptr)(op) = MPI_OP_NULL
	return MPI_SUCCESS
}

func implOp_commutative(op uintptr, commute unsafe.Pointer) int32 {
	const fn = "MPI_Op_commutative"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if op == MPI_REPLACE || op == MPI_NO_OP {
		// The one-sided operations are handles too; neither is
		// commutative: the order of replacements matters.
		if commute == nil {
			return raise(fn, noComm, classErr(MPI_ERR_ARG, "commute is NULL"))
		}
		setFlag(commute, false)
		return MPI_SUCCESS
	}
	o, rc := opArg(fn, nil, op)
	if o == nil {
		return rc
	}
	if commute == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "commute is NULL"))
	}
	setFlag(commute, o.Commutative())
	return MPI_SUCCESS
}

func reduceLocal(fn string, inbuf, inoutbuf unsafe.Pointer, count int, datatype, op uintptr) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	t, rc := typeArg(fn, nil, datatype)
	if t == nil {
		return rc
	}
	o, rc := opArg(fn, nil, op)
	if o == nil {
		return rc
	}
	if o, rc = fortranPairOp(fn, nil, o, t); o == nil {
		return rc
	}
	if rc := opOnType(fn, nil, o, t); rc != 0 {
		return rc
	}
	if uintptr(inbuf) == 1 || uintptr(inoutbuf) == 1 {
		return raise(fn, noComm, classErr(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed"))
	}
	if count < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative count %d", count)))
	}
	in, rc := bufArg(fn, nil, inbuf, count, t)
	if rc != 0 {
		return rc
	}
	inout, rc := bufArg(fn, nil, inoutbuf, count, t)
	if rc != 0 {
		return rc
	}
	return self.check(fn, mpi.ReduceLocal(in, inout, count, t, o))
}

func implReduce_local(inbuf, inoutbuf unsafe.Pointer, count int32, datatype, op uintptr) int32 {
	return reduceLocal("MPI_Reduce_local", inbuf, inoutbuf, int(count), datatype, op)
}

func implReduce_local_c(inbuf, inoutbuf unsafe.Pointer, count int64, datatype, op uintptr) int32 {
	return reduceLocal("MPI_Reduce_local_c", inbuf, inoutbuf, int(count), datatype, op)
}

//go:build cgo

package main

/*
#include <stdint.h>
void mpigo_call_user_function(void *fn, void *in, void *inout, int len, uintptr_t dt);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The predefined operations; MPI_REPLACE and MPI_NO_OP are for one-sided
// accumulates only.
var predefOps = map[uintptr]*mpi.ReduceOp{
	MPI_SUM: mpi.OpSum, MPI_PROD: mpi.OpProd, MPI_MIN: mpi.OpMin, MPI_MAX: mpi.OpMax,
	MPI_LAND: mpi.OpLand, MPI_LOR: mpi.OpLor, MPI_LXOR: mpi.OpLxor,
	MPI_BAND: mpi.OpBand, MPI_BOR: mpi.OpBor, MPI_BXOR: mpi.OpBxor,
	MPI_MINLOC: mpi.OpMinLoc, MPI_MAXLOC: mpi.OpMaxLoc,
}

var userOps = &table[*mpi.ReduceOp]{kind: kindOp}

func opArg(fn string, ce *commEntry, h uintptr) (*mpi.ReduceOp, int32) {
	if op, ok := predefOps[h]; ok {
		return op, 0
	}
	if op, ok := userOps.get(h); ok {
		return op, 0
	}
	return nil, raiseOn(fn, ce, classErr(MPI_ERR_OP, fmt.Sprintf("%#x is not an operation for reductions", h)))
}

// implOp_create wraps a C MPI_User_function as an mpigo operation: mpigo
// calls it on its buffers through a C trampoline, with the handle of the
// datatype the reduction was called with.
func implOp_create(userFn unsafe.Pointer, commute int32, op unsafe.Pointer) int32 {
	const fn = "MPI_Op_create"
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
		C.mpigo_call_user_function(userFn, unsafe.Pointer(&in[0]), unsafe.Pointer(&inout[0]), C.int(count), C.uintptr_t(typeHandle(dt)))
	}, commute != 0)
	*(*uintptr)(op) = userOps.add(o)
	return MPI_SUCCESS
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

func implBarrier(comm uintptr) int32 {
	ce, rc := getComm("MPI_Barrier", comm)
	if ce == nil {
		return rc
	}
	return ce.check("MPI_Barrier", ce.c.Barrier())
}

func implBcast(buffer unsafe.Pointer, count int32, datatype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Bcast"
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	b, rc := bufArg(fn, ce, buffer, int(count), t)
	if rc != 0 {
		return rc
	}
	return ce.check(fn, ce.c.Bcast(b, int(count), t, int(root)))
}

// reduceArgs resolves the arguments common to the reductions.
func reduceArgs(fn string, sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, recvHere bool) (*commEntry, []byte, []byte, *mpi.Datatype, *mpi.ReduceOp, int32) {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return nil, nil, nil, nil, nil, rc
	}
	o, rc := opArg(fn, ce, op)
	if o == nil {
		return nil, nil, nil, nil, nil, rc
	}
	sb, rc := bufArg(fn, ce, sendbuf, int(count), t)
	if rc != 0 {
		return nil, nil, nil, nil, nil, rc
	}
	var rb []byte
	if recvHere {
		if rb, rc = bufArg(fn, ce, recvbuf, int(count), t); rc != 0 {
			return nil, nil, nil, nil, nil, rc
		}
	}
	return ce, sb, rb, t, o, 0
}

func implReduce(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Reduce"
	// recvbuf matters at the root only.
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	ce, sb, rb, t, o, rc := reduceArgs(fn, sendbuf, recvbuf, count, datatype, op, comm, ce.c.Rank() == int(root))
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Reduce(sb, rb, int(count), t, o, int(root)))
}

func implAllreduce(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Allreduce"
	ce, sb, rb, t, o, rc := reduceArgs(fn, sendbuf, recvbuf, count, datatype, op, comm, true)
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Allreduce(sb, rb, int(count), t, o))
}

// blocks resolves the arguments of the fixed-size gathers and scatters:
// the send side has sendcount*sendN elements, the receive side
// recvcount*recvN (0: not significant here).
func blocks(fn string, sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr,
	comm uintptr, sendN, recvN func(c *mpi.Comm) int) (*commEntry, []byte, *mpi.Datatype, []byte, *mpi.Datatype, int32) {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return nil, nil, nil, nil, nil, rc
	}
	var (
		sb, rb []byte
		st, rt *mpi.Datatype
	)
	if n := sendN(ce.c); n > 0 || uintptr(sendbuf) == 1 {
		if uintptr(sendbuf) == 1 {
			sb = mpi.InPlace
		} else {
			if st, rc = typeArg(fn, ce, sendtype); st == nil {
				return nil, nil, nil, nil, nil, rc
			}
			if sb, rc = bufArg(fn, ce, sendbuf, int(sendcount)*n, st); rc != 0 {
				return nil, nil, nil, nil, nil, rc
			}
		}
	}
	if n := recvN(ce.c); n > 0 {
		if rt, rc = typeArg(fn, ce, recvtype); rt == nil {
			return nil, nil, nil, nil, nil, rc
		}
		if rb, rc = bufArg(fn, ce, recvbuf, int(recvcount)*n, rt); rc != 0 {
			return nil, nil, nil, nil, nil, rc
		}
	}
	// A side that is not significant here (or MPI_IN_PLACE) takes the
	// other side's datatype, so that mpigo gets no nil datatype.
	if st == nil {
		st = rt
	}
	if rt == nil {
		rt = st
	}
	return ce, sb, st, rb, rt, 0
}

func one(*mpi.Comm) int   { return 1 }
func all(c *mpi.Comm) int { return c.Size() }
func atRoot(root int32) func(c *mpi.Comm) int {
	return func(c *mpi.Comm) int {
		if c.Rank() == int(root) {
			return c.Size()
		}
		return 0
	}
}

func implGather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Gather"
	ce, sb, st, rb, rt, rc := blocks(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, one, atRoot(root))
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Gather(sb, int(sendcount), st, rb, int(recvcount), rt, int(root)))
}

func implScatter(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Scatter"
	ce, rb, rt, sb, st, rc := blocks(fn, recvbuf, recvcount, recvtype, sendbuf, sendcount, sendtype, comm, one, atRoot(root))
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Scatter(sb, int(sendcount), st, rb, int(recvcount), rt, int(root)))
}

func implAllgather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Allgather"
	ce, sb, st, rb, rt, rc := blocks(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, one, all)
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Allgather(sb, int(sendcount), st, rb, int(recvcount), rt))
}

func implAlltoall(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Alltoall"
	ce, sb, st, rb, rt, rc := blocks(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, all, all)
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Alltoall(sb, int(sendcount), st, rb, int(recvcount), rt))
}

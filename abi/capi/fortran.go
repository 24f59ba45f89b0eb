//go:build cgo

package capi

/*
#include <pthread.h>
static int mpigo_same_thread(pthread_t t) { return pthread_equal(t, pthread_self()); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The Fortran side of the ABI (MPI_Abi_{get,set}_fortran_{info,booleans})
// for a library without Fortran bindings: it knows nothing of Fortran by
// itself, so it keeps what a Fortran binding layered on it tells it, once,
// and answers with that (MPI_INFO_NULL and "not set" before). And
// MPI_Is_thread_main.

var fortran struct {
	sync.Mutex
	info     *mpi.Info        // MPI_Abi_set_fortran_info's, or nil
	infoSet  bool             // set once: a second call is MPI_ERR_ABI
	booleans map[int32][]byte // by logical size: the true then the false value
}

func implAbi_set_fortran_info(info uintptr) int32 {
	const fn = "MPI_Abi_set_fortran_info"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	fortran.Lock()
	defer fortran.Unlock()
	if fortran.infoSet {
		return raise(fn, noComm, classErr(MPI_ERR_ABI, "the Fortran ABI information was set before (it may be set once)"))
	}
	ft, err := makeFortranTypes(in)
	if err != nil {
		return raise(fn, noComm, classErr(MPI_ERR_ABI, err.Error()))
	}
	publishFortranTypes(ft)
	fortran.info, fortran.infoSet = in.Dup(), true
	return MPI_SUCCESS
}

func implAbi_get_fortran_info(info unsafe.Pointer) int32 {
	const fn = "MPI_Abi_get_fortran_info"
	if info == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "info is NULL"))
	}
	fortran.Lock()
	defer fortran.Unlock()
	if fortran.info == nil {
		*(*uintptr)(info) = MPI_INFO_NULL
		return MPI_SUCCESS
	}
	*(*uintptr)(info) = infos.add(fortran.info.Dup())
	return MPI_SUCCESS
}

// logicalSize checks a Fortran LOGICAL size: a power of two up to 16.
func logicalSize(fn string, n int32) int32 {
	if n <= 0 || n > 16 || n&(n-1) != 0 {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("logical_size %d is not a power of two up to 16", n)))
	}
	return 0
}

func implAbi_set_fortran_booleans(n int32, t, f unsafe.Pointer) int32 {
	const fn = "MPI_Abi_set_fortran_booleans"
	if rc := logicalSize(fn, n); rc != 0 {
		return rc
	}
	if t == nil || f == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "logical_true or logical_false is NULL"))
	}
	fortran.Lock()
	defer fortran.Unlock()
	if _, ok := fortran.booleans[n]; ok {
		return raise(fn, noComm, classErr(MPI_ERR_ABI, fmt.Sprintf("the Fortran booleans of size %d were set before (they may be set once)", n)))
	}
	if fortran.booleans == nil {
		fortran.booleans = map[int32][]byte{}
	}
	v := append(append([]byte(nil), unsafe.Slice((*byte)(t), n)...), unsafe.Slice((*byte)(f), n)...)
	fortran.booleans[n] = v
	return MPI_SUCCESS
}

func implAbi_get_fortran_booleans(n int32, t, f, isSet unsafe.Pointer) int32 {
	const fn = "MPI_Abi_get_fortran_booleans"
	if rc := logicalSize(fn, n); rc != 0 {
		return rc
	}
	if isSet == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "is_set is NULL"))
	}
	fortran.Lock()
	v, ok := fortran.booleans[n]
	fortran.Unlock()
	setFlag(isSet, ok)
	if !ok {
		return MPI_SUCCESS
	}
	if t == nil || f == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "logical_true or logical_false is NULL"))
	}
	copy(unsafe.Slice((*byte)(t), n), v[:n])
	copy(unsafe.Slice((*byte)(f), n), v[n:])
	return MPI_SUCCESS
}

// mainThread is the operating-system thread that called MPI_Init or
// MPI_Init_thread: a call from C runs on its caller's thread.
var mainThread struct {
	sync.Mutex
	set bool
	t   C.pthread_t
}

// noteMainThread records the calling thread as the main one (state.go's
// initThread calls it).
func noteMainThread() {
	mainThread.Lock()
	mainThread.t, mainThread.set = C.pthread_self(), true
	mainThread.Unlock()
}

func implIs_thread_main(flag unsafe.Pointer) int32 {
	const fn = "MPI_Is_thread_main"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	mainThread.Lock()
	t, set := mainThread.t, mainThread.set
	mainThread.Unlock()
	setFlag(flag, set && C.mpigo_same_thread(t) != 0)
	return MPI_SUCCESS
}

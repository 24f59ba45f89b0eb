//go:build cgo

package capi

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The fault-tolerance interface (ULFM) under the MPIX_ names of Open MPI
// and MPICH, an extension of the ABI (abi/spec/extensions.txt), over
// mpigo's Comm.Revoke, Agree, Shrink, GetFailed and AckFailed. They need
// a job started with fault tolerance (mpigo run --ft).

// isExtClass reports whether c is an error class of the extensions.
func isExtClass(c int32) bool { return c >= MPIX_ERR_PROC_FAILED && c <= MPIX_ERR_REVOKED }

var extText = map[int32]string{
	MPIX_ERR_PROC_FAILED:         "MPIX_ERR_PROC_FAILED: a process failed",
	MPIX_ERR_PROC_FAILED_PENDING: "MPIX_ERR_PROC_FAILED_PENDING: a process failed while a receive from any source was pending",
	MPIX_ERR_REVOKED:             "MPIX_ERR_REVOKED: the communicator was revoked",
}

func init() {
	className[MPIX_ERR_PROC_FAILED] = "MPIX_ERR_PROC_FAILED"
	className[MPIX_ERR_PROC_FAILED_PENDING] = "MPIX_ERR_PROC_FAILED_PENDING"
	className[MPIX_ERR_REVOKED] = "MPIX_ERR_REVOKED"
}

// The classes of the extensions are above 63, outside the ring of
// messages of errors.go: their code is the class itself, and
// MPI_Error_string tells the newest message of the class.
var extMsgs struct {
	sync.Mutex
	msg map[int32]string
}

func extCode(class int32, msg string) int32 {
	extMsgs.Lock()
	defer extMsgs.Unlock()
	if extMsgs.msg == nil {
		extMsgs.msg = map[int32]string{}
	}
	extMsgs.msg[class] = msg
	return class
}

func extString(class int32) string {
	extMsgs.Lock()
	defer extMsgs.Unlock()
	if m := extMsgs.msg[class]; m != "" {
		return extText[class] + ": " + m
	}
	return extText[class]
}

// ftClass is the class of an error of the fault-tolerance layer: a
// pending receive's failure and a revocation before a failure, as the
// message of one may name the other.
func ftClass(err error) (int32, bool) {
	switch {
	case errors.Is(err, mpi.ErrProcFailedPending):
		return MPIX_ERR_PROC_FAILED_PENDING, true
	case errors.Is(err, mpi.ErrRevoked):
		return MPIX_ERR_REVOKED, true
	case errors.Is(err, mpi.ErrProcFailed):
		return MPIX_ERR_PROC_FAILED, true
	}
	return 0, false
}

func implXComm_revoke(comm uintptr) int32 {
	const fn = "MPIX_Comm_revoke"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.Revoke())
}

func implXComm_is_revoked(comm uintptr, flag unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_is_revoked"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if flag == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	setFlag(flag, ce.c.IsRevoked())
	return MPI_SUCCESS
}

func implXComm_shrink(comm uintptr, newcomm unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_shrink"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	c, err := ce.c.Shrink()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

// MPIX_Comm_agree combines the flags of the live members with a bitwise
// AND; the agreed value is stored even when the call reports a failure.
func implXComm_agree(comm uintptr, flag unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_agree"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if flag == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	p := (*int32)(flag)
	v, err := ce.c.Agree(int(uint32(*p)))
	*p = int32(uint32(v))
	return ce.check(fn, err)
}

// MPIX_Comm_iagree's request completes when the agreement is decided;
// the agreed value is then at flag.
func implXComm_iagree(comm uintptr, flag, request unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_iagree"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if flag == nil || request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "flag or request is NULL"))
	}
	p := (*int32)(flag)
	f, err := ce.c.Iagree(int(uint32(*p)))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	var werr error
	r, err := ce.c.GrequestStart(func(*mpi.Status) error { return werr }, nil, nil)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	go func() {
		v, err := f.Wait()
		*p = int32(uint32(v))
		werr = err
		r.GrequestComplete()
	}()
	*(*uintptr)(request) = requests.add(reqEntry{r, ce})
	return MPI_SUCCESS
}

func implXComm_failure_ack(comm uintptr) int32 {
	const fn = "MPIX_Comm_failure_ack"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	g, err := ce.c.GetFailed()
	if err == nil {
		_, err = ce.c.AckFailed(g.Size())
	}
	return ce.check(fn, err)
}

// MPIX_Comm_failure_get_acked gives the failed members acknowledged by
// MPIX_Comm_failure_ack (or MPIX_Comm_ack_failed).
func implXComm_failure_get_acked(comm uintptr, group unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_failure_get_acked"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if group == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "failedgrp is NULL"))
	}
	g, err := ce.c.GetFailed()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	n, err := ce.c.AckFailed(0) // acknowledges nothing new: how many are
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	ranks := make([]int, min(n, g.Size()))
	for i := range ranks {
		ranks[i] = i
	}
	acked, err := g.Incl(ranks)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(group) = groupOut(acked)
	return MPI_SUCCESS
}

func implXComm_get_failed(comm uintptr, group unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_get_failed"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if group == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "failedgrp is NULL"))
	}
	g, err := ce.c.GetFailed()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(group) = groupOut(g)
	return MPI_SUCCESS
}

func implXComm_ack_failed(comm uintptr, n int32, acked unsafe.Pointer) int32 {
	const fn = "MPIX_Comm_ack_failed"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if acked == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "num_acked is NULL"))
	}
	if n < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("cannot acknowledge %d failures", n)))
	}
	k, err := ce.c.AckFailed(int(n))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(acked) = int32(k)
	return MPI_SUCCESS
}

//go:build cgo

package capi

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// invalidArg is a rank or tag that mpigo rejects: where the ABI's sentinel
// values would mean something else to mpigo (MPI_ANY_TAG, -2, is mpigo's
// ProcNull).
const invalidArg = -1 << 20

// rankArg converts a rank of the ABI to mpigo's.
func rankArg(r int32) int {
	switch {
	case r >= 0:
		return int(r)
	case r == MPI_ANY_SOURCE:
		return mpi.AnySource
	case r == MPI_PROC_NULL:
		return mpi.ProcNull
	}
	return invalidArg
}

// tagArg converts a tag of the ABI to mpigo's.
func tagArg(t int32) int {
	switch {
	case t >= 0:
		return int(t)
	case t == MPI_ANY_TAG:
		return mpi.AnyTag
	}
	return invalidArg
}

func outInt(fn string, ce *commEntry, p unsafe.Pointer, what string) (*int32, int32) {
	if p == nil {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, what+" is NULL"))
	}
	return (*int32)(p), 0
}

func implComm_rank(comm uintptr, rank unsafe.Pointer) int32 {
	ce, rc := getComm("MPI_Comm_rank", comm)
	if ce == nil {
		return rc
	}
	p, rc := outInt("MPI_Comm_rank", ce, rank, "rank")
	if p == nil {
		return rc
	}
	*p = int32(ce.c.Rank())
	return MPI_SUCCESS
}

func implComm_size(comm uintptr, size unsafe.Pointer) int32 {
	ce, rc := getComm("MPI_Comm_size", comm)
	if ce == nil {
		return rc
	}
	p, rc := outInt("MPI_Comm_size", ce, size, "size")
	if p == nil {
		return rc
	}
	*p = int32(ce.c.Size())
	return MPI_SUCCESS
}

// newComm stores c as a new communicator handle at out, inheriting the
// error handler of parent (MPI_Comm_dup and MPI_Comm_split do).
func newComm(parent *commEntry, c *mpi.Comm, out unsafe.Pointer) {
	if c == nil {
		*(*uintptr)(out) = MPI_COMM_NULL
		return
	}
	ce := &commEntry{c: c}
	ce.errh.Store(parent.errh.Load())
	h := comms.add(ce)
	commHandles.Store(c, h)
	*(*uintptr)(out) = h
}

// commHandles maps mpigo's communicators to their handles, for the
// callbacks that pass C the communicator (attribute copy and delete
// functions, error handlers).
var commHandles sync.Map // *mpi.Comm -> uintptr

// commHandle is the handle of c.
func commHandle(c *mpi.Comm) uintptr {
	switch c {
	case world.c:
		return MPI_COMM_WORLD
	case self.c:
		return MPI_COMM_SELF
	}
	if h, ok := commHandles.Load(c); ok {
		return h.(uintptr)
	}
	return MPI_COMM_NULL
}

func implComm_dup(comm uintptr, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_dup"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	c, err := ce.c.Dup()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

func implComm_split(comm uintptr, color, key int32, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_split"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	col := int(color)
	if color == MPI_UNDEFINED {
		col = mpi.Undefined
	}
	c, err := ce.c.Split(col, int(key))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

func implComm_free(p unsafe.Pointer) int32 {
	const fn = "MPI_Comm_free"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if p == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "comm is NULL"))
	}
	h := *(*uintptr)(p)
	if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
		return raise(fn, h, classErr(MPI_ERR_COMM, "a predefined communicator cannot be freed"))
	}
	ce, rc := getComm(fn, h)
	if ce == nil {
		return rc
	}
	if err := ce.c.Free(); err != nil {
		return raiseOn(fn, ce, err)
	}
	forgetComm(h, ce.c)
	*(*uintptr)(p) = MPI_COMM_NULL
	return MPI_SUCCESS
}

// forgetComm drops the handle h of the freed communicator c
// (MPI_Comm_free, MPI_Comm_disconnect).
func forgetComm(h uintptr, c *mpi.Comm) {
	comms.remove(h)
	commHandles.Delete(c)
	namedComms.Delete(c)
	idupInfos.Delete(c)
}

func implComm_set_errhandler(comm, errhandler uintptr) int32 {
	const fn = "MPI_Comm_set_errhandler"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	switch errhandler {
	case MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT:
		ce.errh.Store(errhandler)
		ce.errhSet.Store(true)
		return MPI_SUCCESS
	}
	if _, ok := errhandlers.get(errhandler); ok {
		ce.errh.Store(errhandler)
		ce.errhSet.Store(true)
		return MPI_SUCCESS
	}
	return raiseOn(fn, ce, classErr(MPI_ERR_ERRHANDLER, fmt.Sprintf("%#x is not an error handler (freed, garbage, or of another kind)", errhandler)))
}

func implComm_get_errhandler(comm uintptr, errhandler unsafe.Pointer) int32 {
	const fn = "MPI_Comm_get_errhandler"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if errhandler == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "errhandler is NULL"))
	}
	*(*uintptr)(errhandler) = ce.errh.Load()
	return MPI_SUCCESS
}

func implErrhandler_free(p unsafe.Pointer) int32 {
	const fn = "MPI_Errhandler_free"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if p == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "errhandler is NULL"))
	}
	switch h := *(*uintptr)(p); h {
	case MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT:
		// Freeing a predefined handler only clears the caller's handle.
		*(*uintptr)(p) = MPI_ERRHANDLER_NULL
		return MPI_SUCCESS
	default:
		// A user handler stays usable by the communicators it is set on
		// (MPI frees it when the last of them goes): the handle only
		// leaves the table if none uses it, which this layer does not
		// track, so it stays, and the caller's handle is cleared.
		if _, ok := errhandlers.get(h); ok {
			*(*uintptr)(p) = MPI_ERRHANDLER_NULL
			return MPI_SUCCESS
		}
	}
	if _, ok := sessionErrhs.get(*(*uintptr)(p)); ok {
		// As a communicator's: sessions that use it keep it.
		*(*uintptr)(p) = MPI_ERRHANDLER_NULL
		return MPI_SUCCESS
	}
	if freeWinErrhandler(*(*uintptr)(p)) { // win_attr.go
		*(*uintptr)(p) = MPI_ERRHANDLER_NULL
		return MPI_SUCCESS
	}
	if freeFileErrhandler(*(*uintptr)(p)) { // file.go
		*(*uintptr)(p) = MPI_ERRHANDLER_NULL
		return MPI_SUCCESS
	}
	return raise(fn, noComm, classErr(MPI_ERR_ERRHANDLER, "not an error handler"))
}

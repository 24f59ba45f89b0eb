//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// MPI-4.1's buffers for buffered sends of a communicator and of a
// session, and the flushes (mpigo's buffer.go). The process's buffer is
// p2p.go's.

// attachMem is the user's buffer of size bytes at buffer, or the error.
func attachMem(size int, buffer unsafe.Pointer) ([]byte, error) {
	if size < 0 {
		return nil, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative size %d", size))
	}
	if buffer == nil && size > 0 {
		return nil, classErr(MPI_ERR_BUFFER, "buffer is NULL")
	}
	if size == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(buffer), size), nil
}

// bufferAutomatic is MPI_BUFFER_AUTOMATIC's address (MPI-4.1): attached
// in place of a buffer, it asks for room of each buffered send's own size.
const bufferAutomatic = 2

// isAutomatic says whether buffer is MPI_BUFFER_AUTOMATIC.
func isAutomatic(buffer unsafe.Pointer) bool { return uintptr(buffer) == bufferAutomatic }

// detachOut stores the detached buffer's address at addr (a void ** C
// passes as void *): MPI_BUFFER_AUTOMATIC for an automatic buffer, which
// the Go layer detaches as nil (an attached buffer is never empty).
func detachOut(b []byte, addr unsafe.Pointer) {
	if b == nil {
		*(*uintptr)(addr) = bufferAutomatic
		return
	}
	*(*unsafe.Pointer)(addr) = unsafe.Pointer(unsafe.SliceData(b))
}

func commAttach(fn string, comm uintptr, buffer unsafe.Pointer, size int) int32 {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if isAutomatic(buffer) {
		return ce.check(fn, ce.c.AttachBufferAutomatic())
	}
	b, err := attachMem(size, buffer)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	return ce.check(fn, ce.c.AttachBuffer(b))
}

func implComm_attach_buffer(comm uintptr, buffer unsafe.Pointer, size int32) int32 {
	return commAttach("MPI_Comm_attach_buffer", comm, buffer, int(size))
}

func implComm_attach_buffer_c(comm uintptr, buffer unsafe.Pointer, size int64) int32 {
	return commAttach("MPI_Comm_attach_buffer_c", comm, buffer, int(size))
}

func commDetach(fn string, comm uintptr, addr, size unsafe.Pointer) (int, int32) {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return 0, rc
	}
	if addr == nil || size == nil {
		return 0, raiseOn(fn, ce, classErr(MPI_ERR_ARG, "buffer_addr or size is NULL"))
	}
	b, err := ce.c.DetachBuffer()
	if err != nil {
		return 0, ce.check(fn, err)
	}
	detachOut(b, addr)
	return len(b), MPI_SUCCESS
}

func implComm_detach_buffer(comm uintptr, addr, size unsafe.Pointer) int32 {
	n, rc := commDetach("MPI_Comm_detach_buffer", comm, addr, size)
	if rc == 0 {
		*(*int32)(size) = int32(n)
	}
	return rc
}

func implComm_detach_buffer_c(comm uintptr, addr, size unsafe.Pointer) int32 {
	n, rc := commDetach("MPI_Comm_detach_buffer_c", comm, addr, size)
	if rc == 0 {
		*(*int64)(size) = int64(n)
	}
	return rc
}

func implComm_flush_buffer(comm uintptr) int32 {
	const fn = "MPI_Comm_flush_buffer"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	return ce.check(fn, ce.c.FlushBuffer())
}

// storeFlush stores the request of a flush at out.
func storeFlush(fn string, ce *commEntry, r *mpi.Request, err error, out unsafe.Pointer) int32 {
	if err != nil {
		return ce.check(fn, err)
	}
	*(*uintptr)(out) = requests.add(reqEntry{r, ce})
	return MPI_SUCCESS
}

func implComm_iflush_buffer(comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Comm_iflush_buffer"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	r, err := ce.c.IflushBuffer()
	return storeFlush(fn, ce, r, err, request)
}

// The process's buffer (p2p.go's procBuffer): world's rank's under
// MPI_Init, a live session's rank's in the Sessions model.
func implBuffer_flush() int32 {
	const fn = "MPI_Buffer_flush"
	pb, rc := procBufferOf(fn)
	if rc != 0 {
		return rc
	}
	return pb.check(fn, pb.flush())
}

func implBuffer_iflush(request unsafe.Pointer) int32 {
	const fn = "MPI_Buffer_iflush"
	pb, rc := procBufferOf(fn)
	if rc != 0 {
		return rc
	}
	if request == nil {
		return pb.check(fn, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	r, err := pb.iflush()
	if err != nil {
		return pb.check(fn, err)
	}
	if pb.c != nil {
		*(*uintptr)(request) = requests.add(reqEntry{r, &self})
	} else {
		*(*uintptr)(request) = requests.add(reqEntry{r, nil})
	}
	return MPI_SUCCESS
}

func sessionAttach(fn string, session uintptr, buffer unsafe.Pointer, size int) int32 {
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	var err error
	if isAutomatic(buffer) {
		err = e.s.AttachBufferAutomatic()
	} else {
		var b []byte
		if b, err = attachMem(size, buffer); err == nil {
			err = e.s.AttachBuffer(b)
		}
	}
	if err != nil {
		return raiseSession(fn, e, session, err)
	}
	return MPI_SUCCESS
}

func implSession_attach_buffer(session uintptr, buffer unsafe.Pointer, size int32) int32 {
	return sessionAttach("MPI_Session_attach_buffer", session, buffer, int(size))
}

func implSession_attach_buffer_c(session uintptr, buffer unsafe.Pointer, size int64) int32 {
	return sessionAttach("MPI_Session_attach_buffer_c", session, buffer, int(size))
}

func sessionDetach(fn string, session uintptr, addr, size unsafe.Pointer) (int, int32) {
	e, rc := sessionArg(fn, session)
	if e == nil {
		return 0, rc
	}
	if addr == nil || size == nil {
		return 0, raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "buffer_addr or size is NULL"))
	}
	b, err := e.s.DetachBuffer()
	if err != nil {
		return 0, raiseSession(fn, e, session, err)
	}
	detachOut(b, addr)
	return len(b), MPI_SUCCESS
}

func implSession_detach_buffer(session uintptr, addr, size unsafe.Pointer) int32 {
	n, rc := sessionDetach("MPI_Session_detach_buffer", session, addr, size)
	if rc == 0 {
		*(*int32)(size) = int32(n)
	}
	return rc
}

func implSession_detach_buffer_c(session uintptr, addr, size unsafe.Pointer) int32 {
	n, rc := sessionDetach("MPI_Session_detach_buffer_c", session, addr, size)
	if rc == 0 {
		*(*int64)(size) = int64(n)
	}
	return rc
}

func implSession_flush_buffer(session uintptr) int32 {
	const fn = "MPI_Session_flush_buffer"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if err := e.s.FlushBuffer(); err != nil {
		return raiseSession(fn, e, session, err)
	}
	return MPI_SUCCESS
}

func implSession_iflush_buffer(session uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Session_iflush_buffer"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if request == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	r, err := e.s.IflushBuffer()
	if err != nil {
		return raiseSession(fn, e, session, err)
	}
	*(*uintptr)(request) = requests.add(reqEntry{r, nil})
	return MPI_SUCCESS
}

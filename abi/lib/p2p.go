//go:build cgo

package main

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// status is the layout of MPI_Status: MPI_SOURCE, MPI_TAG, MPI_ERROR and
// five ints of the implementation's, here the received byte count (low
// and high half) and the cancelled flag.
type status struct {
	source, tag, err int32
	countLo, countHi int32
	cancelled        int32
	_                [2]int32
}

func setStatus(p unsafe.Pointer, st mpi.Status, code int32) {
	if p == nil { // MPI_STATUS_IGNORE
		return
	}
	s := (*status)(p)
	switch st.Source {
	case mpi.ProcNull:
		s.source = MPI_PROC_NULL
	case mpi.AnySource:
		s.source = MPI_ANY_SOURCE
	default:
		s.source = int32(st.Source)
	}
	if st.Tag == mpi.AnyTag {
		s.tag = MPI_ANY_TAG
	} else {
		s.tag = int32(st.Tag)
	}
	s.err = code
	n := uint64(st.Bytes())
	s.countLo, s.countHi = int32(uint32(n)), int32(uint32(n>>32))
	s.cancelled = 0
	if st.Cancelled() {
		s.cancelled = 1
	}
}

// setEmptyStatus is the empty status of MPI: source MPI_ANY_SOURCE, tag
// MPI_ANY_TAG, count 0.
func setEmptyStatus(p unsafe.Pointer) {
	if p == nil {
		return
	}
	*(*status)(p) = status{source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG}
}

// args resolves a communicator and a datatype.
func args(fn string, comm, datatype uintptr) (*commEntry, *mpi.Datatype, int32) {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return nil, nil, rc
	}
	t, rc := typeArg(fn, ce, datatype)
	if t == nil {
		return nil, nil, rc
	}
	return ce, t, 0
}

func send(fn string, buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr,
	do func(c *mpi.Comm, b []byte, n int, t *mpi.Datatype, dest, tag int) error) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	b, t, rc := bufType(fn, ce, buf, int(count), t)
	if rc != 0 {
		return rc
	}
	return ce.check(fn, do(ce.c, b, int(count), t, rankArg(dest), tagArg(tag)))
}

func implSend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Send", buf, count, datatype, dest, tag, comm, (*mpi.Comm).Send)
}

func implSsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Ssend", buf, count, datatype, dest, tag, comm, (*mpi.Comm).Ssend)
}

func implRecv(buf unsafe.Pointer, count int32, datatype uintptr, source, tag int32, comm uintptr, st unsafe.Pointer) int32 {
	const fn = "MPI_Recv"
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	b, t, rc := bufType(fn, ce, buf, int(count), t)
	if rc != 0 {
		return rc
	}
	s, err := ce.c.Recv(b, int(count), t, rankArg(source), tagArg(tag))
	rc = ce.check(fn, err)
	setStatus(st, s, rc)
	return rc
}

func implSendrecv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	const fn = "MPI_Sendrecv"
	ce, stype, rc := args(fn, comm, sendtype)
	if ce == nil {
		return rc
	}
	rtype, rc := typeArg(fn, ce, recvtype)
	if rtype == nil {
		return rc
	}
	sb, stype, rc := bufType(fn, ce, sendbuf, int(sendcount), stype)
	if rc != 0 {
		return rc
	}
	rb, rtype, rc := bufType(fn, ce, recvbuf, int(recvcount), rtype)
	if rc != 0 {
		return rc
	}
	s, err := ce.c.Sendrecv(sb, int(sendcount), stype, rankArg(dest), tagArg(sendtag), rb, int(recvcount), rtype, rankArg(source), tagArg(recvtag))
	rc = ce.check(fn, err)
	setStatus(st, s, rc)
	return rc
}

func implProbe(source, tag int32, comm uintptr, st unsafe.Pointer) int32 {
	const fn = "MPI_Probe"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	s, err := ce.c.Probe(rankArg(source), tagArg(tag))
	rc = ce.check(fn, err)
	setStatus(st, s, rc)
	return rc
}

func implGet_count(st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	const fn = "MPI_Get_count"
	if rc := running(fn); rc != 0 {
		return rc
	}
	t, rc := typeArg(fn, nil, datatype)
	if t == nil {
		return rc
	}
	if st == nil || count == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "status or count is NULL"))
	}
	s := (*status)(st)
	n := int64(uint64(uint32(s.countLo)) | uint64(uint32(s.countHi))<<32)
	size := int64(t.Size())
	switch {
	case size == 0:
		*(*int32)(count) = 0
	case n%size != 0 || n/size > 1<<31-1:
		*(*int32)(count) = MPI_UNDEFINED
	default:
		*(*int32)(count) = int32(n / size)
	}
	return MPI_SUCCESS
}

// reqEntry is a request behind a handle, with the communicator whose
// error handler its errors go to.
type reqEntry struct {
	r  *mpi.Request
	ce *commEntry
}

var requests = &table[reqEntry]{kind: kindRequest}

func isend(fn string, buf unsafe.Pointer, count int32, datatype uintptr, peer, tag int32, comm uintptr, request unsafe.Pointer,
	do func(c *mpi.Comm, b []byte, n int, t *mpi.Datatype, peer, tag int) (*mpi.Request, error)) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	if request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_REQUEST, "request is NULL"))
	}
	b, t, rc := bufType(fn, ce, buf, int(count), t)
	if rc != 0 {
		return rc
	}
	r, err := do(ce.c, b, int(count), t, rankArg(peer), tagArg(tag))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(request) = requests.add(reqEntry{r, ce})
	return MPI_SUCCESS
}

func implIsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Isend", buf, count, datatype, dest, tag, comm, request, (*mpi.Comm).Isend)
}

func implIrecv(buf unsafe.Pointer, count int32, datatype uintptr, source, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Irecv", buf, count, datatype, source, tag, comm, request, (*mpi.Comm).Irecv)
}

// waitOne completes the request at p (a handle), frees it and fills st;
// it returns the error's code (raised on the request's communicator) or 0.
func waitOne(fn string, p unsafe.Pointer, st unsafe.Pointer) int32 {
	h := *(*uintptr)(p)
	if h == MPI_REQUEST_NULL {
		setEmptyStatus(st)
		return MPI_SUCCESS
	}
	e, ok := requests.get(h)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("%#x is not a request handle (freed, garbage, or of another kind)", h)))
	}
	s, err := e.r.Wait()
	requests.remove(h)
	*(*uintptr)(p) = MPI_REQUEST_NULL
	rc := e.ce.check(fn, err)
	setStatus(st, s, rc)
	return rc
}

func implWait(request, st unsafe.Pointer) int32 {
	const fn = "MPI_Wait"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if request == nil {
		return raise(fn, noComm, classErr(MPI_ERR_REQUEST, "request is NULL"))
	}
	return waitOne(fn, request, st)
}

func implWaitall(count int32, reqs, sts unsafe.Pointer) int32 {
	const fn = "MPI_Waitall"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if count < 0 || (count > 0 && reqs == nil) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "bad count or NULL array of requests"))
	}
	rs := unsafe.Slice((*uintptr)(reqs), count)
	var ss []status
	if sts != nil {
		ss = unsafe.Slice((*status)(sts), count)
	}
	failed := false
	for i := range rs {
		var st unsafe.Pointer
		if ss != nil {
			st = unsafe.Pointer(&ss[i])
		}
		// Each request's error went through its communicator's handler;
		// under MPI_ERRORS_RETURN Waitall reports MPI_ERR_IN_STATUS.
		if rc := waitOne(fn, unsafe.Pointer(&rs[i]), st); rc != 0 {
			failed = true
		}
	}
	if failed {
		return newCode(MPI_ERR_IN_STATUS, fn+": a request failed: see the MPI_ERROR fields of the statuses")
	}
	return MPI_SUCCESS
}

func implTest(request, flag, st unsafe.Pointer) int32 {
	const fn = "MPI_Test"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if request == nil || flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "request or flag is NULL"))
	}
	h := *(*uintptr)(request)
	if h == MPI_REQUEST_NULL {
		setFlag(flag, true)
		setEmptyStatus(st)
		return MPI_SUCCESS
	}
	e, ok := requests.get(h)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("%#x is not a request handle", h)))
	}
	done, s, err := e.r.Test()
	setFlag(flag, done)
	if !done && err == nil {
		return MPI_SUCCESS
	}
	requests.remove(h)
	*(*uintptr)(request) = MPI_REQUEST_NULL
	rc := e.ce.check(fn, err)
	setStatus(st, s, rc)
	return rc
}

func implRequest_free(request unsafe.Pointer) int32 {
	const fn = "MPI_Request_free"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if request == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	h := *(*uintptr)(request)
	e, ok := requests.get(h)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("%#x is not a request handle", h)))
	}
	if err := e.r.Free(); err != nil {
		return e.ce.check(fn, err)
	}
	requests.remove(h)
	*(*uintptr)(request) = MPI_REQUEST_NULL
	return MPI_SUCCESS
}

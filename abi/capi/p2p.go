//go:build cgo

package capi

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

// setStatus fills the status at p (nil: MPI_STATUS_IGNORE) of a call that
// completes one operation. It leaves MPI_ERROR alone: the standard sets
// that field only in the calls that return many statuses, where the
// return code cannot say which operation failed, and programs (MPICH's
// suite among them) check that a single completion does not touch it.
func setStatus(p unsafe.Pointer, st mpi.Status) {
	if p == nil {
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
	n := uint64(st.Bytes())
	s.countLo, s.countHi = int32(uint32(n)), int32(uint32(n>>32))
	s.cancelled = 0
	if st.Cancelled() {
		s.cancelled = 1
	}
}

// setStatusErr fills one status of an array that a multiple completion
// (Waitall, Testsome, ...) returns, MPI_ERROR included.
func setStatusErr(p unsafe.Pointer, st mpi.Status, code int32) {
	if p == nil {
		return
	}
	setStatus(p, st)
	(*status)(p).err = code
}

// setEmptyStatus is the empty status of MPI (a null or inactive
// request's): source MPI_ANY_SOURCE, tag MPI_ANY_TAG, MPI_ERROR
// MPI_SUCCESS, count 0, not cancelled. The standard's empty status has
// that error field, and MPICH (and mpi4py's tests of
// MPI_Request_get_status_any) set it, unlike setStatus's.
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

// noData is the datatype MPI_DATATYPE_NULL stands for in a point-to-point
// call of no elements, which MPICH's suite (pt2pt/recvnull) expects to
// work: the type describes nothing, so any will do.
func noData(datatype uintptr, count int) uintptr {
	if datatype == MPI_DATATYPE_NULL && count == 0 {
		return MPI_BYTE
	}
	return datatype
}

func send(fn string, buf unsafe.Pointer, count int, datatype uintptr, dest, tag int32, comm uintptr,
	do func(c *mpi.Comm, b []byte, n int, t *mpi.Datatype, dest, tag int) error) int32 {
	ce, t, rc := args(fn, comm, noData(datatype, count))
	if ce == nil {
		return rc
	}
	b, t, rc := bufType(fn, ce, buf, count, t)
	if rc != 0 {
		return rc
	}
	return ce.check(fn, do(ce.c, b, count, t, rankArg(dest), tagArg(tag)))
}

func implSend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Send", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Send)
}

func implSend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Send_c", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Send)
}

func implSsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Ssend", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Ssend)
}

func implSsend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Ssend_c", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Ssend)
}

func implRsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Rsend", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Rsend)
}

func implRsend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Rsend_c", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Rsend)
}

func implBsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Bsend", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Bsend)
}

func implBsend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr) int32 {
	return send("MPI_Bsend_c", buf, int(count), datatype, dest, tag, comm, (*mpi.Comm).Bsend)
}

func recv(fn string, buf unsafe.Pointer, count int, datatype uintptr, source, tag int32, comm uintptr, st unsafe.Pointer) int32 {
	ce, t, rc := args(fn, comm, noData(datatype, count))
	if ce == nil {
		return rc
	}
	b, t, rc := bufType(fn, ce, buf, count, t)
	if rc != 0 {
		return rc
	}
	s, err := ce.c.Recv(b, count, t, rankArg(source), tagArg(tag))
	rc = ce.check(fn, err)
	setStatus(st, s)
	return rc
}

func implRecv(buf unsafe.Pointer, count int32, datatype uintptr, source, tag int32, comm uintptr, st unsafe.Pointer) int32 {
	return recv("MPI_Recv", buf, int(count), datatype, source, tag, comm, st)
}

func implRecv_c(buf unsafe.Pointer, count int64, datatype uintptr, source, tag int32, comm uintptr, st unsafe.Pointer) int32 {
	return recv("MPI_Recv_c", buf, int(count), datatype, source, tag, comm, st)
}

// startFunc is a call that makes a request: Isend, Irecv, Send_init, ...
type startFunc = func(c *mpi.Comm, b []byte, n int, t *mpi.Datatype, peer, tag int) (*mpi.Request, error)

// isend makes the request of a non-blocking or persistent point-to-point
// call; persistent requests keep their handle when they complete.
func isend(fn string, buf unsafe.Pointer, count int, datatype uintptr, peer, tag int32, comm uintptr, request unsafe.Pointer,
	persistent bool, do startFunc) int32 {
	ce, t, rc := args(fn, comm, noData(datatype, count))
	if ce == nil {
		return rc
	}
	if request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	b, t, rc := bufType(fn, ce, buf, count, t)
	if rc != 0 {
		return rc
	}
	r, err := do(ce.c, b, count, t, rankArg(peer), tagArg(tag))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(request) = addRequest(r, ce, persistent)
	return MPI_SUCCESS
}

func implIsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Isend", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Isend)
}

func implIsend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Isend_c", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Isend)
}

func implIssend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Issend", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Issend)
}

func implIssend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Issend_c", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Issend)
}

func implIrsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Irsend", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Irsend)
}

func implIrsend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Irsend_c", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Irsend)
}

func implIbsend(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Ibsend", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Ibsend)
}

func implIbsend_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Ibsend_c", buf, int(count), datatype, dest, tag, comm, request, false, (*mpi.Comm).Ibsend)
}

func implIrecv(buf unsafe.Pointer, count int32, datatype uintptr, source, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Irecv", buf, int(count), datatype, source, tag, comm, request, false, (*mpi.Comm).Irecv)
}

func implIrecv_c(buf unsafe.Pointer, count int64, datatype uintptr, source, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Irecv_c", buf, int(count), datatype, source, tag, comm, request, false, (*mpi.Comm).Irecv)
}

func implSend_init(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Send_init", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).SendInit)
}

func implSend_init_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Send_init_c", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).SendInit)
}

func implSsend_init(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Ssend_init", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).SsendInit)
}

func implSsend_init_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Ssend_init_c", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).SsendInit)
}

func implRsend_init(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Rsend_init", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).RsendInit)
}

func implRsend_init_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Rsend_init_c", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).RsendInit)
}

func implBsend_init(buf unsafe.Pointer, count int32, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Bsend_init", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).BsendInit)
}

func implBsend_init_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Bsend_init_c", buf, int(count), datatype, dest, tag, comm, request, true, (*mpi.Comm).BsendInit)
}

func implRecv_init(buf unsafe.Pointer, count int32, datatype uintptr, source, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Recv_init", buf, int(count), datatype, source, tag, comm, request, true, (*mpi.Comm).RecvInit)
}

func implRecv_init_c(buf unsafe.Pointer, count int64, datatype uintptr, source, tag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isend("MPI_Recv_init_c", buf, int(count), datatype, source, tag, comm, request, true, (*mpi.Comm).RecvInit)
}

func sendrecv(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int, recvtype uintptr, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	ce, stype, rc := args(fn, comm, noData(sendtype, sendcount))
	if ce == nil {
		return rc
	}
	rtype, rc := typeArg(fn, ce, noData(recvtype, recvcount))
	if rtype == nil {
		return rc
	}
	sb, stype, rc := bufType(fn, ce, sendbuf, sendcount, stype)
	if rc != 0 {
		return rc
	}
	rb, rtype, rc := bufType(fn, ce, recvbuf, recvcount, rtype)
	if rc != 0 {
		return rc
	}
	s, err := ce.c.Sendrecv(sb, sendcount, stype, rankArg(dest), tagArg(sendtag), rb, recvcount, rtype, rankArg(source), tagArg(recvtag))
	rc = ce.check(fn, err)
	setStatus(st, s)
	return rc
}

func implSendrecv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	return sendrecv("MPI_Sendrecv", sendbuf, int(sendcount), sendtype, dest, sendtag, recvbuf, int(recvcount), recvtype, source, recvtag, comm, st)
}

func implSendrecv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	return sendrecv("MPI_Sendrecv_c", sendbuf, int(sendcount), sendtype, dest, sendtag, recvbuf, int(recvcount), recvtype, source, recvtag, comm, st)
}

func sendrecvReplace(fn string, buf unsafe.Pointer, count int, datatype uintptr, dest, sendtag, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	ce, t, rc := args(fn, comm, noData(datatype, count))
	if ce == nil {
		return rc
	}
	b, t, rc := bufType(fn, ce, buf, count, t)
	if rc != 0 {
		return rc
	}
	s, err := ce.c.SendrecvReplace(b, count, t, rankArg(dest), tagArg(sendtag), rankArg(source), tagArg(recvtag))
	rc = ce.check(fn, err)
	setStatus(st, s)
	return rc
}

func implSendrecv_replace(buf unsafe.Pointer, count int32, datatype uintptr, dest, sendtag, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	return sendrecvReplace("MPI_Sendrecv_replace", buf, int(count), datatype, dest, sendtag, source, recvtag, comm, st)
}

func implSendrecv_replace_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, sendtag, source, recvtag int32, comm uintptr, st unsafe.Pointer) int32 {
	return sendrecvReplace("MPI_Sendrecv_replace_c", buf, int(count), datatype, dest, sendtag, source, recvtag, comm, st)
}

func implProbe(source, tag int32, comm uintptr, st unsafe.Pointer) int32 {
	const fn = "MPI_Probe"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	s, err := ce.c.Probe(rankArg(source), tagArg(tag))
	rc = ce.check(fn, err)
	setStatus(st, s)
	return rc
}

func implIprobe(source, tag int32, comm uintptr, flag, st unsafe.Pointer) int32 {
	const fn = "MPI_Iprobe"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if flag == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	ok, s, err := ce.c.Iprobe(rankArg(source), tagArg(tag))
	if rc = ce.check(fn, err); rc != 0 {
		return rc
	}
	setFlag(flag, ok)
	if ok {
		setStatus(st, s)
	}
	return MPI_SUCCESS
}

// Matched messages (MPI_Mprobe) have handles of a kind of their own (far
// from the kinds handles.go counts up, which other files add to), and
// MPI_MESSAGE_NO_PROC is the message "from" MPI_PROC_NULL.
const kindMessage = 0x40

var messages = &table[*mpi.Message]{kind: kindMessage}

func putMessage(p unsafe.Pointer, m *mpi.Message, source int32) {
	if source == MPI_PROC_NULL {
		*(*uintptr)(p) = MPI_MESSAGE_NO_PROC
		return
	}
	*(*uintptr)(p) = messages.add(m)
}

func implMprobe(source, tag int32, comm uintptr, message, st unsafe.Pointer) int32 {
	const fn = "MPI_Mprobe"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if message == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "message is NULL"))
	}
	m, s, err := ce.c.Mprobe(rankArg(source), tagArg(tag))
	if rc = ce.check(fn, err); rc != 0 {
		return rc
	}
	putMessage(message, m, source)
	setStatus(st, s)
	return MPI_SUCCESS
}

func implImprobe(source, tag int32, comm uintptr, flag, message, st unsafe.Pointer) int32 {
	const fn = "MPI_Improbe"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if flag == nil || message == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "flag or message is NULL"))
	}
	ok, m, s, err := ce.c.Improbe(rankArg(source), tagArg(tag))
	if rc = ce.check(fn, err); rc != 0 {
		return rc
	}
	setFlag(flag, ok)
	if ok {
		putMessage(message, m, source)
		setStatus(st, s)
	}
	return MPI_SUCCESS
}

// messageArg resolves the message at p for a receive, which consumes it:
// its handle is released and set to MPI_MESSAGE_NULL. noProc is
// MPI_MESSAGE_NO_PROC.
func messageArg(fn string, p unsafe.Pointer) (m *mpi.Message, noProc bool, rc int32) {
	if rc := running(fn); rc != 0 {
		return nil, false, rc
	}
	if p == nil {
		return nil, false, raise(fn, noComm, classErr(MPI_ERR_ARG, "message is NULL"))
	}
	h := *(*uintptr)(p)
	if h == MPI_MESSAGE_NO_PROC {
		*(*uintptr)(p) = MPI_MESSAGE_NULL
		return nil, true, 0
	}
	m, ok := messages.get(h)
	if !ok {
		return nil, false, raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("%#x is not a matched message (MPI_MESSAGE_NULL, received already, garbage, or another kind of handle)", h)))
	}
	messages.remove(h)
	*(*uintptr)(p) = MPI_MESSAGE_NULL
	return m, false, 0
}

// recvArgs resolves the datatype and buffer of a matched receive, whose
// errors go to MPI_COMM_WORLD's handler (the message's communicator is
// not at hand).
func recvArgs(fn string, buf unsafe.Pointer, count int, datatype uintptr) (*mpi.Datatype, []byte, int32) {
	t, rc := typeArg(fn, &world, noData(datatype, count))
	if t == nil {
		return nil, nil, rc
	}
	b, t, rc := bufType(fn, &world, buf, count, t)
	if rc != 0 {
		return nil, nil, rc
	}
	return t, b, 0
}

func mrecv(fn string, buf unsafe.Pointer, count int, datatype uintptr, message, st unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	t, b, rc := recvArgs(fn, buf, count, datatype)
	if t == nil {
		return rc
	}
	m, noProc, rc := messageArg(fn, message)
	if rc != 0 {
		return rc
	}
	var s mpi.Status
	var err error
	if noProc {
		s, err = world.c.Recv(b, count, t, mpi.ProcNull, mpi.AnyTag)
	} else {
		s, err = m.Recv(b, count, t)
	}
	rc = world.check(fn, err)
	setStatus(st, s)
	return rc
}

func implMrecv(buf unsafe.Pointer, count int32, datatype uintptr, message, st unsafe.Pointer) int32 {
	return mrecv("MPI_Mrecv", buf, int(count), datatype, message, st)
}

func implMrecv_c(buf unsafe.Pointer, count int64, datatype uintptr, message, st unsafe.Pointer) int32 {
	return mrecv("MPI_Mrecv_c", buf, int(count), datatype, message, st)
}

func imrecv(fn string, buf unsafe.Pointer, count int, datatype uintptr, message, request unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if request == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	t, b, rc := recvArgs(fn, buf, count, datatype)
	if t == nil {
		return rc
	}
	m, noProc, rc := messageArg(fn, message)
	if rc != 0 {
		return rc
	}
	var r *mpi.Request
	var err error
	if noProc {
		r, err = world.c.Irecv(b, count, t, mpi.ProcNull, mpi.AnyTag)
	} else {
		r, err = m.Irecv(b, count, t)
	}
	if err != nil {
		return world.check(fn, err)
	}
	*(*uintptr)(request) = addRequest(r, &world, false)
	return MPI_SUCCESS
}

func implImrecv(buf unsafe.Pointer, count int32, datatype uintptr, message, request unsafe.Pointer) int32 {
	return imrecv("MPI_Imrecv", buf, int(count), datatype, message, request)
}

func implImrecv_c(buf unsafe.Pointer, count int64, datatype uintptr, message, request unsafe.Pointer) int32 {
	return imrecv("MPI_Imrecv_c", buf, int(count), datatype, message, request)
}

// statusBytes is the byte count a status holds.
func statusBytes(st unsafe.Pointer) int64 {
	s := (*status)(st)
	return int64(uint64(uint32(s.countLo)) | uint64(uint32(s.countHi))<<32)
}

// statusQuery checks the arguments of the status queries (Get_count,
// Get_elements) and returns the datatype.
func statusQuery(fn string, st unsafe.Pointer, datatype uintptr, out unsafe.Pointer) (*mpi.Datatype, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	if st == nil || out == nil {
		return nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "status or count is NULL"))
	}
	return typeArg(fn, nil, datatype)
}

// countOf is MPI_Get_count's answer for n bytes of t: MPI_UNDEFINED if
// they are not whole elements or the answer exceeds limit.
func countOf(n int64, t *mpi.Datatype, limit int64) int64 {
	size := int64(t.Size())
	switch {
	case size == 0:
		return 0
	case n%size != 0 || n/size > limit:
		return MPI_UNDEFINED
	}
	return n / size
}

func implGet_count(st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	t, rc := statusQuery("MPI_Get_count", st, datatype, count)
	if t == nil {
		return rc
	}
	*(*int32)(count) = int32(countOf(statusBytes(st), t, 1<<31-1))
	return MPI_SUCCESS
}

func implGet_count_c(st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	t, rc := statusQuery("MPI_Get_count_c", st, datatype, count)
	if t == nil {
		return rc
	}
	*(*int64)(count) = countOf(statusBytes(st), t, 1<<63-1)
	return MPI_SUCCESS
}

// elementsOf is MPI_Get_elements' answer for n bytes of t (the basic
// elements, those of a last partial element of t included), or
// MPI_UNDEFINED.
func elementsOf(n int64, t *mpi.Datatype) int64 {
	var s mpi.Status
	if err := s.SetElements(mpi.Byte, int(n)); err != nil {
		return MPI_UNDEFINED
	}
	e := s.GetElements(t)
	if e == mpi.Undefined {
		return MPI_UNDEFINED
	}
	return int64(e)
}

func implGet_elements(st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	t, rc := statusQuery("MPI_Get_elements", st, datatype, count)
	if t == nil {
		return rc
	}
	e := elementsOf(statusBytes(st), t)
	if e > 1<<31-1 {
		e = MPI_UNDEFINED
	}
	*(*int32)(count) = int32(e)
	return MPI_SUCCESS
}

func getElementsWide(fn string, st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	t, rc := statusQuery(fn, st, datatype, count)
	if t == nil {
		return rc
	}
	*(*int64)(count) = elementsOf(statusBytes(st), t)
	return MPI_SUCCESS
}

func implGet_elements_c(st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	return getElementsWide("MPI_Get_elements_c", st, datatype, count)
}

func implGet_elements_x(st unsafe.Pointer, datatype uintptr, count unsafe.Pointer) int32 {
	return getElementsWide("MPI_Get_elements_x", st, datatype, count)
}

func implTest_cancelled(st, flag unsafe.Pointer) int32 {
	const fn = "MPI_Test_cancelled"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if st == nil || flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "status or flag is NULL"))
	}
	setFlag(flag, (*status)(st).cancelled != 0)
	return MPI_SUCCESS
}

// The buffer of buffered sends is the process's (MPI_Buffer_attach);
// mpigo keeps one per rank, and a process is one rank. Between MPI_Init
// and MPI_Finalize world names the rank; in the Sessions model (MPI-4.1:
// MPI_Buffer_attach needs no MPI_Init) a live session does.
type procBuffer struct {
	c *mpi.Comm    // world, between MPI_Init and MPI_Finalize
	s *mpi.Session // else a live session of the rank
}

// procBufferOf returns the owner of the process's buffer for call fn, or
// the error code raised when MPI is not usable.
func procBufferOf(fn string) (procBuffer, int32) {
	if rc := running(fn); rc != 0 {
		return procBuffer{}, rc
	}
	if phase.Load() == phaseRunning {
		return procBuffer{c: world.c}, 0
	}
	if e, ok := sessions.someLive(); ok {
		return procBuffer{s: e.s}, 0
	}
	return procBuffer{}, raise(fn, noComm, notRunning())
}

func (b procBuffer) attach(buf []byte) error {
	if b.c != nil {
		return b.c.BufferAttach(buf)
	}
	return b.s.BufferAttach(buf)
}

func (b procBuffer) attachAuto() error {
	if b.c != nil {
		return b.c.BufferAttachAutomatic()
	}
	return b.s.BufferAttachAutomatic()
}

func (b procBuffer) detach() ([]byte, error) {
	if b.c != nil {
		return b.c.BufferDetach()
	}
	return b.s.BufferDetach()
}

func (b procBuffer) flush() error {
	if b.c != nil {
		return b.c.BufferFlush()
	}
	return b.s.BufferFlush()
}

func (b procBuffer) iflush() (*mpi.Request, error) {
	if b.c != nil {
		return b.c.BufferIflush()
	}
	return b.s.BufferIflush()
}

// check raises err of call fn: through MPI_COMM_SELF's handler under
// MPI_Init; in the Sessions model, where there is no MPI_COMM_SELF and
// the error is tied to no object, the code is returned.
func (b procBuffer) check(fn string, err error) int32 {
	if err == nil {
		return MPI_SUCCESS
	}
	if b.c != nil {
		return self.check(fn, err)
	}
	return raise(fn, noComm, err)
}

func bufferAttach(fn string, buffer unsafe.Pointer, size int) int32 {
	pb, rc := procBufferOf(fn)
	if rc != 0 {
		return rc
	}
	if isAutomatic(buffer) {
		return pb.check(fn, pb.attachAuto())
	}
	if size < 0 {
		return pb.check(fn, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative size %d", size)))
	}
	if buffer == nil && size > 0 {
		return pb.check(fn, classErr(MPI_ERR_BUFFER, "buffer is NULL"))
	}
	var b []byte
	if size > 0 {
		b = unsafe.Slice((*byte)(buffer), size)
	}
	return pb.check(fn, pb.attach(b))
}

func implBuffer_attach(buffer unsafe.Pointer, size int32) int32 {
	return bufferAttach("MPI_Buffer_attach", buffer, int(size))
}

func implBuffer_attach_c(buffer unsafe.Pointer, size int64) int32 {
	return bufferAttach("MPI_Buffer_attach_c", buffer, int(size))
}

// bufferDetach stores the buffer's address at addr (a void ** that C
// passes as void *) and returns its size.
func bufferDetach(fn string, addr, size unsafe.Pointer) (int, int32) {
	pb, rc := procBufferOf(fn)
	if rc != 0 {
		return 0, rc
	}
	if addr == nil || size == nil {
		return 0, pb.check(fn, classErr(MPI_ERR_ARG, "buffer_addr or size is NULL"))
	}
	b, err := pb.detach()
	if err != nil {
		return 0, pb.check(fn, err)
	}
	detachOut(b, addr)
	return len(b), MPI_SUCCESS
}

func implBuffer_detach(addr, size unsafe.Pointer) int32 {
	n, rc := bufferDetach("MPI_Buffer_detach", addr, size)
	if rc == 0 {
		*(*int32)(size) = int32(n)
	}
	return rc
}

func implBuffer_detach_c(addr, size unsafe.Pointer) int32 {
	n, rc := bufferDetach("MPI_Buffer_detach_c", addr, size)
	if rc == 0 {
		*(*int64)(size) = int64(n)
	}
	return rc
}

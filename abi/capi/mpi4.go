//go:build cgo

package capi

import "unsafe"

// The MPI-4.0 calls of issue 43 that have a Go form: Isendrecv and
// Isendrecv_replace, with their large-count _c forms (a Go count is an
// int, 64 bits wide, so the _c forms differ only in checking that the
// count fits it).

// commCountArg checks a large count for fn: negative counts are
// MPI_ERR_COUNT (the Go call would say so too, but naming the C
// argument).
func commCountArg(fn string, ce *commEntry, n int64) (int, int32) {
	if n < 0 || int64(int(n)) != n {
		return 0, raiseOn(fn, ce, classErr(MPI_ERR_COUNT, "count out of range"))
	}
	return int(n), 0
}

func isendrecv(fn string, sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, source, recvtag int32, comm uintptr, request unsafe.Pointer) int32 {
	ce, st, rc := args(fn, comm, sendtype)
	if ce == nil {
		return rc
	}
	rt, rc := typeArg(fn, ce, recvtype)
	if rt == nil {
		return rc
	}
	if request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_REQUEST, "request is NULL"))
	}
	sn, rc := commCountArg(fn, ce, sendcount)
	if rc != 0 {
		return rc
	}
	rn, rc := commCountArg(fn, ce, recvcount)
	if rc != 0 {
		return rc
	}
	sb, rc := bufArg(fn, ce, sendbuf, sn, st)
	if rc != 0 {
		return rc
	}
	rb, rc := bufArg(fn, ce, recvbuf, rn, rt)
	if rc != 0 {
		return rc
	}
	r, err := ce.c.Isendrecv(sb, sn, st, rankArg(dest), tagArg(sendtag), rb, rn, rt, rankArg(source), tagArg(recvtag))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(request) = requests.add(reqEntry{r, ce})
	return MPI_SUCCESS
}

func implIsendrecv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, source, recvtag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isendrecv("MPI_Isendrecv", sendbuf, int64(sendcount), sendtype, dest, sendtag, recvbuf, int64(recvcount), recvtype, source, recvtag, comm, request)
}

func implIsendrecv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, dest, sendtag int32,
	recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, source, recvtag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request)
}

func isendrecvReplace(fn string, buf unsafe.Pointer, count int64, datatype uintptr, dest, sendtag, source, recvtag int32, comm uintptr, request unsafe.Pointer) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	if request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_REQUEST, "request is NULL"))
	}
	n, rc := commCountArg(fn, ce, count)
	if rc != 0 {
		return rc
	}
	b, rc := bufArg(fn, ce, buf, n, t)
	if rc != 0 {
		return rc
	}
	r, err := ce.c.IsendrecvReplace(b, n, t, rankArg(dest), tagArg(sendtag), rankArg(source), tagArg(recvtag))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(request) = requests.add(reqEntry{r, ce})
	return MPI_SUCCESS
}

func implIsendrecv_replace(buf unsafe.Pointer, count int32, datatype uintptr, dest, sendtag, source, recvtag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isendrecvReplace("MPI_Isendrecv_replace", buf, int64(count), datatype, dest, sendtag, source, recvtag, comm, request)
}

func implIsendrecv_replace_c(buf unsafe.Pointer, count int64, datatype uintptr, dest, sendtag, source, recvtag int32, comm uintptr, request unsafe.Pointer) int32 {
	return isendrecvReplace("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm, request)
}

package mpi

import (
	"github.com/mpigo/mpi/internal/engine"
)

// Isendrecv and IsendrecvReplace (MPI-4.0): the non-blocking forms of
// Sendrecv. The receive is posted and the send started at once; a
// goroutine waits for both and completes the request returned, whose
// status is the receive's.

// joinSendRecv returns a request that completes when the send sr and the
// receive rr have, with rr's status, and the receive's error or else the
// send's. The receive is waited for inside, so it cannot be continued
// after a failure: ErrProcFailedPending becomes ErrProcFailed (ft.go).
func (c *Comm) joinSendRecv(op string, l loc, sr, rr *Request, elem int) *Request {
	r := c.newRequest(op, l)
	r.setElem(elem)
	var err error
	r.x.finish = func(engine.Status) error { return err }
	er := r.er
	go func() {
		_, serr := sr.wait()
		st, rerr := rr.wait()
		if rerr != nil {
			err = blockingErr(rerr)
		} else {
			err = serr
		}
		er.CompleteOnce(engine.Status{Source: st.Source, Tag: st.Tag, Count: st.bytes, Size: st.size, Cancelled: st.cancelled})
	}()
	return r
}

// Isendrecv starts a Sendrecv (MPI_Isendrecv): it sends sendcount
// elements of sendtype from sendbuf to dest and receives into recvbuf from
// src; the request completes when both have, with the receive's status.
// Neither buffer may be touched until then.
func (c *Comm) Isendrecv(sendbuf []byte, sendcount int, sendtype *Datatype, dest, sendtag int,
	recvbuf []byte, recvcount int, recvtype *Datatype, src, recvtag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Isendrecv", c, dest, sendtag), &err)
	}
	if err := c.checkDest("Isendrecv", dest, sendtag); err != nil {
		return nil, err
	}
	rr, err := c.irecvElem(nil, nil, "Isendrecv", recvbuf, recvcount, recvtype, src, recvtag, 0)
	if err != nil {
		return nil, err
	}
	sr, err := c.isend(nil, "Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, engine.Standard)
	if err != nil {
		rr.Cancel()
		rr.wait()
		return nil, err
	}
	return c.joinSendRecv("Isendrecv", at("dest", dest, sendtag), sr, rr, recvtype.size), nil
}

// IsendrecvReplace starts a SendrecvReplace (MPI_Isendrecv_replace): buf
// is sent to dest and then holds the message received from src. The
// outgoing data is copied at the call, so the message received may land
// in buf at once.
func (c *Comm) IsendrecvReplace(buf []byte, count int, dt *Datatype, dest, sendtag, src, recvtag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IsendrecvReplace", c, dest, sendtag), &err)
	}
	if err := c.checkDest("IsendrecvReplace", dest, sendtag); err != nil {
		return nil, err
	}
	m, err := c.lowRecvBuf("IsendrecvReplace", buf, count, dt, src, recvtag)
	if err != nil {
		return nil, err
	}
	tmp := append([]byte(nil), m.bytes()...)
	rr, err := c.irecvElem(nil, nil, "IsendrecvReplace", buf, count, dt, src, recvtag, 0)
	if err != nil {
		return nil, err
	}
	sr := c.nullRequest("IsendrecvReplace", Status{})
	if dest != ProcNull {
		sr, err = c.isendSig(tmp, len(tmp), Byte, dt.sig, dest, sendtag)
	}
	if err != nil {
		rr.Cancel()
		rr.wait()
		return nil, err
	}
	return c.joinSendRecv("IsendrecvReplace", at("dest", dest, sendtag), sr, rr, dt.size), nil
}

// IsendrecvInto is the typed Isendrecv: it sends v to dest and receives
// elements of E into buf from source; the request completes when both
// have, with the receive's status (MPI_Isendrecv).
func IsendrecvInto[T, E any](c *Comm, v T, dest, sendtag int, buf []E, source, recvtag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IsendrecvInto", c, dest, sendtag), &err)
	}
	rr, err := irecvInto(nil, nil, c, buf, source, recvtag)
	if err != nil {
		return nil, err
	}
	sr, err := Isend(c, v, dest, sendtag)
	if err != nil {
		rr.Cancel()
		rr.wait()
		return nil, err
	}
	return c.joinSendRecv("IsendrecvInto", at("dest", dest, sendtag), sr, rr, typeOf[E]().size), nil
}

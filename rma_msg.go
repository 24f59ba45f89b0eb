package mpi

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/mpigo/mpi/internal/rma"
)

// One-sided operations towards a target whose memory the origin cannot
// reach (another process over tcp, or a WindowOf window on another process
// of the node) travel as messages on the window's private communicator.
// Every rank runs a server goroutine per window that receives them: it is
// parked in Recv while nothing comes, and the transports' own goroutines
// deliver requests to it, so a target that computes (or blocks outside
// MPI) still serves its window. This is the message fallback that any
// transport gets; transports that share memory are used directly instead
// (rma_mem.go).
//
// A request is a 24-byte header (kind, operation, reply tag, element
// displacement, element count, little-endian) and its data. Requests go
// on tag 0; a reply goes to the tag the request names and starts with a
// status byte. One origin's requests are served in the order sent
// (messages do not overtake), so a Flush is a request whose reply says
// that everything before it has been applied.

const (
	reqPut byte = iota + 1
	reqGet
	reqAcc     // predefined op applied at the target; no reply
	reqFop     // predefined op applied at the target; the old value back
	reqCas     // compare and swap one element
	reqFetch   // read under the accumulate mutex (for remoteApply)
	reqSwapIf  // write new if the range still holds old (for remoteApply)
	reqLockS   // passive-target lock, shared
	reqLockX   // passive-target lock, exclusive
	reqUnlockS // unlock (after everything before it)
	reqUnlockX
	reqFlush
	reqStop     // the server's own rank stops it (Free)
	reqPost     // PSCW: the sender posted an exposure epoch to this rank
	reqComplete // PSCW: the sender completed its access epoch to this rank
)

const (
	rmaReqTag = 0
	rmaHdr    = 24
	// reply status bytes
	repOK      byte = 0
	repChanged byte = 1
	repBad     byte = 2
)

// nextTag returns a reply tag: never 0 (requests) nor the two PSCW tags.
func (w *Window[T]) nextTag() int { return int(w.tag.Add(1)%(TagUB-2)) + 1 }

func rmaRequest(kind, op byte, tag, disp, n int, data []byte) []byte {
	b := make([]byte, rmaHdr+len(data))
	b[0], b[1] = kind, op
	le := binary.LittleEndian
	le.PutUint32(b[4:], uint32(tag))
	le.PutUint64(b[8:], uint64(disp))
	le.PutUint64(b[16:], uint64(n))
	copy(b[rmaHdr:], data)
	return b
}

// post sends a request that needs no reply; the next flush towards target
// waits for it.
func (w *Window[T]) post(op string, target int, kind, opk byte, disp, n int, data []byte) error {
	if w.dynamic {
		// Only the target knows its attached regions: wait for its answer,
		// so that a displacement outside them is reported.
		_, err := w.call(op, target, kind, opk, disp, n, data)
		return err
	}
	w.pend[target].Add(1)
	if err := w.send(target, rmaRequest(kind, opk, 0, disp, n, data), true); err != nil {
		return w.failed(op, target, err)
	}
	return nil
}

// call sends a request and returns its reply's data.
func (w *Window[T]) call(op string, target int, kind, opk byte, disp, n int, data []byte) ([]byte, error) {
	b, _, err := w.callStatus(op, target, kind, opk, disp, n, data)
	return b, err
}

func (w *Window[T]) callStatus(op string, target int, kind, opk byte, disp, n int, data []byte) ([]byte, byte, error) {
	pr, err := w.startCall(op, target, func(tag int) []byte { return rmaRequest(kind, opk, tag, disp, n, data) })
	if err != nil {
		return nil, 0, err
	}
	return w.endCall(op, target, pr)
}

// startCall posts the receive of a reply and sends the request that req
// builds for its tag.
func (w *Window[T]) startCall(op string, target int, req func(tag int) []byte) (*Pending[[]byte], error) {
	tag := w.nextTag()
	pr, err := Irecv[[]byte](w.c, target, tag)
	if err != nil {
		return nil, w.failed(op, target, err)
	}
	if err := w.send(target, req(tag), false); err != nil {
		pr.Request().Cancel()
		pr.Wait()
		return nil, w.failed(op, target, err)
	}
	return pr, nil
}

// endCall waits for the reply startCall asked for and returns its data
// and status byte.
func (w *Window[T]) endCall(op string, target int, pr *Pending[[]byte]) ([]byte, byte, error) {
	rep, _, err := pr.Wait()
	if err != nil {
		return nil, 0, w.failed(op, target, err)
	}
	if len(rep) == 0 || rep[0] == repBad {
		msg := "the target refused the request"
		if len(rep) > 1 {
			msg = string(rep[1:])
		}
		return nil, 0, w.errorf(op, ErrRMARange, target, "%s", msg)
	}
	return rep[1:], rep[0], nil
}

// remoteApply applies a user operation to n elements at target by
// message: it reads them, combines them here and writes the result back
// only if the target still holds what was read, retrying otherwise. The
// result is that of applying op atomically to the whole range; it returns
// the values the range held before.
func (w *Window[T]) remoteApply(op string, target, disp int, vals []T, o Op[T]) ([]T, error) {
	n := len(vals)
	cur, err := w.call(op, target, reqFetch, 0, disp, n, nil)
	if err != nil {
		return nil, err
	}
	old := make([]T, n)
	both := make([]T, 2*n)
	for {
		copy(bytesOf(old, w.esize), cur)
		copy(both, old)
		upd := both[n:]
		copy(upd, old)
		o.apply(upd, vals, true)
		rep, st, err := w.callStatus(op, target, reqSwapIf, 0, disp, n, bytesOf(both, w.esize))
		if err != nil {
			return nil, err
		}
		if st == repOK {
			return old, nil
		}
		cur = rep
	}
}

// serve is the window's server goroutine: it answers requests from
// origins that reach this rank's window by message, until Free.
func (w *Window[T]) serve() {
	defer close(w.srvDone)
	for {
		b, st, err := w.next()
		if err != nil {
			return // the job is going down
		}
		if len(b) < rmaHdr {
			continue
		}
		if b[0] == reqStop && st.Source == w.c.rank {
			return
		}
		w.served.Add(1)
		if b[0] == reqBatch {
			w.serveBatch(st.Source, b)
			continue
		}
		w.serveOne(st.Source, b)
	}
}

// next receives the server's next request. Its wait is the server's,
// not the rank's: hang diagnosis does not count it (a rank that computes
// outside MPI with a window open is not blocked in MPI, and was reported
// hung after MPIGO_HANG_REPORT). An abort of the job still ends it.
func (w *Window[T]) next() ([]byte, Status, error) {
	c := w.c
	t := typeOf[[]byte]()
	s := getSlot()
	if w.srvAlloc == nil {
		w.srvAlloc = w.serverBuf // made once: not a closure per request
	}
	c.startSlotRecv(s, nil, w.srvAlloc, t.msig, AnySource, rmaReqTag)
	s.er.WaitRefIn(c.p.Prog, c.p.Blk.Service())
	var b []byte
	st, err := finishRecv(c, "Recv", at("source", AnySource, rmaReqTag), t, &s.er, &b, true)
	putSlot(s)
	return b, st, err
}

// srvKeep is the largest request buffer a window's server keeps for the
// next request.
const srvKeep = 8 << 20

// serverBuf returns n bytes for the server's next request. Large requests
// (a Put of megabytes by message) land in the buffer of the last one: a
// fresh buffer each time was memory faulted in anew and work for the
// collector.
func (w *Window[T]) serverBuf(n int) []byte {
	if n <= cap(w.srvBuf) {
		return w.srvBuf[:n]
	}
	b := make([]byte, n)
	if n <= srvKeep {
		w.srvBuf = b
	}
	return b
}

// stopServer ends the server goroutine and waits for it.
func (w *Window[T]) stopServer() {
	if Send(w.c, rmaRequest(reqStop, 0, 0, 0, 0, nil), w.c.rank, rmaReqTag) == nil {
		<-w.srvDone
	}
}

// serveOne serves one request from origin. Everything read from the request
// is checked against this rank's window before memory is touched.
func (w *Window[T]) serveOne(origin int, b []byte) {
	defer w.applied.Add(1)
	le := binary.LittleEndian
	kind, opk := b[0], b[1]
	tag := int(le.Uint32(b[4:]))
	disp64, n64 := le.Uint64(b[8:]), le.Uint64(b[16:])
	data := b[rmaHdr:]
	m := w.me
	es := w.esize
	conv, answer := w.hetTyped(origin) // an origin of the other byte order (hetero_rma.go)
	reply := func(st byte, p []byte) {
		r := make([]byte, 1+len(p))
		r[0] = st
		copy(r[1:], p)
		Send(w.c, r, origin, tag) // an origin that is gone gets nothing
	}
	// replyIn answers with the payload whole[1:], made with room for
	// the status in front: no copy of a large answer.
	replyIn := func(st byte, whole []byte) {
		whole[0] = st
		Send(w.c, whole, origin, tag)
	}
	bad := func(format string, args ...any) {
		if tag != 0 {
			reply(repBad, []byte(fmt.Sprintf(format, args...)))
		}
	}
	if kind >= reqPutV {
		w.serveV(origin, b, reply, replyIn, bad)
		return
	}
	switch kind {
	case reqPost, reqComplete:
		w.pscw.note(kind == reqPost, origin)
		return
	}
	const most = 1 << 40
	if disp64 > rmaMostDisp/uint64(es) || n64 > most {
		bad("displacement %d or count %d out of range", disp64, n64)
		return
	}
	disp, n := int(disp64), int(n64)
	span, ok := m.span(disp, n, es)
	if !ok && kind <= reqSwapIf {
		bad("displacement %d and %d element(s) lie outside rank %d's window", disp, n, w.c.rank)
		return
	}
	need := 0
	switch kind {
	case reqPut, reqAcc, reqFop:
		need = n * es
	case reqCas, reqSwapIf:
		need = 2 * n * es
	}
	if len(data) != need {
		bad("request of %d bytes, want %d", len(data), need)
		return
	}
	if need > 0 {
		conv(data)
	}
	switch kind {
	case reqPut:
		copy(span, data)
		if tag != 0 { // a dynamic window's origin waits for the answer
			reply(repOK, nil)
		}
	case reqGet:
		reply(repOK, answer(span))
	case reqAcc, reqFop:
		o, ok := opFor[T](opk)
		if !ok {
			bad("operation %d is not defined on %s", opk, typeName[T]())
			return
		}
		in := make([]T, n)
		copy(bytesOf(in, es), data)
		rma.AccLock(m.acc, nil)
		var old []byte
		if kind == reqFop {
			old = append(old, span...)
		}
		o.apply(elemsOf[T](span, 0, n, es), in, true)
		rma.AccUnlock(m.acc)
		if kind == reqFop || tag != 0 {
			reply(repOK, answer(old))
		}
	case reqCas:
		rma.AccLock(m.acc, nil)
		old := append([]byte(nil), span...)
		if string(data[:n*es]) == string(span) {
			copy(span, data[n*es:])
		}
		rma.AccUnlock(m.acc)
		reply(repOK, answer(old))
	case reqFetch:
		rma.AccLock(m.acc, nil)
		cur := append([]byte(nil), span...)
		rma.AccUnlock(m.acc)
		reply(repOK, answer(cur))
	case reqSwapIf:
		rma.AccLock(m.acc, nil)
		st := repOK
		var cur []byte
		if string(data[:n*es]) == string(span) {
			copy(span, data[n*es:])
		} else {
			st = repChanged
			cur = append(cur, span...)
		}
		rma.AccUnlock(m.acc)
		reply(st, answer(cur))
	case reqLockS, reqLockX:
		excl := kind == reqLockX
		if excl && rma.TryExclusive(m.lock) || !excl && rma.TryShared(m.lock) {
			reply(repOK, nil)
			return
		}
		// Wait for the lock without holding up other origins' requests
		// (the holder's Unlock among them).
		go func() {
			err := rma.Lock(m.lock, excl, func() error {
				if w.closing.Load() {
					return ErrRMASync
				}
				return nil
			})
			if err != nil {
				reply(repBad, []byte("the window was freed while the lock was awaited"))
				return
			}
			reply(repOK, nil)
		}()
	case reqUnlockS, reqUnlockX:
		rma.Unlock(m.lock, kind == reqUnlockX)
		reply(repOK, nil)
	case reqFlush:
		reply(repOK, nil)
	default:
		bad("unknown request %d", kind)
	}
}

// typeName names T for error messages.
func typeName[T any]() string { return typeOf[T]().info.Type.String() }

// Small requests that need no answer (Put, Accumulate with a predefined
// op) wait in a per-target queue and travel together with the next
// request to that target, as one message: a Put followed by a Flush is
// then one message and its answer, a single round trip. The queue is also
// sent when it grows past rmaQueueFlush bytes, and before any other
// request to the target, so the target still serves one origin's
// requests in the order they were made.

// reqBatch is a message holding several requests, each preceded by its
// length (uint32, little-endian).
const reqBatch byte = 63

const (
	rmaQueueMost  = 1 << 10  // largest request that waits in the queue
	rmaQueueFlush = 16 << 10 // a queue this long is sent at once
)

// rmaq is the queue of requests to one target.
type rmaq struct {
	mu sync.Mutex
	b  []byte // a reqBatch message being built; empty when len(b) <= rmaHdr
}

// send sends request b to target after the queued ones; with queue, a
// small b may wait in the queue instead. A nil b sends the queue alone.
func (w *Window[T]) send(target int, b []byte, queue bool) error {
	q := &w.q[target]
	q.mu.Lock()
	defer q.mu.Unlock()
	le := binary.LittleEndian
	if len(q.b) < rmaHdr {
		q.b = rmaRequest(reqBatch, 0, 0, 0, 0, nil)
	}
	queued := len(q.b) > rmaHdr
	flushQ := func() error {
		out := q.b
		err := Send(w.c, out, target, rmaReqTag)
		q.b = out[:rmaHdr] // Send is done with it
		return err
	}
	if b == nil || len(b) > rmaQueueMost {
		if queued {
			if err := flushQ(); err != nil {
				return err
			}
		}
		if b == nil {
			return nil
		}
		return Send(w.c, b, target, rmaReqTag)
	}
	if !queued && !queue {
		return Send(w.c, b, target, rmaReqTag)
	}
	q.b = le.AppendUint32(q.b, uint32(len(b)))
	q.b = append(q.b, b...)
	if queue && len(q.b) < rmaQueueFlush {
		return nil
	}
	return flushQ()
}

// isend is Isend of request b to target after the queued ones.
func (w *Window[T]) isend(target int, b []byte) (*Request, error) {
	if err := w.send(target, nil, false); err != nil {
		return nil, err
	}
	return Isend(w.c, b, target, rmaReqTag)
}

// serveBatch serves the requests of a reqBatch message in order.
func (w *Window[T]) serveBatch(origin int, b []byte) {
	le := binary.LittleEndian
	for b = b[rmaHdr:]; len(b) >= 4; {
		n := le.Uint32(b)
		if uint64(n) > uint64(len(b)-4) || n < rmaHdr {
			return // malformed: the rest cannot be trusted
		}
		sub := b[4 : 4+n]
		b = b[4+n:]
		if sub[0] == reqBatch || sub[0] == reqStop {
			continue
		}
		w.serveOne(origin, sub)
	}
}

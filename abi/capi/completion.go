//go:build cgo

package capi

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/bindhook"
)

// reqEntry is a request behind a handle, with the communicator whose
// error handler its errors go to.
type reqEntry struct {
	r  *mpi.Request
	ce *commEntry
}

var requests = &table[reqEntry]{kind: kindRequest}

// persistents holds the persistent requests (*mpi.Request -> *atomic.Bool,
// true while started): their handles outlive a completion, which makes
// them inactive, and MPI's calls on many requests skip inactive ones.
// Kept beside reqEntry so that every file making requests with
// reqEntry{r, ce} stays as it is.
var persistents sync.Map

// anyPersistent is set once a persistent request has been made: until
// then no request needs the look-up in persistents, which cost the
// calls on many requests a hash of each (MPI_Waitall of 64 Isends: 4% of
// the time of a stream of 8-byte messages from C).
var anyPersistent atomic.Bool

// addRequest makes the handle of r, whose errors go to ce's handler. A
// persistent request (Send_init, Recv_init, the persistent collectives)
// is inactive until MPI_Start.
func addRequest(r *mpi.Request, ce *commEntry, persistent bool) uintptr {
	if persistent {
		persistents.Store(r, new(atomic.Bool))
		anyPersistent.Store(true)
	}
	return requests.add(reqEntry{r, ce})
}

// persistentState is the active flag of a persistent request, nil for
// another.
func persistentState(r *mpi.Request) *atomic.Bool {
	if !anyPersistent.Load() {
		return nil
	}
	if v, ok := persistents.Load(r); ok {
		return v.(*atomic.Bool)
	}
	return nil
}

// active reports whether e is an active request: a non-persistent one
// until its handle is released, a persistent one from Start to its
// completion.
func (e reqEntry) active() bool {
	if a := persistentState(e.r); a != nil {
		return a.Load()
	}
	return true
}

// release ends a completed request's use of its handle at p: a
// non-persistent handle is freed and becomes MPI_REQUEST_NULL, a
// persistent one becomes inactive. A non-persistent request's memory is
// given back to mpigo (bindhook.RecycleRequest).
func release(p *uintptr, e reqEntry) {
	if a := persistentState(e.r); a != nil {
		a.Store(false)
		return
	}
	requests.remove(*p)
	*p = MPI_REQUEST_NULL
	// Nothing but the handle held e.r: its memory serves the rank's next
	// request (callers use e.ce after this, never e.r).
	bindhook.RecycleRequest(e.r)
}

func badRequest(fn string, h uintptr) int32 {
	return raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("%#x is not a request handle (freed, garbage, or of another kind)", h)))
}

// waitOne completes the request at p (a handle), releases it and fills
// st; it returns the error's code (raised on the request's communicator)
// or 0.
func waitOne(fn string, p unsafe.Pointer, st unsafe.Pointer) int32 {
	h := *(*uintptr)(p)
	if h == MPI_REQUEST_NULL {
		setEmptyStatus(st)
		return MPI_SUCCESS
	}
	e, ok := requests.get(h)
	if !ok {
		return badRequest(fn, h)
	}
	s, err := e.r.Wait()
	release((*uintptr)(p), e)
	rc := e.ce.check(fn, err)
	setStatus(st, s)
	return rc
}

func implWait(request, st unsafe.Pointer) int32 {
	const fn = "MPI_Wait"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if request == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	return waitOne(fn, request, st)
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
		return badRequest(fn, h)
	}
	done, s, err := e.r.Test()
	setFlag(flag, done)
	if !done && err == nil {
		return MPI_SUCCESS
	}
	release((*uintptr)(request), e)
	rc := e.ce.check(fn, err)
	setStatus(st, s)
	return rc
}

// reqArray resolves the count requests at p: a nil entry for
// MPI_REQUEST_NULL and for an inactive persistent request (mpigo skips
// nil ones), and the entries themselves. A bad handle is MPI_ERR_REQUEST.
func reqArray(fn string, count int32, p unsafe.Pointer) ([]uintptr, []reqEntry, []mpi.Waiter, int32) {
	if rc := running(fn); rc != 0 {
		return nil, nil, nil, rc
	}
	if count < 0 {
		return nil, nil, nil, raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative count %d", count)))
	}
	if count > 0 && p == nil {
		return nil, nil, nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "array_of_requests is NULL"))
	}
	hs := unsafe.Slice((*uintptr)(p), count)
	es, ws := getReqBufs(int(count))
	for i, h := range hs {
		if h == MPI_REQUEST_NULL {
			ws[i] = (*mpi.Request)(nil)
			continue
		}
		e, ok := requests.get(h)
		if !ok {
			return nil, nil, nil, raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("array_of_requests[%d]: %#x is not a request handle (freed, garbage, or of another kind)", i, h)))
		}
		if e.active() {
			es[i], ws[i] = e, e.r
		} else {
			ws[i] = (*mpi.Request)(nil)
		}
	}
	return hs, es, ws, 0
}

// reqBufs are the slices of reqArray, kept for the next call on many
// requests by the calls that are done with them (putReqBufs): a stream
// of MPI_Waitall calls allocated two slices each.
type reqBufs struct {
	es []reqEntry
	ws []mpi.Waiter
}

var reqBufPool = sync.Pool{New: func() any { return new(reqBufs) }}

// getReqBufs returns zeroed slices of n entries and n waiters.
func getReqBufs(n int) ([]reqEntry, []mpi.Waiter) {
	b := reqBufPool.Get().(*reqBufs)
	if cap(b.es) < n {
		b.es, b.ws = make([]reqEntry, n), make([]mpi.Waiter, n)
	}
	es, ws := b.es[:n], b.ws[:n]
	clear(es)
	clear(ws)
	b.es, b.ws = nil, nil
	reqBufPool.Put(b)
	return es, ws
}

// putReqBufs gives back the slices of reqArray once nothing refers to
// them any more.
func putReqBufs(es []reqEntry, ws []mpi.Waiter) {
	if cap(es) == 0 || cap(es) > 1<<16 {
		return
	}
	clear(es[:cap(es)])
	clear(ws[:cap(ws)])
	b := reqBufPool.Get().(*reqBufs)
	if cap(b.es) < cap(es) {
		b.es, b.ws = es[:0], ws[:0]
	}
	reqBufPool.Put(b)
}

// failures splits the error of a call on many requests (mpigo reports
// them as one error whose cause joins "request i: err" for each) into
// the error of each request, by index; nil when err is nil.
func failures(err error, n int) []error {
	if err == nil {
		return nil
	}
	errs := make([]error, n)
	var me *mpi.Error
	if !errors.As(err, &me) {
		return errs
	}
	j, ok := me.Cause.(interface{ Unwrap() []error })
	if !ok {
		return errs
	}
	for _, e := range j.Unwrap() {
		var i int
		if _, serr := fmt.Sscanf(e.Error(), "request %d:", &i); serr == nil && i >= 0 && i < n {
			if inner := errors.Unwrap(e); inner != nil {
				errs[i] = inner
			} else {
				errs[i] = e
			}
		}
	}
	return errs
}

// inStatus ends a call on many requests that some failed: each failed
// request's code went into its status (when there are statuses), and
// MPI_ERR_IN_STATUS goes through the error handler of the communicator
// of the first one that failed.
func inStatus(fn string, err error, errs []error, es []reqEntry) int32 {
	ce := &self
	for i, e := range errs {
		if e != nil && es[i].ce != nil {
			ce = es[i].ce
			break
		}
	}
	return raiseOn(fn, ce, classErr(MPI_ERR_IN_STATUS, "a request failed, see the MPI_ERROR fields of the statuses: "+err.Error()))
}

// statusAt is the i-th status of an array (nil: MPI_STATUSES_IGNORE).
func statusAt(sts unsafe.Pointer, i int) unsafe.Pointer {
	if sts == nil {
		return nil
	}
	return unsafe.Add(sts, i*int(unsafe.Sizeof(status{})))
}

// codeOf is the code a status's MPI_ERROR gets for err.
func codeOf(fn string, err error) int32 {
	if err == nil {
		return MPI_SUCCESS
	}
	return newCode(classOf(err), fn+": "+err.Error())
}

// implWaitall waits for all the requests at once in mpigo (mpi.WaitAll,
// or WaitAllStatus when the statuses are wanted), not one after another.
func implWaitall(count int32, reqs, sts unsafe.Pointer) int32 {
	const fn = "MPI_Waitall"
	hs, es, ws, rc := reqArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	var stats []mpi.Status
	var err error
	if sts == nil {
		err = mpi.WaitAll(ws...)
	} else {
		stats, err = mpi.WaitAllStatus(ws...)
	}
	rc = finishAll(fn, hs, es, stats, sts, err)
	putReqBufs(es, ws)
	return rc
}

// finishAll releases the completed requests of Waitall or Testall and
// fills their statuses.
func finishAll(fn string, hs []uintptr, es []reqEntry, stats []mpi.Status, sts unsafe.Pointer, err error) int32 {
	errs := failures(err, len(hs))
	for i := range hs {
		if es[i].r == nil {
			setEmptyStatus(statusAt(sts, i))
			continue
		}
		if stats != nil {
			setStatusErr(statusAt(sts, i), stats[i], codeOf(fn, errAt(errs, i)))
		}
		release(&hs[i], es[i])
	}
	if err != nil {
		return inStatus(fn, err, errs, es)
	}
	return MPI_SUCCESS
}

// errAt is errs[i], nil when failures found no error at all.
func errAt(errs []error, i int) error {
	if errs == nil {
		return nil
	}
	return errs[i]
}

func implTestall(count int32, reqs, flag, sts unsafe.Pointer) int32 {
	const fn = "MPI_Testall"
	if flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	hs, es, ws, rc := reqArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	ok, stats, err := mpi.TestAll(ws...)
	setFlag(flag, ok)
	if !ok {
		return MPI_SUCCESS
	}
	return finishAll(fn, hs, es, stats, sts, err)
}

// finishOne releases request i of Waitany or Testany, fills the status
// and the index; i is mpi.Undefined when no request was active.
func finishOne(fn string, hs []uintptr, es []reqEntry, i int, s mpi.Status, err error, index, st unsafe.Pointer) int32 {
	if i == mpi.Undefined || i < 0 || i >= len(hs) {
		*(*int32)(index) = MPI_UNDEFINED
		setEmptyStatus(st)
		if err != nil {
			return self.check(fn, err)
		}
		return MPI_SUCCESS
	}
	*(*int32)(index) = int32(i)
	e := es[i]
	release(&hs[i], e)
	rc := e.ce.check(fn, err)
	setStatus(st, s)
	return rc
}

func implWaitany(count int32, reqs, index, st unsafe.Pointer) int32 {
	const fn = "MPI_Waitany"
	if index == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "index is NULL"))
	}
	hs, es, ws, rc := reqArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	i, s, err := mpi.WaitAny(ws...)
	return finishOne(fn, hs, es, i, s, err, index, st)
}

func implTestany(count int32, reqs, index, flag, st unsafe.Pointer) int32 {
	const fn = "MPI_Testany"
	if index == nil || flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "index or flag is NULL"))
	}
	hs, es, ws, rc := reqArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	i, ok, s, err := mpi.TestAny(ws...)
	setFlag(flag, ok)
	if !ok {
		// Still pending, maybe in error (a receive from MPI_ANY_SOURCE
		// that a failed process interrupted): it keeps its handle.
		*(*int32)(index) = MPI_UNDEFINED
		if err != nil && i >= 0 && i < len(es) {
			*(*int32)(index) = int32(i)
			return es[i].ce.check(fn, err)
		}
		return MPI_SUCCESS
	}
	return finishOne(fn, hs, es, i, s, err, index, st)
}

// finishSome releases the requests Waitsome or Testsome completed and
// fills the indices and statuses; none active gives MPI_UNDEFINED.
func finishSome(fn string, hs []uintptr, es []reqEntry, idx []int, stats []mpi.Status, err error, outcount, indices, sts unsafe.Pointer) int32 {
	anyActive := false
	for _, e := range es {
		if e.r != nil {
			anyActive = true
			break
		}
	}
	if !anyActive {
		*(*int32)(outcount) = MPI_UNDEFINED
		return MPI_SUCCESS
	}
	errs := failures(err, len(hs))
	*(*int32)(outcount) = int32(len(idx))
	out := unsafe.Slice((*int32)(indices), len(hs))
	for k, i := range idx {
		out[k] = int32(i)
		setStatusErr(statusAt(sts, k), stats[k], codeOf(fn, errAt(errs, i)))
		release(&hs[i], es[i])
	}
	if err != nil {
		return inStatus(fn, err, errs, es)
	}
	return MPI_SUCCESS
}

func someArgs(fn string, outcount, indices unsafe.Pointer, incount int32) int32 {
	if outcount == nil || (indices == nil && incount > 0) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "outcount or array_of_indices is NULL"))
	}
	return 0
}

func implWaitsome(incount int32, reqs, outcount, indices, sts unsafe.Pointer) int32 {
	const fn = "MPI_Waitsome"
	if rc := someArgs(fn, outcount, indices, incount); rc != 0 {
		return rc
	}
	hs, es, ws, rc := reqArray(fn, incount, reqs)
	if rc != 0 {
		return rc
	}
	idx, stats, err := mpi.WaitSome(ws...)
	return finishSome(fn, hs, es, idx, stats, err, outcount, indices, sts)
}

func implTestsome(incount int32, reqs, outcount, indices, sts unsafe.Pointer) int32 {
	const fn = "MPI_Testsome"
	if rc := someArgs(fn, outcount, indices, incount); rc != 0 {
		return rc
	}
	hs, es, ws, rc := reqArray(fn, incount, reqs)
	if rc != 0 {
		return rc
	}
	idx, stats, err := mpi.TestSome(ws...)
	return finishSome(fn, hs, es, idx, stats, err, outcount, indices, sts)
}

// reqAt resolves the handle at p, which must be a request (not
// MPI_REQUEST_NULL).
func reqAt(fn string, p unsafe.Pointer) (reqEntry, uintptr, int32) {
	if rc := running(fn); rc != 0 {
		return reqEntry{}, 0, rc
	}
	if p == nil {
		return reqEntry{}, 0, raise(fn, noComm, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	h := *(*uintptr)(p)
	if h == MPI_REQUEST_NULL {
		return reqEntry{}, 0, raise(fn, noComm, classErr(MPI_ERR_REQUEST, "MPI_REQUEST_NULL is not a request"))
	}
	e, ok := requests.get(h)
	if !ok {
		return reqEntry{}, 0, badRequest(fn, h)
	}
	return e, h, 0
}

func implRequest_free(request unsafe.Pointer) int32 {
	const fn = "MPI_Request_free"
	e, h, rc := reqAt(fn, request)
	if rc != 0 {
		return rc
	}
	if err := e.r.Free(); err != nil {
		return e.ce.check(fn, err)
	}
	persistents.Delete(e.r)
	requests.remove(h)
	*(*uintptr)(request) = MPI_REQUEST_NULL
	return MPI_SUCCESS
}

func implCancel(request unsafe.Pointer) int32 {
	const fn = "MPI_Cancel"
	e, _, rc := reqAt(fn, request)
	if rc != 0 {
		return rc
	}
	return e.ce.check(fn, e.r.Cancel())
}

func implStart(request unsafe.Pointer) int32 {
	const fn = "MPI_Start"
	e, _, rc := reqAt(fn, request)
	if rc != 0 {
		return rc
	}
	a := persistentState(e.r)
	if a == nil {
		return raiseOn(fn, e.ce, classErr(MPI_ERR_REQUEST, "not a persistent request"))
	}
	if err := e.r.Start(); err != nil {
		return e.ce.check(fn, err)
	}
	a.Store(true)
	return MPI_SUCCESS
}

func implStartall(count int32, reqs unsafe.Pointer) int32 {
	const fn = "MPI_Startall"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if count < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative count %d", count)))
	}
	if count > 0 && reqs == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "array_of_requests is NULL"))
	}
	hs := unsafe.Slice((*uintptr)(reqs), count)
	rs := make([]*mpi.Request, count)
	as := make([]*atomic.Bool, count)
	ce := &self
	for i, h := range hs {
		e, ok := requests.get(h)
		if !ok {
			return raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("array_of_requests[%d]: %#x is not a request handle", i, h)))
		}
		if as[i] = persistentState(e.r); as[i] == nil {
			return raiseOn(fn, e.ce, classErr(MPI_ERR_REQUEST, fmt.Sprintf("array_of_requests[%d] is not a persistent request", i)))
		}
		rs[i], ce = e.r, e.ce
	}
	if err := mpi.StartAll(rs...); err != nil {
		return ce.check(fn, err)
	}
	for _, a := range as {
		a.Store(true)
	}
	return MPI_SUCCESS
}

// implRequest_get_status is MPI_Test that leaves the request as it is.
func implRequest_get_status(request uintptr, flag, st unsafe.Pointer) int32 {
	const fn = "MPI_Request_get_status"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	if request == MPI_REQUEST_NULL {
		setFlag(flag, true)
		setEmptyStatus(st)
		return MPI_SUCCESS
	}
	e, ok := requests.get(request)
	if !ok {
		return badRequest(fn, request)
	}
	if !e.active() {
		setFlag(flag, true)
		setEmptyStatus(st)
		return MPI_SUCCESS
	}
	done, s, err := e.r.GetStatus()
	setFlag(flag, done)
	if !done && err == nil {
		return MPI_SUCCESS
	}
	rc := e.ce.check(fn, err)
	setStatus(st, s)
	return rc
}

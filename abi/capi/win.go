//go:build cgo

package capi

/*
#include <stdint.h>
#include <stdlib.h>
void mpigo_call_win_errhandler(void *fn, uintptr_t win, int code);
int mpigo_call_win_delete_attr(void *fn, uintptr_t win, int keyval, void *val, void *extra);
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// One-sided communication (MPI_Win_*, MPI_Put, ...). Every window of the
// ABI is an mpi.Window[byte], so that displacements of the Go layer count
// bytes; the ABI's displacement unit, which may differ between ranks, is
// applied here, with each rank's unit exchanged when the window is made.
//
// Memory: MPI_Win_create exposes the caller's C memory, which Go neither
// moves nor frees. MPI_Win_allocate uses mpi.NewWindow, whose memory is a
// segment shared between the processes of a node (mapped memory, outside
// Go's heap) or, without a peer on the node, Go memory: that is pinned
// (runtime.Pinner) for the life of the window, so the C program may keep
// its address as cgo's rules require. MPI_Win_allocate_shared uses
// mpi.NewSharedWindow: one segment (or, for a singleton, Go memory, pinned
// the same way) holds every rank's part, each right after the one of the
// rank before.

// Kinds of the handles this file gives out, beyond handles.go's.
// They follow groups.go's (16-19) and come before mpit.go's (24-27): a
// kind shared with another table would let that table's handle pass
// winArg (TestHandleKindsDistinct).
const (
	kindWin = 20 + iota
	kindWinErrhandler
	kindWinGroup
)

// winEntry is a window behind a handle.
type winEntry struct {
	w      *mpi.Window[byte]
	h      uintptr
	ce     commEntry // the window's communicator and predefined error handler
	errMu  sync.Mutex
	userH  uintptr        // the handle of a user error handler, or 0
	userFn unsafe.Pointer // its C function, kept here as the handle may be freed
	flavor int32
	base   unsafe.Pointer // this rank's memory (NULL for dynamic windows)
	size   int
	units  []int // each rank's displacement unit
	pin    runtime.Pinner
	attrs  *winattrs // the predefined attributes' values, in C memory

	mu       sync.Mutex
	vals     map[int32]winAttr  // user attributes by keyval
	attached map[uintptr][]byte // dynamic windows: attached memory by address
}

// winattrs holds what MPI_Win_get_attr returns pointers to: C memory, as
// the program may keep the pointers.
type winattrs struct {
	size   int
	unit   int32
	flavor int32
	model  int32
}

var wins = &table[*winEntry]{kind: kindWin}

// winArg returns the window behind h, or nil and the code raised (on
// MPI_COMM_SELF's handler: there is no window to take one from).
func winArg(fn string, h uintptr) (*winEntry, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	if h == MPI_WIN_NULL {
		return nil, raise(fn, noComm, classErr(MPI_ERR_WIN, "MPI_WIN_NULL is not a window"))
	}
	we, ok := wins.get(h)
	if !ok {
		return nil, raise(fn, noComm, classErr(MPI_ERR_WIN, fmt.Sprintf("%#x is not a window handle (freed, garbage, or of another kind)", h)))
	}
	return we, 0
}

// raise applies the window's error handler to err of call fn.
func (we *winEntry) raise(fn string, err error) int32 {
	if f := we.handler(); f != nil {
		code := newCode(classOf(err), fn+": "+err.Error())
		C.mpigo_call_win_errhandler(f, C.uintptr_t(we.h), C.int(code))
		return code
	}
	return raiseOn(fn, &we.ce, err)
}

// handler returns the window's user error handler, or nil.
func (we *winEntry) handler() unsafe.Pointer {
	we.errMu.Lock()
	defer we.errMu.Unlock()
	return we.userFn
}

func (we *winEntry) check(fn string, err error) int32 {
	if err == nil {
		return MPI_SUCCESS
	}
	return we.raise(fn, err)
}

// unitOf is the displacement unit of target (1 for MPI_PROC_NULL and bad
// ranks, which the Go layer then rejects).
func (we *winEntry) unitOf(target int) int {
	if target >= 0 && target < len(we.units) {
		return we.units[target]
	}
	return 1
}

// disp converts a displacement of the ABI, in target's units, to bytes.
func (we *winEntry) disp(fn string, target int, d int) (int, int32) {
	if d < 0 {
		return 0, we.raise(fn, classErr(MPI_ERR_DISP, fmt.Sprintf("negative target displacement %d", d)))
	}
	u := we.unitOf(target)
	if d > (1<<62)/u {
		return 0, we.raise(fn, classErr(MPI_ERR_DISP, fmt.Sprintf("target displacement %d of unit %d is beyond any window", d, u)))
	}
	return d * u, 0
}

// newWinEntry registers w, made on ce by this rank with memory base of
// size bytes and displacement unit unit, and exchanges the units.
func newWinEntry(fn string, ce *commEntry, w *mpi.Window[byte], flavor int32, base unsafe.Pointer, size, unit int, out unsafe.Pointer) int32 {
	units, err := mpi.Allgather(ce.c, int64(unit))
	if err != nil {
		w.Free()
		return raiseOn(fn, ce, err)
	}
	we := &winEntry{w: w, flavor: flavor, base: base, size: size, vals: map[int32]winAttr{}}
	we.ce.c = w.Comm()
	we.ce.errh.Store(ce.errh.Load())
	for _, u := range units {
		we.units = append(we.units, int(u))
	}
	if base != nil {
		we.pin.Pin(base)
	}
	we.attrs = (*winattrs)(C.calloc(1, C.size_t(unsafe.Sizeof(winattrs{}))))
	a := we.attrs
	a.size, a.unit, a.flavor, a.model = size, int32(unit), flavor, MPI_WIN_UNIFIED
	we.h = wins.add(we)
	*(*uintptr)(out) = we.h
	return MPI_SUCCESS
}

// createArgs checks what every window constructor checks: the
// communicator, the info, the output. Past the communicator, a bad
// argument still takes part in the collective call (badWindow), which
// then fails on every rank instead of leaving the others waiting.
func createArgs(fn string, comm, info uintptr, out unsafe.Pointer) (*commEntry, int32) {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return nil, rc
	}
	if info != MPI_INFO_NULL {
		if _, ok := infos.get(info); !ok && info != MPI_INFO_ENV {
			return nil, badWindow(fn, ce, classErr(MPI_ERR_INFO, fmt.Sprintf("%#x is not an info handle", info)))
		}
	}
	if out == nil {
		return nil, badWindow(fn, ce, classErr(MPI_ERR_ARG, "win is NULL"))
	}
	return ce, 0
}

// badWindow takes part in the collective creation with arguments the Go
// layer refuses, so that every rank fails instead of waiting for this
// one, and raises err here.
func badWindow(fn string, ce *commEntry, err error) int32 {
	mpi.NewWindow[byte](ce.c, -1)
	return raiseOn(fn, ce, err)
}

func sizeUnitErr(size, unit int) error {
	switch {
	case size < 0:
		return classErr(MPI_ERR_SIZE, fmt.Sprintf("negative window size %d", size))
	case unit <= 0 || unit > 1<<30:
		return classErr(MPI_ERR_DISP, fmt.Sprintf("displacement unit %d is not positive", unit))
	}
	return nil
}

func winCreate(fn string, base unsafe.Pointer, size, unit int, info, comm uintptr, win unsafe.Pointer) int32 {
	ce, rc := createArgs(fn, comm, info, win)
	if ce == nil {
		return rc
	}
	if err := sizeUnitErr(size, unit); err != nil {
		return badWindow(fn, ce, err)
	}
	if base == nil && size > 0 {
		return badWindow(fn, ce, classErr(MPI_ERR_BASE, "base is NULL for a window of size > 0"))
	}
	var local []byte
	if size > 0 {
		local = unsafe.Slice((*byte)(base), size)
	}
	w, err := mpi.WindowOf(ce.c, local)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	return newWinEntry(fn, ce, w, MPI_WIN_FLAVOR_CREATE, base, size, unit, win)
}

func implWin_create(base unsafe.Pointer, size int, unit int32, info, comm uintptr, win unsafe.Pointer) int32 {
	return winCreate("MPI_Win_create", base, size, int(unit), info, comm, win)
}

func implWin_create_c(base unsafe.Pointer, size, unit int, info, comm uintptr, win unsafe.Pointer) int32 {
	return winCreate("MPI_Win_create_c", base, size, unit, info, comm, win)
}

func winAllocate(fn string, size, unit int, info, comm uintptr, baseptr, win unsafe.Pointer, shared bool) int32 {
	ce, rc := createArgs(fn, comm, info, win)
	if ce == nil {
		return rc
	}
	if err := sizeUnitErr(size, unit); err != nil {
		return badWindow(fn, ce, err)
	}
	if baseptr == nil {
		return badWindow(fn, ce, classErr(MPI_ERR_ARG, "baseptr is NULL"))
	}
	// MPI_Win_allocate_shared's memory is one allocation, the ranks'
	// parts one after the other (contiguous, as the standard's default
	// is); the ranks not all on one node is MPI_ERR_RMA_SHARED on every
	// rank (mpi.ErrRMAShared).
	newWin, flavor := mpi.NewWindow[byte], int32(MPI_WIN_FLAVOR_ALLOCATE)
	if shared {
		newWin, flavor = mpi.NewSharedWindow[byte], MPI_WIN_FLAVOR_SHARED
	}
	w, err := newWin(ce.c, size)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	var base unsafe.Pointer
	if l := w.Local(); len(l) > 0 {
		base = unsafe.Pointer(&l[0])
	}
	if rc := newWinEntry(fn, ce, w, flavor, base, size, unit, win); rc != 0 {
		return rc
	}
	*(*unsafe.Pointer)(baseptr) = base
	return MPI_SUCCESS
}

func implWin_allocate(size int, unit int32, info, comm uintptr, baseptr, win unsafe.Pointer) int32 {
	return winAllocate("MPI_Win_allocate", size, int(unit), info, comm, baseptr, win, false)
}

func implWin_allocate_c(size, unit int, info, comm uintptr, baseptr, win unsafe.Pointer) int32 {
	return winAllocate("MPI_Win_allocate_c", size, unit, info, comm, baseptr, win, false)
}

func implWin_allocate_shared(size int, unit int32, info, comm uintptr, baseptr, win unsafe.Pointer) int32 {
	return winAllocate("MPI_Win_allocate_shared", size, int(unit), info, comm, baseptr, win, true)
}

func implWin_allocate_shared_c(size, unit int, info, comm uintptr, baseptr, win unsafe.Pointer) int32 {
	return winAllocate("MPI_Win_allocate_shared_c", size, unit, info, comm, baseptr, win, true)
}

func implWin_create_dynamic(info, comm uintptr, win unsafe.Pointer) int32 {
	const fn = "MPI_Win_create_dynamic"
	ce, rc := createArgs(fn, comm, info, win)
	if ce == nil {
		return rc
	}
	w, err := mpi.NewDynamicWindow[byte](ce.c)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if rc := newWinEntry(fn, ce, w, MPI_WIN_FLAVOR_DYNAMIC, nil, 0, 1, win); rc != 0 {
		return rc
	}
	return MPI_SUCCESS
}

// Attached memory of a dynamic window is addressed by origins at its
// absolute address (MPI_Get_address, the displacement unit is 1).
func implWin_attach(win uintptr, base unsafe.Pointer, size int) int32 {
	const fn = "MPI_Win_attach"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	switch {
	case we.flavor != MPI_WIN_FLAVOR_DYNAMIC:
		return we.raise(fn, classErr(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a window of MPI_Win_create_dynamic"))
	case size < 0:
		return we.raise(fn, classErr(MPI_ERR_SIZE, fmt.Sprintf("negative size %d", size)))
	case base == nil && size > 0:
		return we.raise(fn, classErr(MPI_ERR_BASE, "base is NULL"))
	case size == 0:
		return MPI_SUCCESS
	}
	mem := unsafe.Slice((*byte)(base), size)
	if err := we.w.AttachAt(mem, int(uintptr(base))); err != nil {
		return we.raise(fn, classErr(MPI_ERR_RMA_ATTACH, err.Error()))
	}
	we.mu.Lock()
	if we.attached == nil {
		we.attached = map[uintptr][]byte{}
	}
	we.attached[uintptr(base)] = mem
	we.mu.Unlock()
	return MPI_SUCCESS
}

func implWin_detach(win uintptr, base unsafe.Pointer) int32 {
	const fn = "MPI_Win_detach"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if we.flavor != MPI_WIN_FLAVOR_DYNAMIC {
		return we.raise(fn, classErr(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a window of MPI_Win_create_dynamic"))
	}
	we.mu.Lock()
	mem, ok := we.attached[uintptr(base)]
	delete(we.attached, uintptr(base))
	we.mu.Unlock()
	if !ok {
		return we.raise(fn, classErr(MPI_ERR_BASE, fmt.Sprintf("%p is not the base of memory attached to the window", base)))
	}
	return we.check(fn, we.w.Detach(mem))
}

func implWin_free(win unsafe.Pointer) int32 {
	const fn = "MPI_Win_free"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if win == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "win is NULL"))
	}
	h := *(*uintptr)(win)
	we, rc := winArg(fn, h)
	if we == nil {
		return rc
	}
	// The delete callbacks run first, while the window is still valid.
	we.mu.Lock()
	vals := we.vals
	we.vals = map[int32]winAttr{}
	we.mu.Unlock()
	for k, v := range vals {
		if rc := v.delete(we, k); rc != 0 {
			return we.raise(fn, classErr(classOfCode(rc), fmt.Sprintf("the delete callback of keyval %d returned %d", k, rc)))
		}
	}
	if err := we.w.Free(); err != nil {
		return we.raise(fn, err)
	}
	wins.remove(h)
	we.pin.Unpin()
	C.free(unsafe.Pointer(we.attrs))
	we.attrs = nil
	*(*uintptr)(win) = MPI_WIN_NULL
	return MPI_SUCCESS
}

// classOfCode is the class of an error code a callback returned.
func classOfCode(code int32) int32 {
	if c, ok := codeClass(code); ok {
		return c
	}
	return MPI_ERR_OTHER
}

func implWin_shared_query(win uintptr, rank int32, size, unit, baseptr unsafe.Pointer) int32 {
	return sharedQuery("MPI_Win_shared_query", win, rank, size, unit, baseptr, false)
}

func implWin_shared_query_c(win uintptr, rank int32, size, unit, baseptr unsafe.Pointer) int32 {
	return sharedQuery("MPI_Win_shared_query_c", win, rank, size, unit, baseptr, true)
}

func sharedQuery(fn string, win uintptr, rank int32, size, unit, baseptr unsafe.Pointer, large bool) int32 {
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if size == nil || unit == nil || baseptr == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "size, disp_unit or baseptr is NULL"))
	}
	if we.flavor == MPI_WIN_FLAVOR_DYNAMIC {
		return we.raise(fn, classErr(MPI_ERR_RMA_FLAVOR, "a dynamic window has no shared memory to query"))
	}
	r := int(rank)
	if rank == MPI_PROC_NULL {
		// The lowest rank with memory, as the standard says (size 0
		// and NULL below if this process cannot address it).
		r = -1
		for i := range we.units {
			if we.w.Size(i) > 0 {
				r = i
				break
			}
		}
	} else if r < 0 || r >= len(we.units) {
		return we.raise(fn, classErr(MPI_ERR_RANK, fmt.Sprintf("rank %d is not a rank of the window's group (size %d)", rank, len(we.units))))
	}
	var (
		mem []byte
		u   int
	)
	if r >= 0 {
		s, err := we.w.SharedQuery(r)
		switch {
		case err == nil:
			mem, u = s, we.units[r]
		case we.flavor != MPI_WIN_FLAVOR_SHARED && errors.Is(err, mpi.ErrRank):
			// MPI-4.1: a window of another flavor whose memory at r
			// this process cannot address answers size 0 and NULL.
		default:
			return we.raise(fn, classErr(MPI_ERR_RMA_SHARED, err.Error()))
		}
	}
	var base unsafe.Pointer
	if len(mem) > 0 {
		base = unsafe.Pointer(&mem[0])
		we.mu.Lock()
		we.pin.Pin(base)
		we.mu.Unlock()
	}
	*(*int)(size) = len(mem)
	if large {
		*(*int)(unit) = u
	} else {
		*(*int32)(unit) = int32(u)
	}
	*(*unsafe.Pointer)(baseptr) = base
	return MPI_SUCCESS
}

// rmaArgs resolves the window, a datatype and a buffer of count of them.
func rmaArgs(fn string, win uintptr, buf unsafe.Pointer, count int, datatype uintptr) (*winEntry, *mpi.Datatype, []byte, int32) {
	we, rc := winArg(fn, win)
	if we == nil {
		return nil, nil, nil, rc
	}
	if count < 0 {
		return nil, nil, nil, we.raise(fn, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative count %d", count)))
	}
	t, rc := typeArg(fn, &we.ce, datatype)
	if t == nil {
		return nil, nil, nil, rc
	}
	// MPI_BOTTOM with a datatype of absolute addresses, or a datatype
	// reaching below buf, comes back as the memory it covers and the
	// datatype rebased onto it (bufType).
	b, t, rc := bufType(fn, &we.ce, buf, count, t)
	if rc != 0 {
		return nil, nil, nil, rc
	}
	return we, t, b, 0
}

// target resolves the target's datatype, count and displacement.
func (we *winEntry) target(fn string, rank int32, disp int, count int, datatype uintptr) (*mpi.Datatype, int, int, int32) {
	if count < 0 {
		return nil, 0, 0, we.raise(fn, classErr(MPI_ERR_COUNT, fmt.Sprintf("negative target count %d", count)))
	}
	t, rc := typeArg(fn, &we.ce, datatype)
	if t == nil {
		return nil, 0, 0, rc
	}
	r := rankArg(rank)
	if rank == MPI_ANY_SOURCE {
		r = invalidArg
	}
	d, rc := we.disp(fn, r, disp)
	if rc != 0 {
		return nil, 0, 0, rc
	}
	return t, r, d, 0
}

// winOp is an operation of the accumulate family: the reductions and
// MPI_REPLACE, MPI_NO_OP.
func winOp(fn string, we *winEntry, h uintptr) (*mpi.ReduceOp, int32) {
	switch h {
	case MPI_REPLACE:
		return mpi.OpReplace, 0
	case MPI_NO_OP:
		return mpi.OpNoOp, 0
	}
	return opArg(fn, &we.ce, h)
}

// request registers the request of an R call.
func (we *winEntry) request(fn string, r *mpi.Request, err error, out unsafe.Pointer) int32 {
	if err != nil {
		return we.raise(fn, err)
	}
	*(*uintptr)(out) = requests.add(reqEntry{r, &we.ce})
	return MPI_SUCCESS
}

func put(fn string, origin unsafe.Pointer, ocount int, otype uintptr, rank int32, disp, tcount int, ttype, win uintptr, request unsafe.Pointer, async bool) int32 {
	we, ot, ob, rc := rmaArgs(fn, win, origin, ocount, otype)
	if we == nil {
		return rc
	}
	tt, r, d, rc := we.target(fn, rank, disp, tcount, ttype)
	if tt == nil {
		return rc
	}
	if async {
		if request == nil {
			return we.raise(fn, classErr(MPI_ERR_ARG, "request is NULL"))
		}
		req, err := we.w.RputBuf(ob, ocount, ot, r, d, tcount, tt)
		return we.request(fn, req, err, request)
	}
	return we.check(fn, we.w.PutBuf(ob, ocount, ot, r, d, tcount, tt))
}

func get(fn string, origin unsafe.Pointer, ocount int, otype uintptr, rank int32, disp, tcount int, ttype, win uintptr, request unsafe.Pointer, async bool) int32 {
	we, ot, ob, rc := rmaArgs(fn, win, origin, ocount, otype)
	if we == nil {
		return rc
	}
	tt, r, d, rc := we.target(fn, rank, disp, tcount, ttype)
	if tt == nil {
		return rc
	}
	if async {
		if request == nil {
			return we.raise(fn, classErr(MPI_ERR_ARG, "request is NULL"))
		}
		req, err := we.w.RgetBuf(ob, ocount, ot, r, d, tcount, tt)
		return we.request(fn, req, err, request)
	}
	return we.check(fn, we.w.GetBuf(ob, ocount, ot, r, d, tcount, tt))
}

func accumulate(fn string, origin unsafe.Pointer, ocount int, otype uintptr, rank int32, disp, tcount int, ttype, op, win uintptr, request unsafe.Pointer, async bool) int32 {
	we, ot, ob, rc := rmaArgs(fn, win, origin, ocount, otype)
	if we == nil {
		return rc
	}
	tt, r, d, rc := we.target(fn, rank, disp, tcount, ttype)
	if tt == nil {
		return rc
	}
	o, rc := winOp(fn, we, op)
	if o == nil {
		return rc
	}
	if o == mpi.OpNoOp {
		// MPI_Accumulate with MPI_NO_OP changes nothing; the Go layer
		// takes it only with a result.
		return MPI_SUCCESS
	}
	if async {
		if request == nil {
			return we.raise(fn, classErr(MPI_ERR_ARG, "request is NULL"))
		}
		req, err := we.w.RaccumulateBuf(ob, ocount, ot, r, d, tcount, tt, o)
		return we.request(fn, req, err, request)
	}
	return we.check(fn, we.w.AccumulateBuf(ob, ocount, ot, r, d, tcount, tt, o))
}

func getAccumulate(fn string, origin unsafe.Pointer, ocount int, otype uintptr, result unsafe.Pointer, rcount int, rtype uintptr,
	rank int32, disp, tcount int, ttype, op, win uintptr, request unsafe.Pointer, async bool) int32 {
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	o, rc := winOp(fn, we, op)
	if o == nil {
		return rc
	}
	var (
		ot *mpi.Datatype
		ob []byte
	)
	if o != mpi.OpNoOp {
		// With MPI_NO_OP the origin buffer is ignored.
		if _, ot, ob, rc = rmaArgs(fn, win, origin, ocount, otype); ot == nil {
			return rc
		}
	}
	_, rt, rb, rc := rmaArgs(fn, win, result, rcount, rtype)
	if rt == nil {
		return rc
	}
	tt, r, d, rc := we.target(fn, rank, disp, tcount, ttype)
	if tt == nil {
		return rc
	}
	if async {
		if request == nil {
			return we.raise(fn, classErr(MPI_ERR_ARG, "request is NULL"))
		}
		req, err := we.w.RgetAccumulateBuf(ob, ocount, ot, rb, rcount, rt, r, d, tcount, tt, o)
		return we.request(fn, req, err, request)
	}
	return we.check(fn, we.w.GetAccumulateBuf(ob, ocount, ot, rb, rcount, rt, r, d, tcount, tt, o))
}

func implPut(origin unsafe.Pointer, ocount int32, otype uintptr, rank int32, disp int, tcount int32, ttype, win uintptr) int32 {
	return put("MPI_Put", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, nil, false)
}

func implPut_c(origin unsafe.Pointer, ocount int64, otype uintptr, rank int32, disp int, tcount int64, ttype, win uintptr) int32 {
	return put("MPI_Put_c", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, nil, false)
}

func implRput(origin unsafe.Pointer, ocount int32, otype uintptr, rank int32, disp int, tcount int32, ttype, win uintptr, request unsafe.Pointer) int32 {
	return put("MPI_Rput", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, request, true)
}

func implRput_c(origin unsafe.Pointer, ocount int64, otype uintptr, rank int32, disp int, tcount int64, ttype, win uintptr, request unsafe.Pointer) int32 {
	return put("MPI_Rput_c", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, request, true)
}

func implGet(origin unsafe.Pointer, ocount int32, otype uintptr, rank int32, disp int, tcount int32, ttype, win uintptr) int32 {
	return get("MPI_Get", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, nil, false)
}

func implGet_c(origin unsafe.Pointer, ocount int64, otype uintptr, rank int32, disp int, tcount int64, ttype, win uintptr) int32 {
	return get("MPI_Get_c", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, nil, false)
}

func implRget(origin unsafe.Pointer, ocount int32, otype uintptr, rank int32, disp int, tcount int32, ttype, win uintptr, request unsafe.Pointer) int32 {
	return get("MPI_Rget", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, request, true)
}

func implRget_c(origin unsafe.Pointer, ocount int64, otype uintptr, rank int32, disp int, tcount int64, ttype, win uintptr, request unsafe.Pointer) int32 {
	return get("MPI_Rget_c", origin, int(ocount), otype, rank, disp, int(tcount), ttype, win, request, true)
}

func implAccumulate(origin unsafe.Pointer, ocount int32, otype uintptr, rank int32, disp int, tcount int32, ttype, op, win uintptr) int32 {
	return accumulate("MPI_Accumulate", origin, int(ocount), otype, rank, disp, int(tcount), ttype, op, win, nil, false)
}

func implAccumulate_c(origin unsafe.Pointer, ocount int64, otype uintptr, rank int32, disp int, tcount int64, ttype, op, win uintptr) int32 {
	return accumulate("MPI_Accumulate_c", origin, int(ocount), otype, rank, disp, int(tcount), ttype, op, win, nil, false)
}

func implRaccumulate(origin unsafe.Pointer, ocount int32, otype uintptr, rank int32, disp int, tcount int32, ttype, op, win uintptr, request unsafe.Pointer) int32 {
	return accumulate("MPI_Raccumulate", origin, int(ocount), otype, rank, disp, int(tcount), ttype, op, win, request, true)
}

func implRaccumulate_c(origin unsafe.Pointer, ocount int64, otype uintptr, rank int32, disp int, tcount int64, ttype, op, win uintptr, request unsafe.Pointer) int32 {
	return accumulate("MPI_Raccumulate_c", origin, int(ocount), otype, rank, disp, int(tcount), ttype, op, win, request, true)
}

func implGet_accumulate(origin unsafe.Pointer, ocount int32, otype uintptr, result unsafe.Pointer, rcount int32, rtype uintptr, rank int32, disp int, tcount int32, ttype, op, win uintptr) int32 {
	return getAccumulate("MPI_Get_accumulate", origin, int(ocount), otype, result, int(rcount), rtype, rank, disp, int(tcount), ttype, op, win, nil, false)
}

func implGet_accumulate_c(origin unsafe.Pointer, ocount int64, otype uintptr, result unsafe.Pointer, rcount int64, rtype uintptr, rank int32, disp int, tcount int64, ttype, op, win uintptr) int32 {
	return getAccumulate("MPI_Get_accumulate_c", origin, int(ocount), otype, result, int(rcount), rtype, rank, disp, int(tcount), ttype, op, win, nil, false)
}

func implRget_accumulate(origin unsafe.Pointer, ocount int32, otype uintptr, result unsafe.Pointer, rcount int32, rtype uintptr, rank int32, disp int, tcount int32, ttype, op, win uintptr, request unsafe.Pointer) int32 {
	return getAccumulate("MPI_Rget_accumulate", origin, int(ocount), otype, result, int(rcount), rtype, rank, disp, int(tcount), ttype, op, win, request, true)
}

func implRget_accumulate_c(origin unsafe.Pointer, ocount int64, otype uintptr, result unsafe.Pointer, rcount int64, rtype uintptr, rank int32, disp int, tcount int64, ttype, op, win uintptr, request unsafe.Pointer) int32 {
	return getAccumulate("MPI_Rget_accumulate_c", origin, int(ocount), otype, result, int(rcount), rtype, rank, disp, int(tcount), ttype, op, win, request, true)
}

// predefined returns mpigo's own datatype behind a predefined handle's
// (or a duplicate of one, up to four deep):
// types.go gives each handle a duplicate, which the Go layer's
// fetch-and-op and compare-and-swap would take for a derived datatype.
func predefined(t *mpi.Datatype) *mpi.Datatype {
	predefTypesMu.Do(setupTypes)
	if b := predefBase[t]; b != nil {
		return b // a predefined handle's: no Envelope and Contents, which allocate
	}
	for range 4 {
		if c, _, _, _ := t.Envelope(); c != mpi.CombinerDup {
			break
		}
		_, _, types, err := t.Contents()
		if err != nil || len(types) != 1 {
			break
		}
		t = types[0]
	}
	return t
}

// one returns one element of t at p as a slice, or the code raised.
func (we *winEntry) one(fn, what string, p unsafe.Pointer, t *mpi.Datatype) ([]byte, int32) {
	if p == nil {
		return nil, we.raise(fn, classErr(MPI_ERR_BUFFER, what+" is NULL"))
	}
	// A pair type's element spans its extent in C memory (MPI_SHORT_INT
	// is 6 bytes of data in 8).
	n := t.Size()
	if _, ext := t.Extent(); ext > n {
		n = ext
	}
	return unsafe.Slice((*byte)(p), n), 0
}

func implFetch_and_op(origin, result unsafe.Pointer, datatype uintptr, rank int32, disp int, op, win uintptr) int32 {
	const fn = "MPI_Fetch_and_op"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	t, r, d, rc := we.target(fn, rank, disp, 1, datatype)
	if t == nil {
		return rc
	}
	t = predefined(t)
	o, rc := winOp(fn, we, op)
	if o == nil {
		return rc
	}
	var ob []byte
	if o != mpi.OpNoOp {
		if ob, rc = we.one(fn, "origin_addr", origin, t); ob == nil {
			return rc
		}
	}
	rb, rc := we.one(fn, "result_addr", result, t)
	if rb == nil {
		return rc
	}
	return we.check(fn, we.w.FetchAndOpBuf(ob, rb, t, r, d, o))
}

func implCompare_and_swap(origin, compare, result unsafe.Pointer, datatype uintptr, rank int32, disp int, win uintptr) int32 {
	const fn = "MPI_Compare_and_swap"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	t, r, d, rc := we.target(fn, rank, disp, 1, datatype)
	if t == nil {
		return rc
	}
	t = predefined(t)
	var bufs [3][]byte
	for i, p := range []struct {
		what string
		p    unsafe.Pointer
	}{{"origin_addr", origin}, {"compare_addr", compare}, {"result_addr", result}} {
		if bufs[i], rc = we.one(fn, p.what, p.p, t); bufs[i] == nil {
			return rc
		}
	}
	return we.check(fn, we.w.CompareAndSwapBuf(bufs[0], bufs[1], bufs[2], t, r, d))
}

// Synchronization.

// The ABI's assertions and the Go layer's.
var modes = []struct{ abi, goMode int32 }{
	{MPI_MODE_NOSTORE, mpi.ModeNoStore}, {MPI_MODE_NOPUT, mpi.ModeNoPut},
	{MPI_MODE_NOPRECEDE, mpi.ModeNoPrecede}, {MPI_MODE_NOSUCCEED, mpi.ModeNoSucceed},
}

// assertArg checks that assert holds only the bits allowed and returns
// the Go layer's assertion of them.
func (we *winEntry) assertArg(fn string, assert, allowed int32) (int, int32) {
	if assert&^allowed != 0 {
		return 0, we.raise(fn, classErr(MPI_ERR_ASSERT, fmt.Sprintf("assert %#x holds modes %s does not take", assert, fn)))
	}
	g := 0
	for _, m := range modes {
		if assert&m.abi != 0 {
			g |= int(m.goMode)
		}
	}
	return g, 0
}

func implWin_fence(assert int32, win uintptr) int32 {
	const fn = "MPI_Win_fence"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	a, rc := we.assertArg(fn, assert, MPI_MODE_NOSTORE|MPI_MODE_NOPUT|MPI_MODE_NOPRECEDE|MPI_MODE_NOSUCCEED)
	if rc != 0 {
		return rc
	}
	return we.check(fn, we.w.FenceAssert(a))
}

// targetRank checks a rank argument of a synchronization call.
func (we *winEntry) targetRank(fn string, rank int32) (int, int32) {
	if rank == MPI_PROC_NULL {
		return mpi.ProcNull, 0
	}
	if rank < 0 || int(rank) >= len(we.units) {
		return 0, we.raise(fn, classErr(MPI_ERR_RANK, fmt.Sprintf("rank %d is not a rank of the window's group (size %d)", rank, len(we.units))))
	}
	return int(rank), 0
}

func implWin_lock(lockType, rank, assert int32, win uintptr) int32 {
	const fn = "MPI_Win_lock"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if lockType != MPI_LOCK_EXCLUSIVE && lockType != MPI_LOCK_SHARED {
		return we.raise(fn, classErr(MPI_ERR_LOCKTYPE, fmt.Sprintf("lock type %d is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED", lockType)))
	}
	r, rc := we.targetRank(fn, rank)
	if rc != 0 {
		return rc
	}
	if _, rc := we.assertArg(fn, assert, MPI_MODE_NOCHECK); rc != 0 {
		return rc
	}
	return we.check(fn, we.w.Lock(r, lockType == MPI_LOCK_EXCLUSIVE))
}

func implWin_unlock(rank int32, win uintptr) int32 {
	const fn = "MPI_Win_unlock"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	r, rc := we.targetRank(fn, rank)
	if rc != 0 {
		return rc
	}
	return we.check(fn, we.w.Unlock(r))
}

func implWin_lock_all(assert int32, win uintptr) int32 {
	const fn = "MPI_Win_lock_all"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if _, rc := we.assertArg(fn, assert, MPI_MODE_NOCHECK); rc != 0 {
		return rc
	}
	return we.check(fn, we.w.LockAll())
}

func implWin_unlock_all(win uintptr) int32 {
	const fn = "MPI_Win_unlock_all"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	return we.check(fn, we.w.UnlockAll())
}

func winRankCall(fn string, rank int32, win uintptr, do func(w *mpi.Window[byte], r int) error) int32 {
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	r, rc := we.targetRank(fn, rank)
	if rc != 0 {
		return rc
	}
	return we.check(fn, do(we.w, r))
}

func winCall(fn string, win uintptr, do func(w *mpi.Window[byte]) error) int32 {
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	return we.check(fn, do(we.w))
}

func implWin_flush(rank int32, win uintptr) int32 {
	return winRankCall("MPI_Win_flush", rank, win, (*mpi.Window[byte]).Flush)
}

func implWin_flush_local(rank int32, win uintptr) int32 {
	return winRankCall("MPI_Win_flush_local", rank, win, (*mpi.Window[byte]).FlushLocal)
}

func implWin_flush_all(win uintptr) int32 {
	return winCall("MPI_Win_flush_all", win, (*mpi.Window[byte]).FlushAll)
}

func implWin_flush_local_all(win uintptr) int32 {
	return winCall("MPI_Win_flush_local_all", win, (*mpi.Window[byte]).FlushLocalAll)
}

func implWin_sync(win uintptr) int32 {
	return winCall("MPI_Win_sync", win, (*mpi.Window[byte]).Sync)
}

func implWin_complete(win uintptr) int32 {
	return winCall("MPI_Win_complete", win, (*mpi.Window[byte]).Complete)
}

func implWin_wait(win uintptr) int32 {
	return winCall("MPI_Win_wait", win, (*mpi.Window[byte]).Wait)
}

func implWin_test(win uintptr, flag unsafe.Pointer) int32 {
	const fn = "MPI_Win_test"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if flag == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	done, err := we.w.Test()
	setFlag(flag, done)
	return we.check(fn, err)
}

func pscw(fn string, group uintptr, assert, allowed int32, win uintptr, do func(w *mpi.Window[byte], g *mpi.Group) error) int32 {
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	g, ok := groupIn(group)
	if !ok {
		return we.raise(fn, classErr(MPI_ERR_GROUP, fmt.Sprintf("%#x is not a group handle", group)))
	}
	if _, rc := we.assertArg(fn, assert, allowed); rc != 0 {
		return rc
	}
	return we.check(fn, do(we.w, g))
}

func implWin_post(group uintptr, assert int32, win uintptr) int32 {
	return pscw("MPI_Win_post", group, assert, MPI_MODE_NOCHECK|MPI_MODE_NOSTORE|MPI_MODE_NOPUT, win, (*mpi.Window[byte]).Post)
}

func implWin_start(group uintptr, assert int32, win uintptr) int32 {
	return pscw("MPI_Win_start", group, assert, MPI_MODE_NOCHECK, win, (*mpi.Window[byte]).Start)
}

// Names, groups, info.

func implWin_get_group(win uintptr, group unsafe.Pointer) int32 {
	const fn = "MPI_Win_get_group"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if group == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "group is NULL"))
	}
	*(*uintptr)(group) = groupOut(we.w.Group())
	return MPI_SUCCESS
}

func implWin_set_name(win uintptr, name unsafe.Pointer) int32 {
	const fn = "MPI_Win_set_name"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if name == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "win_name is NULL"))
	}
	s := cString(name)
	if len(s) >= MPI_MAX_OBJECT_NAME {
		s = s[:MPI_MAX_OBJECT_NAME-1]
	}
	we.w.SetName(s)
	return MPI_SUCCESS
}

func implWin_get_name(win uintptr, name, resultlen unsafe.Pointer) int32 {
	const fn = "MPI_Win_get_name"
	if win == MPI_WIN_NULL && phase.Load() == phaseRunning && name != nil && resultlen != nil {
		putString(name, resultlen, "MPI_WIN_NULL", MPI_MAX_OBJECT_NAME) // as for MPI_COMM_NULL
		return MPI_SUCCESS
	}
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if name == nil || resultlen == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "win_name or resultlen is NULL"))
	}
	putString(name, resultlen, we.w.Name(), MPI_MAX_OBJECT_NAME)
	return MPI_SUCCESS
}

func implWin_set_info(win, info uintptr) int32 {
	const fn = "MPI_Win_set_info"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	in := mpi.NewInfo()
	if info != MPI_INFO_NULL {
		if in, rc = infoArg(fn, info); in == nil {
			return rc
		}
	}
	return we.check(fn, we.w.SetInfo(in))
}

func implWin_get_info(win uintptr, info unsafe.Pointer) int32 {
	const fn = "MPI_Win_get_info"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if info == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "info_used is NULL"))
	}
	in := we.w.Info()
	if in == nil {
		in = mpi.NewInfo()
	} else {
		in = in.Dup()
	}
	*(*uintptr)(info) = infos.add(in)
	return MPI_SUCCESS
}

// Memory for one-sided communication: mpi.AllocMem's blocks, outside
// Go's heap; between processes of one node they are shared, so that
// windows over them (MPI_Win_create, MPI_Win_attach) are reached
// directly.

var allocs sync.Map // unsafe.Pointer -> []byte, the blocks of MPI_Alloc_mem

func implAlloc_mem(size int, info uintptr, baseptr unsafe.Pointer) int32 {
	const fn = "MPI_Alloc_mem"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if info != MPI_INFO_NULL {
		if in, rc := infoArg(fn, info); in == nil {
			return rc
		}
	}
	switch {
	case size < 0:
		return raise(fn, noComm, classErr(MPI_ERR_SIZE, fmt.Sprintf("negative size %d", size)))
	case baseptr == nil:
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "baseptr is NULL"))
	}
	b, err := mpi.AllocMem[byte](size)
	if err != nil {
		return raise(fn, noComm, classErr(MPI_ERR_NO_MEM, fmt.Sprintf("cannot allocate %d bytes: %v", size, err)))
	}
	p := unsafe.Pointer(unsafe.SliceData(b[:1:1]))
	allocs.Store(p, b)
	*(*unsafe.Pointer)(baseptr) = p
	return MPI_SUCCESS
}

func implFree_mem(base unsafe.Pointer) int32 {
	const fn = "MPI_Free_mem"
	if rc := running(fn); rc != 0 {
		return rc
	}
	v, ok := allocs.LoadAndDelete(base)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_BASE, fmt.Sprintf("%p is not memory MPI_Alloc_mem gave", base)))
	}
	if err := mpi.FreeMem(v.([]byte)); err != nil {
		return raise(fn, noComm, classErr(MPI_ERR_BASE, err.Error()))
	}
	return MPI_SUCCESS
}

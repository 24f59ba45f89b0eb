//go:build cgo

package capi

/*
#include <stdint.h>
void mpigo_call_win_errhandler(void *fn, uintptr_t win, int code);
int mpigo_call_win_delete_attr(void *fn, uintptr_t win, int keyval, void *val, void *extra);
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// A window's error handlers, attributes and keyvals, and the group
// handles the window calls give out and take.

// winErrhs holds the C functions of MPI_Win_create_errhandler.
var winErrhs = &table[unsafe.Pointer]{kind: kindWinErrhandler}

func implWin_create_errhandler(fnp, errhandler unsafe.Pointer) int32 {
	const fn = "MPI_Win_create_errhandler"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if fnp == nil || errhandler == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "win_errhandler_fn or errhandler is NULL"))
	}
	*(*uintptr)(errhandler) = winErrhs.add(fnp)
	return MPI_SUCCESS
}

func implWin_set_errhandler(win, errhandler uintptr) int32 {
	const fn = "MPI_Win_set_errhandler"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	switch errhandler {
	case MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT:
		we.ce.errh.Store(errhandler)
		we.errMu.Lock()
		we.userH, we.userFn = 0, nil
		we.errMu.Unlock()
		return MPI_SUCCESS
	}
	f, ok := winErrhs.get(errhandler)
	if !ok {
		return we.raise(fn, classErr(MPI_ERR_ERRHANDLER, fmt.Sprintf("%#x is not an error handler for windows", errhandler)))
	}
	we.errMu.Lock()
	we.userH, we.userFn = errhandler, f
	we.errMu.Unlock()
	return MPI_SUCCESS
}

func implWin_get_errhandler(win uintptr, errhandler unsafe.Pointer) int32 {
	const fn = "MPI_Win_get_errhandler"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if errhandler == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "errhandler is NULL"))
	}
	we.errMu.Lock()
	h := we.userH
	we.errMu.Unlock()
	if h == 0 {
		h = we.ce.errh.Load()
	}
	*(*uintptr)(errhandler) = h
	return MPI_SUCCESS
}

func implWin_call_errhandler(win uintptr, code int32) int32 {
	const fn = "MPI_Win_call_errhandler"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if f := we.handler(); f != nil {
		C.mpigo_call_win_errhandler(f, C.uintptr_t(we.h), C.int(code))
		return MPI_SUCCESS
	}
	if we.ce.errh.Load() == MPI_ERRORS_RETURN {
		return MPI_SUCCESS
	}
	s, _ := codeString(code)
	raiseOn(fn, &we.ce, classErr(classOfCode(code), fmt.Sprintf("error code %d raised by the program: %s", code, s)))
	return MPI_SUCCESS
}

// freeWinErrhandler frees h if it is an error handler of
// MPI_Win_create_errhandler, and reports whether it was
// (MPI_Errhandler_free calls it). Windows that use the handler keep it.
func freeWinErrhandler(h uintptr) bool {
	if _, ok := winErrhs.get(h); !ok {
		return false
	}
	winErrhs.remove(h)
	return true
}

// winKeyval is a keyval of MPI_Win_create_keyval. Windows are never
// copied, so the copy callback is kept but never called.
type winKeyval struct {
	copyFn, deleteFn, extra unsafe.Pointer
}

// winAttr is an attribute's value with its keyval, which outlives
// MPI_Win_free_keyval while attributes of it remain.
type winAttr struct {
	val unsafe.Pointer
	kv  *winKeyval
}

// delete calls the attribute's delete callback, if any, and returns what
// it returned.
func (a winAttr) delete(we *winEntry, keyval int32) int32 {
	if a.kv.deleteFn == nil {
		return MPI_SUCCESS
	}
	return int32(C.mpigo_call_win_delete_attr(a.kv.deleteFn, C.uintptr_t(we.h), C.int(keyval), a.val, a.kv.extra))
}

// Window keyvals are numbered from winKeyvalBase, apart from the
// predefined attributes (MPI_WIN_BASE, ...) and from other objects'
// keyvals.
const winKeyvalBase = 0x40000

var winKeyvals struct {
	sync.Mutex
	m    map[int32]*winKeyval
	next int32
}

func implWin_create_keyval(copyFn, deleteFn, keyval, extra unsafe.Pointer) int32 {
	const fn = "MPI_Win_create_keyval"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if keyval == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "win_keyval is NULL"))
	}
	winKeyvals.Lock()
	defer winKeyvals.Unlock()
	if winKeyvals.m == nil {
		winKeyvals.m = map[int32]*winKeyval{}
	}
	k := winKeyvalBase + winKeyvals.next
	winKeyvals.next++
	winKeyvals.m[k] = &winKeyval{copyFn: copyFn, deleteFn: deleteFn, extra: extra}
	*(*int32)(keyval) = k
	return MPI_SUCCESS
}

func implWin_free_keyval(keyval unsafe.Pointer) int32 {
	const fn = "MPI_Win_free_keyval"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if keyval == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "win_keyval is NULL"))
	}
	k := *(*int32)(keyval)
	winKeyvals.Lock()
	_, ok := winKeyvals.m[k]
	delete(winKeyvals.m, k)
	winKeyvals.Unlock()
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("%d is not a window keyval (predefined, freed, or never created)", k)))
	}
	*(*int32)(keyval) = MPI_KEYVAL_INVALID
	return MPI_SUCCESS
}

// keyvalArg returns the keyval k of a user attribute, or the code raised.
func (we *winEntry) keyvalArg(fn string, k int32) (*winKeyval, int32) {
	winKeyvals.Lock()
	kv, ok := winKeyvals.m[k]
	winKeyvals.Unlock()
	if !ok {
		what := "not a window keyval (freed, or never created)"
		if k >= MPI_WIN_BASE && k <= MPI_WIN_MODEL {
			what = "a predefined attribute, which the program cannot set or delete"
		}
		return nil, we.raise(fn, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("keyval %d is %s", k, what)))
	}
	return kv, 0
}

func implWin_set_attr(win uintptr, keyval int32, val unsafe.Pointer) int32 {
	const fn = "MPI_Win_set_attr"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	kv, rc := we.keyvalArg(fn, keyval)
	if kv == nil {
		return rc
	}
	we.mu.Lock()
	old, had := we.vals[keyval]
	we.mu.Unlock()
	if had {
		if rc := old.delete(we, keyval); rc != 0 {
			return we.raise(fn, classErr(classOfCode(rc), fmt.Sprintf("the delete callback of keyval %d returned %d", keyval, rc)))
		}
	}
	we.mu.Lock()
	we.vals[keyval] = winAttr{val, kv}
	we.mu.Unlock()
	return MPI_SUCCESS
}

func implWin_get_attr(win uintptr, keyval int32, val, flag unsafe.Pointer) int32 {
	const fn = "MPI_Win_get_attr"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if val == nil || flag == nil {
		return we.raise(fn, classErr(MPI_ERR_ARG, "attribute_val or flag is NULL"))
	}
	out := (*unsafe.Pointer)(val)
	a := we.attrs
	switch keyval {
	case MPI_WIN_BASE:
		*out = we.base
	case MPI_WIN_SIZE:
		*out = unsafe.Pointer(&a.size)
	case MPI_WIN_DISP_UNIT:
		*out = unsafe.Pointer(&a.unit)
	case MPI_WIN_CREATE_FLAVOR:
		*out = unsafe.Pointer(&a.flavor)
	case MPI_WIN_MODEL:
		*out = unsafe.Pointer(&a.model)
	default:
		if kv, rc := we.keyvalArg(fn, keyval); kv == nil {
			return rc
		}
		we.mu.Lock()
		v, ok := we.vals[keyval]
		we.mu.Unlock()
		setFlag(flag, ok)
		if ok {
			*out = v.val
		}
		return MPI_SUCCESS
	}
	setFlag(flag, true)
	return MPI_SUCCESS
}

func implWin_delete_attr(win uintptr, keyval int32) int32 {
	const fn = "MPI_Win_delete_attr"
	we, rc := winArg(fn, win)
	if we == nil {
		return rc
	}
	if kv, rc := we.keyvalArg(fn, keyval); kv == nil {
		return rc
	}
	we.mu.Lock()
	v, ok := we.vals[keyval]
	delete(we.vals, keyval)
	we.mu.Unlock()
	if !ok {
		return we.raise(fn, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("the window has no attribute of keyval %d", keyval)))
	}
	if rc := v.delete(we, keyval); rc != 0 {
		return we.raise(fn, classErr(classOfCode(rc), fmt.Sprintf("the delete callback of keyval %d returned %d", keyval, rc)))
	}
	return MPI_SUCCESS
}

// Group handles: the windows and the fault-tolerance calls give out and
// take groups of the group calls' table (groups.go), so they can be passed
// to MPI_Group_* and freed with MPI_Group_free.

// groupOut returns a new handle of g.
func groupOut(g *mpi.Group) uintptr {
	if g == nil || g.Size() == 0 {
		return MPI_GROUP_EMPTY
	}
	return groups.add(g)
}

// groupIn returns the group behind h.
func groupIn(h uintptr) (*mpi.Group, bool) {
	if h == MPI_GROUP_EMPTY {
		return mpi.GroupEmpty, true
	}
	return groups.get(h)
}

//go:build cgo

package capi

import (
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The tools information interface (MPI_T_*) over mpigo's control
// variables (tools.go: the MPIGO_* tunables), performance variables
// (pvar.go) and categories. The MPI_T_ functions return their error codes
// and call no error handler. mpigo has no events and no event sources:
// their counts are 0 and every index or handle of them is invalid.
//
// Control variables of Go type int are MPI_INT; bool is MPI_INT (0 or 1);
// a time.Duration is MPI_DOUBLE, in seconds; a string is MPI_CHAR, count
// mpitStringLen bytes with the NUL; a string with permitted values (an
// enumeration) is MPI_INT, the index of the value, with an MPI_T_enum
// naming them. Performance variables are MPI_UNSIGNED_LONG_LONG.

// Kinds of the tools interface's handles.
const (
	kindTEnum = 24 + iota
	kindTCvar
	kindTSession
	kindTPvar
)

const mpitStringLen = 1024

// The tools interface's null handles and MPI_T_PVAR_ALL_HANDLES, which
// zconst.go leaves out (abi/spec/constants.txt has them).
const (
	tEnumNull    uintptr = 0
	tCvarNull    uintptr = 0
	tSessionNull uintptr = 0
	tPvarNull    uintptr = 0
	tAllHandles  uintptr = 1
)

var mpit struct {
	sync.Mutex
	inits int // MPI_T_init_thread calls not yet finalized
	enums map[int]uintptr
}

var (
	tEnums    = &table[int]{kind: kindTEnum} // the cvar index of each enum
	tCvars    = &table[*mpi.Cvar]{kind: kindTCvar}
	tSessions = &table[*mpi.PvarSession]{kind: kindTSession}
	tPvars    = &table[pvarEntry]{kind: kindTPvar}
)

type pvarEntry struct {
	h       *mpi.PvarHandle
	session uintptr
}

// tReady returns MPI_T_ERR_NOT_INITIALIZED outside MPI_T_init_thread and
// MPI_T_finalize, and 0 inside.
func tReady() int32 {
	mpit.Lock()
	defer mpit.Unlock()
	if mpit.inits == 0 {
		return MPI_T_ERR_NOT_INITIALIZED
	}
	return MPI_SUCCESS
}

// tCode is the MPI_T error code of an error of the Go layer.
func tCode(err error) int32 {
	switch {
	case err == nil:
		return MPI_SUCCESS
	case errors.Is(err, mpi.ErrToolIndex):
		return MPI_T_ERR_INVALID_INDEX
	case errors.Is(err, mpi.ErrToolName):
		return MPI_T_ERR_INVALID_NAME
	case errors.Is(err, mpi.ErrToolHandle):
		return MPI_T_ERR_INVALID_HANDLE
	case errors.Is(err, mpi.ErrCvarSetNotNow):
		return MPI_T_ERR_CVAR_SET_NOT_NOW
	case errors.Is(err, mpi.ErrCvarSetNever):
		return MPI_T_ERR_CVAR_SET_NEVER
	case errors.Is(err, mpi.ErrPvarNoStartStop):
		return MPI_T_ERR_PVAR_NO_STARTSTOP
	case errors.Is(err, mpi.ErrPvarNoWrite):
		return MPI_T_ERR_PVAR_NO_WRITE
	}
	return MPI_T_ERR_INVALID
}

func implT_init_thread(required int32, provided unsafe.Pointer) int32 {
	if provided == nil {
		return MPI_T_ERR_INVALID
	}
	mpit.Lock()
	mpit.inits++
	mpit.Unlock()
	// The variables and their handles are safe for concurrent use.
	*(*int32)(provided) = threadLevel(required)
	return MPI_SUCCESS
}

func implT_finalize() int32 {
	mpit.Lock()
	defer mpit.Unlock()
	if mpit.inits == 0 {
		return MPI_T_ERR_NOT_INITIALIZED
	}
	mpit.inits--
	return MPI_SUCCESS
}

// putName writes s at name as MPI_T's string arguments take it: name_len
// holds the room at name on entry and the length with the NUL on return;
// a NULL name or a zero room writes nothing but the length.
func putName(name, nameLen unsafe.Pointer, s string) {
	if nameLen == nil {
		return
	}
	n := (*int32)(nameLen)
	if name != nil && *n > 0 {
		putString(name, nil, s, int(*n))
		*n = int32(min(len(s)+1, int(*n)))
		return
	}
	*n = int32(len(s) + 1)
}

func putInt(p unsafe.Pointer, v int32) {
	if p != nil {
		*(*int32)(p) = v
	}
}

// verbosities maps mpigo's verbosity levels to the ABI's.
var verbosities = [...]int32{MPI_T_VERBOSITY_USER_BASIC, MPI_T_VERBOSITY_USER_DETAIL, MPI_T_VERBOSITY_USER_ALL,
	MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_VERBOSITY_TUNER_ALL,
	MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL}

func verbosityOf(v mpi.Verbosity) int32 {
	if v >= 0 && int(v) < len(verbosities) {
		return verbosities[v]
	}
	return MPI_T_VERBOSITY_MPIDEV_ALL
}

func bindOf(b mpi.Bind) int32 {
	if b == mpi.BindComm {
		return MPI_T_BIND_MPI_COMM
	}
	return MPI_T_BIND_NO_OBJECT
}

// Control variables.

var durationType = reflect.TypeFor[time.Duration]()

// cvarType is the ABI datatype of a control variable's value and its
// count.
func cvarType(in mpi.CvarInfo) (uintptr, int) {
	switch {
	case in.Values != nil:
		return MPI_INT, 1
	case in.Type == durationType:
		return MPI_DOUBLE, 1
	case in.Type.Kind() == reflect.String:
		return MPI_CHAR, mpitStringLen
	}
	return MPI_INT, 1
}

func cvarInfo(i int32) (mpi.CvarInfo, bool) {
	l := mpi.Cvars()
	if i < 0 || int(i) >= len(l) {
		return mpi.CvarInfo{}, false
	}
	return l[i], true
}

func implT_cvar_get_num(num unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if num == nil {
		return MPI_T_ERR_INVALID
	}
	*(*int32)(num) = int32(len(mpi.Cvars()))
	return MPI_SUCCESS
}

func implT_cvar_get_index(name, index unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if name == nil || index == nil {
		return MPI_T_ERR_INVALID
	}
	i, err := mpi.CvarIndex(cString(name))
	if err != nil {
		return tCode(err)
	}
	*(*int32)(index) = int32(i)
	return MPI_SUCCESS
}

// enumOf returns the MPI_T_enum of control variable i's values, made once.
func enumOf(i int) uintptr {
	mpit.Lock()
	defer mpit.Unlock()
	if mpit.enums == nil {
		mpit.enums = map[int]uintptr{}
	}
	h, ok := mpit.enums[i]
	if !ok {
		h = tEnums.add(i)
		mpit.enums[i] = h
	}
	return h
}

func implT_cvar_get_info(index int32, name, nameLen, verbosity, datatype, enumtype, desc, descLen, bind, scope unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	in, ok := cvarInfo(index)
	if !ok {
		return MPI_T_ERR_INVALID_INDEX
	}
	putName(name, nameLen, in.Name)
	putName(desc, descLen, in.Desc)
	putInt(verbosity, verbosityOf(in.Verbosity))
	putInt(bind, bindOf(in.Bind))
	putInt(scope, int32(in.Scope)+MPI_T_SCOPE_CONSTANT)
	if datatype != nil {
		t, _ := cvarType(in)
		*(*uintptr)(datatype) = t
	}
	if enumtype != nil {
		e := tEnumNull
		if in.Values != nil {
			e = enumOf(int(index))
		}
		*(*uintptr)(enumtype) = e
	}
	return MPI_SUCCESS
}

func implT_enum_get_info(enumtype uintptr, num, name, nameLen unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	i, ok := tEnums.get(enumtype)
	if !ok {
		return MPI_T_ERR_INVALID_HANDLE
	}
	in, _ := cvarInfo(int32(i))
	putInt(num, int32(len(in.Values)))
	putName(name, nameLen, in.Name)
	return MPI_SUCCESS
}

func implT_enum_get_item(enumtype uintptr, index int32, value, name, nameLen unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	i, ok := tEnums.get(enumtype)
	if !ok {
		return MPI_T_ERR_INVALID_HANDLE
	}
	in, _ := cvarInfo(int32(i))
	if index < 0 || int(index) >= len(in.Values) {
		return MPI_T_ERR_INVALID_ITEM
	}
	putInt(value, index)
	s := in.Values[index]
	if s == "" {
		s = "(default)"
	}
	putName(name, nameLen, s)
	return MPI_SUCCESS
}

// Control variables bind to no object: obj_handle is ignored.
func implT_cvar_handle_alloc(index int32, obj, handle, count unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if handle == nil || count == nil {
		return MPI_T_ERR_INVALID
	}
	v, err := mpi.CvarAt(int(index))
	if err != nil {
		return tCode(err)
	}
	_, n := cvarType(v.Info())
	*(*uintptr)(handle) = tCvars.add(v)
	*(*int32)(count) = int32(n)
	return MPI_SUCCESS
}

func implT_cvar_handle_free(handle unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if handle == nil {
		return MPI_T_ERR_INVALID
	}
	h := *(*uintptr)(handle)
	if _, ok := tCvars.get(h); !ok {
		return MPI_T_ERR_INVALID_HANDLE
	}
	tCvars.remove(h)
	*(*uintptr)(handle) = tCvarNull
	return MPI_SUCCESS
}

func implT_cvar_read(handle uintptr, buf unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	v, ok := tCvars.get(handle)
	if !ok {
		return MPI_T_ERR_INVALID_HANDLE
	}
	if buf == nil {
		return MPI_T_ERR_INVALID
	}
	x, err := v.Read()
	if err != nil {
		return tCode(err)
	}
	in := v.Info()
	switch x := x.(type) {
	case string:
		if in.Values != nil {
			*(*int32)(buf) = int32(slices.Index(in.Values, x))
		} else {
			putString(buf, nil, x, mpitStringLen)
		}
	case int:
		*(*int32)(buf) = int32(x)
	case bool:
		setFlag(buf, x)
	case time.Duration:
		*(*float64)(buf) = x.Seconds()
	default:
		return MPI_T_ERR_INVALID
	}
	return MPI_SUCCESS
}

func implT_cvar_write(handle uintptr, buf unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	v, ok := tCvars.get(handle)
	if !ok {
		return MPI_T_ERR_INVALID_HANDLE
	}
	if buf == nil {
		return MPI_T_ERR_INVALID
	}
	in := v.Info()
	var x any
	switch {
	case in.Values != nil:
		i := *(*int32)(buf)
		if i < 0 || int(i) >= len(in.Values) {
			return MPI_T_ERR_INVALID
		}
		x = in.Values[i]
	case in.Type == durationType:
		x = time.Duration(*(*float64)(buf) * float64(time.Second))
	case in.Type.Kind() == reflect.String:
		x = cString(buf)
	case in.Type.Kind() == reflect.Bool:
		x = *(*int32)(buf) != 0
	default:
		x = int(*(*int32)(buf))
	}
	return tCode(v.Write(x))
}

// Performance variables.

func pvarInfo(i int32) (mpi.PvarInfo, bool) {
	l := mpi.Pvars()
	if i < 0 || int(i) >= len(l) {
		return mpi.PvarInfo{}, false
	}
	return l[i], true
}

func implT_pvar_get_num(num unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if num == nil {
		return MPI_T_ERR_INVALID
	}
	*(*int32)(num) = int32(len(mpi.Pvars()))
	return MPI_SUCCESS
}

func implT_pvar_get_index(name unsafe.Pointer, class int32, index unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if name == nil || index == nil {
		return MPI_T_ERR_INVALID
	}
	i, err := mpi.PvarIndex(cString(name))
	if err != nil {
		return tCode(err)
	}
	if in, _ := pvarInfo(int32(i)); int32(in.Class)+MPI_T_PVAR_CLASS_STATE != class {
		return MPI_T_ERR_INVALID_NAME
	}
	*(*int32)(index) = int32(i)
	return MPI_SUCCESS
}

func implT_pvar_get_info(index int32, name, nameLen, verbosity, class, datatype, enumtype, desc, descLen, bind, readonly, continuous, atomic unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	in, ok := pvarInfo(index)
	if !ok {
		return MPI_T_ERR_INVALID_INDEX
	}
	putName(name, nameLen, in.Name)
	putName(desc, descLen, in.Desc)
	putInt(verbosity, verbosityOf(in.Verbosity))
	putInt(class, int32(in.Class)+MPI_T_PVAR_CLASS_STATE)
	putInt(bind, bindOf(in.Bind))
	setFlag(readonly, in.ReadOnly)
	setFlag(continuous, in.Continuous)
	setFlag(atomic, in.Atomic)
	if datatype != nil {
		*(*uintptr)(datatype) = MPI_UNSIGNED_LONG_LONG
	}
	if enumtype != nil {
		*(*uintptr)(enumtype) = tEnumNull
	}
	return MPI_SUCCESS
}

func implT_pvar_session_create(session unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if session == nil {
		return MPI_T_ERR_INVALID
	}
	*(*uintptr)(session) = tSessions.add(mpi.NewPvarSession())
	return MPI_SUCCESS
}

func implT_pvar_session_free(session unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if session == nil {
		return MPI_T_ERR_INVALID
	}
	h := *(*uintptr)(session)
	s, ok := tSessions.get(h)
	if !ok {
		return MPI_T_ERR_INVALID_SESSION
	}
	if err := s.Free(); err != nil {
		return tCode(err)
	}
	tSessions.remove(h)
	// The session's handles go with it.
	tPvars.mu.Lock()
	for i, used := range tPvars.used {
		if used && tPvars.objs[i].session == h {
			tPvars.objs[i], tPvars.used[i] = pvarEntry{}, false
			tPvars.free = append(tPvars.free, i)
		}
	}
	tPvars.mu.Unlock()
	*(*uintptr)(session) = tSessionNull
	return MPI_SUCCESS
}

// commLookup is the communicator behind h, without an error handler.
func commLookup(h uintptr) (*commEntry, bool) {
	if phase.Load() != phaseRunning {
		return nil, false
	}
	switch h {
	case MPI_COMM_WORLD:
		return &world, true
	case MPI_COMM_SELF:
		return &self, true
	}
	return comms.get(h)
}

// A variable bound to a communicator takes it at obj_handle; one bound to
// nothing counts for MPI_COMM_WORLD's process.
func implT_pvar_handle_alloc(session uintptr, index int32, obj, handle, count unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	s, ok := tSessions.get(session)
	if !ok {
		return MPI_T_ERR_INVALID_SESSION
	}
	in, ok := pvarInfo(index)
	if !ok {
		return MPI_T_ERR_INVALID_INDEX
	}
	if handle == nil || count == nil {
		return MPI_T_ERR_INVALID
	}
	ch := MPI_COMM_WORLD
	if in.Bind == mpi.BindComm {
		if obj == nil {
			return MPI_T_ERR_INVALID_HANDLE
		}
		ch = *(*uintptr)(obj)
	}
	ce, ok := commLookup(ch)
	if !ok {
		return MPI_T_ERR_INVALID_HANDLE
	}
	h, err := s.Handle(int(index), ce.c)
	if err != nil {
		return tCode(err)
	}
	*(*uintptr)(handle) = tPvars.add(pvarEntry{h, session})
	*(*int32)(count) = int32(h.Count())
	return MPI_SUCCESS
}

// pvarArg returns the handle h of session, checking that it is of it.
func pvarArg(session, h uintptr) (*mpi.PvarHandle, int32) {
	if rc := tReady(); rc != 0 {
		return nil, rc
	}
	if _, ok := tSessions.get(session); !ok {
		return nil, MPI_T_ERR_INVALID_SESSION
	}
	e, ok := tPvars.get(h)
	if !ok || e.session != session {
		return nil, MPI_T_ERR_INVALID_HANDLE
	}
	return e.h, 0
}

func implT_pvar_handle_free(session uintptr, handle unsafe.Pointer) int32 {
	if handle == nil {
		if rc := tReady(); rc != 0 {
			return rc
		}
		return MPI_T_ERR_INVALID
	}
	h := *(*uintptr)(handle)
	ph, rc := pvarArg(session, h)
	if ph == nil {
		return rc
	}
	if err := ph.Free(); err != nil {
		return tCode(err)
	}
	tPvars.remove(h)
	*(*uintptr)(handle) = tPvarNull
	return MPI_SUCCESS
}

// allOrOne runs one on handle h, or all on the session for
// MPI_T_PVAR_ALL_HANDLES.
func allOrOne(session, h uintptr, one func(*mpi.PvarHandle) error, all func(*mpi.PvarSession) error) int32 {
	if h == tAllHandles {
		if rc := tReady(); rc != 0 {
			return rc
		}
		s, ok := tSessions.get(session)
		if !ok {
			return MPI_T_ERR_INVALID_SESSION
		}
		return tCode(all(s))
	}
	ph, rc := pvarArg(session, h)
	if ph == nil {
		return rc
	}
	return tCode(one(ph))
}

func implT_pvar_start(session, h uintptr) int32 {
	return allOrOne(session, h, (*mpi.PvarHandle).Start, (*mpi.PvarSession).StartAll)
}

func implT_pvar_stop(session, h uintptr) int32 {
	return allOrOne(session, h, (*mpi.PvarHandle).Stop, (*mpi.PvarSession).StopAll)
}

func implT_pvar_reset(session, h uintptr) int32 {
	return allOrOne(session, h, (*mpi.PvarHandle).Reset, (*mpi.PvarSession).ResetAll)
}

func pvarOut(buf unsafe.Pointer, v []uint64) {
	copy(unsafe.Slice((*uint64)(buf), len(v)), v)
}

func implT_pvar_read(session, h uintptr, buf unsafe.Pointer) int32 {
	ph, rc := pvarArg(session, h)
	if ph == nil {
		return rc
	}
	if buf == nil {
		return MPI_T_ERR_INVALID
	}
	v, err := ph.Read()
	if err != nil {
		return tCode(err)
	}
	pvarOut(buf, v)
	return MPI_SUCCESS
}

func implT_pvar_readreset(session, h uintptr, buf unsafe.Pointer) int32 {
	ph, rc := pvarArg(session, h)
	if ph == nil {
		return rc
	}
	if buf == nil {
		return MPI_T_ERR_INVALID
	}
	v, err := ph.ReadReset()
	if err != nil {
		if errors.Is(err, mpi.ErrArg) {
			return MPI_T_ERR_PVAR_NO_ATOMIC
		}
		return tCode(err)
	}
	pvarOut(buf, v)
	return MPI_SUCCESS
}

func implT_pvar_write(session, h uintptr, buf unsafe.Pointer) int32 {
	ph, rc := pvarArg(session, h)
	if ph == nil {
		return rc
	}
	if buf == nil {
		return MPI_T_ERR_INVALID
	}
	v := append([]uint64(nil), unsafe.Slice((*uint64)(buf), ph.Count())...)
	return tCode(ph.Write(v))
}

// Categories.

func category(i int32) (mpi.CategoryInfo, bool) {
	l := mpi.Categories()
	if i < 0 || int(i) >= len(l) {
		return mpi.CategoryInfo{}, false
	}
	return l[i], true
}

func implT_category_get_num(num unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if num == nil {
		return MPI_T_ERR_INVALID
	}
	*(*int32)(num) = int32(len(mpi.Categories()))
	return MPI_SUCCESS
}

func implT_category_get_index(name, index unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if name == nil || index == nil {
		return MPI_T_ERR_INVALID
	}
	i, err := mpi.CategoryIndex(cString(name))
	if err != nil {
		return tCode(err)
	}
	*(*int32)(index) = int32(i)
	return MPI_SUCCESS
}

func implT_category_get_info(index int32, name, nameLen, desc, descLen, ncvars, npvars, ncats unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	c, ok := category(index)
	if !ok {
		return MPI_T_ERR_INVALID_INDEX
	}
	putName(name, nameLen, c.Name)
	putName(desc, descLen, c.Desc)
	putInt(ncvars, int32(len(c.Cvars)))
	putInt(npvars, int32(len(c.Pvars)))
	putInt(ncats, int32(len(c.Categories)))
	return MPI_SUCCESS
}

func categoryList(index, n int32, out unsafe.Pointer, pick func(mpi.CategoryInfo) []int) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	c, ok := category(index)
	if !ok {
		return MPI_T_ERR_INVALID_INDEX
	}
	if n < 0 || (n > 0 && out == nil) {
		return MPI_T_ERR_INVALID
	}
	l := pick(c)
	o := unsafe.Slice((*int32)(out), n)
	for i := range min(int(n), len(l)) {
		o[i] = int32(l[i])
	}
	return MPI_SUCCESS
}

func implT_category_get_cvars(index, n int32, out unsafe.Pointer) int32 {
	return categoryList(index, n, out, func(c mpi.CategoryInfo) []int { return c.Cvars })
}

func implT_category_get_pvars(index, n int32, out unsafe.Pointer) int32 {
	return categoryList(index, n, out, func(c mpi.CategoryInfo) []int { return c.Pvars })
}

func implT_category_get_categories(index, n int32, out unsafe.Pointer) int32 {
	return categoryList(index, n, out, func(c mpi.CategoryInfo) []int { return c.Categories })
}

func implT_category_get_events(index, n int32, out unsafe.Pointer) int32 {
	return categoryList(index, n, out, func(mpi.CategoryInfo) []int { return nil })
}

func implT_category_get_num_events(index int32, num unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if _, ok := category(index); !ok {
		return MPI_T_ERR_INVALID_INDEX
	}
	if num == nil {
		return MPI_T_ERR_INVALID
	}
	*(*int32)(num) = 0
	return MPI_SUCCESS
}

func implT_category_changed(stamp unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if stamp == nil {
		return MPI_T_ERR_INVALID
	}
	*(*int32)(stamp) = int32(mpi.CategoriesChanged())
	return MPI_SUCCESS
}

// Events and their sources: mpigo has none.

func tCount(p unsafe.Pointer) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	if p == nil {
		return MPI_T_ERR_INVALID
	}
	*(*int32)(p) = 0
	return MPI_SUCCESS
}

// tNone is the answer about an index or handle of a kind mpigo has none
// of: code, once the interface is initialized.
func tNone(code int32) int32 {
	if rc := tReady(); rc != 0 {
		return rc
	}
	return code
}

func implT_event_get_num(num unsafe.Pointer) int32  { return tCount(num) }
func implT_source_get_num(num unsafe.Pointer) int32 { return tCount(num) }
func implT_event_get_index(name, index unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_NAME)
}

func implT_event_get_info(index int32, name, nameLen, verbosity, types, displs, n, enumtype, info, desc, descLen, bind unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_INDEX)
}

func implT_event_handle_alloc(index int32, obj unsafe.Pointer, info uintptr, reg unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_INDEX)
}

func implT_event_handle_free(reg uintptr, user, fn unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_handle_get_info(reg uintptr, info unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_handle_set_info(reg, info uintptr) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_register_callback(reg uintptr, safety int32, info uintptr, user, fn unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_callback_get_info(reg uintptr, safety int32, info unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_callback_set_info(reg uintptr, safety int32, info uintptr) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_set_dropped_handler(reg uintptr, fn unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_copy(inst uintptr, buf unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_read(inst uintptr, i int32, buf unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_get_source(inst uintptr, source unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_event_get_timestamp(inst uintptr, stamp unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_HANDLE)
}

func implT_source_get_info(index int32, name, nameLen, desc, descLen, ordering, ticks, maxTicks, info unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_INDEX)
}

func implT_source_get_timestamp(index int32, stamp unsafe.Pointer) int32 {
	return tNone(MPI_T_ERR_INVALID_INDEX)
}

// Every MPI_T_ function is implemented, so the generated exports no longer
// call unsupportedT; it stays for a tools function the table may add.
var _ = unsupportedT

//go:build cgo

package capi

/*
#include <stdint.h>
#include <stdlib.h>
int mpigo_call_comm_copy(void *fn, uintptr_t comm, int keyval, void *extra, uintptr_t in, uintptr_t *out, int *flag);
int mpigo_call_comm_delete(void *fn, uintptr_t comm, int keyval, uintptr_t val, void *extra);
int mpigo_call_type_copy(void *fn, uintptr_t dt, int keyval, void *extra, uintptr_t in, uintptr_t *out, int *flag);
int mpigo_call_type_delete(void *fn, uintptr_t dt, int keyval, uintptr_t val, void *extra);
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// Attributes of communicators and datatypes with C callbacks. A keyval
// of the ABI wraps an mpigo key whose callbacks call the C functions
// through the trampolines of callbacks.c, so mpigo's own machinery runs
// them: copy callbacks on Comm_dup and Type_dup, delete callbacks on
// free, delete and overwrite. Attribute values are C pointers, kept as
// uintptr. The predefined copy functions are the ABI's constants: NULL
// (MPI_*_NULL_COPY_FN, MPI_*_NULL_DELETE_FN) and 1 (MPI_*_DUP_FN).

type commKeyval struct{ k *mpi.Keyval }
type typeKeyval struct{ k *mpi.TypeKeyval }

var (
	commKeyvals = &table[commKeyval]{kind: kindCommKeyval}
	typeKeyvals = &table[typeKeyval]{kind: kindTypeKeyval}
)

// callbackErr is the error of a callback that returned code rc.
func callbackErr(what string, rc C.int) error {
	class, ok := codeClass(int32(rc))
	if !ok || class >= 64 { // unknown, or a class of MPI_Add_error_class
		class = MPI_ERR_OTHER
	}
	return classErr(class, fmt.Sprintf("the %s callback returned error code %d", what, rc))
}

// dupFn is the value of MPI_*_DUP_FN.
const dupFn = 1

func createCommKeyval(fn string, copyFn, deleteFn, keyval, extra unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if keyval == nil {
		return nullArray(fn, "keyval")
	}
	var h uintptr
	var cp mpi.CopyAttrFunc
	switch uintptr(copyFn) {
	case 0:
		cp = mpi.NullCopyFn
	case dupFn:
		cp = mpi.DupFn
	default:
		cp = func(old *mpi.Comm, _ *mpi.Keyval, val any) (any, bool, error) {
			var out C.uintptr_t
			var flag C.int
			rc := C.mpigo_call_comm_copy(copyFn, C.uintptr_t(commHandle(old)), C.int(h), extra, C.uintptr_t(val.(uintptr)), &out, &flag)
			if rc != MPI_SUCCESS {
				return nil, false, callbackErr("copy", rc)
			}
			return uintptr(out), flag != 0, nil
		}
	}
	var del mpi.DeleteAttrFunc
	if deleteFn != nil {
		del = func(c *mpi.Comm, _ *mpi.Keyval, val any) error {
			if rc := C.mpigo_call_comm_delete(deleteFn, C.uintptr_t(commHandle(c)), C.int(h), C.uintptr_t(val.(uintptr)), extra); rc != MPI_SUCCESS {
				return callbackErr("delete", rc)
			}
			return nil
		}
	}
	k, err := mpi.CreateKeyval(cp, del)
	if err != nil {
		return raise(fn, noComm, err)
	}
	h = commKeyvals.add(commKeyval{k})
	*(*int32)(keyval) = int32(h)
	return MPI_SUCCESS
}

func implComm_create_keyval(copyFn, deleteFn, keyval, extra unsafe.Pointer) int32 {
	return createCommKeyval("MPI_Comm_create_keyval", copyFn, deleteFn, keyval, extra)
}

func implKeyval_create(copyFn, deleteFn, keyval, extra unsafe.Pointer) int32 {
	return createCommKeyval("MPI_Keyval_create", copyFn, deleteFn, keyval, extra)
}

func freeCommKeyval(fn string, keyval unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if keyval == nil {
		return nullArray(fn, "keyval")
	}
	h := uintptr(uint32(*(*int32)(keyval)))
	kv, ok := commKeyvals.get(h)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("%d is not a communicator keyval this program created (freed, predefined, or of another kind)", h)))
	}
	if err := mpi.FreeKeyval(kv.k); err != nil {
		return raise(fn, noComm, err)
	}
	// The handle stays taken, never given to a new keyval: a copy of it
	// that the program kept still deletes the attributes set before the
	// free, and a second free of it is an MPI_ERR_KEYVAL, not the free of
	// another keyval. (An entry per freed keyval is the cost.)
	*(*int32)(keyval) = MPI_KEYVAL_INVALID
	return MPI_SUCCESS
}

func implComm_free_keyval(keyval unsafe.Pointer) int32 {
	return freeCommKeyval("MPI_Comm_free_keyval", keyval)
}

func implKeyval_free(keyval unsafe.Pointer) int32 {
	return freeCommKeyval("MPI_Keyval_free", keyval)
}

// predefAttrs holds the values of the predefined attributes in C memory:
// MPI_Comm_get_attr returns pointers to them.
var (
	predefAttrsOnce sync.Once
	predefAttrs     *[8]C.int
	predefAttrsMu   sync.Mutex // guards the MPI_LASTUSEDCODE entry
)

func predefAttr(keyval int32) (unsafe.Pointer, bool) {
	predefAttrsOnce.Do(func() {
		predefAttrs = (*[8]C.int)(C.calloc(8, C.size_t(unsafe.Sizeof(C.int(0)))))
		predefAttrs[0] = C.int(mpi.TagUB)
		predefAttrs[1] = MPI_ANY_SOURCE // MPI_IO: every rank can do I/O
		predefAttrs[2] = MPI_PROC_NULL  // MPI_HOST: no host process
		predefAttrs[3] = 0              // MPI_WTIME_IS_GLOBAL: clocks are not synchronized
		predefAttrs[4] = C.int(worldIntAttr(mpi.AttrUniverseSize, world.c.Size()))
		predefAttrs[5] = C.int(worldIntAttr(mpi.AttrAppNum, 0))
	})
	i := -1
	switch keyval {
	case MPI_TAG_UB:
		i = 0
	case MPI_IO:
		i = 1
	case MPI_HOST:
		i = 2
	case MPI_WTIME_IS_GLOBAL:
		i = 3
	case MPI_UNIVERSE_SIZE:
		i = 4
	case MPI_APPNUM:
		i = 5
	case MPI_LASTUSEDCODE:
		// Changes with every MPI_Add_error_class and _code.
		predefAttrsMu.Lock()
		predefAttrs[6] = C.int(lastUsedCode())
		predefAttrsMu.Unlock()
		i = 6
	}
	if i < 0 {
		return nil, false
	}
	return unsafe.Pointer(&predefAttrs[i]), true
}

// worldIntAttr is the predefined attribute key of the world, or def
// without a world (sessions alone). MPI_UNIVERSE_SIZE is the slots of
// mpigo run's hosts or the job's size; MPI_APPNUM the index of the
// process's command in MPI_Comm_spawn_multiple or mpigo run's `:` list.
func worldIntAttr(key *mpi.Keyval, def int) int {
	if world.c == nil {
		return def
	}
	if v, ok, err := world.c.GetAttr(key); err == nil && ok {
		if n, ok := v.(int); ok {
			return n
		}
	}
	return def
}

func isPredefKeyval(k int32) bool { return k >= MPI_TAG_UB && k <= MPI_LASTUSEDCODE }

// commKey resolves the communicator and keyval of an attribute call.
func commKey(fn string, comm uintptr, keyval int32) (*commEntry, *mpi.Keyval, int32) {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return nil, nil, rc
	}
	kv, ok := commKeyvals.get(uintptr(uint32(keyval)))
	if !ok {
		return ce, nil, raiseOn(fn, ce, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("%d is not a communicator keyval (freed, garbage, or of another kind)", keyval)))
	}
	return ce, kv.k, 0
}

func setCommAttr(fn string, comm uintptr, keyval int32, val unsafe.Pointer) int32 {
	if isPredefKeyval(keyval) {
		ce, rc := getComm(fn, comm)
		if ce == nil {
			return rc
		}
		return raiseOn(fn, ce, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("keyval %d is predefined: its attribute cannot be set", keyval)))
	}
	ce, k, rc := commKey(fn, comm, keyval)
	if k == nil {
		return rc
	}
	return ce.check(fn, ce.c.SetAttr(k, uintptr(val)))
}

func implComm_set_attr(comm uintptr, keyval int32, val unsafe.Pointer) int32 {
	return setCommAttr("MPI_Comm_set_attr", comm, keyval, val)
}

func implAttr_put(comm uintptr, keyval int32, val unsafe.Pointer) int32 {
	return setCommAttr("MPI_Attr_put", comm, keyval, val)
}

func getCommAttr(fn string, comm uintptr, keyval int32, val, flag unsafe.Pointer) int32 {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if val == nil || flag == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "attribute_val or flag is NULL"))
	}
	if p, ok := predefAttr(keyval); ok {
		*(*unsafe.Pointer)(val) = p
		setFlag(flag, true)
		return MPI_SUCCESS
	}
	ce, k, rc := commKey(fn, comm, keyval)
	if k == nil {
		return rc
	}
	v, ok, err := ce.c.GetAttr(k)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	setFlag(flag, ok)
	if ok {
		*(*uintptr)(val) = v.(uintptr)
	}
	return MPI_SUCCESS
}

func implComm_get_attr(comm uintptr, keyval int32, val, flag unsafe.Pointer) int32 {
	return getCommAttr("MPI_Comm_get_attr", comm, keyval, val, flag)
}

func implAttr_get(comm uintptr, keyval int32, val, flag unsafe.Pointer) int32 {
	return getCommAttr("MPI_Attr_get", comm, keyval, val, flag)
}

func deleteCommAttr(fn string, comm uintptr, keyval int32) int32 {
	if isPredefKeyval(keyval) {
		return raise(fn, comm, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("keyval %d is predefined: its attribute cannot be deleted", keyval)))
	}
	ce, k, rc := commKey(fn, comm, keyval)
	if k == nil {
		return rc
	}
	return ce.check(fn, ce.c.DeleteAttr(k))
}

func implComm_delete_attr(comm uintptr, keyval int32) int32 {
	return deleteCommAttr("MPI_Comm_delete_attr", comm, keyval)
}

func implAttr_delete(comm uintptr, keyval int32) int32 {
	return deleteCommAttr("MPI_Attr_delete", comm, keyval)
}

// Datatype attributes.

func implType_create_keyval(copyFn, deleteFn, keyval, extra unsafe.Pointer) int32 {
	const fn = "MPI_Type_create_keyval"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if keyval == nil {
		return nullArray(fn, "type_keyval")
	}
	var h uintptr
	var cp mpi.TypeCopyAttrFunc
	switch uintptr(copyFn) {
	case 0:
		cp = func(*mpi.Datatype, *mpi.TypeKeyval, any) (any, bool, error) { return nil, false, nil }
	case dupFn:
		cp = func(_ *mpi.Datatype, _ *mpi.TypeKeyval, v any) (any, bool, error) { return v, true, nil }
	default:
		cp = func(old *mpi.Datatype, _ *mpi.TypeKeyval, val any) (any, bool, error) {
			var out C.uintptr_t
			var flag C.int
			rc := C.mpigo_call_type_copy(copyFn, C.uintptr_t(typeHandle(old)), C.int(h), extra, C.uintptr_t(val.(uintptr)), &out, &flag)
			if rc != MPI_SUCCESS {
				return nil, false, callbackErr("copy", rc)
			}
			return uintptr(out), flag != 0, nil
		}
	}
	var del mpi.TypeDeleteAttrFunc
	if deleteFn != nil {
		del = func(d *mpi.Datatype, _ *mpi.TypeKeyval, val any) error {
			if rc := C.mpigo_call_type_delete(deleteFn, C.uintptr_t(typeHandle(d)), C.int(h), C.uintptr_t(val.(uintptr)), extra); rc != MPI_SUCCESS {
				return callbackErr("delete", rc)
			}
			return nil
		}
	}
	k, err := mpi.CreateTypeKeyval(cp, del)
	if err != nil {
		return raise(fn, noComm, err)
	}
	h = typeKeyvals.add(typeKeyval{k})
	*(*int32)(keyval) = int32(h)
	return MPI_SUCCESS
}

func implType_free_keyval(keyval unsafe.Pointer) int32 {
	const fn = "MPI_Type_free_keyval"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if keyval == nil {
		return nullArray(fn, "type_keyval")
	}
	h := uintptr(uint32(*(*int32)(keyval)))
	kv, ok := typeKeyvals.get(h)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("%d is not a datatype keyval (freed, garbage, or of another kind)", h)))
	}
	if err := mpi.FreeTypeKeyval(kv.k); err != nil {
		return raise(fn, noComm, err)
	}
	// The handle stays taken, as in freeCommKeyval.
	*(*int32)(keyval) = MPI_KEYVAL_INVALID
	return MPI_SUCCESS
}

func typeKey(fn string, datatype uintptr, keyval int32) (*mpi.Datatype, *mpi.TypeKeyval, int32) {
	t, rc := queryType(fn, datatype)
	if t == nil {
		return nil, nil, rc
	}
	kv, ok := typeKeyvals.get(uintptr(uint32(keyval)))
	if !ok {
		return nil, nil, raise(fn, noComm, classErr(MPI_ERR_KEYVAL, fmt.Sprintf("%d is not a datatype keyval (freed, garbage, or of another kind)", keyval)))
	}
	return t, kv.k, 0
}

func implType_set_attr(datatype uintptr, keyval int32, val unsafe.Pointer) int32 {
	const fn = "MPI_Type_set_attr"
	t, k, rc := typeKey(fn, datatype, keyval)
	if k == nil {
		return rc
	}
	if err := t.SetAttr(k, uintptr(val)); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implType_get_attr(datatype uintptr, keyval int32, val, flag unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_attr"
	t, k, rc := typeKey(fn, datatype, keyval)
	if k == nil {
		return rc
	}
	if val == nil || flag == nil {
		return nullArray(fn, "attribute_val or flag")
	}
	v, ok, err := t.GetAttr(k)
	if err != nil {
		return raise(fn, noComm, err)
	}
	setFlag(flag, ok)
	if ok {
		*(*uintptr)(val) = v.(uintptr)
	}
	return MPI_SUCCESS
}

func implType_delete_attr(datatype uintptr, keyval int32) int32 {
	const fn = "MPI_Type_delete_attr"
	t, k, rc := typeKey(fn, datatype, keyval)
	if k == nil {
		return rc
	}
	if err := t.DeleteAttr(k); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

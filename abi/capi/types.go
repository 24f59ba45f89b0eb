//go:build cgo

package capi

/*
#include <stddef.h>
#include <wchar.h>
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The predefined datatypes: each ABI handle gets a duplicate of the mpigo
// type of the same size and kind (C int and long by their size here), so
// that every handle maps back to itself (a user operation receives the
// handle the caller passed) and mpigo's messages name the C type.
// The C pair types are setupPairTypes', the long double types
// longDoubleTypes'.
var (
	predefTypes   [0x300]*mpi.Datatype
	typeHandles   sync.Map // *mpi.Datatype -> uintptr
	userTypes     = &table[*mpi.Datatype]{kind: kindType}
	predefTypesMu sync.Once
	// predefBase maps each predefined handle's datatype to the mpigo
	// datatype it duplicates (predefined in win.go); written once, by
	// setupTypes.
	predefBase = map[*mpi.Datatype]*mpi.Datatype{}
)

func intOfSize(n uintptr, signed bool) *mpi.Datatype {
	switch {
	case n == 1 && signed:
		return mpi.Int8
	case n == 1:
		return mpi.Uint8
	case n == 2 && signed:
		return mpi.Int16
	case n == 2:
		return mpi.Uint16
	case n == 4 && signed:
		return mpi.Int32
	case n == 4:
		return mpi.Uint32
	case n == 8 && signed:
		return mpi.Int64
	}
	return mpi.Uint64
}

// longOfSize is C's long or unsigned long: mpigo's CLong and CUlong where
// it takes 8 bytes (64-bit integers everywhere but in external32, where
// MPI's table gives them 4), the integer of its size otherwise.
func longOfSize(n uintptr, signed bool) *mpi.Datatype {
	switch {
	case n == 8 && signed:
		return mpi.CLong
	case n == 8:
		return mpi.CUlong
	}
	return intOfSize(n, signed)
}

func setupTypes() {
	var (
		sInt   = unsafe.Sizeof(C.int(0))
		sLong  = unsafe.Sizeof(C.long(0))
		sShort = unsafe.Sizeof(C.short(0))
		sLL    = unsafe.Sizeof(C.longlong(0))
		sWchar = unsafe.Sizeof(C.wchar_t(0))
		sAint  = unsafe.Sizeof(uintptr(0))
	)
	registerPredef([]predef{
		{MPI_AINT, "MPI_AINT", intOfSize(sAint, true)},
		{MPI_COUNT, "MPI_COUNT", mpi.Int64},
		{MPI_OFFSET, "MPI_OFFSET", mpi.Int64},
		{MPI_PACKED, "MPI_PACKED", mpi.Packed},
		{MPI_SHORT, "MPI_SHORT", intOfSize(sShort, true)},
		{MPI_INT, "MPI_INT", intOfSize(sInt, true)},
		{MPI_LONG, "MPI_LONG", longOfSize(sLong, true)},
		{MPI_LONG_LONG, "MPI_LONG_LONG", intOfSize(sLL, true)},
		{MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", intOfSize(sShort, false)},
		{MPI_UNSIGNED, "MPI_UNSIGNED", intOfSize(sInt, false)},
		{MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", longOfSize(sLong, false)},
		{MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", intOfSize(sLL, false)},
		{MPI_FLOAT, "MPI_FLOAT", mpi.Float32},
		{MPI_DOUBLE, "MPI_DOUBLE", mpi.Float64},
		{MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", mpi.Complex64},
		{MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", mpi.Complex128},
		{MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", mpi.Complex64},
		{MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", mpi.Complex128},
		{MPI_C_BOOL, "MPI_C_BOOL", mpi.Bool},
		{MPI_CXX_BOOL, "MPI_CXX_BOOL", mpi.Bool},
		{MPI_WCHAR, "MPI_WCHAR", intOfSize(sWchar, true)},
		{MPI_INT8_T, "MPI_INT8_T", mpi.Int8},
		{MPI_UINT8_T, "MPI_UINT8_T", mpi.Uint8},
		{MPI_CHAR, "MPI_CHAR", mpi.Int8},
		{MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", mpi.Int8},
		{MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", mpi.Uint8},
		{MPI_BYTE, "MPI_BYTE", mpi.Byte},
		{MPI_INT16_T, "MPI_INT16_T", mpi.Int16},
		{MPI_UINT16_T, "MPI_UINT16_T", mpi.Uint16},
		{MPI_INT32_T, "MPI_INT32_T", mpi.Int32},
		{MPI_UINT32_T, "MPI_UINT32_T", mpi.Uint32},
		{MPI_INT64_T, "MPI_INT64_T", mpi.Int64},
		{MPI_UINT64_T, "MPI_UINT64_T", mpi.Uint64},
		// Fortran's types of a fixed size (those of the default kinds,
		// MPI_INTEGER and the like, take their sizes from the Fortran
		// compiler through MPI_Abi_set_fortran_info: fortrantypes.go).
		{MPI_INTEGER1, "MPI_INTEGER1", mpi.Int8},
		{MPI_INTEGER2, "MPI_INTEGER2", mpi.Int16},
		{MPI_INTEGER4, "MPI_INTEGER4", mpi.Int32},
		{MPI_INTEGER8, "MPI_INTEGER8", mpi.Int64},
		{MPI_LOGICAL1, "MPI_LOGICAL1", mpi.Int8},
		{MPI_LOGICAL2, "MPI_LOGICAL2", mpi.Int16},
		{MPI_LOGICAL4, "MPI_LOGICAL4", mpi.Int32},
		{MPI_LOGICAL8, "MPI_LOGICAL8", mpi.Int64},
		{MPI_REAL4, "MPI_REAL4", mpi.Float32},
		{MPI_REAL8, "MPI_REAL8", mpi.Float64},
		{MPI_COMPLEX8, "MPI_COMPLEX8", mpi.Complex64},
		{MPI_COMPLEX16, "MPI_COMPLEX16", mpi.Complex128},
		// Fortran's optional types Go has no numbers of: moved as data
		// (byte-swapped in external32), their arithmetic in C where the
		// C compiler has it (longdouble.c).
		{MPI_INTEGER16, "MPI_INTEGER16", mpi.Int128},
		// LOGICAL*16 is the 16-byte integer, as LOGICAL1..8 are theirs:
		// MPI_LAND, MPI_LOR and MPI_LXOR take any non-zero value for
		// true and give 1 or 0 (in C, with INTEGER16's arithmetic).
		{MPI_LOGICAL16, "MPI_LOGICAL16", mpi.Int128},
		{MPI_REAL2, "MPI_REAL2", mpi.Float16},
		{MPI_REAL16, "MPI_REAL16", mpi.Float128},
		{MPI_COMPLEX4, "MPI_COMPLEX4", mpi.Complex32},
		{MPI_COMPLEX32, "MPI_COMPLEX32", mpi.Complex256},
	}, false)
	setupPairTypes()
	if ld, cplx, pair := longDoubleTypes(); ld != nil {
		registerPredef([]predef{
			{MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", ld},
			{MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", cplx},
			{MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", cplx},
		}, false)
		registerPredef([]predef{{MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", pair}}, true)
	}
}

// predef is a predefined datatype of the ABI: its handle, its name and
// the mpigo datatype it stands for.
type predef struct {
	h    uintptr
	name string
	t    *mpi.Datatype
}

// registerPredef makes each type of ps the datatype of its handle: a
// named duplicate of it (MPI_BYTE and MPI_PACKED keep their identity:
// mpigo treats them as untyped bytes that match anything), known by
// typeHandle; pair marks them as the value-index pairs of MINLOC and
// MAXLOC.
func registerPredef(ps []predef, pair bool) {
	for _, p := range ps {
		t := p.t
		if t != mpi.Byte && t != mpi.Packed {
			d, err := t.Dup()
			if err != nil {
				panic(err) // a predefined type always duplicates
			}
			d.SetName(p.name)
			t = d
		}
		predefTypes[p.h] = t
		predefBase[t] = p.t
		typeHandles.Store(t, p.h)
		if p.t != t {
			if _, ok := basicHandles.Load(p.t); !ok || canonicalHandle[p.h] {
				basicHandles.Store(p.t, p.h)
			}
		}
		if pair {
			pairTypes[t] = true
		}
	}
}

// typeArg returns the datatype behind h, or nil and the error code raised
// on ce.
func typeArg(fn string, ce *commEntry, h uintptr) (*mpi.Datatype, int32) {
	predefTypesMu.Do(setupTypes)
	if h < uintptr(len(predefTypes)) {
		if t := predefTypes[h]; t != nil {
			return t, 0
		}
		if h == MPI_DATATYPE_NULL {
			return nil, raiseOn(fn, ce, classErr(MPI_ERR_TYPE, "MPI_DATATYPE_NULL is not a datatype"))
		}
		if t, why := fortranType(h); t != nil {
			return t, 0
		} else if why != "" {
			return nil, raiseOn(fn, ce, classErr(MPI_ERR_TYPE, why))
		}
		if h >= MPI_DATATYPE_NULL {
			return nil, raiseOn(fn, ce, classErr(MPI_ERR_TYPE, fmt.Sprintf("the predefined datatype %#x is not supported by mpigo's ABI yet", h)))
		}
	}
	if t, ok := userTypes.get(h); ok {
		return t, 0
	}
	return nil, raiseOn(fn, ce, classErr(MPI_ERR_TYPE, fmt.Sprintf("%#x is not a datatype handle (freed, garbage, or of another kind)", h)))
}

// typeHandle is the handle of t, for user operations and callbacks: a
// user's datatype's or a predefined one's own, or for one of mpigo's
// basic datatypes (a data representation's extent function is asked
// about each basic kind: mpi.Int32, ...) the C type of that kind
// (basicHandles).
func typeHandle(t *mpi.Datatype) uintptr {
	if h, ok := typeHandles.Load(t); ok {
		return h.(uintptr)
	}
	if h, ok := basicHandles.Load(t); ok {
		return h.(uintptr)
	}
	return MPI_DATATYPE_NULL
}

// basicHandles maps each mpigo datatype that predefined handles
// duplicate (mpi.Int32 for MPI_INT, MPI_INT32_T, MPI_INTEGER4, ...) to
// one handle of them: the C type of canonicalHandle where there is one,
// else the first registered.
var basicHandles sync.Map // *mpi.Datatype -> uintptr

// canonicalHandle marks the handles that stand for their mpigo datatype
// when a callback is asked about a kind rather than a handle: C's own
// types first (int, not int32_t; long long, not MPI_AINT or MPI_COUNT).
var canonicalHandle = map[uintptr]bool{
	MPI_SIGNED_CHAR: true, MPI_UNSIGNED_CHAR: true, MPI_SHORT: true, MPI_UNSIGNED_SHORT: true,
	MPI_INT: true, MPI_UNSIGNED: true, MPI_LONG: true, MPI_UNSIGNED_LONG: true,
	MPI_LONG_LONG: true, MPI_UNSIGNED_LONG_LONG: true, MPI_FLOAT: true, MPI_DOUBLE: true,
	MPI_C_FLOAT_COMPLEX: true, MPI_C_DOUBLE_COMPLEX: true, MPI_C_BOOL: true,
	MPI_LONG_DOUBLE: true, MPI_C_LONG_DOUBLE_COMPLEX: true,
}

func newType(fn string, t *mpi.Datatype, err error, out unsafe.Pointer) int32 {
	if err != nil {
		return raise(fn, noComm, err)
	}
	h := userTypes.add(t)
	typeHandles.Store(t, h)
	if strings.HasSuffix(fn, "_c") {
		// Made by a large-count constructor: its counts are large
		// counts in MPI_Type_get_envelope_c and _contents_c.
		largeTypes.Store(t, struct{}{})
	}
	*(*uintptr)(out) = h
	return MPI_SUCCESS
}

// typeCtor checks what every type constructor fn checks first: MPI is
// running, oldtype is a datatype and newtype a place for the result. It
// returns the old datatype, or nil and the error code to return.
func typeCtor(fn string, oldtype uintptr, newtype unsafe.Pointer) (*mpi.Datatype, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	old, rc := typeArg(fn, nil, oldtype)
	if old == nil {
		return nil, rc
	}
	if newtype == nil {
		return nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "newtype is NULL"))
	}
	return old, MPI_SUCCESS
}

func implType_contiguous(count int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	const fn = "MPI_Type_contiguous"
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	if count < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", count)))
	}
	t, err := mpi.NewContiguous(int(count), old)
	return newType(fn, t, err, newtype)
}

func implType_vector(count, blocklength, stride int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	const fn = "MPI_Type_vector"
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	if count < 0 || blocklength < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d or blocklength %d is negative", count, blocklength)))
	}
	t, err := mpi.NewVector(int(count), int(blocklength), int(stride), old)
	return newType(fn, t, err, newtype)
}

func userTypeArg(fn string, p unsafe.Pointer) (*mpi.Datatype, uintptr, int32) {
	if rc := running(fn); rc != 0 {
		return nil, 0, rc
	}
	if p == nil {
		return nil, 0, raise(fn, noComm, classErr(MPI_ERR_ARG, "datatype is NULL"))
	}
	h := *(*uintptr)(p)
	t, rc := typeArg(fn, nil, h)
	return t, h, rc
}

func implType_commit(p unsafe.Pointer) int32 {
	const fn = "MPI_Type_commit"
	t, _, rc := userTypeArg(fn, p)
	if t == nil {
		return rc
	}
	if err := t.Commit(); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implType_free(p unsafe.Pointer) int32 {
	const fn = "MPI_Type_free"
	t, h, rc := userTypeArg(fn, p)
	if t == nil {
		return rc
	}
	if h < uintptr(len(predefTypes)) {
		return raise(fn, noComm, classErr(MPI_ERR_TYPE, "a predefined datatype cannot be freed"))
	}
	if dropHandle(t, h) {
		// Another handle still names the datatype (MPI_Type_get_contents).
		userTypes.remove(h)
		*(*uintptr)(p) = MPI_DATATYPE_NULL
		return MPI_SUCCESS
	}
	if err := t.Free(); err != nil {
		return raise(fn, noComm, err)
	}
	userTypes.remove(h)
	typeHandles.Delete(t)
	largeTypes.Delete(t)
	userNamed.Delete(t)
	*(*uintptr)(p) = MPI_DATATYPE_NULL
	return MPI_SUCCESS
}

// typeAliases holds, for a datatype that more than one handle names,
// every handle that names it. MPI_Type_get_contents returns a new handle
// for each derived datatype a datatype was built from (MPI-4.1 5.1.13:
// the caller frees it), and freeing that handle must not free the
// datatype under the other handles (mpi4py's dtlib frees what it
// decoded; the datatype it came from then failed as freed).
var (
	aliasMu     sync.Mutex
	typeAliases = map[*mpi.Datatype][]uintptr{}
)

// aliasHandle returns a new handle for the user datatype d, which handle
// h names already.
func aliasHandle(d *mpi.Datatype, h uintptr) uintptr {
	aliasMu.Lock()
	defer aliasMu.Unlock()
	hs := typeAliases[d]
	if len(hs) == 0 {
		hs = []uintptr{h}
	}
	n := userTypes.add(d)
	typeAliases[d] = append(hs, n)
	return n
}

// dropHandle forgets the handle h of d, and reports whether another
// handle still names d (then d must not be freed).
func dropHandle(d *mpi.Datatype, h uintptr) bool {
	aliasMu.Lock()
	defer aliasMu.Unlock()
	hs, ok := typeAliases[d]
	if !ok {
		return false
	}
	for i, x := range hs {
		if x == h {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(typeAliases, d)
		return false
	}
	if typeHandle(d) == h {
		typeHandles.Store(d, hs[0])
	}
	if len(hs) == 1 {
		delete(typeAliases, d)
	} else {
		typeAliases[d] = hs
	}
	return true
}

func implType_size(datatype uintptr, size unsafe.Pointer) int32 {
	const fn = "MPI_Type_size"
	if rc := running(fn); rc != 0 {
		return rc
	}
	t, rc := typeArg(fn, nil, datatype)
	if t == nil {
		return rc
	}
	if size == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "size is NULL"))
	}
	n := t.Size()
	if n > 1<<31-1 {
		*(*int32)(size) = MPI_UNDEFINED
		return MPI_SUCCESS
	}
	*(*int32)(size) = int32(n)
	return MPI_SUCCESS
}

// bufArg is the buffer of count elements of t at p as a slice: from p to
// the end of the last element. MPI_IN_PLACE is mpi.InPlace; NULL
// (MPI_BOTTOM) is allowed only for an empty buffer, as absolute addresses
// are not supported yet.
func bufArg(fn string, ce *commEntry, p unsafe.Pointer, count int, t *mpi.Datatype) ([]byte, int32) {
	if uintptr(p) == 1 {
		return mpi.InPlace, 0
	}
	if count <= 0 || t.Size() == 0 {
		if p == nil {
			return nil, 0
		}
		return unsafe.Slice((*byte)(p), 0), 0
	}
	if p == nil {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_BUFFER, "buffer is NULL (MPI_BOTTOM with absolute addresses is not supported yet)"))
	}
	_, extent := t.Extent()
	tlb, textent := t.TrueExtent()
	if tlb < 0 {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_TYPE, fmt.Sprintf("datatype %s has a negative lower bound, which the ABI does not support yet", t.Name())))
	}
	n := (count-1)*extent + tlb + textent
	if textent != extent && pairTypes[t] { // C arrays of pairs hold their padding, and mpigo moves whole pairs
		n = count * extent
	}
	return unsafe.Slice((*byte)(p), n), 0
}

//go:build cgo

package capi

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/mpigo/mpi"
)

// Info objects: the calls MPI_Abi_get_info's caller needs. MPI-4 allows
// them before MPI_Init.

var infos = &table[*mpi.Info]{kind: kindInfo}

func infoArg(fn string, h uintptr) (*mpi.Info, int32) {
	if h == MPI_INFO_ENV {
		return mpi.NewInfo(), 0
	}
	if in, ok := infos.get(h); ok {
		return in, 0
	}
	return nil, raise(fn, noComm, classErr(MPI_ERR_INFO, fmt.Sprintf("%#x is not an info handle", h)))
}

func cString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

func implInfo_create(info unsafe.Pointer) int32 {
	if info == nil {
		return raise("MPI_Info_create", noComm, classErr(MPI_ERR_ARG, "info is NULL"))
	}
	*(*uintptr)(info) = infos.add(mpi.NewInfo())
	return MPI_SUCCESS
}

func implInfo_free(info unsafe.Pointer) int32 {
	const fn = "MPI_Info_free"
	if info == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "info is NULL"))
	}
	h := *(*uintptr)(info)
	if _, ok := infos.get(h); !ok {
		return raise(fn, noComm, classErr(MPI_ERR_INFO, fmt.Sprintf("%#x is not a user info handle", h)))
	}
	infos.remove(h)
	*(*uintptr)(info) = MPI_INFO_NULL
	return MPI_SUCCESS
}

func implInfo_set(info uintptr, key, value unsafe.Pointer) int32 {
	const fn = "MPI_Info_set"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	k, v := cString(key), cString(value)
	if len(k) > MPI_MAX_INFO_KEY-1 || k == "" {
		return raise(fn, noComm, classErr(MPI_ERR_INFO_KEY, fmt.Sprintf("bad key %q", k)))
	}
	if len(v) > MPI_MAX_INFO_VAL-1 {
		return raise(fn, noComm, classErr(MPI_ERR_INFO_VALUE, "value too long"))
	}
	if err := in.Set(k, v); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implInfo_get_nkeys(info uintptr, nkeys unsafe.Pointer) int32 {
	const fn = "MPI_Info_get_nkeys"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	if nkeys == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "nkeys is NULL"))
	}
	*(*int32)(nkeys) = int32(len(in.Keys()))
	return MPI_SUCCESS
}

func implInfo_get_nthkey(info uintptr, n int32, key unsafe.Pointer) int32 {
	const fn = "MPI_Info_get_nthkey"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	keys := in.Keys()
	if n < 0 || int(n) >= len(keys) || key == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("no key %d (the info has %d)", n, len(keys))))
	}
	putString(key, nil, keys[n], MPI_MAX_INFO_KEY)
	return MPI_SUCCESS
}

// implInfo_get_string follows MPI-4: buflen in, the value's length with
// its NUL out; a buflen of 0 only asks for that length.
func implInfo_get_string(info uintptr, key, buflen, value, flag unsafe.Pointer) int32 {
	const fn = "MPI_Info_get_string"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	if buflen == nil || flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "buflen or flag is NULL"))
	}
	v, ok := in.Get(cString(key))
	setFlag(flag, ok)
	if !ok {
		return MPI_SUCCESS
	}
	n := *(*int32)(buflen)
	if n > 0 && value != nil {
		putString(value, nil, v, int(n))
	}
	*(*int32)(buflen) = int32(len(v) + 1)
	return MPI_SUCCESS
}

// implAbi_get_info answers the sizes of the ABI's integer types on this
// platform (MPI-5.0's mpi_aint_size, mpi_count_size, mpi_offset_size).
func implAbi_get_info(info unsafe.Pointer) int32 {
	if info == nil {
		return raise("MPI_Abi_get_info", noComm, classErr(MPI_ERR_ARG, "info is NULL"))
	}
	in := mpi.NewInfo()
	for k, v := range map[string]int{
		"mpi_aint_size":   int(unsafe.Sizeof(uintptr(0))),
		"mpi_count_size":  8,
		"mpi_offset_size": 8,
	} {
		if err := in.Set(k, strconv.Itoa(v)); err != nil {
			return raise("MPI_Abi_get_info", noComm, err)
		}
	}
	*(*uintptr)(info) = infos.add(in)
	return MPI_SUCCESS
}

func implInfo_delete(info uintptr, key unsafe.Pointer) int32 {
	const fn = "MPI_Info_delete"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	if key == nil {
		return raise(fn, noComm, classErr(MPI_ERR_INFO_KEY, "key is NULL"))
	}
	k := cString(key)
	if len(k) > MPI_MAX_INFO_KEY-1 || k == "" {
		return raise(fn, noComm, classErr(MPI_ERR_INFO_KEY, fmt.Sprintf("bad key %q", k)))
	}
	if _, ok := in.Get(k); !ok {
		return raise(fn, noComm, classErr(MPI_ERR_INFO_NOKEY, fmt.Sprintf("no key %q", k)))
	}
	if err := in.Delete(k); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implInfo_dup(info uintptr, newinfo unsafe.Pointer) int32 {
	const fn = "MPI_Info_dup"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	if newinfo == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "newinfo is NULL"))
	}
	*(*uintptr)(newinfo) = infos.add(in.Dup())
	return MPI_SUCCESS
}

// infoKey reads the key of a query; a key too long is MPI_ERR_INFO_KEY.
func infoKey(fn string, key unsafe.Pointer) (string, int32) {
	if key == nil {
		return "", raise(fn, noComm, classErr(MPI_ERR_INFO_KEY, "key is NULL"))
	}
	k := cString(key)
	if len(k) > MPI_MAX_INFO_KEY-1 || k == "" {
		return "", raise(fn, noComm, classErr(MPI_ERR_INFO_KEY, fmt.Sprintf("bad key %q", k)))
	}
	return k, 0
}

// implInfo_get is MPI-3's deprecated form: valuelen is the room for the
// value without its NUL; a longer value is cut.
func implInfo_get(info uintptr, key unsafe.Pointer, valuelen int32, value, flag unsafe.Pointer) int32 {
	const fn = "MPI_Info_get"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	k, rc := infoKey(fn, key)
	if rc != 0 {
		return rc
	}
	if flag == nil || valuelen < 0 || (valuelen > 0 && value == nil) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "flag or value is NULL, or valuelen is negative"))
	}
	v, ok := in.Get(k)
	setFlag(flag, ok)
	if ok && value != nil {
		putString(value, nil, v, int(valuelen)+1)
	}
	return MPI_SUCCESS
}

func implInfo_get_valuelen(info uintptr, key, valuelen, flag unsafe.Pointer) int32 {
	const fn = "MPI_Info_get_valuelen"
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	k, rc := infoKey(fn, key)
	if rc != 0 {
		return rc
	}
	if flag == nil || valuelen == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "valuelen or flag is NULL"))
	}
	v, ok := in.Get(k)
	setFlag(flag, ok)
	if ok {
		*(*int32)(valuelen) = int32(len(v))
	}
	return MPI_SUCCESS
}

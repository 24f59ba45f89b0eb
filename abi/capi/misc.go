//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

func implWtime() float64 { return mpi.Wtime() }
func implWtick() float64 { return mpi.Wtick() }

func implAint_add(base, disp int) int { return base + disp }
func implAint_diff(a1, a2 int) int    { return a1 - a2 }
func implPcontrol(level int32) int32  { return MPI_SUCCESS } // profiling control: nothing to do
func implAbi_get_version(major, minor unsafe.Pointer) int32 {
	if major == nil || minor == nil {
		return newCode(MPI_ERR_ARG, "MPI_Abi_get_version: abi_major or abi_minor is NULL")
	}
	*(*int32)(major), *(*int32)(minor) = MPI_ABI_VERSION, MPI_ABI_SUBVERSION
	return MPI_SUCCESS
}

func implGet_version(version, subversion unsafe.Pointer) int32 {
	if version == nil || subversion == nil {
		return newCode(MPI_ERR_ARG, "MPI_Get_version: version or subversion is NULL")
	}
	*(*int32)(version), *(*int32)(subversion) = MPI_VERSION, MPI_SUBVERSION
	return MPI_SUCCESS
}

// putString writes s, cut to max-1 bytes, and a NUL at p, and its length
// at resultlen.
func putString(p, resultlen unsafe.Pointer, s string, max int) {
	if len(s) > max-1 {
		s = s[:max-1]
	}
	b := unsafe.Slice((*byte)(p), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	if resultlen != nil {
		*(*int32)(resultlen) = int32(len(s))
	}
}

func implGet_library_version(version, resultlen unsafe.Pointer) int32 {
	if version == nil || resultlen == nil {
		return newCode(MPI_ERR_ARG, "MPI_Get_library_version: version or resultlen is NULL")
	}
	putString(version, resultlen, fmt.Sprintf("mpigo %s (MPI %d.%d, standard ABI %d.%d, libmpi_abi.so.1)",
		mpi.Version, MPI_VERSION, MPI_SUBVERSION, MPI_ABI_VERSION, MPI_ABI_SUBVERSION), MPI_MAX_LIBRARY_VERSION_STRING)
	return MPI_SUCCESS
}

func implGet_processor_name(name, resultlen unsafe.Pointer) int32 {
	const fn = "MPI_Get_processor_name"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if name == nil || resultlen == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "name or resultlen is NULL"))
	}
	s, err := mpi.GetProcessorName()
	if err != nil {
		return raise(fn, noComm, err)
	}
	putString(name, resultlen, s, MPI_MAX_PROCESSOR_NAME)
	return MPI_SUCCESS
}

// MPI_Error_class and MPI_Error_string may be called at any time.

func implError_class(code int32, class unsafe.Pointer) int32 {
	c, ok := codeClass(code)
	if !ok {
		return raise("MPI_Error_class", noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("%d is not an error code", code)))
	}
	if class == nil {
		return raise("MPI_Error_class", noComm, classErr(MPI_ERR_ARG, "errorclass is NULL"))
	}
	*(*int32)(class) = c
	return MPI_SUCCESS
}

func implError_string(code int32, str, resultlen unsafe.Pointer) int32 {
	s, ok := codeString(code)
	if !ok {
		return raise("MPI_Error_string", noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("%d is not an error code", code)))
	}
	if str == nil || resultlen == nil {
		return raise("MPI_Error_string", noComm, classErr(MPI_ERR_ARG, "string or resultlen is NULL"))
	}
	putString(str, resultlen, s, MPI_MAX_ERROR_STRING)
	return MPI_SUCCESS
}

// Handle conversions (MPI_*_toint, MPI_*_fromint and the Fortran
// MPI_*_c2f, MPI_*_f2c): a handle's integer is its value, which for
// every handle of this library fits in an int (handles.go).

func toint(h uintptr) int32   { return int32(h) }
func fromint(v int32) uintptr { return uintptr(uint32(v)) }

func implComm_toint(h uintptr) int32         { return toint(h) }
func implComm_fromint(v int32) uintptr       { return fromint(v) }
func implComm_c2f(h uintptr) int32           { return toint(h) }
func implComm_f2c(v int32) uintptr           { return fromint(v) }
func implErrhandler_toint(h uintptr) int32   { return toint(h) }
func implErrhandler_fromint(v int32) uintptr { return fromint(v) }
func implErrhandler_c2f(h uintptr) int32     { return toint(h) }
func implErrhandler_f2c(v int32) uintptr     { return fromint(v) }
func implFile_toint(h uintptr) int32         { return toint(h) }
func implFile_fromint(v int32) uintptr       { return fromint(v) }
func implFile_c2f(h uintptr) int32           { return toint(h) }
func implFile_f2c(v int32) uintptr           { return fromint(v) }
func implGroup_toint(h uintptr) int32        { return toint(h) }
func implGroup_fromint(v int32) uintptr      { return fromint(v) }
func implGroup_c2f(h uintptr) int32          { return toint(h) }
func implGroup_f2c(v int32) uintptr          { return fromint(v) }
func implInfo_toint(h uintptr) int32         { return toint(h) }
func implInfo_fromint(v int32) uintptr       { return fromint(v) }
func implInfo_c2f(h uintptr) int32           { return toint(h) }
func implInfo_f2c(v int32) uintptr           { return fromint(v) }
func implMessage_toint(h uintptr) int32      { return toint(h) }
func implMessage_fromint(v int32) uintptr    { return fromint(v) }
func implMessage_c2f(h uintptr) int32        { return toint(h) }
func implMessage_f2c(v int32) uintptr        { return fromint(v) }
func implOp_toint(h uintptr) int32           { return toint(h) }
func implOp_fromint(v int32) uintptr         { return fromint(v) }
func implOp_c2f(h uintptr) int32             { return toint(h) }
func implOp_f2c(v int32) uintptr             { return fromint(v) }
func implRequest_toint(h uintptr) int32      { return toint(h) }
func implRequest_fromint(v int32) uintptr    { return fromint(v) }
func implRequest_c2f(h uintptr) int32        { return toint(h) }
func implRequest_f2c(v int32) uintptr        { return fromint(v) }
func implSession_toint(h uintptr) int32      { return toint(h) }
func implSession_fromint(v int32) uintptr    { return fromint(v) }
func implSession_c2f(h uintptr) int32        { return toint(h) }
func implSession_f2c(v int32) uintptr        { return fromint(v) }
func implType_toint(h uintptr) int32         { return toint(h) }
func implType_fromint(v int32) uintptr       { return fromint(v) }
func implType_c2f(h uintptr) int32           { return toint(h) }
func implType_f2c(v int32) uintptr           { return fromint(v) }
func implWin_toint(h uintptr) int32          { return toint(h) }
func implWin_fromint(v int32) uintptr        { return fromint(v) }
func implWin_c2f(h uintptr) int32            { return toint(h) }
func implWin_f2c(v int32) uintptr            { return fromint(v) }

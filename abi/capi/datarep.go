//go:build cgo

package capi

/*
#include <stdint.h>
int mpigo_call_datarep_conv(void *fn, void *userbuf, uintptr_t dt, int count, void *filebuf, int64_t position, uintptr_t extra);
int mpigo_call_datarep_conv_c(void *fn, void *userbuf, uintptr_t dt, int64_t count, void *filebuf, int64_t position, uintptr_t extra);
int mpigo_call_datarep_extent(void *fn, uintptr_t dt, int64_t *extent, uintptr_t extra);
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/mpigo/mpi"
)

// MPI_Register_datarep and MPI_Register_datarep_c register a data
// representation with mpi.RegisterDatarep; its Go conversion and extent
// functions call the C ones through the trampolines of datarep.c with
// the handle of the datatype and the caller's extra_state. A C function
// that returns other than MPI_SUCCESS fails the access with
// MPI_ERR_CONVERSION.

func implRegister_datarep(datarep, read, write, extent, extra unsafe.Pointer) int32 {
	return registerDatarep("MPI_Register_datarep", datarep, read, write, extent, extra, false)
}

func implRegister_datarep_c(datarep, read, write, extent, extra unsafe.Pointer) int32 {
	return registerDatarep("MPI_Register_datarep_c", datarep, read, write, extent, extra, true)
}

// datarepCode raises a failed registration on MPI_FILE_NULL: its errors
// belong to no file. That handler is MPI_ERRORS_RETURN unless the program
// changes it.
func datarepCode(fn string, err error) int32 {
	class := classOf(err)
	switch {
	case errors.Is(err, mpi.ErrDupDatarep):
		class = MPI_ERR_DUP_DATAREP
	case errors.Is(err, mpi.ErrUnsupportedDatarep):
		class = MPI_ERR_UNSUPPORTED_DATAREP
	}
	return nullFile.dispatch(newCode(class, fn+": "+err.Error()))
}

func registerDatarep(fn string, name, read, write, extent, extra unsafe.Pointer, large bool) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	switch {
	case name == nil:
		return datarepCode(fn, classErr(MPI_ERR_ARG, "datarep is NULL"))
	case extent == nil:
		return datarepCode(fn, classErr(MPI_ERR_ARG, "dtype_file_extent_fn is NULL"))
	}
	state := uintptr(extra)
	conv := func(cfn unsafe.Pointer, what string) mpi.DatarepConversion {
		if cfn == nil { // MPI_CONVERSION_FN_NULL(_C)
			return nil
		}
		return func(userbuf []byte, dt *mpi.Datatype, count int, filebuf []byte, position int) error {
			if count == 0 {
				return nil
			}
			var u, f unsafe.Pointer
			if len(userbuf) > 0 {
				u = unsafe.Pointer(&userbuf[0])
			}
			if len(filebuf) > 0 {
				f = unsafe.Pointer(&filebuf[0])
			}
			h := C.uintptr_t(typeHandle(dt))
			var rc C.int
			if large {
				rc = C.mpigo_call_datarep_conv_c(cfn, u, h, C.int64_t(count), f, C.int64_t(position), C.uintptr_t(state))
			} else {
				if count > math.MaxInt32 {
					return fmt.Errorf("%d items do not fit the int count of the %s conversion function (register it with MPI_Register_datarep_c)", count, what)
				}
				rc = C.mpigo_call_datarep_conv(cfn, u, h, C.int(count), f, C.int64_t(position), C.uintptr_t(state))
			}
			if rc != MPI_SUCCESS {
				return fmt.Errorf("the %s conversion function returned %d", what, int(rc))
			}
			return nil
		}
	}
	ext := func(dt *mpi.Datatype) (int64, error) {
		var e C.int64_t
		if rc := C.mpigo_call_datarep_extent(extent, C.uintptr_t(typeHandle(dt)), &e, C.uintptr_t(state)); rc != MPI_SUCCESS {
			return 0, fmt.Errorf("the extent function returned %d for %s", int(rc), dt.Name())
		}
		return int64(e), nil
	}
	if err := mpi.RegisterDatarep(cString(name), conv(read, "read"), conv(write, "write"), ext); err != nil {
		return datarepCode(fn, err)
	}
	return MPI_SUCCESS
}

//go:build cgo

package capi

/*
int mpigo_call_grequest_query(void *fn, void *extra, void *status);
int mpigo_call_grequest_free(void *fn, void *extra);
int mpigo_call_grequest_cancel(void *fn, void *extra, int complete);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// Generalized requests with C callbacks, and the Fortran status
// conversions.

func implGrequest_start(query, free, cancel, extra, request unsafe.Pointer) int32 {
	const fn = "MPI_Grequest_start"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if request == nil {
		return nullArray(fn, "request")
	}
	var q func(st *mpi.Status) error
	if query != nil {
		q = func(st *mpi.Status) error {
			// The query function fills a status of the ABI's layout,
			// which becomes mpigo's.
			cs := status{source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG}
			rc := C.mpigo_call_grequest_query(query, extra, unsafe.Pointer(&cs))
			st.Source, st.Tag = rankArg(cs.source), tagArg(cs.tag)
			n := int(uint64(uint32(cs.countLo)) | uint64(uint32(cs.countHi))<<32)
			if err := st.SetElements(mpi.Byte, n); err != nil {
				return err
			}
			st.SetCancelled(cs.cancelled != 0)
			if rc != MPI_SUCCESS {
				return callbackErr("query", rc)
			}
			return nil
		}
	}
	var f func() error
	if free != nil {
		f = func() error {
			if rc := C.mpigo_call_grequest_free(free, extra); rc != MPI_SUCCESS {
				return callbackErr("free", rc)
			}
			return nil
		}
	}
	var c func(bool) error
	if cancel != nil {
		c = func(complete bool) error {
			done := C.int(0)
			if complete {
				done = 1
			}
			if rc := C.mpigo_call_grequest_cancel(cancel, extra, done); rc != MPI_SUCCESS {
				return callbackErr("cancel", rc)
			}
			return nil
		}
	}
	r, err := self.c.GrequestStart(q, f, c)
	if err != nil {
		return raise(fn, noComm, err)
	}
	*(*uintptr)(request) = requests.add(reqEntry{r, &self})
	return MPI_SUCCESS
}

func implGrequest_complete(request uintptr) int32 {
	const fn = "MPI_Grequest_complete"
	if rc := running(fn); rc != 0 {
		return rc
	}
	e, ok := requests.get(request)
	if !ok {
		return raise(fn, noComm, classErr(MPI_ERR_REQUEST, fmt.Sprintf("%#x is not a request handle", request)))
	}
	return e.ce.check(fn, e.r.GrequestComplete())
}

// The Fortran statuses (MPI_Fint[8] and MPI_F08_status) have the C
// status's layout here: every conversion copies the eight integers.
func copyStatus(fn string, from, to unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if from == nil || to == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "a status is NULL (MPI_STATUS_IGNORE cannot be converted)"))
	}
	*(*status)(to) = *(*status)(from)
	return MPI_SUCCESS
}

func implStatus_c2f(c, f unsafe.Pointer) int32    { return copyStatus("MPI_Status_c2f", c, f) }
func implStatus_f2c(f, c unsafe.Pointer) int32    { return copyStatus("MPI_Status_f2c", f, c) }
func implStatus_c2f08(c, f unsafe.Pointer) int32  { return copyStatus("MPI_Status_c2f08", c, f) }
func implStatus_f082c(f, c unsafe.Pointer) int32  { return copyStatus("MPI_Status_f082c", f, c) }
func implStatus_f2f08(f, f8 unsafe.Pointer) int32 { return copyStatus("MPI_Status_f2f08", f, f8) }
func implStatus_f082f(f8, f unsafe.Pointer) int32 { return copyStatus("MPI_Status_f082f", f8, f) }

// MPI_Status_set_elements and MPI_Status_set_cancelled belong with
// generalized requests: their query functions fill statuses with them.

func statusSetElements(fn string, st unsafe.Pointer, datatype uintptr, count int64) int32 {
	t, rc := queryType(fn, datatype, st)
	if t == nil {
		return rc
	}
	var s mpi.Status
	if err := s.SetElements(t, int(count)); err != nil {
		return raise(fn, noComm, err)
	}
	n := uint64(s.Bytes())
	cs := (*status)(st)
	cs.countLo, cs.countHi = int32(uint32(n)), int32(uint32(n>>32))
	return MPI_SUCCESS
}

func implStatus_set_elements(st unsafe.Pointer, datatype uintptr, count int32) int32 {
	return statusSetElements("MPI_Status_set_elements", st, datatype, int64(count))
}

func implStatus_set_elements_c(st unsafe.Pointer, datatype uintptr, count int64) int32 {
	return statusSetElements("MPI_Status_set_elements_c", st, datatype, count)
}

func implStatus_set_elements_x(st unsafe.Pointer, datatype uintptr, count int64) int32 {
	return statusSetElements("MPI_Status_set_elements_x", st, datatype, count)
}

func implStatus_set_cancelled(st unsafe.Pointer, flag int32) int32 {
	const fn = "MPI_Status_set_cancelled"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if st == nil {
		return nullArray(fn, "status")
	}
	(*status)(st).cancelled = 0
	if flag != 0 {
		(*status)(st).cancelled = 1
	}
	return MPI_SUCCESS
}

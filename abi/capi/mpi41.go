//go:build cgo

package capi

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The MPI-4.1 additions whose C form works on C's own data: status
// getters and setters (on the C struct; a Go program reads Status's
// fields and Err), the status of many requests without completing them
// (on C's request handles), removing added error classes, codes and
// strings (C's numbers over mpi.RemoveErrorClass/Code/String), the pair
// type of a value and an index type (by C handle: MPI_INT and
// MPI_INT32_T are one mpigo type, but only MPI_INT has pairs), and the
// info of a program's start (mpi.InfoCreateEnv).

func statusPtr(fn string, p unsafe.Pointer) (*status, int32) {
	if p == nil {
		return nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "status is NULL (MPI_STATUS_IGNORE has no fields to read or write)"))
	}
	return (*status)(p), 0
}

func statusGet(fn string, st, out unsafe.Pointer, field func(*status) int32) int32 {
	s, rc := statusPtr(fn, st)
	if s == nil {
		return rc
	}
	if out == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "output is NULL"))
	}
	*(*int32)(out) = field(s)
	return MPI_SUCCESS
}

func implStatus_get_source(st, source unsafe.Pointer) int32 {
	return statusGet("MPI_Status_get_source", st, source, func(s *status) int32 { return s.source })
}

func implStatus_get_tag(st, tag unsafe.Pointer) int32 {
	return statusGet("MPI_Status_get_tag", st, tag, func(s *status) int32 { return s.tag })
}

func implStatus_get_error(st, e unsafe.Pointer) int32 {
	return statusGet("MPI_Status_get_error", st, e, func(s *status) int32 { return s.err })
}

func implStatus_set_source(st unsafe.Pointer, source int32) int32 {
	s, rc := statusPtr("MPI_Status_set_source", st)
	if s != nil {
		s.source = source
	}
	return rc
}

func implStatus_set_tag(st unsafe.Pointer, tag int32) int32 {
	s, rc := statusPtr("MPI_Status_set_tag", st)
	if s != nil {
		s.tag = tag
	}
	return rc
}

func implStatus_set_error(st unsafe.Pointer, e int32) int32 {
	s, rc := statusPtr("MPI_Status_set_error", st)
	if s != nil {
		s.err = e
	}
	return rc
}

// requestArray is the array of count request handles at p.
func requestArray(fn string, count int32, p unsafe.Pointer) ([]uintptr, int32) {
	if count < 0 {
		return nil, raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", count)))
	}
	if count == 0 {
		return nil, 0
	}
	if p == nil {
		return nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "array_of_requests is NULL"))
	}
	return unsafe.Slice((*uintptr)(p), count), 0
}

// live reports whether handle h is an active request (not
// MPI_REQUEST_NULL, not an inactive persistent request); a handle that is
// no request at all is an error.
func live(fn string, h uintptr) (bool, int32) {
	if h == MPI_REQUEST_NULL {
		return false, 0
	}
	e, ok := requests.get(h)
	if !ok {
		return false, badRequest(fn, h)
	}
	return e.active(), 0
}

func implRequest_get_status_all(count int32, reqs, flag, sts unsafe.Pointer) int32 {
	const fn = "MPI_Request_get_status_all"
	if rc := running(fn); rc != 0 {
		return rc
	}
	hs, rc := requestArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	if flag == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	all := true
	for i, h := range hs {
		var f int32
		if rc := implRequest_get_status(h, unsafe.Pointer(&f), statusAt(sts, i)); rc != 0 {
			return rc
		}
		all = all && f != 0
	}
	setFlag(flag, all)
	return MPI_SUCCESS
}

func implRequest_get_status_any(count int32, reqs, index, flag, st unsafe.Pointer) int32 {
	const fn = "MPI_Request_get_status_any"
	if rc := running(fn); rc != 0 {
		return rc
	}
	hs, rc := requestArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	if flag == nil || index == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "flag or index is NULL"))
	}
	*(*int32)(index) = MPI_UNDEFINED
	active := false
	for i, h := range hs {
		ok, rc := live(fn, h)
		if rc != 0 {
			return rc
		}
		if !ok {
			continue
		}
		active = true
		var f int32
		if rc := implRequest_get_status(h, unsafe.Pointer(&f), st); rc != 0 {
			*(*int32)(index) = int32(i)
			setFlag(flag, true)
			return rc
		}
		if f != 0 {
			*(*int32)(index) = int32(i)
			setFlag(flag, true)
			return MPI_SUCCESS
		}
	}
	// No active request: flag true, index MPI_UNDEFINED, an empty status.
	setFlag(flag, !active)
	if !active {
		setEmptyStatus(st)
	}
	return MPI_SUCCESS
}

func implRequest_get_status_some(count int32, reqs, outcount, indices, sts unsafe.Pointer) int32 {
	const fn = "MPI_Request_get_status_some"
	if rc := running(fn); rc != 0 {
		return rc
	}
	hs, rc := requestArray(fn, count, reqs)
	if rc != 0 {
		return rc
	}
	if outcount == nil || (count > 0 && indices == nil) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "outcount or array_of_indices is NULL"))
	}
	n, active := 0, false
	for i, h := range hs {
		ok, rc := live(fn, h)
		if rc != 0 {
			return rc
		}
		if !ok {
			continue
		}
		active = true
		var f int32
		rc = implRequest_get_status(h, unsafe.Pointer(&f), statusAt(sts, n))
		if f != 0 || rc != 0 {
			unsafe.Slice((*int32)(indices), count)[n] = int32(i)
			n++
		}
		if rc != 0 {
			*(*int32)(outcount) = int32(n)
			return rc
		}
	}
	if !active {
		*(*int32)(outcount) = MPI_UNDEFINED
		return MPI_SUCCESS
	}
	*(*int32)(outcount) = int32(n)
	return MPI_SUCCESS
}

// removeCode removes an added class (isClass) or code through
// mpi.RemoveErrorClass or RemoveErrorCode, which refuse a class that
// still has codes; a number not added (or of the other kind) is
// MPI_ERR_ARG here, as Go has no numbers to check.
func removeCode(fn string, code int32, isClass bool) int32 {
	if err := removeCodeLocked(code, isClass); err != nil {
		return raise(fn, noComm, err) // unlocked: a handler may add codes
	}
	return MPI_SUCCESS
}

func removeCodeLocked(code int32, isClass bool) error {
	userCodes.Lock()
	defer userCodes.Unlock()
	class, ok := userCodes.class[code]
	if !ok || (class == code) != isClass {
		what := "error code"
		if isClass {
			what = "error class"
		}
		return classErr(MPI_ERR_ARG, fmt.Sprintf("%d is not an %s added by MPI_Add_error_%s", code, what, strings.TrimPrefix(what, "error ")))
	}
	if _, ok := userCodes.text[code]; ok {
		// MPI-4.1: the string goes first (MPI_Remove_error_string).
		return classErr(MPI_ERR_ARG, fmt.Sprintf("%d still has an error string: remove it first with MPI_Remove_error_string", code))
	}
	if e := userCodes.err[code]; e != nil {
		remove := mpi.RemoveErrorCode
		if isClass {
			remove = mpi.RemoveErrorClass
		}
		if err := remove(e); err != nil {
			return err
		}
	}
	delete(userCodes.class, code)
	delete(userCodes.text, code)
	delete(userCodes.err, code)
	return nil
}

func implRemove_error_class(errorclass int32) int32 {
	return removeCode("MPI_Remove_error_class", errorclass, true)
}

func implRemove_error_code(errorcode int32) int32 {
	return removeCode("MPI_Remove_error_code", errorcode, false)
}

func implRemove_error_string(errorcode int32) int32 {
	const fn = "MPI_Remove_error_string"
	err := func() error {
		userCodes.Lock()
		defer userCodes.Unlock()
		if _, ok := userCodes.class[errorcode]; !ok {
			return classErr(MPI_ERR_ARG, fmt.Sprintf("%d is not an error class or code added by MPI_Add_error_class/code", errorcode))
		}
		if e := userCodes.err[errorcode]; e != nil {
			if err := mpi.RemoveErrorString(e); err != nil {
				return err
			}
		}
		delete(userCodes.text, errorcode)
		return nil
	}()
	if err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

// implType_get_value_index returns the predefined pair type of a value
// type and an index type (MPI_MINLOC/MAXLOC), or MPI_DATATYPE_NULL when
// the standard has none.
func implType_get_value_index(value, index uintptr, pair unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_value_index"
	if pair == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "pair_type is NULL"))
	}
	for _, h := range [...]uintptr{value, index} {
		// A predefined handle is a datatype even where mpigo has no
		// layout for it (the answer is a handle, not data).
		if h == MPI_DATATYPE_NULL || h >= uintptr(len(predefTypes)) {
			if t, rc := typeArg(fn, nil, h); t == nil {
				return rc
			}
		}
	}
	p := uintptr(MPI_DATATYPE_NULL)
	if index == MPI_INT {
		switch value {
		case MPI_FLOAT:
			p = MPI_FLOAT_INT
		case MPI_DOUBLE:
			p = MPI_DOUBLE_INT
		case MPI_LONG:
			p = MPI_LONG_INT
		case MPI_INT:
			p = MPI_2INT
		case MPI_SHORT:
			p = MPI_SHORT_INT
		case MPI_LONG_DOUBLE:
			p = MPI_LONG_DOUBLE_INT
		}
	}
	*(*uintptr)(pair) = p
	return MPI_SUCCESS
}

// implInfo_create_env returns the info of the program's start, as
// MPI_INFO_ENV holds it: the command and its arguments (from argc and
// argv when given), the number of processes, the host, the working
// directory and the thread level asked for. It may be called before
// MPI_Init.
func implInfo_create_env(argc int32, argv, info unsafe.Pointer) int32 {
	const fn = "MPI_Info_create_env"
	if info == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "info is NULL"))
	}
	var args []string
	if argv != nil && argc > 0 {
		for _, p := range unsafe.Slice((*unsafe.Pointer)(argv), argc) {
			if p == nil {
				break
			}
			args = append(args, cString(p))
		}
	}
	// The job's size as the launcher gave it ("maxprocs"), so that the
	// answer is the same before MPI_Init, between Init and Finalize, and
	// after (the standard's "information provided at process start").
	in, err := mpi.InfoCreateEnv(nil, args)
	if err != nil {
		return raise(fn, noComm, classErr(MPI_ERR_OTHER, err.Error()))
	}
	if _, ok := in.Get("maxprocs"); !ok {
		// No launcher: a C process is one rank, a singleton.
		in.Set("maxprocs", "1")
	}
	*(*uintptr)(info) = infos.add(in)
	return MPI_SUCCESS
}

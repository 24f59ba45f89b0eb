//go:build cgo

package capi

/*
#include <stdint.h>
void mpigo_call_comm_errhandler(void *fn, uintptr_t comm, int code);
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// User error handlers of communicators (MPI_Comm_create_errhandler) and
// the error classes, codes and strings programs add.

// errhEntry is a user error handler: its C function.
type errhEntry struct{ fn unsafe.Pointer }

var errhandlers = &table[errhEntry]{kind: kindErrhandler}

func isUserErrh(h uintptr) bool { return h>>kindShift == kindErrhandler }

// callUserErrhandler calls the user handler h of ce with code, as MPI
// does for an error raised on ce: with the communicator's handle and the
// code, both by address. It reports whether h is a user handler.
func callUserErrhandler(ce *commEntry, h uintptr, code int32) bool {
	e, ok := errhandlers.get(h)
	if !ok {
		return false
	}
	C.mpigo_call_comm_errhandler(e.fn, C.uintptr_t(commHandleOf(ce)), C.int(code))
	return true
}

// commHandleOf is the handle of the communicator of ce.
func commHandleOf(ce *commEntry) uintptr {
	switch ce {
	case &world:
		return MPI_COMM_WORLD
	case &self:
		return MPI_COMM_SELF
	}
	return commHandle(ce.c)
}

func implComm_create_errhandler(fn, errhandler unsafe.Pointer) int32 {
	const name = "MPI_Comm_create_errhandler"
	if rc := running(name); rc != 0 {
		return rc
	}
	if fn == nil || errhandler == nil {
		return nullArray(name, "comm_errhandler_fn or errhandler")
	}
	*(*uintptr)(errhandler) = errhandlers.add(errhEntry{fn})
	return MPI_SUCCESS
}

// implComm_call_errhandler passes errorcode to comm's handler: a user
// handler is called, MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT end the
// job, MPI_ERRORS_RETURN does nothing. It returns MPI_SUCCESS when the
// handler returns.
func implComm_call_errhandler(comm uintptr, errorcode int32) int32 {
	const fn = "MPI_Comm_call_errhandler"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	h := ce.errh.Load()
	switch {
	case h == MPI_ERRORS_RETURN:
	case isUserErrh(h):
		callUserErrhandler(ce, h, errorcode)
	default:
		s, _ := codeString(errorcode)
		fmt.Fprintf(os.Stderr, "mpigo: %s: error code %d (%s); the error handler is fatal: aborting the job\n", fn, errorcode, s)
		class, ok := codeClass(errorcode)
		if !ok {
			class = MPI_ERR_OTHER
		}
		abortJob(ce.c, int(class))
	}
	return MPI_SUCCESS
}

// User error classes and codes live above MPI_ERR_LASTCODE, numbered in
// the order they are added, so that they never meet the library's own
// codes (error.go). A class is its own class. Each stands for a class or
// code of mpi.AddErrorClass or AddErrorCode (err), whose calls keep the
// rules of adding and removing; a code of a predefined class has none (Go
// gives the predefined classes no codes).
var userCodes struct {
	sync.RWMutex
	class map[int32]int32  // code -> class
	text  map[int32]string // code or class -> MPI_Add_error_string's text
	err   map[int32]error  // code or class -> its mpigo value, or nil
	last  int32
}

// userCodeClass returns the class of a code of MPI_Add_error_class or
// MPI_Add_error_code.
func userCodeClass(code int32) (int32, bool) {
	userCodes.RLock()
	defer userCodes.RUnlock()
	c, ok := userCodes.class[code]
	return c, ok
}

// userCodeString returns the text of a user class or code.
func userCodeString(code int32) (string, bool) {
	userCodes.RLock()
	defer userCodes.RUnlock()
	if _, ok := userCodes.class[code]; !ok {
		return "", false
	}
	return userCodes.text[code], true
}

func lastUsedCode() int32 {
	userCodes.RLock()
	defer userCodes.RUnlock()
	if userCodes.last == 0 {
		return MPI_ERR_LASTCODE
	}
	return userCodes.last
}

// addCode numbers a new class (class < 0) or code of class, made in Go
// by mpi.AddErrorClass or AddErrorCode; an error there (a removed class)
// is returned.
func addCode(class int32) (int32, error) {
	userCodes.Lock()
	defer userCodes.Unlock()
	if userCodes.class == nil {
		userCodes.class, userCodes.text, userCodes.err = map[int32]int32{}, map[int32]string{}, map[int32]error{}
		userCodes.last = MPI_ERR_LASTCODE
	}
	var e error
	if class < 0 {
		e = mpi.AddErrorClass("")
	} else if ce := userCodes.err[class]; ce != nil {
		var err error
		if e, err = mpi.AddErrorCode(ce, ""); err != nil {
			return 0, err
		}
	}
	userCodes.last++
	c := userCodes.last
	if class < 0 {
		class = c
	}
	userCodes.class[c] = class
	userCodes.err[c] = e
	return c, nil
}

func implAdd_error_class(errorclass unsafe.Pointer) int32 {
	const fn = "MPI_Add_error_class"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if errorclass == nil {
		return nullArray(fn, "errorclass")
	}
	c, err := addCode(-1)
	if err != nil {
		return raise(fn, noComm, err)
	}
	*(*int32)(errorclass) = c
	return MPI_SUCCESS
}

func implAdd_error_code(errorclass int32, errorcode unsafe.Pointer) int32 {
	const fn = "MPI_Add_error_code"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if errorcode == nil {
		return nullArray(fn, "errorcode")
	}
	// A new code may belong to a predefined class too (the standard does
	// not restrict errorclass; MPICH and Open MPI take MPI_ERR_ARG).
	predef := errorclass > MPI_SUCCESS && errorclass < 64 && classText[errorclass] != ""
	if c, ok := userCodeClass(errorclass); !predef && (!ok || c != errorclass) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("%d is neither a predefined error class nor one of MPI_Add_error_class", errorclass)))
	}
	c, err := addCode(errorclass)
	if err != nil {
		return raise(fn, noComm, err)
	}
	*(*int32)(errorcode) = c
	return MPI_SUCCESS
}

func implAdd_error_string(errorcode int32, str unsafe.Pointer) int32 {
	const fn = "MPI_Add_error_string"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if str == nil {
		return nullArray(fn, "string")
	}
	if _, ok := userCodeClass(errorcode); !ok {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("%d is not a class or code of MPI_Add_error_class or _code", errorcode)))
	}
	s := cString(str)
	if len(s) > MPI_MAX_ERROR_STRING-1 {
		s = s[:MPI_MAX_ERROR_STRING-1]
	}
	userCodes.Lock()
	var err error
	if e := userCodes.err[errorcode]; e != nil {
		err = mpi.AddErrorString(e, s)
	}
	if err == nil {
		userCodes.text[errorcode] = s
	}
	userCodes.Unlock()
	if err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

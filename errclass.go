package mpi

import (
	"errors"
	"sync"
)

// This file holds the error calls of MPI-3.1 section 8.4 and 8.5: the
// class of an error, its text, classes and codes that programs and
// libraries define themselves, and calling a communicator's handler.

// predefinedClasses are the error classes of the package, for ErrorClass.
var predefinedClasses = []error{
	ErrBuffer, ErrCount, ErrType, ErrTag, ErrComm, ErrRank, ErrRoot, ErrRequest,
	ErrTruncate, ErrOp, ErrArg, ErrGroup, ErrKeyval, ErrProcFailed, ErrIntern, ErrOther, ErrRevoked, ErrProcFailedPending,
	ErrSpawn, ErrPort, ErrName, ErrService,
	ErrFile, ErrNoSuchFile, ErrFileExists, ErrAccess, ErrAmode, ErrReadOnly, ErrNoSpace, ErrBadFile, ErrIO,
	ErrUnsupportedDatarep, ErrUnsupportedOp, ErrConversion, ErrDupDatarep, ErrFileInUse, ErrQuota,
}

// userErrors guards the messages of user-defined classes and codes.
var userErrors sync.RWMutex

// userError is an error class or code made by AddErrorClass or
// AddErrorCode. A code wraps its class.
type userError struct {
	msg   string
	class *userError // nil for a class
	// codes counts a class's codes not yet removed: a class with codes
	// cannot be removed (RemoveErrorClass).
	codes int
	// removed is set by RemoveErrorClass and RemoveErrorCode: the value
	// names no class or code from then on.
	removed bool
}

// Error returns the message set by AddErrorClass, AddErrorCode or
// AddErrorString; once the class or code is removed, a text that says so
// (the number of a removed class is no longer valid for MPI_Error_string).
func (e *userError) Error() string {
	userErrors.RLock()
	defer userErrors.RUnlock()
	if e.removed {
		if e.class == nil {
			return "mpi: removed error class (RemoveErrorClass)"
		}
		return "mpi: removed error code (RemoveErrorCode)"
	}
	return e.msg
}

// Unwrap returns a code's class, so that errors.Is(code, class) holds.
func (e *userError) Unwrap() error {
	if e.class == nil {
		return nil
	}
	return e.class
}

// AddErrorClass returns a new error class with message msg
// (MPI_Add_error_class; MPI_Add_error_string sets its message). It is an
// error value like ErrTruncate: wrap it in an *Error (as the Class), pass
// it to Comm.CallErrHandler, and recognise it with errors.Is and
// ErrorClass. Classes are values, not numbers, so there is no
// MPI_LASTUSEDCODE: every call returns a distinct class.
func AddErrorClass(msg string) error {
	return &userError{msg: msg}
}

// AddErrorCode returns a new error code of class, with message msg
// (MPI_Add_error_code): errors.Is(code, class) holds and ErrorClass(code)
// is class. class must come from AddErrorClass (the predefined classes
// take no new codes, as in MPI): otherwise ErrArg.
func AddErrorCode(class error, msg string) (_ error, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AddErrorCode", nil, Undefined, Undefined), &err)
	}

	c, ok := class.(*userError)
	if !ok || c.class != nil {
		return nil, (*Comm)(nil).errorf("AddErrorCode", ErrArg, loc{}, "%v is not a class made by AddErrorClass", class)
	}
	userErrors.Lock()
	defer userErrors.Unlock()
	if c.removed {
		return nil, (*Comm)(nil).errorf("AddErrorCode", ErrArg, loc{}, "the class has been removed by RemoveErrorClass")
	}
	c.codes++
	return &userError{msg: msg, class: c}, nil
}

// AddErrorString sets the message of a class or code made by
// AddErrorClass or AddErrorCode (MPI_Add_error_string); ErrorString and
// Error return it from then on. The messages of predefined classes cannot
// be changed: ErrArg.
func AddErrorString(code error, msg string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AddErrorString", nil, Undefined, Undefined), &err)
	}

	u, ok := code.(*userError)
	if !ok {
		return (*Comm)(nil).errorf("AddErrorString", ErrArg, loc{}, "%v is not a user-defined class or code", code)
	}
	userErrors.Lock()
	defer userErrors.Unlock()
	if u.removed {
		return (*Comm)(nil).errorf("AddErrorString", ErrArg, loc{}, "the class or code has been removed")
	}
	u.msg = msg
	return nil
}

// isPredefinedClass reports whether e is one of the package's classes.
func isPredefinedClass(e error) bool {
	for _, c := range predefinedClasses {
		if e == c {
			return true
		}
	}
	return false
}

// userErrArg returns the class of AddErrorClass (class) or the code of
// AddErrorCode behind e, or the error of op (ErrArg) for a predefined
// class, a value of neither kind, or one already removed. The caller holds
// userErrors, so no message here may call a userError's Error.
func userErrArg(op string, e error, class bool) (*userError, error) {
	what, other := "a code of AddErrorCode", "a class of AddErrorClass"
	if class {
		what, other = other, what
	}
	u, ok := e.(*userError)
	switch {
	case ok && (u.class == nil) != class:
		return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "the value is %s, not %s", other, what)
	case ok && u.removed:
		return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "%s that has already been removed", what)
	case ok:
		return u, nil
	case isPredefinedClass(e):
		return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "%v is a predefined error class, which cannot be removed", e)
	}
	return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "%T is not %s", e, what)
}

// RemoveErrorClass removes a class made by AddErrorClass
// (MPI_Remove_error_class), so that a long-running library can give back
// the classes it no longer raises. Its codes must be removed first
// (RemoveErrorCode): a class that still has codes, a predefined class
// (ErrTruncate, ...), a value AddErrorClass did not return, or a class
// already removed is ErrArg, and the class stays. Once removed, the class
// takes no new codes or message, ErrorString reports it removed and
// ErrorClass no longer recognises it (ErrOther).
func RemoveErrorClass(class error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RemoveErrorClass", nil, Undefined, Undefined), &err)
	}
	userErrors.Lock()
	defer userErrors.Unlock()
	u, err := userErrArg("RemoveErrorClass", class, true)
	if err != nil {
		return err
	}
	if u.codes > 0 {
		return (*Comm)(nil).errorf("RemoveErrorClass", ErrArg, loc{}, "error class %q still has %d error codes (remove them first with RemoveErrorCode)", u.msg, u.codes)
	}
	u.removed = true
	return nil
}

// RemoveErrorCode removes a code made by AddErrorCode
// (MPI_Remove_error_code). A predefined class, a class, a value
// AddErrorCode did not return, or a code already removed is ErrArg. Once
// removed, the code takes no new message, ErrorString reports it removed,
// ErrorClass no longer recognises it (ErrOther), and its class may be
// removed once its other codes are.
func RemoveErrorCode(code error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RemoveErrorCode", nil, Undefined, Undefined), &err)
	}
	userErrors.Lock()
	defer userErrors.Unlock()
	u, err := userErrArg("RemoveErrorCode", code, false)
	if err != nil {
		return err
	}
	u.removed = true
	u.class.codes--
	return nil
}

// RemoveErrorString removes the message of a class or code of
// AddErrorClass or AddErrorCode (MPI_Remove_error_string): its ErrorString
// is "" from then on, until AddErrorString gives it another. A predefined
// class, a value of neither call, or one already removed is ErrArg: the
// texts of predefined classes cannot be removed.
func RemoveErrorString(code error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RemoveErrorString", nil, Undefined, Undefined), &err)
	}
	userErrors.Lock()
	defer userErrors.Unlock()
	u, ok := code.(*userError)
	if !ok {
		if isPredefinedClass(code) {
			return (*Comm)(nil).errorf("RemoveErrorString", ErrArg, loc{}, "%v is a predefined error class, whose text cannot be removed", code)
		}
		return (*Comm)(nil).errorf("RemoveErrorString", ErrArg, loc{}, "%T is not a class or code of AddErrorClass or AddErrorCode", code)
	}
	if _, err := userErrArg("RemoveErrorString", code, u.class == nil); err != nil {
		return err
	}
	u.msg = ""
	return nil
}

// ErrorClass returns the class of err (MPI_Error_class): the Class of an
// *Error anywhere in err's chain (ErrTruncate, ErrRank, ... or a class of
// AddErrorClass), the class of a code of AddErrorCode, a class itself, or
// ErrOther for an error that is none of these. ErrorClass(nil) is nil
// (MPI_SUCCESS).
func ErrorClass(err error) error {

	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		switch c := e.Class.(type) {
		case nil:
			return ErrOther
		case *userError:
			if c.class != nil { // a code as the Class: its class
				return c.class
			}
		}
		return e.Class
	}
	for _, c := range predefinedClasses {
		if err == c {
			return c
		}
	}
	var u *userError
	if errors.As(err, &u) {
		userErrors.RLock()
		removed := u.removed || (u.class != nil && u.class.removed)
		userErrors.RUnlock()
		switch {
		case removed:
			return ErrOther
		case u.class != nil:
			return u.class
		}
		return u
	}
	for _, c := range predefinedClasses {
		if errors.Is(err, c) {
			return c
		}
	}
	return ErrOther
}

// ErrorString returns the text of an error, a class or a code
// (MPI_Error_string): err.Error(), or "no error" for nil (MPI_SUCCESS).
// There is no MPI_MAX_ERROR_STRING: Go strings have no fixed size.
func ErrorString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// CallErrHandler passes err through c's error handler
// (MPI_Comm_call_errhandler), as a failed call on c would: a handler of
// NewErrHandler is called with c and err, ErrorsAreFatal aborts the job,
// ErrorsReturn does nothing. It returns err, so a library can end a
// failed call with `return c.CallErrHandler(err)`. A nil err calls
// nothing and returns nil. On a nil or freed c it returns ErrComm, as
// every call does, and calls no handler.
func (c *Comm) CallErrHandler(e error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CallErrHandler", c, Undefined, Undefined), &err)
	}
	if err := c.check("CallErrHandler"); err != nil {
		return err
	}
	err = e
	if err == nil {
		return nil
	}
	return c.handle(err)
}

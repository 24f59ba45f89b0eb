//go:build cgo

package capi

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/mpigo/mpi"
)

// abiError is an error of an ABI class that mpigo's API has no class for
// (MPI_ERR_UNSUPPORTED_OPERATION, ...) or that this layer finds itself.
type abiError struct {
	class int32
	msg   string
}

func (e *abiError) Error() string { return e.msg }

func classErr(class int32, msg string) error { return &abiError{class, msg} }

// classes maps mpigo's error classes to the ABI's.
var classes = []struct {
	err   error
	class int32
}{
	// MPI-IO's classes first: their errors may carry a cause of another
	// class (an OS error, a failed process), and the file class is the one
	// the program asked for.
	{mpi.ErrFile, MPI_ERR_FILE}, {mpi.ErrNoSuchFile, MPI_ERR_NO_SUCH_FILE}, {mpi.ErrFileExists, MPI_ERR_FILE_EXISTS},
	{mpi.ErrAccess, MPI_ERR_ACCESS}, {mpi.ErrAmode, MPI_ERR_AMODE}, {mpi.ErrReadOnly, MPI_ERR_READ_ONLY},
	{mpi.ErrNoSpace, MPI_ERR_NO_SPACE}, {mpi.ErrBadFile, MPI_ERR_BAD_FILE}, {mpi.ErrIO, MPI_ERR_IO},
	{mpi.ErrUnsupportedDatarep, MPI_ERR_UNSUPPORTED_DATAREP}, {mpi.ErrUnsupportedOp, MPI_ERR_UNSUPPORTED_OPERATION},
	{mpi.ErrConversion, MPI_ERR_CONVERSION}, {mpi.ErrDupDatarep, MPI_ERR_DUP_DATAREP},
	{mpi.ErrFileInUse, MPI_ERR_FILE_IN_USE}, {mpi.ErrQuota, MPI_ERR_QUOTA},
	{mpi.ErrBuffer, MPI_ERR_BUFFER}, {mpi.ErrCount, MPI_ERR_COUNT}, {mpi.ErrType, MPI_ERR_TYPE},
	{mpi.ErrTag, MPI_ERR_TAG}, {mpi.ErrComm, MPI_ERR_COMM}, {mpi.ErrRank, MPI_ERR_RANK},
	{mpi.ErrRequest, MPI_ERR_REQUEST}, {mpi.ErrRoot, MPI_ERR_ROOT}, {mpi.ErrGroup, MPI_ERR_GROUP},
	{mpi.ErrOp, MPI_ERR_OP}, {mpi.ErrTopology, MPI_ERR_TOPOLOGY}, {mpi.ErrDims, MPI_ERR_DIMS},
	{mpi.ErrArg, MPI_ERR_ARG}, {mpi.ErrTruncate, MPI_ERR_TRUNCATE}, {mpi.ErrIntern, MPI_ERR_INTERN},
	{mpi.ErrKeyval, MPI_ERR_KEYVAL}, {mpi.ErrRMARange, MPI_ERR_RMA_RANGE}, {mpi.ErrRMASync, MPI_ERR_RMA_SYNC},
	{mpi.ErrRMAShared, MPI_ERR_RMA_SHARED},
	{mpi.ErrSession, MPI_ERR_SESSION}, {mpi.ErrSpawn, MPI_ERR_SPAWN}, {mpi.ErrPort, MPI_ERR_PORT},
	{mpi.ErrName, MPI_ERR_NAME}, {mpi.ErrService, MPI_ERR_SERVICE}, {mpi.ErrOther, MPI_ERR_OTHER},
}

// classOf is the ABI error class of err. Failed processes and revoked
// communicators (ULFM) have no class in the standard ABI: MPI_ERR_OTHER.
func classOf(err error) int32 {
	var ae *abiError
	if errors.As(err, &ae) {
		return ae.class
	}
	if c, ok := ftClass(err); ok {
		return c
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return MPI_ERR_OTHER
}

// Error codes: a code is class + 64*slot, slot 1..255 in a ring of recent
// messages, so that MPI_Error_string can name the call and its arguments
// and every code stays within MPI_ERR_LASTCODE (0x3fff). A class (0..63)
// is a code too. A slot is reused after 255 newer errors: the string of
// an old code is then the newest message of that class in its slot, or
// the class's text.
const codeSlots = 256

var codes struct {
	sync.Mutex
	next int
	code [codeSlots]int32
	msg  [codeSlots]string
}

func newCode(class int32, msg string) int32 {
	if class >= 64 {
		return extCode(class, msg)
	}
	codes.Lock()
	defer codes.Unlock()
	// A slot whose code would be an extension's class (ulfm.go) is
	// skipped: MPI_Error_class must tell them apart.
	for {
		codes.next = codes.next%(codeSlots-1) + 1
		if !isExtClass(class + 64*int32(codes.next)) {
			break
		}
	}
	s := codes.next
	c := class + 64*int32(s)
	codes.code[s], codes.msg[s] = c, msg
	return c
}

// codeClass returns the class of code, and false for a code this library
// never gave.
func codeClass(code int32) (int32, bool) {
	if isExtClass(code) {
		return code, true
	}
	if code > MPI_ERR_LASTCODE {
		return userCodeClass(code)
	}
	if code >= 0 && code < 64 && classText[code] != "" {
		return code, true
	}
	if code >= 64 && code < 64*codeSlots && classText[code%64] != "" {
		return code % 64, true
	}
	if code >= 1001 && code <= 1018 {
		return code, true
	}
	return 0, false
}

func codeString(code int32) (string, bool) {
	if code > MPI_ERR_LASTCODE {
		return userCodeString(code)
	}
	class, ok := codeClass(code)
	if !ok {
		return "", false
	}
	if isExtClass(class) {
		return extString(class), true
	}
	text := classText[class]
	if class >= 1001 {
		text = "MPI_T: tools interface error"
		if class == MPI_T_ERR_NOT_SUPPORTED {
			text = "MPI_T_ERR_NOT_SUPPORTED: not supported by mpigo's ABI yet"
		}
	}
	if code >= 64 && code < 64*codeSlots {
		codes.Lock()
		defer codes.Unlock()
		if s := code / 64; codes.code[s] == code {
			return text + ": " + codes.msg[s], true
		}
	}
	return text, true
}

// raise makes the code of err in call fn on communicator comm (noComm:
// MPI_COMM_SELF) and applies the communicator's error handler: it returns
// the code under MPI_ERRORS_RETURN and ends the job under
// MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT. Before MPI_Init and after
// MPI_Finalize there is no communicator: the code is returned.
func raise(fn string, comm uintptr, err error) int32 {
	var ce *commEntry
	if phase.Load() != phaseRunning && usable() {
		// Sessions only: a communicator of a session has its handler;
		// errors tied to no communicator return their code.
		if e, ok := comms.get(comm); ok {
			ce = e
		}
	}
	if phase.Load() == phaseRunning {
		switch comm {
		case MPI_COMM_WORLD:
			ce = &world
		case noComm:
			ce = &self
			if !self.errhSet.Load() && world.errhSet.Load() {
				ce = &world
			}
		case MPI_COMM_SELF:
			ce = &self
		default:
			if e, ok := comms.get(comm); ok {
				ce = e
			} else {
				ce = &self
			}
		}
	}
	return raiseOn(fn, ce, err)
}

func raiseOn(fn string, ce *commEntry, err error) int32 {
	class := classOf(err)
	msg := fn + ": " + err.Error()
	code := newCode(class, msg)
	if fe := fileOf(ce); fe != nil { // a file's request (file.go)
		return fe.dispatch(code)
	}
	if ce == nil || !usable() || ce.errh.Load() == MPI_ERRORS_RETURN {
		return code
	}
	if h := ce.errh.Load(); isUserErrh(h) && callUserErrhandler(ce, h, code) {
		return code
	}
	fmt.Fprintf(os.Stderr, "mpigo: %s (%s); the error handler is MPI_ERRORS_ARE_FATAL: aborting the job\n", msg, className[class])
	abortJob(ce.c, fatalStatus(err, class))
	return code
}

// fatalStatus is the status a rank ends with when err of class meets
// MPI_ERRORS_ARE_FATAL: the class, or, when the rank ends because another
// failed, mpi.ExitPeerFailed (as a Go rank's), so that the launcher
// reports the rank that failed first and its status, not this one's,
// whichever process it reaps first (over UCX a peer's exit is seen at
// once: a job of the ABI's fatal.c then ended with 101, not 6).
func fatalStatus(err error, class int32) int {
	if errors.Is(err, mpi.ErrProcFailed) {
		return mpi.ExitPeerFailed
	}
	return int(class)
}

// unsupported is the body of every function not implemented yet. The
// standard ABI is complete today, so the generated stubs call it only
// when functions.txt gains a function before its implementation.
//
//lint:ignore U1000 called by generated stubs of unimplemented functions
func unsupported(fn string, comm uintptr) int32 {
	return raise(fn, comm, classErr(MPI_ERR_UNSUPPORTED_OPERATION,
		fn+" is not implemented by mpigo yet (docs/abi.md lists what is)"))
}

// unsupportedT is the body of the tools interface's functions not
// implemented yet: they return MPI_T error codes and use no handler.
func unsupportedT(fn string) int32 {
	return MPI_T_ERR_NOT_SUPPORTED
}

// recoverCode turns a Go panic in an entry point into an MPI_ERR_INTERN
// code through the error handler: no panic crosses into C.
func recoverCode(fn string, rc *int32) {
	if v := recover(); v != nil {
		*rc = raise(fn, noComm, classErr(MPI_ERR_INTERN, fmt.Sprintf("internal error (Go panic): %v", v)))
	}
}

// recoverQuiet stops a Go panic in an entry point that returns no error
// code (MPI_Wtime, MPI_Comm_f2c, ...): its result is then the zero value.
func recoverQuiet(fn string) {
	if v := recover(); v != nil {
		fmt.Fprintf(os.Stderr, "mpigo: %s: internal error (Go panic): %v\n", fn, v)
	}
}

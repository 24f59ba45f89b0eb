//go:build cgo

package capi

/*
#include <stdint.h>
void mpigo_call_session_errhandler(void *fn, uintptr_t session, int code);
int mpigo_register_sessions_at_exit(void);
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/progress"
)

// Sessions (MPI-4.1 chapter 11) over mpi.Session. A program may use
// sessions without MPI_Init: while one is live the library is usable
// (usable), though MPI_COMM_WORLD and MPI_COMM_SELF exist only between
// MPI_Init and MPI_Finalize. Such a program's rank lives across its
// sessions and ends when the program exits (mpigoSessionsAtExit). Errors of a call on a session go to the
// session's handler (raiseSession).

// Handle kinds of this file, apart from every other file's.
const (
	kindSession     = 0x30
	kindSessionErrh = 0x31
)

// sessEntry is a session behind a handle, with its ABI error handler.
type sessEntry struct {
	s    *mpi.Session
	errh atomic.Uintptr
}

var (
	sessions     = &table[*sessEntry]{kind: kindSession}
	sessionErrhs = &table[errhEntry]{kind: kindSessionErrh}
	// liveSessions counts the sessions between MPI_Session_init and
	// MPI_Session_finalize.
	liveSessions atomic.Int32
)

// usable reports whether the library may be used: between MPI_Init and
// MPI_Finalize, or while a session is live.
func usable() bool {
	return phase.Load() == phaseRunning && !goFinalized() || liveSessions.Load() > 0
}

// sessionArg returns the session behind h, or nil and the error code.
func sessionArg(fn string, h uintptr) (*sessEntry, int32) {
	if h == MPI_SESSION_NULL {
		return nil, raise(fn, noComm, classErr(MPI_ERR_SESSION, "MPI_SESSION_NULL is not a session"))
	}
	if e, ok := sessions.get(h); ok {
		return e, 0
	}
	return nil, raise(fn, noComm, classErr(MPI_ERR_SESSION, fmt.Sprintf("%#x is not a session handle (finalized, garbage, or of another kind)", h)))
}

// raiseSession makes the code of err in call fn on session e and applies
// the session's handler, as raise does a communicator's.
func raiseSession(fn string, e *sessEntry, h uintptr, err error) int32 {
	class := classOf(err)
	msg := fn + ": " + err.Error()
	code := newCode(class, msg)
	switch eh := e.errh.Load(); {
	case eh == MPI_ERRORS_RETURN:
	case eh>>kindShift == kindSessionErrh:
		if u, ok := sessionErrhs.get(eh); ok {
			C.mpigo_call_session_errhandler(u.fn, C.uintptr_t(h), C.int(code))
		}
	default:
		fatalSession(fn, msg, class)
	}
	return code
}

// fatalSession ends the job for an error under MPI_ERRORS_ARE_FATAL or
// MPI_ERRORS_ABORT on a session: through world if it exists, else by
// exiting, which the launcher sees as the rank's failure.
func fatalSession(fn, msg string, class int32) {
	fmt.Fprintf(os.Stderr, "mpigo: %s (%s); the session's error handler is fatal: aborting the job\n", msg, className[class])
	var c *mpi.Comm
	if phase.Load() == phaseRunning {
		c = world.c
	}
	abortJob(c, int(class))
}

// sessionErrhArg checks an error handler for a session: predefined or
// made by MPI_Session_create_errhandler.
func sessionErrhArg(h uintptr) bool {
	switch h {
	case MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT:
		return true
	}
	_, ok := sessionErrhs.get(h)
	return ok
}

// optInfo is an info argument that may be MPI_INFO_NULL (nil).
func optInfo(fn string, h uintptr) (*mpi.Info, int32) {
	if h == MPI_INFO_NULL {
		return nil, 0
	}
	in, rc := infoArg(fn, h)
	if in == nil {
		return nil, rc
	}
	return in, 0
}

func implSession_init(info, errhandler uintptr, session unsafe.Pointer) int32 {
	const fn = "MPI_Session_init"
	if session == nil {
		return newCode(MPI_ERR_ARG, fn+": session is NULL")
	}
	in, rc := optInfo(fn, info)
	if rc != 0 {
		return rc
	}
	if !sessionErrhArg(errhandler) {
		return newCode(MPI_ERR_ERRHANDLER, fmt.Sprintf("%s: %#x is not an error handler for sessions", fn, errhandler))
	}
	initMu.Lock()
	defer initMu.Unlock()
	// As in MPI_Init: calls from C run on goroutines locked to their
	// threads, whose waits must not yield the Go way.
	progress.SetLockedCallers()
	s, err := mpi.SessionInit(in, nil)
	if err != nil {
		return newCode(classOf(err), fn+": "+err.Error())
	}
	e := &sessEntry{s: s}
	e.errh.Store(errhandler)
	liveSessions.Add(1)
	*(*uintptr)(session) = sessions.add(e)
	atExitOnce.Do(func() {
		if C.mpigo_register_sessions_at_exit() != 0 {
			fmt.Fprintf(os.Stderr, "mpigo: %s: atexit failed: a program that never calls MPI_Init will leave the job in the middle when it exits\n", fn)
		}
	})
	return MPI_SUCCESS
}

// atExitOnce registers mpigoSessionsAtExit with atexit (atexit.c).
var atExitOnce sync.Once

// mpigoSessionsAtExit runs when the C program exits (atexit). A program
// of the Sessions model never calls MPI_Finalize: once its sessions are
// all finalized, its rank ends here as MPI_Finalize would end it (waiting
// until no peer may still talk to it, then telling the launcher it left
// in order). A live session at exit, or MPI_Init without MPI_Finalize,
// leaves the rank as it is: the process leaves the job in the middle, and
// the launcher reports that. A failed end is printed, and the process
// exits with the status mpi.Main gives a failed rank, so that the failure
// is not lost behind the program's own status.
//
//export mpigoSessionsAtExit
func mpigoSessionsAtExit() {
	initMu.Lock()
	defer initMu.Unlock()
	if phase.Load() == phaseRunning || liveSessions.Load() > 0 {
		return
	}
	if err := mpi.FinalizeSessions(); err != nil {
		fmt.Fprintf(os.Stderr, "mpigo: the end of the rank at exit (after MPI_Session_finalize): %v\n", err)
		code := 1
		if errors.Is(err, mpi.ErrProcFailed) {
			code = mpi.ExitPeerFailed
		}
		os.Exit(code)
	}
}

func implSession_finalize(session unsafe.Pointer) int32 {
	const fn = "MPI_Session_finalize"
	if session == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "session is NULL"))
	}
	h := *(*uintptr)(session)
	e, rc := sessionArg(fn, h)
	if e == nil {
		return rc
	}
	initMu.Lock()
	defer initMu.Unlock()
	sessions.remove(h)
	*(*uintptr)(session) = MPI_SESSION_NULL
	err := e.s.Finalize()
	liveSessions.Add(-1)
	if err != nil {
		return raiseSession(fn, e, h, err)
	}
	return MPI_SUCCESS
}

func implSession_get_num_psets(session, info uintptr, n unsafe.Pointer) int32 {
	const fn = "MPI_Session_get_num_psets"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if n == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "npset_names is NULL"))
	}
	*(*int32)(n) = int32(e.s.NumPsets())
	return MPI_SUCCESS
}

// implSession_get_nth_pset follows MPI-4: *pset_len 0 only asks for the
// name's length with its NUL; otherwise the name is copied, cut to
// *pset_len-1 bytes, and *pset_len is set to its whole length with NUL.
func implSession_get_nth_pset(session, info uintptr, n int32, psetLen, name unsafe.Pointer) int32 {
	const fn = "MPI_Session_get_nth_pset"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if psetLen == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "pset_len is NULL"))
	}
	s, err := e.s.PsetName(int(n))
	if err != nil {
		return raiseSession(fn, e, session, err)
	}
	room := *(*int32)(psetLen)
	*(*int32)(psetLen) = int32(len(s) + 1)
	if room <= 0 {
		return MPI_SUCCESS
	}
	if name == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "pset_name is NULL"))
	}
	putString(name, nil, s, int(room))
	return MPI_SUCCESS
}

func implSession_get_pset_info(session uintptr, name, info unsafe.Pointer) int32 {
	const fn = "MPI_Session_get_pset_info"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if name == nil || info == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "pset_name or info is NULL"))
	}
	in, err := e.s.PsetInfo(cString(name))
	if err != nil {
		return raiseSession(fn, e, session, err)
	}
	*(*uintptr)(info) = infos.add(in)
	return MPI_SUCCESS
}

func implSession_get_info(session uintptr, info unsafe.Pointer) int32 {
	const fn = "MPI_Session_get_info"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if info == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "info_used is NULL"))
	}
	*(*uintptr)(info) = infos.add(e.s.Info())
	return MPI_SUCCESS
}

func implGroup_from_session_pset(session uintptr, name, group unsafe.Pointer) int32 {
	const fn = "MPI_Group_from_session_pset"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if name == nil || group == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "pset_name or newgroup is NULL"))
	}
	g, err := e.s.GroupFromPset(cString(name))
	if err != nil {
		return raiseSession(fn, e, session, err)
	}
	newGroup(g, group)
	return MPI_SUCCESS
}

func implSession_create_errhandler(fn, errhandler unsafe.Pointer) int32 {
	const name = "MPI_Session_create_errhandler"
	if fn == nil || errhandler == nil {
		return newCode(MPI_ERR_ARG, name+": session_errhandler_fn or errhandler is NULL")
	}
	*(*uintptr)(errhandler) = sessionErrhs.add(errhEntry{fn})
	return MPI_SUCCESS
}

func implSession_set_errhandler(session, errhandler uintptr) int32 {
	const fn = "MPI_Session_set_errhandler"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if !sessionErrhArg(errhandler) {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ERRHANDLER, fmt.Sprintf("%#x is not an error handler for sessions (freed, garbage, or one for communicators)", errhandler)))
	}
	e.errh.Store(errhandler)
	return MPI_SUCCESS
}

func implSession_get_errhandler(session uintptr, errhandler unsafe.Pointer) int32 {
	const fn = "MPI_Session_get_errhandler"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	if errhandler == nil {
		return raiseSession(fn, e, session, classErr(MPI_ERR_ARG, "errhandler is NULL"))
	}
	*(*uintptr)(errhandler) = e.errh.Load()
	return MPI_SUCCESS
}

func implSession_call_errhandler(session uintptr, code int32) int32 {
	const fn = "MPI_Session_call_errhandler"
	e, rc := sessionArg(fn, session)
	if e == nil {
		return rc
	}
	switch eh := e.errh.Load(); {
	case eh == MPI_ERRORS_RETURN:
	case eh>>kindShift == kindSessionErrh:
		if u, ok := sessionErrhs.get(eh); ok {
			C.mpigo_call_session_errhandler(u.fn, C.uintptr_t(session), C.int(code))
		}
	default:
		class, ok := codeClass(code)
		if !ok {
			class = MPI_ERR_OTHER
		}
		s, _ := codeString(code)
		fatalSession(fn, fmt.Sprintf("%s: error code %d (%s)", fn, code, s), class)
	}
	return MPI_SUCCESS
}

// commErrhArg is the handler of a communicator a session's call makes:
// MPI_ERRHANDLER_NULL gives MPI_ERRORS_ARE_FATAL, the initial handler.
func commErrhArg(h uintptr) (uintptr, bool) {
	switch h {
	case MPI_ERRHANDLER_NULL:
		return MPI_ERRORS_ARE_FATAL, true
	case MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT:
		return h, true
	}
	_, ok := errhandlers.get(h)
	return h, ok
}

// newSessionComm stores c as a new communicator handle at out, with the
// handler errh; a nil c (the creation from MPI_GROUP_EMPTY) is
// MPI_COMM_NULL.
func newSessionComm(c *mpi.Comm, errh uintptr, out unsafe.Pointer) {
	if c == nil {
		*(*uintptr)(out) = MPI_COMM_NULL
		return
	}
	ce := &commEntry{c: c}
	ce.errh.Store(errh)
	h := comms.add(ce)
	commHandles.Store(c, h)
	*(*uintptr)(out) = h
}

// groupCommArgs checks what MPI_Comm_create_from_group and
// MPI_Intercomm_create_from_groups share: the tag, info, handler and out
// pointer.
func groupCommArgs(fn string, tag unsafe.Pointer, info, errhandler uintptr, out unsafe.Pointer) (*mpi.Info, uintptr, int32) {
	if tag == nil || out == nil {
		return nil, 0, raise(fn, noComm, classErr(MPI_ERR_ARG, "stringtag or the new communicator is NULL"))
	}
	in, rc := optInfo(fn, info)
	if rc != 0 {
		return nil, 0, rc
	}
	h, ok := commErrhArg(errhandler)
	if !ok {
		return nil, 0, raise(fn, noComm, classErr(MPI_ERR_ERRHANDLER, fmt.Sprintf("%#x is not an error handler for communicators", errhandler)))
	}
	return in, h, 0
}

// groupCommFail is the error of a failed creation: raised through the
// handler the new communicator would have had, as MPI-4 asks.
func groupCommFail(fn string, h uintptr, err error) int32 {
	class := classOf(err)
	msg := fn + ": " + err.Error()
	code := newCode(class, msg)
	switch {
	case h == MPI_ERRORS_RETURN, isUserErrh(h):
		// A user handler needs a communicator to be called with:
		// there is none, so the code is returned.
	default:
		fatalSession(fn, msg, class)
	}
	return code
}

func implComm_create_from_group(group uintptr, tag unsafe.Pointer, info, errhandler uintptr, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_create_from_group"
	g, rc := groupArg(fn, group)
	if g == nil {
		return rc
	}
	in, h, rc := groupCommArgs(fn, tag, info, errhandler, newcomm)
	if rc != 0 {
		return rc
	}
	c, err := mpi.CommCreateFromGroup(g, cString(tag), in, nil)
	if err != nil {
		return groupCommFail(fn, h, err)
	}
	newSessionComm(c, h, newcomm)
	return MPI_SUCCESS
}

func implIntercomm_create_from_groups(local uintptr, localLeader int32, remote uintptr, remoteLeader int32, tag unsafe.Pointer, info, errhandler uintptr, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Intercomm_create_from_groups"
	lg, rc := groupArg(fn, local)
	if lg == nil {
		return rc
	}
	rg, rc := groupArg(fn, remote)
	if rg == nil {
		return rc
	}
	in, h, rc := groupCommArgs(fn, tag, info, errhandler, newcomm)
	if rc != 0 {
		return rc
	}
	c, err := mpi.IntercommCreateFromGroups(lg, int(localLeader), rg, int(remoteLeader), cString(tag), in, nil)
	if err != nil {
		return groupCommFail(fn, h, err)
	}
	newSessionComm(c, h, newcomm)
	return MPI_SUCCESS
}

// implGet_hw_resource_info is MPI-4.1's hardware info: the level of
// MPI_COMM_TYPE_SHARED and the processors (mpi.GetHwResourceInfo). It
// needs no initialization.
func implGet_hw_resource_info(hwInfo unsafe.Pointer) int32 {
	const fn = "MPI_Get_hw_resource_info"
	if hwInfo == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "hw_info is NULL"))
	}
	in, err := mpi.GetHwResourceInfo()
	if err != nil {
		return raise(fn, noComm, err)
	}
	*(*uintptr)(hwInfo) = infos.add(in)
	return MPI_SUCCESS
}

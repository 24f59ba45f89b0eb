package sockerr

import "syscall"

// The numbers Windows sockets report (winerror.h); internal/poll reports
// an overlapped read on a reset connection as ERROR_NETNAME_DELETED, and
// a connection the stack gave up on (a write after the peer reset it
// included) as WSAECONNABORTED.
const (
	wsaeNetUnreach  = syscall.Errno(10051)
	wsaeConnAborted = syscall.WSAECONNABORTED
	wsaeConnReset   = syscall.WSAECONNRESET
	wsaeHostUnreach = syscall.Errno(10065)
)

var (
	resetErrnos       = []error{wsaeConnReset, syscall.ERROR_NETNAME_DELETED, wsaeConnAborted}
	brokenErrnos      = []error{wsaeConnReset, wsaeConnAborted, syscall.ERROR_BROKEN_PIPE}
	unreachableErrnos = []error{wsaeNetUnreach, wsaeHostUnreach}
)

package mpi

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Error classes. Every error an mpi call returns wraps exactly one of them,
// so errors.Is(err, mpi.ErrTruncate) tells what went wrong; the message
// itself names the call, the rank, the communicator, the peer and the tag.
var (
	ErrBuffer     = errors.New("invalid buffer")
	ErrCount      = errors.New("invalid count")
	ErrType       = errors.New("type mismatch")
	ErrTag        = errors.New("invalid tag")
	ErrComm       = errors.New("invalid communicator")
	ErrRank       = errors.New("invalid rank")
	ErrRoot       = errors.New("invalid root")
	ErrRequest    = errors.New("invalid request")
	ErrTruncate   = errors.New("message truncated")
	ErrOp         = errors.New("invalid operation")
	ErrArg        = errors.New("invalid argument")
	ErrGroup      = errors.New("invalid group")
	ErrKeyval     = errors.New("invalid attribute key")
	ErrProcFailed = errors.New("process failed")
	ErrIntern     = errors.New("internal error")
	ErrOther      = errors.New("other error")
	// ErrSpawn: processes could not be spawned (MPI_ERR_SPAWN): the
	// launcher cannot, the program is missing, the children failed.
	ErrSpawn = errors.New("spawn failed")
	// ErrPort: a port name that is not one, or whose job is gone
	// (MPI_ERR_PORT).
	ErrPort = errors.New("invalid port")
	// ErrName: a service name that is not published (MPI_ERR_NAME).
	ErrName = errors.New("service name not published")
	// ErrService: a service that cannot be published or unpublished
	// (MPI_ERR_SERVICE).
	ErrService = errors.New("invalid service")
)

// Error is the error type of the mpi package. It records where an error
// happened; Unwrap returns its class (ErrTruncate, ErrRank, ...).
type Error struct {
	Class error  // one of the Err* classes
	Op    string // the call, e.g. "Recv"
	Rank  int    // world rank of the caller; NoRank for a call without a communicator
	Comm  string // communicator name
	Peer  string // e.g. "source 3" or "dest 2"; empty if none
	Tag   string // e.g. "tag 5"; empty if none
	Msg   string // details
	Cause error  // an underlying error, if any
}

// NoRank is the Rank of an Error from a call that has no communicator,
// and so no rank to name: datatype and group calls, ReduceLocal, calls on
// a nil communicator or a nil request.
const NoRank = -1

// Error formats the error as "mpi: OP on rank R of COMM (PEER, TAG):
// CLASS: DETAILS". A call without a communicator says so instead of
// naming a rank: "mpi: OP (no communicator): ...", or "mpi: OP on a nil
// communicator: ...".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Rank >= 0:
		fmt.Fprintf(&b, "mpi: %s on rank %d", e.Op, e.Rank)
		if e.Comm != "" {
			fmt.Fprintf(&b, " of %s", e.Comm)
		}
	case e.Comm != "":
		fmt.Fprintf(&b, "mpi: %s on %s", e.Op, e.Comm)
	default:
		fmt.Fprintf(&b, "mpi: %s (no communicator)", e.Op)
	}
	if e.Peer != "" || e.Tag != "" {
		b.WriteString(" (")
		b.WriteString(e.Peer)
		if e.Peer != "" && e.Tag != "" {
			b.WriteString(", ")
		}
		b.WriteString(e.Tag)
		b.WriteString(")")
	}
	b.WriteString(": ")
	if e.Cause != nil && e.Msg == "" && strings.HasPrefix(e.Cause.Error(), e.Class.Error()) {
		// The cause already says what class it is.
		b.WriteString(e.Cause.Error())
		return b.String()
	}
	b.WriteString(e.Class.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Cause != nil && !errors.Is(e.Class, e.Cause) {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the error's class and its cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Class, e.Cause}
	}
	return []error{e.Class}
}

// ErrHandler decides what happens when a call on a communicator fails.
// The predefined handlers are ErrorsReturn (the default: the error is
// returned) and ErrorsAreFatal (the job is aborted). NewErrHandler makes a
// handler from a function, which is called before the error is returned.
type ErrHandler struct {
	fatal bool
	fn    func(c *Comm, err error)
	sfn   func(s *Session, err error) // a session's (NewSessionErrHandler)
}

// Predefined error handlers.
var (
	// ErrorsReturn returns errors to the caller (MPI_ERRORS_RETURN).
	ErrorsReturn = &ErrHandler{}
	// ErrorsAreFatal prints the error and aborts the whole job
	// (MPI_ERRORS_ARE_FATAL), for programs that prefer not to check.
	ErrorsAreFatal = &ErrHandler{fatal: true}
)

// NewErrHandler returns a handler that calls fn with the communicator and
// the error; the call then returns the error as usual.
func NewErrHandler(fn func(c *Comm, err error)) *ErrHandler { return &ErrHandler{fn: fn} }

// loc is where a point-to-point call points: its peer and tag. The zero
// value means none.
type loc struct {
	what      string // "dest", "source", "root"; empty: no peer
	peer, tag int
	hasTag    bool
}

func at(what string, peer, tag int) loc { return loc{what: what, peer: peer, tag: tag, hasTag: true} }

// errorf builds an *Error for call op on c.
func (c *Comm) errorf(op string, class error, l loc, format string, args ...any) error {
	e := &Error{Class: class, Op: op, Rank: NoRank, Msg: fmt.Sprintf(format, args...)}
	if l.what != "" {
		e.Peer = peerStr(l.what, l.peer)
	}
	if l.hasTag {
		e.Tag = tagStr(l.tag)
	}
	if c != nil && c.p != nil {
		e.Rank = c.p.Rank
		e.Comm = c.Name()
	}
	return e
}

// fail is the error of a failed call on c, made as errorf makes it and
// passed through c's error handler (c.handle(c.errorf(...))).
func (c *Comm) fail(op string, class error, l loc, format string, args ...any) error {
	return c.handle(c.errorf(op, class, l, format, args...))
}

// handle passes a failed call's error through c's error handler.
func (c *Comm) handle(err error) error {
	if err == nil || c == nil {
		return err
	}
	h := c.errh.Load()
	if h == nil || h == ErrorsReturn {
		return err
	}
	if h.fn != nil {
		h.fn(c, err)
	}
	if h.fatal {
		c.p.job.abort(c.p.Rank, 1, fmt.Errorf("error handler ErrorsAreFatal: %w", err))
	}
	return err
}

// peerStr and tagStr format the peer and tag of an error message.
func peerStr(what string, r int) string {
	switch r {
	case AnySource:
		return what + " AnySource"
	case ProcNull:
		return what + " ProcNull"
	}
	return fmt.Sprintf("%s %d", what, r)
}

func tagStr(t int) string {
	if t == AnyTag {
		return "tag AnyTag"
	}
	return fmt.Sprintf("tag %d", t)
}

// stderr is where fatal messages go; tests replace it.
var stderr = os.Stderr

package mpi

import (
	"sync"
	"sync/atomic"
)

// This file is the profiling hook: what the PMPI_ entry points are to C
// tools. Go has no link-time interposition, so every public call of the
// package begins with
//
//	if h := profiler.Load(); h != nil {
//		defer h.exit(h.enter("Comm.Send", c, dest, tag), &err)
//	}
//
// which costs one load and one well-predicted branch while no Profiler is
// set. TestProfilerCoversEveryCall checks that every exported function
// and method that returns an error carries it; `go run ./internal/profhook
// FILES` inserts it where it is missing.

// Profiler watches every call into the package, as a PMPI tool does in C
// (MPI-3.1 section 14.2). Set one with SetProfiler.
//
// Enter is called when a call begins, before it checks its arguments;
// Exit when it returns, with the error it returns (nil if it panicked).
// Both are called on the caller's goroutine, and so concurrently from the
// goroutines of every rank of the process: a Profiler must be safe for
// concurrent use. The *Call is the same in Enter and Exit, and its Data
// field is the Profiler's, to carry state from one to the other (a start
// time, a trace span); the Call is reused after Exit returns, so a
// Profiler that keeps it must keep a copy.
//
// A call that the package implements with other public calls (a typed
// collective waiting on requests, say) reports only itself: internal
// work is not reported. Local accessors that cannot fail and return no
// error (Rank, Size, Name, Status.Count, the Op constructors) are not
// reported either; Abort is.
//
// Pcontrol receives the level of an MPI_Pcontrol call (mpi.Pcontrol), the
// user's way of telling a tool to profile more, less or not at all.
type Profiler interface {
	Enter(c *Call)
	Exit(c *Call, err error)
	Pcontrol(level int)
}

// Call describes one call into the package as a Profiler sees it.
type Call struct {
	// Name is the call's Go name: "Send" for the function mpi.Send,
	// "Comm.Send" for the method (*Comm).Send, "Request.Wait", "WaitAll".
	Name string
	// Comm is the communicator the call is made on, nil if it has none
	// (a Group or Datatype call). Calls on several requests (WaitAll,
	// TestAny, ...) report the communicator of the first.
	Comm *Comm
	// Rank is the caller's rank in its world communicator, or -1 if the
	// call has no communicator.
	Rank int
	// Peer is the destination, source or root the call names, as a rank
	// of Comm (possibly AnySource or ProcNull), or Undefined if it names
	// none.
	Peer int
	// Tag is the call's tag (possibly AnyTag), or Undefined if it has none.
	Tag int
	// Data belongs to the Profiler: set it in Enter, read it in Exit.
	Data any

	t0 int64 // the start of the call, for the package's own tracer (trace.go)
}

// profHook holds the Profiler in force.
type profHook struct{ p Profiler }

// profiler is the hook every public call tests; nil when none is set.
var profiler atomic.Pointer[profHook]

// SetProfiler makes p watch every call into the package from now on, and
// returns the Profiler it replaces (nil if none). SetProfiler(nil)
// removes it. Calls in flight when the Profiler changes report their Exit
// to the Profiler that saw their Enter.
func SetProfiler(p Profiler) Profiler {
	var h *profHook
	if p != nil {
		h = &profHook{p: p}
	}
	old := profiler.Swap(h)
	if old == nil {
		return nil
	}
	return old.p
}

// CurrentProfiler returns the Profiler in force, or nil.
func CurrentProfiler() Profiler {
	if h := profiler.Load(); h != nil {
		return h.p
	}
	return nil
}

var profCallPool = sync.Pool{New: func() any { return new(Call) }}

// enter reports the start of call name on c to the Profiler.
func (h *profHook) enter(name string, c *Comm, peer, tag int) *Call {
	call := profCallPool.Get().(*Call)
	*call = Call{Name: name, Comm: c, Rank: -1, Peer: peer, Tag: tag}
	if c != nil && c.p != nil {
		call.Rank = c.p.Rank
	}
	h.p.Enter(call)
	return call
}

// exit reports the end of call with the error *err.
func (h *profHook) exit(call *Call, err *error) {
	h.p.Exit(call, *err)
	*call = Call{}
	profCallPool.Put(call)
}

// profPcontrol forwards an MPI_Pcontrol level to the Profiler in force;
// mpi.Pcontrol calls it.
func profPcontrol(level int) {
	if h := profiler.Load(); h != nil {
		h.p.Pcontrol(level)
	}
}

// comm returns the communicator of r, nil for a nil request.
func (r *Request) comm() *Comm {
	if r == nil {
		return nil
	}
	return r.c
}

// comm returns the communicator of p's request.
func (p *Pending[T]) comm() *Comm {
	if p == nil {
		return nil
	}
	return p.req.comm()
}

// comm returns the communicator of f's request.
func (f *Future[T]) comm() *Comm {
	if f == nil {
		return nil
	}
	return f.req.comm()
}

// comm returns the communicator m was probed on.
func (m *Message) comm() *Comm {
	if m == nil {
		return nil
	}
	return m.c
}

// requestsComm returns the communicator of the first request of reqs
// that has one: the call's communicator for a Profiler.
func requestsComm(reqs []*Request) *Comm {
	for _, r := range reqs {
		if r != nil && r.c != nil {
			return r.c
		}
	}
	return nil
}

// waitersComm is requestsComm for Waiters.
func waitersComm(reqs []Waiter) *Comm {
	for _, w := range reqs {
		if w == nil {
			continue
		}
		if r := w.request(); r != nil && r.c != nil {
			return r.c
		}
	}
	return nil
}

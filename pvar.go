package mpi

import (
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
)

// This file is the performance-variable half of the tools interface
// (MPI-3.1 section 14.3.7). Two kinds of state stand behind the variables:
//
//   - levels the engine keeps anyway (the lengths of its posted and
//     unexpected queues), read by walking the queues when a tool reads;
//   - per-rank counters (bytes and messages sent to and received from each
//     world rank, time blocked in waits) that are counted only while some
//     handle of the rank has started a variable that needs them. Until
//     then the hot path pays one load and one branch per send, delivery
//     and wait.

// PvarClass is the class of a performance variable (MPI_T_PVAR_CLASS_*):
// what its value means and how it behaves.
type PvarClass int

// Performance variable classes (MPI-3.1 section 14.3.7).
const (
	PvarState         PvarClass = iota // a discrete state
	PvarLevel                          // a current level (queue length)
	PvarSize                           // a fixed size
	PvarPercentage                     // a fraction of a resource in use
	PvarHighWatermark                  // the highest level seen
	PvarLowWatermark                   // the lowest level seen
	PvarCounter                        // a count of events
	PvarAggregate                      // a sum of values of events
	PvarTimer                          // time spent, in nanoseconds here
	PvarGeneric                        // anything else
)

var pvarClassNames = [...]string{"state", "level", "size", "percentage", "highwatermark", "lowwatermark", "counter", "aggregate", "timer", "generic"}

// String returns the class's name, e.g. "counter".
func (k PvarClass) String() string {
	if k >= 0 && int(k) < len(pvarClassNames) {
		return pvarClassNames[k]
	}
	return "PvarClass(" + strconv.Itoa(int(k)) + ")"
}

// Bind tells what kind of object a tools variable is bound to
// (MPI_T_BIND_*).
type Bind int

// Bindings. mpigo's variables bind to nothing or to a communicator.
const (
	BindNoObject Bind = iota // MPI_T_BIND_NO_OBJECT
	BindComm                 // MPI_T_BIND_MPI_COMM
)

// String returns "none" or "comm".
func (b Bind) String() string {
	switch b {
	case BindNoObject:
		return "none"
	case BindComm:
		return "comm"
	}
	return "Bind(" + strconv.Itoa(int(b)) + ")"
}

// Verbosity is who a tools variable is meant for (MPI_T_VERBOSITY_*): the
// end user, a performance tuner or an MPI developer, at a basic, detailed
// or complete level.
type Verbosity int

// Verbosity levels, from the most to the least widely useful.
const (
	UserBasic Verbosity = iota
	UserDetail
	UserAll
	TunerBasic
	TunerDetail
	TunerAll
	DevBasic
	DevDetail
	DevAll
)

var verbosityNames = [...]string{"user-basic", "user-detail", "user-all", "tuner-basic", "tuner-detail", "tuner-all", "dev-basic", "dev-detail", "dev-all"}

// String returns the level's name, e.g. "tuner-basic".
func (v Verbosity) String() string {
	if v >= 0 && int(v) < len(verbosityNames) {
		return verbosityNames[v]
	}
	return "Verbosity(" + strconv.Itoa(int(v)) + ")"
}

// PvarInfo describes a performance variable (MPI_T_pvar_get_info).
type PvarInfo struct {
	Index     int
	Name      string
	Desc      string
	Verbosity Verbosity
	Class     PvarClass
	// Type is the type of each element of the value: uint64 for every
	// variable of mpigo.
	Type reflect.Type
	// Unit is what the value counts: "messages", "bytes", "nanoseconds".
	Unit string
	Bind Bind
	// PerPeer variables have one element per rank of the communicator
	// their handle is bound to; the others have one element.
	PerPeer bool
	// ReadOnly variables cannot be written or reset.
	ReadOnly bool
	// Continuous variables are always active and cannot be started or
	// stopped; the others count only while their handle is started.
	Continuous bool
	// Atomic variables support ReadReset as one atomic step.
	Atomic bool
}

// pvarKind says where a variable's value comes from.
type pvarKind int

const (
	pvPosted pvarKind = iota
	pvUnexpected
	pvSentBytes
	pvSentMsgs
	pvRecvBytes
	pvRecvMsgs
	pvWaitTime
)

type pvarDef struct {
	PvarInfo
	kind pvarKind
}

var uint64Type = reflect.TypeFor[uint64]()

var pvarDefs = buildPvars()

func buildPvars() []pvarDef {
	l := []pvarDef{
		{PvarInfo{Name: "posted_queue_length", Desc: "receives posted on the communicator by this rank that no message has matched yet",
			Verbosity: TunerBasic, Class: PvarLevel, Unit: "requests", ReadOnly: true, Continuous: true}, pvPosted},
		{PvarInfo{Name: "unexpected_queue_length", Desc: "messages that arrived at this rank on the communicator before a receive matched them",
			Verbosity: TunerBasic, Class: PvarLevel, Unit: "messages", ReadOnly: true, Continuous: true}, pvUnexpected},
		{PvarInfo{Name: "bytes_sent", Desc: "bytes of the messages this rank started to send to each rank of the communicator, on any communicator, collectives' own messages included",
			Verbosity: TunerBasic, Class: PvarCounter, Unit: "bytes", PerPeer: true}, pvSentBytes},
		{PvarInfo{Name: "messages_sent", Desc: "messages this rank started to send to each rank of the communicator, on any communicator, collectives' own messages included",
			Verbosity: TunerBasic, Class: PvarCounter, Unit: "messages", PerPeer: true}, pvSentMsgs},
		{PvarInfo{Name: "bytes_received", Desc: "bytes of the messages that arrived at this rank from each rank of the communicator, on any communicator, collectives' own messages included",
			Verbosity: TunerBasic, Class: PvarCounter, Unit: "bytes", PerPeer: true}, pvRecvBytes},
		{PvarInfo{Name: "messages_received", Desc: "messages that arrived at this rank from each rank of the communicator, on any communicator, collectives' own messages included",
			Verbosity: TunerBasic, Class: PvarCounter, Unit: "messages", PerPeer: true}, pvRecvMsgs},
		{PvarInfo{Name: "wait_time", Desc: "time this rank spent blocked waiting for requests to complete (blocking sends and receives, Wait calls, collectives)",
			Verbosity: TunerBasic, Class: PvarTimer, Unit: "nanoseconds"}, pvWaitTime},
	}
	for i := range l {
		l[i].Index, l[i].Type, l[i].Bind, l[i].Atomic = i, uint64Type, BindComm, !l[i].ReadOnly
	}
	return l
}

// Pvars lists the performance variables (MPI_T_pvar_get_num is its
// length, MPI_T_pvar_get_info its elements). The list and the indices are
// the same for the life of the process.
func Pvars() []PvarInfo {
	l := make([]PvarInfo, len(pvarDefs))
	for i := range pvarDefs {
		l[i] = pvarDefs[i].PvarInfo
	}
	return l
}

// PvarIndex returns the index of the performance variable called name
// (MPI_T_pvar_get_index), or an error of class ErrToolName.
func PvarIndex(name string) (int, error) {
	for i := range pvarDefs {
		if pvarDefs[i].Name == name {
			return i, nil
		}
	}
	return -1, toolErr("PvarIndex", ErrToolName, "no performance variable %q", name)
}

// PvarSession is a set of performance-variable handles
// (MPI_T_pvar_session): handles of one session start, stop and count
// independently of those of any other, so several tools can measure at
// once. A session is safe for concurrent use. Calls on a nil or freed
// session fail with ErrToolHandle.
type PvarSession struct {
	mu      sync.Mutex
	handles []*PvarHandle
	freed   bool
}

// NewPvarSession starts a session (MPI_T_pvar_session_create).
func NewPvarSession() *PvarSession { return &PvarSession{} }

// PvarHandle is a performance variable bound to a communicator, in a
// session (MPI_T_pvar_handle). Calls on a nil or freed handle fail with
// ErrToolHandle; Info and Count answer zero values for a nil one.
type PvarHandle struct {
	s     *PvarSession
	def   *pvarDef
	p     *proc
	ctx   uint32
	group []int // world ranks of the communicator's members
	n     int

	// Under s.mu:
	started bool
	freed   bool
	acc     []uint64 // counted before the last start
	base    []uint64 // the counters at the last start
}

// Handle binds variable index to communicator c in s and returns the
// handle (MPI_T_pvar_handle_alloc); Count tells how many elements its
// value has. Variables that are not continuous start stopped.
func (s *PvarSession) Handle(index int, c *Comm) (*PvarHandle, error) {
	if s == nil {
		return nil, nilPvarHandle("PvarSession.Handle")
	}
	if index < 0 || index >= len(pvarDefs) {
		return nil, toolErr("PvarSession.Handle", ErrToolIndex, "no performance variable with index %d (there are %d)", index, len(pvarDefs))
	}
	if c == nil || c.p == nil {
		return nil, toolErr("PvarSession.Handle", ErrComm, "performance variable %s needs a communicator", pvarDefs[index].Name)
	}
	d := &pvarDefs[index]
	h := &PvarHandle{s: s, def: d, p: c.p, ctx: c.ctx, group: c.group, n: 1}
	if d.PerPeer {
		h.n = len(c.group)
	}
	h.acc = make([]uint64, h.n)
	h.base = make([]uint64, h.n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.freed {
		return nil, toolErr("PvarSession.Handle", ErrToolHandle, "the session has been freed")
	}
	s.handles = append(s.handles, h)
	return h, nil
}

// Info describes h's variable; the zero PvarInfo for a nil *PvarHandle.
func (h *PvarHandle) Info() PvarInfo {
	if h == nil {
		return PvarInfo{}
	}
	return h.def.PvarInfo
}

// Count returns the number of elements of h's value: the size of the
// communicator for per-peer variables, else 1; 0 for a nil *PvarHandle.
func (h *PvarHandle) Count() int {
	if h == nil {
		return 0
	}
	return h.n
}

// nilPvarHandle is the error of a call on a nil *PvarHandle or
// *PvarSession.
func nilPvarHandle(op string) error {
	return toolErr(op, ErrToolHandle, "nil handle")
}

// check reports why h cannot be used. s.mu is held.
func (h *PvarHandle) check(op string) error {
	if h.freed || h.s.freed {
		return toolErr(op, ErrToolHandle, "the handle of %s has been freed", h.def.Name)
	}
	return nil
}

// current reads the variable's raw value now into v.
func (h *PvarHandle) current(v []uint64) {
	st := &h.p.Stats
	var c []atomic.Uint64
	switch h.def.kind {
	case pvPosted, pvUnexpected:
		posted, unexp := h.p.Eng.QueueLens(h.ctx, false)
		v[0] = uint64(posted)
		if h.def.kind == pvUnexpected {
			v[0] = uint64(unexp)
		}
		return
	case pvWaitTime:
		v[0] = st.WaitNs.Load()
		return
	case pvSentBytes:
		c = st.SentBytes
	case pvSentMsgs:
		c = st.SentMsgs
	case pvRecvBytes:
		c = st.RecvBytes
	case pvRecvMsgs:
		c = st.RecvMsgs
	}
	for i, w := range h.group {
		if w < len(c) {
			v[i] = c[w].Load()
		} else {
			v[i] = 0
		}
	}
}

// Start starts counting (MPI_T_pvar_start). Starting a started handle
// does nothing; a continuous variable cannot be started (ErrPvarNoStartStop).
func (h *PvarHandle) Start() error {
	if h == nil {
		return nilPvarHandle("PvarHandle.Start")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.start("PvarHandle.Start")
}

func (h *PvarHandle) start(op string) error {
	if err := h.check(op); err != nil {
		return err
	}
	if h.def.Continuous {
		return toolErr(op, ErrPvarNoStartStop, "%s is continuous: it is always active", h.def.Name)
	}
	if h.started {
		return nil
	}
	st := &h.p.Stats
	st.Mu.Lock()
	if h.def.kind == pvWaitTime {
		st.WaitOn.Add(1)
	} else {
		if st.SentMsgs == nil {
			n := h.p.job.Size
			st.SentBytes, st.SentMsgs = make([]atomic.Uint64, n), make([]atomic.Uint64, n)
			st.RecvBytes, st.RecvMsgs = make([]atomic.Uint64, n), make([]atomic.Uint64, n)
		}
		st.On.Add(1)
	}
	st.Mu.Unlock()
	h.current(h.base)
	h.started = true
	return nil
}

// Stop stops counting (MPI_T_pvar_stop); the value stays readable.
// Stopping a stopped handle does nothing.
func (h *PvarHandle) Stop() error {
	if h == nil {
		return nilPvarHandle("PvarHandle.Stop")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.stop("PvarHandle.Stop")
}

func (h *PvarHandle) stop(op string) error {
	if err := h.check(op); err != nil {
		return err
	}
	if h.def.Continuous {
		return toolErr(op, ErrPvarNoStartStop, "%s is continuous: it is always active", h.def.Name)
	}
	if !h.started {
		return nil
	}
	cur := make([]uint64, h.n)
	h.current(cur)
	for i := range cur {
		h.acc[i] += cur[i] - h.base[i]
	}
	h.started = false
	st := &h.p.Stats
	st.Mu.Lock()
	if h.def.kind == pvWaitTime {
		st.WaitOn.Add(-1)
	} else {
		st.On.Add(-1)
	}
	st.Mu.Unlock()
	return nil
}

// value computes h's value into v. s.mu is held.
func (h *PvarHandle) value(v []uint64) {
	if h.def.Continuous {
		h.current(v)
		return
	}
	if h.started {
		h.current(v)
		for i := range v {
			v[i] = h.acc[i] + v[i] - h.base[i]
		}
		return
	}
	copy(v, h.acc)
}

// Read returns h's value, Count elements (MPI_T_pvar_read).
func (h *PvarHandle) Read() ([]uint64, error) {
	if h == nil {
		return nil, nilPvarHandle("PvarHandle.Read")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if err := h.check("PvarHandle.Read"); err != nil {
		return nil, err
	}
	v := make([]uint64, h.n)
	h.value(v)
	return v, nil
}

// Write sets h's value to vals, Count elements (MPI_T_pvar_write); the
// variable then counts on from there. Read-only variables give
// ErrPvarNoWrite.
func (h *PvarHandle) Write(vals []uint64) error {
	if h == nil {
		return nilPvarHandle("PvarHandle.Write")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.write("PvarHandle.Write", vals)
}

func (h *PvarHandle) write(op string, vals []uint64) error {
	if err := h.check(op); err != nil {
		return err
	}
	if h.def.ReadOnly {
		return toolErr(op, ErrPvarNoWrite, "%s is read-only", h.def.Name)
	}
	if len(vals) != h.n {
		return toolErr(op, ErrCount, "%s has %d elements, got %d values", h.def.Name, h.n, len(vals))
	}
	copy(h.acc, vals)
	if h.started {
		h.current(h.base)
	}
	return nil
}

// Reset sets h's value to zero (MPI_T_pvar_reset).
func (h *PvarHandle) Reset() error {
	if h == nil {
		return nilPvarHandle("PvarHandle.Reset")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.write("PvarHandle.Reset", make([]uint64, h.n))
}

// ReadReset returns h's value and sets it to zero in one step
// (MPI_T_pvar_readreset): no event is lost between the two.
func (h *PvarHandle) ReadReset() ([]uint64, error) {
	if h == nil {
		return nil, nilPvarHandle("PvarHandle.ReadReset")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if err := h.check("PvarHandle.ReadReset"); err != nil {
		return nil, err
	}
	if h.def.ReadOnly {
		return nil, toolErr("PvarHandle.ReadReset", ErrPvarNoWrite, "%s is read-only", h.def.Name)
	}
	v := make([]uint64, h.n)
	if !h.started {
		copy(v, h.acc)
		clear(h.acc)
		return v, nil
	}
	cur := make([]uint64, h.n)
	h.current(cur)
	for i := range v {
		v[i] = h.acc[i] + cur[i] - h.base[i]
	}
	clear(h.acc)
	copy(h.base, cur)
	return v, nil
}

// Free stops h if it is started and releases it (MPI_T_pvar_handle_free).
func (h *PvarHandle) Free() error {
	if h == nil {
		return nilPvarHandle("PvarHandle.Free")
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.free("PvarHandle.Free")
}

func (h *PvarHandle) free(op string) error {
	if err := h.check(op); err != nil {
		return err
	}
	if h.started {
		h.stop(op)
	}
	h.freed = true
	return nil
}

// each applies f to every live, non-continuous handle of s (the
// MPI_T_PVAR_ALL_HANDLES forms of start, stop and reset).
func (s *PvarSession) each(op string, f func(h *PvarHandle) error) error {
	if s == nil {
		return nilPvarHandle(op)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.freed {
		return toolErr(op, ErrToolHandle, "the session has been freed")
	}
	for _, h := range s.handles {
		if h.freed || h.def.Continuous {
			continue
		}
		if err := f(h); err != nil {
			return err
		}
	}
	return nil
}

// StartAll starts every handle of s whose variable can be started
// (MPI_T_pvar_start with MPI_T_PVAR_ALL_HANDLES).
func (s *PvarSession) StartAll() error {
	return s.each("PvarSession.StartAll", func(h *PvarHandle) error { return h.start("PvarSession.StartAll") })
}

// StopAll stops every started handle of s (MPI_T_pvar_stop with
// MPI_T_PVAR_ALL_HANDLES).
func (s *PvarSession) StopAll() error {
	return s.each("PvarSession.StopAll", func(h *PvarHandle) error { return h.stop("PvarSession.StopAll") })
}

// ResetAll resets every writable handle of s (MPI_T_pvar_reset with
// MPI_T_PVAR_ALL_HANDLES).
func (s *PvarSession) ResetAll() error {
	return s.each("PvarSession.ResetAll", func(h *PvarHandle) error {
		if h.def.ReadOnly {
			return nil
		}
		return h.write("PvarSession.ResetAll", make([]uint64, h.n))
	})
}

// Free stops and frees every handle of s, then s itself
// (MPI_T_pvar_session_free).
func (s *PvarSession) Free() error {
	if s == nil {
		return nilPvarHandle("PvarSession.Free")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.freed {
		return toolErr("PvarSession.Free", ErrToolHandle, "the session has been freed already")
	}
	for _, h := range s.handles {
		if !h.freed {
			h.free("PvarSession.Free")
		}
	}
	s.freed, s.handles = true, nil
	return nil
}

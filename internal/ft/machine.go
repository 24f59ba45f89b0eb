package ft

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Default heartbeat period and timeout.
const (
	DefaultPeriod  = 250 * time.Millisecond
	DefaultTimeout = 3 * time.Second
)

// EarlyMax bounds the revoke notices kept for communicators a rank has not
// made yet; past it the oldest goes.
const EarlyMax = 256

// Keep is how many decided instances of a communicator a rank keeps to
// answer late members.
const Keep = 8

// Config describes one rank's machine.
type Config struct {
	// Rank is this rank's world rank, Size the number of ranks in the job.
	Rank, Size int
	// Remote says which world ranks run in another process: heartbeats go
	// to them and are expected from them. nil: none (goroutine ranks,
	// which learn of each other's failures from the job).
	Remote []bool
	// Period is the heartbeat period and Timeout the silence after which
	// a remote rank is failed; 0 means the default. Timeout is at least
	// two periods.
	Period, Timeout time.Duration
	// Comm describes the communicator this rank has made whose
	// point-to-point context is ctx, for a revoke notice about it; false
	// if it has none. A communicator a notice cannot revoke (an
	// intercommunicator, or ctx is another communicator's collective
	// context) is described with no members. It is called while the
	// machine runs and must not call back into it.
	Comm func(ctx uint32) (Comm, bool)
}

// Comm is what the machine knows of one of this rank's communicators.
type Comm struct {
	Key     Key
	Members []int // world ranks, in rank order
}

// CommOf describes a communicator of the given context and members.
func CommOf(ctx uint32, members []int) Comm {
	return Comm{Key: Key{Ctx: ctx, Group: GroupHash(members)}, Members: members}
}

// Combine combines a proposal's value in into the value acc accumulated
// so far and returns the result (it may reuse acc). An error makes the
// proposal count for nothing.
type Combine func(acc, in []byte) ([]byte, error)

// Out collects a machine's outputs. The caller carries them out once the
// call returns, in the order of each list: Failures (fail what depends on
// the rank), then Revokes, then Decisions (wake the callers waiting), and
// Sends, which may wait for a goroutine of their own.
type Out struct {
	Sends     []Send
	Failures  []Failure
	Revokes   []Revocation
	Decisions []Decision
}

// Reset empties o, keeping its storage.
func (o *Out) Reset() {
	clear(o.Sends)
	clear(o.Failures)
	clear(o.Revokes)
	clear(o.Decisions)
	o.Sends, o.Failures, o.Revokes, o.Decisions = o.Sends[:0], o.Failures[:0], o.Revokes[:0], o.Decisions[:0]
}

// Empty reports whether o holds nothing.
func (o *Out) Empty() bool {
	return len(o.Sends)+len(o.Failures)+len(o.Revokes)+len(o.Decisions) == 0
}

// Send is a control message to send to world rank To. Body may be shared
// by several Sends and must not be changed.
type Send struct {
	To   int
	Kind Kind
	Body []byte
}

// Failure says that world rank Rank is now known failed, and why.
type Failure struct {
	Rank  int
	Cause error
}

// Revocation says that the communicator Key, made here, is revoked: by
// world rank By.
type Revocation struct {
	Key Key
	By  int
}

// Decision is the outcome of an agreement this rank entered: the combined
// Value and the members agreed failed (world ranks, in group order), or
// Err if the machine stopped first. Value and Failed are shared and must
// not be changed.
type Decision struct {
	ID     AgreeID
	Value  []byte
	Failed []int
	Err    error
}

// Machine is the fault-tolerance state of one rank. It is not safe for
// concurrent use: the caller serializes its calls.
type Machine struct {
	cfg             Config
	period, timeout time.Duration

	heard    []time.Time // when each remote rank was last heard from
	lastTick time.Time

	failed   []int  // world ranks known failed, in the order learnt
	isFailed []bool // by world rank

	revoked    map[uint32]uint64 // revoked communicators here: context → group hash
	early      map[Key]int       // notices for communicators not made yet: the revoking rank
	earlyOrder []Key             // early's keys, oldest first

	seqs   map[Key]uint64
	agrees map[AgreeID]*agreement // instances entered or heard of, recent decided ones
	open   map[AgreeID]*agreement // instances entered and not decided
	dead   error                  // Stop was called: no more agreements
}

// New returns the machine of cfg.Rank, with every remote rank last heard
// from at now.
func New(cfg Config, now time.Time) *Machine {
	m := &Machine{cfg: cfg, isFailed: make([]bool, cfg.Size),
		revoked: map[uint32]uint64{}, early: map[Key]int{},
		seqs: map[Key]uint64{}, agrees: map[AgreeID]*agreement{}, open: map[AgreeID]*agreement{}}
	if slices.Contains(cfg.Remote, true) {
		m.period, m.timeout = cfg.Period, cfg.Timeout
		if m.period <= 0 {
			m.period = DefaultPeriod
		}
		if m.timeout <= 0 {
			m.timeout = DefaultTimeout
		}
		m.timeout = max(m.timeout, 2*m.period)
		m.heard = make([]time.Time, cfg.Size)
		for r := range m.heard {
			m.heard[r] = now
		}
	}
	m.lastTick = now
	return m
}

// Period returns how often the machine wants a Tick: 0 if never (no rank
// runs in another process).
func (m *Machine) Period() time.Duration { return m.period }

// Timeout returns the silence after which a remote rank is failed.
func (m *Machine) Timeout() time.Duration { return m.timeout }

func (m *Machine) remote(r int) bool {
	return m.heard != nil && r < len(m.cfg.Remote) && m.cfg.Remote[r]
}

// send queues a message to a rank not known failed (never to itself: a
// message that claims to come from this rank is answered to nobody).
func (m *Machine) send(out *Out, to int, k Kind, b []byte) {
	if to >= 0 && to < m.cfg.Size && to != m.cfg.Rank && !m.isFailed[to] {
		out.Sends = append(out.Sends, Send{To: to, Kind: k, Body: b})
	}
}

// Start sends the first heartbeats, at now.
func (m *Machine) Start(now time.Time, out *Out) {
	m.lastTick = now
	m.beat(out)
}

func (m *Machine) beat(out *Out) {
	if m.heard == nil {
		return
	}
	for r := range m.cfg.Size {
		if m.remote(r) {
			m.send(out, r, Heartbeat, []byte{})
		}
	}
}

// Tick is the heartbeat timer, at now: it sends a heartbeat to every live
// remote rank and fails those not heard from for the timeout. The caller
// hands the machine the messages received before the tick first, so that
// they count.
func (m *Machine) Tick(now time.Time, out *Out) {
	if m.heard == nil {
		return
	}
	m.beat(out)
	n := len(m.failed)
	if now.Sub(m.lastTick) > m.timeout/2 {
		// This process itself did not run for a long while: the silence
		// of the others may be ours. Start counting again.
		for r := range m.heard {
			m.heard[r] = now
		}
	} else {
		for r := range m.cfg.Size {
			if !m.remote(r) || m.isFailed[r] {
				continue
			}
			if d := now.Sub(m.heard[r]); d > m.timeout {
				m.fail(r, fmt.Errorf("no heartbeat for %v (stopped, hung or unreachable; MPIGO_FT_TIMEOUT is %v)", d.Round(time.Millisecond), m.timeout), out)
			}
		}
	}
	m.lastTick = now
	if len(m.failed) != n {
		m.stepAll(out)
	}
}

// Handle is the arrival, at now, of a control message of kind k from
// world rank from with body b (which the machine does not keep).
// Anything it cannot decode is dropped.
func (m *Machine) Handle(from int, k Kind, b []byte, now time.Time, out *Out) {
	if from < 0 || from >= m.cfg.Size {
		return
	}
	n := len(m.failed)
	if from != m.cfg.Rank && m.heard != nil {
		m.heard[from] = now
	}
	switch k {
	case Failed:
		if r, ok := decodeFailed(b, m.cfg.Size); ok {
			m.fail(r, errors.New("its function failed"), out)
		}
	case Revoke:
		if n, ok := DecodeRevoke(b); ok {
			m.notice(from, n, out)
		}
	case Propose, Decide, Collect:
		m.onAgree(from, k, b, out) // moves its instance on
	}
	if len(m.failed) != n {
		m.stepAll(out) // the others' coordinators may have changed
	}
}

// Fail records that world rank r has failed (learnt outside the
// protocol: a transport, the job) and reports whether that is new.
func (m *Machine) Fail(r int, cause error, out *Out) bool {
	if !m.fail(r, cause, out) {
		return false
	}
	m.stepAll(out)
	return true
}

func (m *Machine) fail(r int, cause error, out *Out) bool {
	if r == m.cfg.Rank || r < 0 || r >= m.cfg.Size || m.isFailed[r] {
		return false
	}
	m.isFailed[r] = true
	m.failed = append(m.failed, r)
	out.Failures = append(out.Failures, Failure{Rank: r, Cause: cause})
	return true
}

// Died is this rank's own failure as its process lives on (a goroutine
// rank whose function failed): the ranks in other processes are told,
// since no transport will.
func (m *Machine) Died(out *Out) {
	b := encodeFailed(m.cfg.Rank)
	for r, remote := range m.cfg.Remote {
		if remote && r != m.cfg.Rank {
			m.send(out, r, Failed, b)
		}
	}
}

// Known reports whether world rank r is known failed.
func (m *Machine) Known(r int) bool {
	return r >= 0 && r < len(m.isFailed) && m.isFailed[r]
}

// FailedIn returns the members of group known failed, in the order learnt.
func (m *Machine) FailedIn(group []int) []int {
	var l []int
	for _, r := range m.failed {
		if slices.Contains(group, r) {
			l = append(l, r)
		}
	}
	return l
}

// CountFailedIn returns how many members of group are known failed.
func (m *Machine) CountFailedIn(group []int) int {
	n := 0
	for _, r := range m.failed {
		if slices.Contains(group, r) {
			n++
		}
	}
	return n
}

// Revoke revokes c here, by this rank, and tells the other members; false
// if c was revoked here already.
func (m *Machine) Revoke(c Comm, out *Out) bool {
	return m.revoke(c, m.cfg.Rank, -1, out)
}

// IsRevoked reports whether the communicator key is revoked here.
func (m *Machine) IsRevoked(key Key) bool {
	g, ok := m.revoked[key.Ctx]
	return ok && g == key.Group
}

// revoke revokes c for world rank by, passing the notice on to every
// member but this rank and from, unless c is revoked here already.
func (m *Machine) revoke(c Comm, by, from int, out *Out) bool {
	if m.IsRevoked(c.Key) {
		return false
	}
	m.revoked[c.Key.Ctx] = c.Key.Group
	out.Revokes = append(out.Revokes, Revocation{Key: c.Key, By: by})
	b := encodeRevoke(Notice{Key: c.Key, By: by})
	for _, r := range c.Members {
		if r != m.cfg.Rank && r != from {
			m.send(out, r, Revoke, b)
		}
	}
	return true
}

// notice handles a revoke notice from world rank from.
func (m *Machine) notice(from int, n Notice, out *Out) {
	var c Comm
	ok := false
	if m.cfg.Comm != nil {
		c, ok = m.cfg.Comm(n.Key.Ctx)
	}
	if !ok {
		// Not made here yet: kept for Adopt. Dropping it would leave this
		// rank waiting in the communicator's first operations for members
		// that gave up on it.
		if _, dup := m.early[n.Key]; !dup {
			if len(m.earlyOrder) >= EarlyMax {
				delete(m.early, m.earlyOrder[0])
				m.earlyOrder = slices.Delete(m.earlyOrder, 0, 1)
			}
			m.earlyOrder = append(m.earlyOrder, n.Key)
		}
		m.early[n.Key] = n.By
		return
	}
	if c.Key != n.Key || len(c.Members) == 0 {
		return
	}
	m.revoke(c, n.By, from, out)
}

// Adopt is the making of communicator c here: its context is new, so a
// revocation left on it by an earlier communicator goes, and a notice
// that came before c was made applies now.
func (m *Machine) Adopt(c Comm, out *Out) {
	delete(m.revoked, c.Key.Ctx)
	by, ok := m.early[c.Key]
	if !ok {
		return
	}
	delete(m.early, c.Key)
	m.earlyOrder = slices.DeleteFunc(m.earlyOrder, func(k Key) bool { return k == c.Key })
	if len(c.Members) > 0 {
		m.revoke(c, by, -1, out)
	}
}

// Stop ends every agreement entered and not decided with err, and makes
// later ones fail at once: the rank (or its job) is going down. The
// machine still answers other ranks.
func (m *Machine) Stop(err error, out *Out) {
	if m.dead == nil {
		m.dead = err
	}
	l := make([]*agreement, 0, len(m.open))
	for _, a := range m.open {
		l = append(l, a)
	}
	slices.SortFunc(l, byID)
	for _, a := range l {
		a.closed = true
		out.Decisions = append(out.Decisions, Decision{ID: a.id, Err: err})
	}
	clear(m.open)
}

// Stopped returns the error Stop was given, or nil.
func (m *Machine) Stopped() error { return m.dead }

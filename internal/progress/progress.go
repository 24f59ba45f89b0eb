// Package progress is the waiting half of a job: how a goroutine about to
// block on an engine request makes the job's transports move meanwhile.
//
// Some transports (shared memory) deliver frames only when somebody polls
// them. Each has a goroutine of its own that polls, but handing a frame
// from that goroutine to the one that waits for it costs a wake-up, more
// than the frame's whole trip. So a goroutine about to park in a wait
// first polls the transports itself for a short while (Progress.Await),
// and a reply that comes within microseconds is delivered and seen on
// the same goroutine.
//
// A Progress belongs to one job: the transports of the job register with
// it, and the job's waits poll only them. Two jobs of one process (two
// Run calls at once, or tests) neither poll each other's transports nor
// share their tunables. The one process-global fact is who waits: a C
// program's calls (the ABI library) run on goroutines locked to its
// threads (SetLockedCallers).
//
// The engine knows nothing of this package: engine.Request.WaitIn takes
// an engine.Progress, which *Progress implements.
package progress

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/hint"
	"github.com/mpigo/mpi/internal/transport"
)

// DefaultPollTime is how long a wait polls before it parks, unless the job
// says otherwise (MPIGO_SHM_SPIN in a launched job).
const DefaultPollTime = 50 * time.Microsecond

// LockedPollTime is the poll time of waits on locked goroutines (a C
// program's calls, SetLockedCallers) on a node with a core per rank,
// unless the job says otherwise. A park there is no goroutine switch but
// a hand-over of the thread's processor, a wake-up of another thread and
// back; and with the processor more such a program gets, its peer's
// waits passed 50 µs often enough (a core taken a moment by a transport's
// goroutine) to chain parks and wake-ups: the 8-byte ping-pong from C
// over UCX's shared memory took 2.2-2.7 µs, 1.6-1.7 with 1 ms, and over
// mpigo's shared memory 0.54-0.87 against 0.52-0.69, five alternating
// rounds each (docs/abi.md). Open MPI's waits poll without end.
const LockedPollTime = time.Millisecond

// A Source is a transport that delivers only when polled.
type Source = transport.Polled

// Progress is the waiting policy and the polled transports of one job.
// The zero value is not usable; call New.
type Progress struct {
	mu       sync.Mutex                // serializes Add and Remove
	sources  atomic.Pointer[sourceSet] // replaced, never changed in place
	pollTime atomic.Int64              // time.Duration
	// pollSet: SetPollTime was called (the job chose the poll time).
	pollSet atomic.Bool
	// oversubscribed: the node runs more ranks than it has cores, so a
	// waiter that finds nothing gives its core away (sched_yield) instead
	// of spinning on it.
	oversubscribed atomic.Bool
	// handoff: a delivery handed answers to another goroutine of the
	// process (Handoff), which a polling wait should let run.
	handoff atomic.Bool
	// spin: a wait with no source to poll watches its request for the
	// poll time before it parks (SetSpin).
	spin atomic.Bool
	// locked: waits run on goroutines locked to their threads, for which
	// runtime.Gosched is a hand-over of the processor to another thread
	// and back (SetLockedCallers).
	locked atomic.Bool
	// polling: a wait of an oversubscribed node polls (Await).
	polling atomic.Bool
	// awaits counts Await calls, and lastYield is when one last yielded
	// its processor to keep the rank's goroutine known to the Go
	// scheduler as one that reschedules (reschedule).
	awaits    atomic.Uint32
	lastYield atomic.Int64
	// misses counts Missed calls on locked goroutines, which look at the
	// runtime's queue only every 16th.
	misses atomic.Uint32
	// runq reads the runtime's count of runnable goroutines for locked
	// waits (othersRunnable); TryLock: a wait that finds it taken does not
	// read.
	runq struct {
		sync.Mutex
		s [1]metrics.Sample
	}
}

// goYield, osYield and rawOSYield are runtime.Gosched, schedYield and
// rawSchedYield, which tests count.
var goYield, osYield, rawOSYield = runtime.Gosched, schedYield, rawSchedYield

// othersRunnable is (*Progress).othersRunnable, which tests replace.
var othersRunnable = (*Progress).othersRunnable

// lockedCallers is what SetLockedCallers said.
var lockedCallers atomic.Bool

// SetLockedCallers says that the process's MPI calls, and so its waits,
// run on goroutines locked to operating-system threads: a C program's
// threads calling into Go through the ABI library (abi/capi), where each
// call from C runs on a goroutine locked to the calling thread. A
// runtime.Gosched there does not switch goroutines on the thread: the
// locked goroutine's thread gives its processor to another thread, sleeps,
// and is woken and handed the processor back, several microseconds and
// futex calls each time, so a polling wait that yielded every few
// microseconds spent most of an 8-byte message's trip there (3-4 us one
// way against 0.46 from Go). Waits of Progresses made after the call
// then call runtime.Gosched while they poll only when the runtime counts
// goroutines waiting for a processor (othersRunnable): they poll the
// transports themselves, so the transports' pollers have nothing to do
// meanwhile. They give the core to other processes with sched_yield on an
// oversubscribed node (rawSchedYield: one the runtime does not see, which
// would hand the processor over too).
func SetLockedCallers() { lockedCallers.Store(true) }

// LockedCallers reports whether SetLockedCallers was called: the job's
// calls come from threads of a foreign program (the C ABI).
func LockedCallers() bool { return lockedCallers.Load() }

// New returns a Progress with no sources that polls DefaultPollTime, or
// LockedPollTime after SetLockedCallers.
func New() *Progress {
	p := &Progress{}
	p.pollTime.Store(int64(DefaultPollTime))
	p.locked.Store(lockedCallers.Load())
	if p.locked.Load() {
		p.pollTime.Store(int64(LockedPollTime))
	}
	p.runq.s[0].Name = runnableMetric
	return p
}

// runnableMetric is the runtime's approximate count of goroutines ready
// to run but not running.
const runnableMetric = "/sched/goroutines/runnable:goroutines"

// othersRunnable reports whether goroutines wait for a processor, as far
// as the runtime's count tells (about 0.2 us to read). A wait on a locked
// goroutine yields to them only then: goroutines of mpigo itself (a
// non-blocking collective's, a TCP reader, a window's server) may be what
// it waits for, and with a processor per rank they get none while it
// polls (MPI_Iallreduce then MPI_Wait from C took 127 us, against 40
// when the wait yielded always).
func (p *Progress) othersRunnable() bool {
	if !p.runq.TryLock() {
		return false
	}
	defer p.runq.Unlock()
	metrics.Read(p.runq.s[:])
	v := p.runq.s[0].Value
	return v.Kind() == metrics.KindUint64 && v.Uint64() > 0
}

// Handoff says that a delivery, made by a wait's poll or by a
// transport's own goroutine, handed work to another goroutine of the
// process (the rank's reply sender): a polling wait yields its processor
// at its next poll that delivers something, instead of polling on.
func (p *Progress) Handoff() {
	if !p.handoff.Load() {
		p.handoff.Store(true)
	}
}

// Handoff is p's Handoff for the rank.
func (rk *Rank) Handoff() { rk.p.Handoff() }

// LockedCallers reports whether waits of p run on locked goroutines
// (SetLockedCallers was called before New).
func (p *Progress) LockedCallers() bool { return p.locked.Load() }

// SetPollTime sets how long a wait polls before it parks (0 or less: it
// parks at once). Call it before the job's ranks start.
func (p *Progress) SetPollTime(d time.Duration) {
	p.pollTime.Store(int64(d))
	p.pollSet.Store(true)
}

// SetSpin says whether a wait with no transport to poll (goroutine ranks)
// watches its request for the poll time before it parks, instead of
// parking at once. Worth it only when every rank has a processor of its
// own: a watching rank keeps its processor.
func (p *Progress) SetSpin(v bool) { p.spin.Store(v) }

// Spins reports what SetSpin said.
func (p *Progress) Spins() bool { return p.spin.Load() }

// PollTime reports how long a wait polls before it parks.
func (p *Progress) PollTime() time.Duration { return time.Duration(p.pollTime.Load()) }

// SetOversubscribed says whether the node runs more ranks than cores.
// On an oversubscribed node, the waits of locked goroutines poll for
// DefaultPollTime, not LockedPollTime, unless the job set a poll time: a
// core there is better given up by parking than by a millisecond of
// yields.
func (p *Progress) SetOversubscribed(v bool) {
	p.oversubscribed.Store(v)
	if v && p.locked.Load() && !p.pollSet.Load() {
		p.pollTime.Store(int64(DefaultPollTime))
	}
}

// Oversubscribed reports what SetOversubscribed said.
func (p *Progress) Oversubscribed() bool { return p.oversubscribed.Load() }

// Missed is what a look that found nothing (a test of a request, an
// iprobe) does before it returns. On an oversubscribed node it gives the
// core away, as a polling wait's idle turn does: a program that tests in
// a loop otherwise keeps its core from the processes, and its processor
// from the goroutines (a non-blocking collective's, a transport's
// reader), whose work it waits for. Open MPI's progress yields the same
// way when a node has more ranks than cores. Elsewhere it does nothing,
// and a test returns at once.
func (p *Progress) Missed() {
	if p == nil || !p.oversubscribed.Load() {
		return
	}
	if p.locked.Load() {
		// On a locked goroutine (a C program's call) a Go yield costs
		// microseconds: only when goroutines wait for a processor.
		rawOSYield()
		if p.misses.Add(1)&15 == 0 && othersRunnable(p) {
			goYield()
		}
		return
	}
	goYield()
	osYield()
}

// Add registers s: waits of the job poll it from now on.
func (p *Progress) Add(s Source) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var l []Source
	if cur := p.sources.Load(); cur != nil {
		l = append(l, cur.l...)
	}
	p.sources.Store(&sourceSet{l: append(l, s), p: p})
}

// Remove unregisters s (a transport that closes).
func (p *Progress) Remove(s Source) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.sources.Load()
	if cur == nil {
		return
	}
	var l []Source
	for _, u := range cur.l {
		if u != s {
			l = append(l, u)
		}
	}
	if len(l) == 0 {
		p.sources.Store(nil)
		return
	}
	p.sources.Store(&sourceSet{l: l, p: p})
}

// sourceSet is the list of sources one wait polls: a wait keeps the set
// it began with.
type sourceSet struct {
	l     []Source
	p     *Progress
	idles atomic.Uint32 // idle calls, to yield only every 16th
}

func (s *sourceSet) poll() bool {
	got := false
	for _, t := range s.l {
		if t.Poll() {
			got = true
		}
	}
	return got
}

// idle yields the processor to other goroutines and, when the node has
// more ranks than cores, to other processes. On a node with a core per
// rank it yields only every 16th call (every 256 polls): each yield lets
// the transports' own polling goroutines take a turn, and a message that
// arrives meanwhile waits for it (docs/performance.md, "Waiting").
func (s *sourceSet) idle() {
	for _, t := range s.l {
		t.MarkWait() // still here: the transport's poller keeps napping
	}
	if s.p.locked.Load() {
		// No runtime.Gosched: on a locked goroutine it costs microseconds
		// (SetLockedCallers).
		if s.p.oversubscribed.Load() {
			rawOSYield()
		}
		if s.idles.Add(1)&15 == 0 && othersRunnable(s.p) {
			goYield()
		}
		return
	}
	if s.p.oversubscribed.Load() {
		goYield()
		osYield()
		return
	}
	if s.idles.Add(1)&15 == 0 {
		goYield()
	}
}

// end ends a wait. A wait that completed has nothing to undo: a
// transport's poller clears the mark of MarkWait itself. A waiter about to
// park tells the sources, so that their pollers deliver in its place.
func (s *sourceSet) end(done bool) {
	if done {
		return
	}
	for _, t := range s.l {
		t.EndWait()
	}
}

// Await polls the job's sources until r completes or the poll time has
// passed, and reports whether r is done. It implements engine.Progress.
// A nil Progress, or one without sources, returns at once.
func (p *Progress) Await(r *engine.Request) bool {
	if p == nil {
		return false
	}
	s := p.sources.Load()
	limit := time.Duration(p.pollTime.Load())
	if limit <= 0 {
		return false
	}
	if s == nil {
		return p.spin.Load() && watch(r, limit)
	}
	if p.oversubscribed.Load() {
		// One wait of the process polls at a time: its polls deliver for
		// the others too, and each more poller only keeps a core from
		// the processes and a processor from the goroutines whose work
		// the waits wait for (20 non-blocking collectives of a C rank,
		// each polling and yielding, took a third of the machine in
		// sched_yield: MPICH's nonblocking3, 5 ranks on 2 cores).
		if !p.polling.CompareAndSwap(false, true) {
			return false
		}
		defer p.polling.Store(false)
	}
	for _, t := range s.l {
		t.MarkWait()
	}
	p.reschedule()
	// The clock is read only once a wait has lasted a thousand polls or so:
	// most replies come before, and a clock read costs more than a poll.
	var start time.Time
	for i := 0; ; i++ {
		if r.Done() {
			s.end(true)
			return true
		}
		got := s.poll()
		if p.handoff.Load() {
			// A frame delivered (by this poll, or by a transport's
			// goroutine) left answers for the rank's reply sender (a
			// rendezvous's CTS and Data): let it have the processor now,
			// not at the next yield of idle, 256 polls on (over UCX,
			// whose polls call into the library, a rendezvous of 128 KiB
			// took 290 µs instead of 80-190).
			p.handoff.Store(false)
			goYield()
		}
		if got {
			continue
		}
		// Past the first few looks, tell the processor that this is a
		// polling loop: the reply then lands without the pipeline flush
		// a tight loop of loads pays when the line changes (shm 8-byte
		// one-way latency 0.46-0.47 -> 0.43-0.44 us here). Not from the
		// first look: streaming 8-byte messages then lost a little.
		if i >= 8 {
			hint.Pause()
		}
		if i&15 == 15 {
			// Let goroutines and processes that have work run first: on a
			// busy node, they are what this wait is waiting for.
			s.idle()
		}
		if i&255 == 255 && i >= 1023 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > limit {
				done := r.Done()
				s.end(done)
				return done
			}
		}
	}
}

// yieldEvery is how often, at most, a rank whose waits poll one after
// another yields its processor (reschedule), and yieldCheck how many
// waits apart it reads the clock to find out.
const (
	yieldEvery = 4 * time.Millisecond
	yieldCheck = 32
)

// epoch is the origin of lastYield's times, and sinceEpoch the clock
// reschedule reads (tests replace it).
var (
	epoch      = time.Now()
	sinceEpoch = func() int64 { return int64(time.Since(epoch)) }
)

// reschedule yields the processor (runtime.Gosched) once every
// yieldEvery of waits that come one after another, as in a ping-pong:
// each of them ends (and polls less than a poll time) before it yields in
// idle, so without this a rank's goroutine would run for as long as the
// exchange lasts without passing through the scheduler. Go's system
// monitor preempts a goroutine that has not for 10 ms; if it finds it in
// a call into C (a fabric library's poll), it takes its processor away,
// hands it to another thread, and then watches every 20 µs for the next
// millisecond or more: its wake-ups take the cores from the polling
// ranks. Over UCX's tcp between two network namespaces that was an
// 8-byte latency of 13.6-16.6 µs against 11.6-11.9 with this yield, Open
// MPI 10.1-12.2 (docs/fabric.md, "The Go scheduler in the way"). A yield
// every few milliseconds costs nothing measurable, on a goroutine locked
// to a C program's thread too, where the monitor's preemption would cost
// the same hand-over.
func (p *Progress) reschedule() {
	if p.awaits.Add(1)%yieldCheck != 0 {
		return
	}
	now := sinceEpoch()
	last := p.lastYield.Load()
	if now-last < int64(yieldEvery) || !p.lastYield.CompareAndSwap(last, now) {
		return
	}
	goYield()
}

// watch watches r until it completes or limit has passed, and reports
// whether it completed. It never yields the processor: a goroutine that
// yields goes to the global run queue without waking an idle processor,
// so two ranks that watched and yielded ended up taking turns on one
// processor while the other slept, 1.7-8 us per 8-byte message instead
// of 0.2 (docs/performance.md, "Goroutine ranks that spin"). Go's
// scheduler still preempts it, and it parks after limit.
func watch(r *engine.Request, limit time.Duration) bool { return watchFor(r.Done, limit) }

// WatchFor watches done, as a wait of this progress watches its request
// (SetSpin), until done reports true or the poll time has passed, and
// reports done's last answer. It returns false at once if this progress
// does not watch (no SetSpin, a poll time of 0, or transports to poll:
// those waits go through Await). For a wait whose completion shows first
// somewhere other than its engine request: a collective that meets in
// memory watches its slot, which the last rank to come writes before it
// touches anything of the waiter's engine.
func (p *Progress) WatchFor(done func() bool) bool {
	if p == nil || !p.spin.Load() || p.sources.Load() != nil {
		return false
	}
	limit := time.Duration(p.pollTime.Load())
	if limit <= 0 {
		return false
	}
	return watchFor(done, limit)
}

// watchFor is watch for any condition.
func watchFor(done func() bool, limit time.Duration) bool {
	var start time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i >= 8 {
			hint.Pause()
		}
		if i&1023 == 1023 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > limit {
				return done()
			}
		}
	}
}

// Rank is the waiting policy of one goroutine rank whose transport leaves
// small messages in its memory (a transport.Mailbox: inproc's boxes).
// When the job's waits watch (SetSpin), a wait opens the mailbox, so that
// the rank's senders leave messages there instead of delivering them into
// its engine themselves, and collects them while it watches its request.
// It implements engine.Progress.
type Rank struct {
	p *Progress
	m transport.Mailbox
	// parked reports whether a goroutine of the rank is parked: a wait
	// that completes then closes the mailbox, which a parked goroutine
	// cannot collect.
	parked func() bool
}

// ForRank returns the waiting policy of a rank that collects m; parked
// reports whether any goroutine of the rank is parked.
func (p *Progress) ForRank(m transport.Mailbox, parked func() bool) *Rank {
	return &Rank{p: p, m: m, parked: parked}
}

// Await watches r, collecting the rank's mailbox, until r completes or the
// poll time has passed, and reports whether r is done. A wait that ends
// with r done leaves the mailbox open: the rank's next receive then finds
// its message collected on its own goroutine, and a window of messages
// streams into the boxes while the rank posts its receives. It closes it
// when it ends without r (the caller parks) or while another goroutine of
// the rank is parked; while one is parked, it watches r without opening
// the mailbox. Without watching (no SetSpin) it is the job's Await.
func (rk *Rank) Await(r *engine.Request) bool {
	p := rk.p
	limit := time.Duration(p.pollTime.Load())
	if !p.spin.Load() || limit <= 0 || p.sources.Load() != nil {
		return p.Await(r)
	}
	if rk.parked() {
		// The wait would have to close the mailbox again when it ends
		// (and a goroutine of the rank that parked has closed it).
		return watch(r, limit)
	}
	rk.m.Open()
	done := collectFor(r, rk.m, limit)
	if !done || rk.parked() {
		rk.m.Close()
		done = r.Done()
	}
	return done
}

// collectFor is watch for a rank with a mailbox: each look at r collects
// the mailbox first.
func collectFor(r *engine.Request, m transport.Mailbox, limit time.Duration) bool {
	var start time.Time
	for i := 0; ; i++ {
		if r.Done() {
			return true
		}
		if m.Collect() {
			continue
		}
		if i >= 8 {
			hint.Pause()
		}
		if i&1023 == 1023 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > limit {
				m.Collect()
				return r.Done()
			}
		}
	}
}

// WatchShared watches done for the poll time, for a wait whose completion
// another process writes into memory that this one maps (a persistent
// collective between processes of one node: the root package's
// shmColl), and reports done's last answer. It polls no transport: the
// completion does not come through one, and their own pollers deliver
// meanwhile. It gives the processor away as Await does while it finds
// nothing: to other goroutines now and then, and to other processes too
// on an oversubscribed node, where the peer it waits for may need this
// very core. A nil Progress, or a poll time of 0, looks once.
func (p *Progress) WatchShared(done func() bool) bool {
	if done() {
		return true
	}
	if p == nil {
		return false
	}
	limit := time.Duration(p.pollTime.Load())
	if limit <= 0 {
		return false
	}
	locked, over := p.locked.Load(), p.oversubscribed.Load()
	var start time.Time
	for i := 1; ; i++ {
		if done() {
			return true
		}
		if i >= 8 {
			hint.Pause()
		}
		if i&15 == 15 {
			switch {
			case over && locked:
				rawOSYield()
			case over:
				goYield()
				osYield()
			case i&255 == 255 && (!locked || othersRunnable(p)):
				goYield()
			}
		}
		if i&255 == 255 && i >= 1023 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > limit {
				return done()
			}
		}
	}
}

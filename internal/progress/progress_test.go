package progress

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/engine"
)

// fakeSource completes req on its after-th poll (never if req is nil).
type fakeSource struct {
	polls, marks, ends atomic.Int64
	after              int64
	req                *engine.Request
}

func (s *fakeSource) Poll() bool {
	if s.polls.Add(1) == s.after && s.req != nil {
		s.req.Complete(engine.Status{Size: 1})
		return true
	}
	return false
}
func (s *fakeSource) MarkWait() { s.marks.Add(1) }
func (s *fakeSource) EndWait()  { s.ends.Add(1) }

func TestAwait(t *testing.T) {
	tests := []struct {
		name     string
		pollTime time.Duration
		after    int64 // the poll that completes the request; 0: none does
		done     bool  // Await's answer
		polled   bool  // the source was polled
		ended    bool  // EndWait was called (the waiter parks)
	}{
		{"completes while polling", time.Second, 5, true, true, false},
		{"gives up after the poll time", time.Millisecond, 0, false, true, true},
		{"no polling when the poll time is 0", 0, 0, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New()
			p.SetPollTime(tt.pollTime)
			r := new(engine.Request)
			s := &fakeSource{after: tt.after, req: r}
			p.Add(s)
			if got := p.Await(r); got != tt.done {
				t.Fatalf("Await = %v, want %v", got, tt.done)
			}
			if got := s.polls.Load() > 0; got != tt.polled {
				t.Errorf("polled = %v, want %v", got, tt.polled)
			}
			if got := s.ends.Load() > 0; got != tt.ended {
				t.Errorf("EndWait called = %v, want %v", got, tt.ended)
			}
		})
	}
}

// Two Progress values share nothing: a wait polls only the sources of
// its own, and Remove takes a source out.
func TestProgressIsolated(t *testing.T) {
	a, b := New(), New()
	a.SetPollTime(time.Millisecond)
	b.SetPollTime(time.Millisecond)
	sa, sb := &fakeSource{}, &fakeSource{}
	a.Add(sa)
	b.Add(sb)
	b.SetOversubscribed(true)
	if a.Oversubscribed() {
		t.Error("SetOversubscribed on one Progress changed another")
	}
	if a.Await(new(engine.Request)) {
		t.Fatal("Await reported an incomplete request done")
	}
	if sa.polls.Load() == 0 || sb.polls.Load() != 0 {
		t.Errorf("polls: own source %d, other job's source %d; want >0 and 0", sa.polls.Load(), sb.polls.Load())
	}
	a.Remove(sa)
	before := sa.polls.Load()
	a.Await(new(engine.Request))
	if sa.polls.Load() != before {
		t.Error("a removed source was still polled")
	}
	var nilp *Progress
	if nilp.Await(new(engine.Request)) {
		t.Error("a nil Progress reported an incomplete request done")
	}
}

// A request that completes before the wait is not polled for.
func TestAwaitDone(t *testing.T) {
	p := New()
	s := &fakeSource{}
	p.Add(s)
	r := new(engine.Request)
	r.Complete(engine.Status{})
	if !p.Await(r) {
		t.Fatal("Await of a completed request = false")
	}
	if s.polls.Load() != 0 {
		t.Errorf("%d polls for a completed request", s.polls.Load())
	}
}

// Without sources, a wait watches its request for the poll time only when
// the job spins (SetSpin); otherwise it parks at once.
func TestAwaitSpin(t *testing.T) {
	tests := []struct {
		name     string
		spin     bool
		pollTime time.Duration
		complete time.Duration // when another goroutine completes the request; 0: never
		done     bool
		minTime  time.Duration // Await lasted at least this long
	}{
		{"spin sees a completion", true, time.Second, time.Millisecond, true, time.Millisecond},
		{"spin gives up after the poll time", true, 5 * time.Millisecond, 0, false, 5 * time.Millisecond},
		{"no spin: parks at once", false, time.Second, 0, false, 0},
		{"spin with poll time 0: parks at once", true, 0, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New()
			p.SetPollTime(tt.pollTime)
			p.SetSpin(tt.spin)
			r := new(engine.Request)
			// The clock starts before the timer, so that the bound holds
			// however long this goroutine waits for a processor between
			// the two.
			start := time.Now()
			if tt.complete > 0 {
				tm := time.AfterFunc(tt.complete, func() { r.Complete(engine.Status{}) })
				defer tm.Stop()
			}
			got := p.Await(r)
			took := time.Since(start)
			if got != tt.done {
				t.Fatalf("Await = %v, want %v", got, tt.done)
			}
			if took < tt.minTime {
				t.Errorf("Await returned after %v, before %v", took, tt.minTime)
			}
			if tt.minTime == 0 && took > 100*time.Millisecond {
				t.Errorf("Await took %v; it should park at once", took)
			}
		})
	}
}

// fakeMailbox completes req on its after-th Collect while open.
type fakeMailbox struct {
	open             atomic.Bool
	collects, closes atomic.Int64
	after            int64
	req              *engine.Request
}

func (m *fakeMailbox) Open()        { m.open.Store(true) }
func (m *fakeMailbox) IsOpen() bool { return m.open.Load() }
func (m *fakeMailbox) Close()       { m.open.Store(false); m.closes.Add(1) }
func (m *fakeMailbox) Sweep() bool  { return false }
func (m *fakeMailbox) Collect() bool {
	if !m.open.Load() {
		panic("Collect of a closed mailbox")
	}
	if m.collects.Add(1) == m.after && m.req != nil {
		m.req.Complete(engine.Status{Size: 1})
		return true
	}
	return false
}

// A rank's wait opens its mailbox and collects it until its request is
// done; it leaves the mailbox open when the request completes unless a
// goroutine of the rank is parked, and closes it when it gives up. Without
// watching it leaves the mailbox alone.
func TestRankAwait(t *testing.T) {
	const never = 1 << 30
	tests := []struct {
		name     string
		spin     bool
		pollTime time.Duration
		after    int64
		parked   int  // parked reports true from its call parked+1 on
		done     bool // Await's answer
		open     bool // the mailbox is open afterwards
		closed   bool // Close was called
	}{
		{"completes, stays open", true, time.Second, 5, never, true, true, false},
		{"another goroutine parks meanwhile: closes", true, time.Second, 5, 1, true, false, true},
		{"another goroutine is parked: no mailbox", true, time.Millisecond, 5, 0, false, false, false},
		{"gives up and closes", true, time.Millisecond, 0, never, false, false, true},
		{"does not watch", false, time.Second, 5, never, false, false, false},
		{"poll time 0", true, 0, 5, never, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New()
			p.SetSpin(tt.spin)
			p.SetPollTime(tt.pollTime)
			r := new(engine.Request)
			m := &fakeMailbox{after: tt.after, req: r}
			calls := 0
			rk := p.ForRank(m, func() bool { calls++; return calls > tt.parked })
			if got := rk.Await(r); got != tt.done {
				t.Fatalf("Await = %v, want %v", got, tt.done)
			}
			if m.IsOpen() != tt.open {
				t.Errorf("open = %v, want %v", m.IsOpen(), tt.open)
			}
			if got := m.closes.Load() > 0; got != tt.closed {
				t.Errorf("closed = %v, want %v", got, tt.closed)
			}
			if tt.done && m.collects.Load() != tt.after {
				t.Errorf("%d collects, want %d", m.collects.Load(), tt.after)
			}
		})
	}
}

// A wait of a C program's thread (SetLockedCallers: a goroutine locked to
// the thread) calls runtime.Gosched while it polls, which there costs a
// hand-over of the processor to another thread and back, only when other
// goroutines wait for a processor; it gives
// the core to other processes with a raw sched_yield only on an
// oversubscribed node. Other waits keep yielding to goroutines.
func TestLockedCallersDoNotGosched(t *testing.T) {
	defer func(g, o, r func(), q func(*Progress) bool) {
		goYield, osYield, rawOSYield, othersRunnable = g, o, r, q
	}(goYield, osYield, rawOSYield, othersRunnable)
	var gos, oss, raws atomic.Int64
	var runnable atomic.Bool
	othersRunnable = func(*Progress) bool { return runnable.Load() }
	goYield = func() { gos.Add(1) }
	osYield = func() { oss.Add(1) }
	rawOSYield = func() { raws.Add(1) }
	for _, tt := range []struct {
		locked, oversubscribed bool
		runnable               bool // other goroutines wait for a processor
		wantGo, wantOS         bool
	}{
		{false, false, false, true, false},
		{false, true, false, true, true},
		{true, false, false, false, false},
		{true, true, false, false, true},
		{true, false, true, true, false},
		{true, true, true, true, true},
	} {
		runnable.Store(tt.runnable)
		gos.Store(0)
		oss.Store(0)
		raws.Store(0)
		p := New()
		p.locked.Store(tt.locked)
		p.SetOversubscribed(tt.oversubscribed)
		p.SetPollTime(2 * time.Millisecond)
		s := &fakeSource{}
		p.Add(s)
		if p.Await(new(engine.Request)) {
			t.Fatalf("locked %v, oversubscribed %v: Await of a request nothing completes = true", tt.locked, tt.oversubscribed)
		}
		if s.polls.Load() == 0 {
			t.Errorf("locked %v, oversubscribed %v: the source was never polled", tt.locked, tt.oversubscribed)
		}
		if got := gos.Load() > 0; got != tt.wantGo {
			t.Errorf("locked %v, oversubscribed %v, others runnable %v: runtime.Gosched called %d times, want any: %v", tt.locked, tt.oversubscribed, tt.runnable, gos.Load(), tt.wantGo)
		}
		// A locked caller's sched_yield is the raw one, which the runtime
		// does not see (a hand-over point otherwise).
		sys, other := &oss, &raws
		if tt.locked {
			sys, other = &raws, &oss
		}
		if got := sys.Load() > 0; got != tt.wantOS || other.Load() != 0 {
			t.Errorf("locked %v, oversubscribed %v: sched_yield called %d times (%d the other way), want any: %v", tt.locked, tt.oversubscribed, sys.Load(), other.Load(), tt.wantOS)
		}
	}
}

// SetLockedCallers applies to the Progresses made after it.
func TestSetLockedCallers(t *testing.T) {
	defer lockedCallers.Store(lockedCallers.Load())
	if New().LockedCallers() {
		t.Fatal("a Progress of a process that did not call SetLockedCallers has locked callers")
	}
	SetLockedCallers()
	if !New().LockedCallers() {
		t.Fatal("a Progress made after SetLockedCallers does not have locked callers")
	}
}

// othersRunnable reads the runtime's count: true while a goroutine waits
// for this test's only processor.
func TestOthersRunnable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := New()
	p.othersRunnable() // the first read sets the metrics up, and may block
	ready := make(chan struct{})
	var ran atomic.Bool
	go func() {
		close(ready)
		ran.Store(true)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !p.othersRunnable() {
		// The goroutine above is runnable and cannot have run: this
		// goroutine has not yielded the only processor.
		if ran.Load() {
			t.Skip("the goroutine ran before the count was read (preempted)")
		}
		if time.Now().After(deadline) {
			t.Fatal("othersRunnable never reported the runnable goroutine")
		}
	}
	<-ready
}

// TestWatchShared: the watch ends as soon as its condition holds, gives
// up after the poll time, looks only once with a poll time of 0 or no
// Progress, and gives its processor to other processes while it watches
// on an oversubscribed node.
func TestWatchShared(t *testing.T) {
	tests := []struct {
		name     string
		nilProg  bool
		pollTime time.Duration
		over     bool
		after    int64 // the call of done that reports true; 0: none
		done     bool  // WatchShared's answer
		maxCalls int64 // calls of done at most (0: no bound)
		osYields bool  // it gave the core to other processes
	}{
		{"true at once", false, time.Second, false, 1, true, 1, false},
		{"true while watching", false, time.Second, false, 4000, true, 4000, false},
		{"gives up after the poll time", false, time.Millisecond, false, 0, false, 0, false},
		{"poll time 0 looks once", false, 0, false, 0, false, 1, false},
		{"nil Progress looks once", true, 0, false, 0, false, 1, false},
		{"oversubscribed yields to processes", false, time.Second, true, 100, true, 100, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var yields atomic.Int64
			old := osYield
			osYield = func() { yields.Add(1) }
			defer func() { osYield = old }()
			var p *Progress
			if !tt.nilProg {
				p = New()
				p.SetPollTime(tt.pollTime)
				p.SetOversubscribed(tt.over)
			}
			var calls int64
			done := func() bool {
				calls++
				return tt.after != 0 && calls >= tt.after
			}
			t0 := time.Now()
			if got := p.WatchShared(done); got != tt.done {
				t.Fatalf("WatchShared = %v, want %v", got, tt.done)
			}
			if tt.maxCalls != 0 && calls != tt.maxCalls {
				t.Errorf("done called %d times, want %d", calls, tt.maxCalls)
			}
			if !tt.done && tt.pollTime > 0 && time.Since(t0) < tt.pollTime {
				t.Errorf("gave up after %v, before the poll time %v", time.Since(t0), tt.pollTime)
			}
			if got := yields.Load() > 0; got != tt.osYields {
				t.Errorf("yielded to other processes = %v, want %v", got, tt.osYields)
			}
		})
	}
}

// handoffSource calls Handoff on its 3rd poll, as a delivery that queued
// answers for the reply sender does, and completes req on its 6th.
type handoffSource struct {
	fakeSource
	p *Progress
}

func (s *handoffSource) Poll() bool {
	n := s.polls.Add(1)
	if n == 3 {
		s.p.Handoff()
	}
	if n == 6 {
		s.req.Complete(engine.Status{Size: 1})
		return true
	}
	return false
}

// A wait yields its processor at the first poll after a Handoff (once),
// where it otherwise yields only every 256 polls.
func TestAwaitYieldsOnHandoff(t *testing.T) {
	defer func(g func()) { goYield = g }(goYield)
	var gos atomic.Int64
	goYield = func() { gos.Add(1) }
	p := New()
	p.SetPollTime(time.Second)
	r := new(engine.Request)
	s := &handoffSource{fakeSource: fakeSource{req: r}, p: p}
	p.Add(s)
	if !p.Await(r) {
		t.Fatal("Await = false, want true")
	}
	if n := gos.Load(); n != 1 {
		t.Errorf("runtime.Gosched called %d times in 6 polls after a Handoff, want 1", n)
	}
	if p.handoff.Load() {
		t.Error("the Handoff is still marked after the wait yielded")
	}
}

// A test that found nothing gives the core away on an oversubscribed
// node only: the Go way and to the kernel from a goroutine of Go, the
// kernel's way alone (and the Go way when goroutines wait for a processor,
// every 16th time) from a locked caller; elsewhere it returns at once.
func TestMissed(t *testing.T) {
	defer func(g, o, r func(), q func(*Progress) bool) {
		goYield, osYield, rawOSYield, othersRunnable = g, o, r, q
	}(goYield, osYield, rawOSYield, othersRunnable)
	var gos, oss, raws atomic.Int64
	othersRunnable = func(*Progress) bool { return true }
	goYield = func() { gos.Add(1) }
	osYield = func() { oss.Add(1) }
	rawOSYield = func() { raws.Add(1) }
	for _, tt := range []struct {
		locked, oversubscribed  bool
		wantGo, wantOS, wantRaw int64 // of 32 calls
	}{
		{false, false, 0, 0, 0},
		{true, false, 0, 0, 0},
		{false, true, 32, 32, 0},
		{true, true, 2, 0, 32},
	} {
		gos.Store(0)
		oss.Store(0)
		raws.Store(0)
		p := New()
		p.locked.Store(tt.locked)
		p.SetOversubscribed(tt.oversubscribed)
		for range 32 {
			p.Missed()
		}
		if gos.Load() != tt.wantGo || oss.Load() != tt.wantOS || raws.Load() != tt.wantRaw {
			t.Errorf("locked %v, oversubscribed %v: 32 misses yielded %d times the Go way, %d to the kernel, %d raw; want %d, %d, %d",
				tt.locked, tt.oversubscribed, gos.Load(), oss.Load(), raws.Load(), tt.wantGo, tt.wantOS, tt.wantRaw)
		}
	}
	var p *Progress
	p.Missed() // a rank without a job's progress
}

// On an oversubscribed node one wait polls at a time: a second wait while
// the first polls parks at once (false, without polling), and once the
// first has ended the next polls again. Elsewhere waits poll side by side.
func TestOnePollerWhenOversubscribed(t *testing.T) {
	for _, over := range []bool{true, false} {
		p := New()
		p.SetOversubscribed(over)
		p.SetPollTime(time.Hour)
		first := new(engine.Request)
		s := &fakeSource{}
		p.Add(s)
		done := make(chan bool)
		go func() { done <- p.Await(first) }()
		for s.polls.Load() == 0 {
			runtime.Gosched()
		}
		second := new(engine.Request)
		if over {
			if p.Await(second) {
				t.Fatal("oversubscribed: a second wait reported its request done")
			}
		} else {
			go func() {
				time.Sleep(10 * time.Millisecond)
				second.Complete(engine.Status{})
			}()
			if !p.Await(second) {
				t.Fatal("one core per rank: a second wait did not poll until its request completed")
			}
		}
		first.Complete(engine.Status{})
		if !<-done {
			t.Fatalf("oversubscribed %v: the first wait did not see its request complete", over)
		}
		if over {
			third := new(engine.Request)
			go func() {
				time.Sleep(10 * time.Millisecond)
				third.Complete(engine.Status{})
			}()
			if !p.Await(third) {
				t.Fatal("oversubscribed: a wait after the poller ended did not poll")
			}
		}
	}
}

// Waits that come one after another, each too short to yield on its own
// (a ping-pong: each reply comes within the poll time), still yield the
// processor every few milliseconds, before Go's system monitor would
// preempt the goroutine (10 ms), and not more often than yieldEvery;
// locked callers too.
func TestWaitsInARowYield(t *testing.T) {
	defer func(g func(), c func() int64) { goYield, sinceEpoch = g, c }(goYield, sinceEpoch)
	for _, locked := range []bool{false, true} {
		var clock int64
		var at []int64
		sinceEpoch = func() int64 { return clock }
		goYield = func() { at = append(at, clock) }
		p := New()
		p.locked.Store(locked)
		p.SetPollTime(time.Second)
		p.Add(&fakeSource{})
		r := new(engine.Request)
		r.Complete(engine.Status{})
		const step = 30 * time.Microsecond // one round trip
		for i := 0; i < 10000; i++ {       // 300 ms of waits
			clock += int64(step)
			if !p.Await(r) {
				t.Fatal("Await of a completed request = false")
			}
		}
		if len(at) < 30 {
			t.Fatalf("locked=%v: %d yields in 300 ms of waits in a row, want one every 4-10 ms", locked, len(at))
		}
		prev := int64(0)
		for _, a := range at {
			if gap := time.Duration(a - prev); gap < yieldEvery || gap > 10*time.Millisecond {
				t.Errorf("locked=%v: yields %v apart (at %v), want %v to 10ms", locked, gap, time.Duration(a), yieldEvery)
			}
			prev = a
		}
	}
}

// The waits of a C program's threads (SetLockedCallers) poll for
// LockedPollTime by default, where a park costs a hand-over of the
// thread's processor; on an oversubscribed node for DefaultPollTime; and
// for what the job set (MPIGO_SHM_SPIN) whatever the node. Other waits
// poll for DefaultPollTime.
func TestLockedPollTime(t *testing.T) {
	defer lockedCallers.Store(lockedCallers.Load())
	for _, tt := range []struct {
		locked, set, oversubscribed bool
		want                        time.Duration
	}{
		{false, false, false, DefaultPollTime},
		{false, false, true, DefaultPollTime},
		{true, false, false, LockedPollTime},
		{true, false, true, DefaultPollTime},
		{true, true, false, 3 * time.Microsecond},
		{true, true, true, 3 * time.Microsecond},
	} {
		lockedCallers.Store(tt.locked)
		p := New()
		if tt.set {
			p.SetPollTime(3 * time.Microsecond)
		}
		p.SetOversubscribed(tt.oversubscribed)
		if got := p.PollTime(); got != tt.want {
			t.Errorf("locked %v, poll time set %v, oversubscribed %v: poll time %v, want %v", tt.locked, tt.set, tt.oversubscribed, got, tt.want)
		}
	}
}

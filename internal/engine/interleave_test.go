package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// proto is a protocol path through the engine: a send mode and an engine
// configuration that sends the test's message eagerly, by rendezvous with
// the sender's buffer read in place (RTS+Region, Fin), or by rendezvous
// streamed in chunks (RTS, CTS, Data...).
type proto struct {
	name   string
	mode   Mode
	rndv   bool // rendezvous (else eager)
	direct bool // rendezvous reads the sender's buffer in place
}

// Test configurations: eager protocols have a limit above every test
// message; rendezvous ones below (32 bytes), with 16-byte chunks.
const (
	testChunk     = 16
	testEagerHigh = 1 << 10
	testEagerLow  = 32
)

func (p proto) cfg() engCfg {
	if p.rndv {
		return engCfg{EagerLimit: testEagerLow, ChunkSize: testChunk, Direct: p.direct}
	}
	return engCfg{EagerLimit: testEagerHigh, ChunkSize: testChunk}
}

// size is the message size the interleaving tests use: for the streamed
// rendezvous, ten full chunks and a partial one.
func (p proto) size() int {
	if p.rndv {
		return 10*testChunk + 3
	}
	return 40
}

// waits reports whether the send can only complete after the receiver matched.
func (p proto) waits() bool { return p.rndv || p.mode == Synchronous }

var protos = []proto{
	{name: "eager", mode: Standard},
	{name: "eager-ready", mode: Ready},
	{name: "eager-sync", mode: Synchronous},
	{name: "rndv-direct", mode: Standard, rndv: true, direct: true},
	{name: "rndv-direct-sync", mode: Synchronous, rndv: true, direct: true},
	{name: "rndv-stream", mode: Standard, rndv: true},
	{name: "rndv-stream-sync", mode: Synchronous, rndv: true},
}

// The envelope of the test message. The sender's rank in the communicator
// (sendSelf) differs from its world rank, so that a Status reporting the
// transport address instead of the communicator rank is caught.
const (
	testCtx  = 4
	sendSelf = 3
	testTag  = 9
)

// step is one event of a schedule.
type step struct {
	kind     byte // 'r' post the receive, 's' post the send, 'c' cancel the send, 'd' deliver
	from, to int  // for 'd': the link whose oldest frame is delivered
}

func (e step) String() string {
	switch e.kind {
	case 'd':
		return fmt.Sprintf("d%d%d", e.from, e.to)
	case 'r':
		return "recv"
	case 's':
		return "send"
	case 'c':
		return "cancel"
	}
	return string(e.kind)
}

func schedString(s []step) string {
	var b strings.Builder
	for i, e := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.String())
	}
	return b.String()
}

// msgCase is one message's test: the protocol, sizes and signatures of both
// sides, and whether the sender tries to cancel.
type msgCase struct {
	p                proto
	size             int
	recvLen          int  // receive buffer length
	alloc            bool // receive with a nil buffer and an Alloc function
	sendSig, recvSig uint64
	cancel           bool // the schedule includes a CancelSend
	cancellable      bool // the send is Cancellable (an Isend)
	self             bool // sender and receiver are the same rank
}

// msgRun is the state of one schedule of a msgCase.
type msgRun struct {
	c          msgCase
	h          *harness
	src, dst   int
	send, recv *Request
	data       []byte
	allocs     []int // sizes Alloc was called with

	posted, sent, cancelTried, cancelSent bool
}

func newMsgRun(t testing.TB, c msgCase) *msgRun {
	m := &msgRun{c: c, data: pattern(c.size)}
	if c.self {
		m.h = newHarness(t, 1, c.p.cfg())
	} else {
		m.h = newHarness(t, 2, c.p.cfg())
		m.dst = 1
	}
	m.send = &Request{Mode: c.p.mode, Context: testCtx, Peer: sendSelf, Self: sendSelf, To: m.dst, Tag: testTag, Buf: m.data, Sig: c.sendSig, Cancellable: c.cancellable}
	m.recv = &Request{Context: testCtx, Peer: sendSelf, FromWorld: m.src + 1, Tag: testTag, Sig: c.recvSig}
	if c.alloc {
		m.recv.Alloc = func(n int) []byte {
			m.allocs = append(m.allocs, n)
			return guarded(n)
		}
	} else {
		m.recv.Buf = guarded(c.recvLen)
	}
	return m
}

// matched reports whether the receiver has taken the message.
func (m *msgRun) matched() bool {
	return m.recv.Done() || m.h.pending(m.dst)[3] > 0
}

func (m *msgRun) enabled() []step {
	var next []step
	if !m.posted {
		next = append(next, step{kind: 'r'})
	}
	if !m.sent {
		next = append(next, step{kind: 's'})
	}
	if m.c.cancel && m.sent && !m.cancelTried {
		next = append(next, step{kind: 'c'})
	}
	for _, k := range m.h.busy() {
		next = append(next, step{'d', k[0], k[1]})
	}
	return next
}

func (m *msgRun) apply(ev step) error {
	switch ev.kind {
	case 'r':
		m.h.recv(m.dst, m.recv)
		m.posted = true
	case 's':
		m.h.send(m.src, m.send)
		m.sent = true
	case 'c':
		m.cancelTried = true
		m.cancelSent = m.h.cancelSend(m.src, m.send)
	case 'd':
		if err := m.h.deliver(ev.from, ev.to); err != nil {
			return err
		}
	}
	// Invariants that hold after every step.
	if m.recv.Done() && !m.sent {
		return errors.New("receive completed before the send was posted")
	}
	if m.c.p.waits() && m.send.Done() && !m.send.Status().Cancelled && !m.matched() {
		return errors.New("send completed before the receiver matched it")
	}
	if m.send.Done() && m.send.Status().Cancelled && m.matched() {
		return errors.New("send cancelled although the receiver matched it")
	}
	return nil
}

// replayMsg runs sched from the start and returns the run.
func replayMsg(t testing.TB, c msgCase, sched []step) *msgRun {
	m := newMsgRun(t, c)
	for i, ev := range sched {
		if err := m.apply(ev); err != nil {
			t.Fatalf("schedule [%s], step %d: %v\ntrace: %s", schedString(sched), i, err, m.h.traceString())
		}
	}
	return m
}

// wantStatus returns the Status the receive must complete with.
func (c msgCase) wantStatus() Status {
	st := Status{Source: sendSelf, Tag: testTag, Size: c.size, Count: c.size, Sig: c.sendSig}
	recvLen := c.recvLen
	if c.alloc {
		recvLen = c.size
	}
	switch {
	case c.sendSig != 0 && c.recvSig != 0 && c.sendSig != c.recvSig:
		st.Err, st.Count = ErrType, 0
	case recvLen < c.size:
		st.Err, st.Count = ErrTruncate, recvLen
	}
	return st
}

// check verifies the end state of a finished schedule.
func (m *msgRun) check(t testing.TB, sched []step) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("schedule [%s]: %s\ntrace: %s", schedString(sched), fmt.Sprintf(format, args...), m.h.traceString())
	}
	if !m.send.Done() {
		fail("send never completed")
	}
	sst := m.send.Status()
	if sst.Err != nil {
		fail("send failed: %v", sst.Err)
	}
	if sst.Cancelled {
		// The message was withdrawn: the receive never sees it.
		if !m.cancelSent {
			fail("send cancelled without a CancelSend")
		}
		if m.recv.Done() {
			fail("receive completed with a cancelled message: %+v", m.recv.Status())
		}
		if !m.h.engs[m.dst].CancelRecv(m.recv) || !m.recv.Status().Cancelled {
			fail("receive not posted any more")
		}
		if m.recv.Buf != nil {
			if err := checkGuarded(m.recv.Buf, 0, nil); err != nil {
				fail("cancelled message written into the buffer: %v", err)
			}
		}
		m.h.checkClean(t)
		return
	}
	if !m.recv.Done() {
		fail("receive never completed (pending %v / %v)", m.h.pending(m.src), m.h.pending(m.dst))
	}
	st, want := m.recv.Status(), m.c.wantStatus()
	if !errors.Is(st.Err, want.Err) || (st.Err == nil) != (want.Err == nil) {
		fail("receive error %v, want %v", st.Err, want.Err)
	}
	st.Err, want.Err = nil, nil
	if st != want {
		fail("receive status %+v, want %+v", st, want)
	}
	if m.c.alloc {
		wantAllocs := []int{m.c.size}
		if errors.Is(m.c.wantStatus().Err, ErrType) { // nothing to allocate
			wantAllocs = nil
		}
		if fmt.Sprint(m.allocs) != fmt.Sprint(wantAllocs) {
			fail("Alloc called with %v, want %v", m.allocs, wantAllocs)
		}
		if wantAllocs != nil && len(m.recv.Buffer()) != m.c.size {
			fail("allocated buffer has %d bytes, want %d", len(m.recv.Buffer()), m.c.size)
		}
	}
	if b := m.recv.Buffer(); b != nil {
		if err := checkGuarded(b, want.Count, m.data); err != nil {
			fail("receive buffer: %v", err)
		}
	}
	m.h.checkClean(t)
}

// explore runs every schedule of c: at each step, each enabled event in
// turn. It returns the number of complete schedules.
func explore(t *testing.T, c msgCase) int {
	n := 0
	var dfs func(sched []step)
	dfs = func(sched []step) {
		m := replayMsg(t, c, sched)
		next := m.enabled()
		if len(next) == 0 {
			m.check(t, sched)
			n++
			return
		}
		for _, ev := range next {
			dfs(append(sched[:len(sched):len(sched)], ev))
		}
	}
	dfs(nil)
	return n
}

// TestInterleavings sends one message through every order of its events —
// the receive posted before, between or after the frames, each frame
// delivered whenever it may be — for every protocol, and checks the end
// state of every order: data and status, both sides complete, synchronous
// and rendezvous sends not complete before the match, engines clean.
func TestInterleavings(t *testing.T) {
	for _, p := range protos {
		for _, self := range []bool{false, true} {
			name := p.name
			if self {
				name += "/self"
			}
			t.Run(name, func(t *testing.T) {
				c := msgCase{p: p, size: p.size(), recvLen: p.size(), sendSig: 77, recvSig: 77, self: self}
				n := explore(t, c)
				if n < 3 {
					t.Errorf("only %d schedules", n)
				}
				t.Logf("%d schedules", n)
			})
		}
	}
}

// TestInterleavingsVariants runs every schedule of the variants of a
// message: a receive buffer larger than the message, truncation, type
// mismatch, untyped sides, allocation on match, and an empty message.
func TestInterleavingsVariants(t *testing.T) {
	type variant struct {
		name string
		mod  func(c *msgCase)
	}
	variants := []variant{
		{"larger-buffer", func(c *msgCase) { c.recvLen = c.size + 5 }},
		{"truncate", func(c *msgCase) { c.recvLen = c.size * 3 / 5 }},
		{"truncate-to-zero", func(c *msgCase) { c.recvLen = 0 }},
		{"type-mismatch", func(c *msgCase) { c.recvSig = 78 }},
		{"untyped-send", func(c *msgCase) { c.sendSig = 0 }},
		{"untyped-recv", func(c *msgCase) { c.recvSig = 0 }},
		{"alloc", func(c *msgCase) { c.alloc = true }},
		{"alloc-type-mismatch", func(c *msgCase) { c.alloc, c.recvSig = true, 78 }},
		{"empty", func(c *msgCase) { c.size, c.recvLen = 0, 0 }},
	}
	for _, p := range protos {
		for _, v := range variants {
			t.Run(p.name+"/"+v.name, func(t *testing.T) {
				c := msgCase{p: p, size: p.size(), recvLen: p.size(), sendSig: 77, recvSig: 77}
				v.mod(&c)
				if p.rndv && c.size == 0 {
					t.Skip("an empty message is always eager")
				}
				explore(t, c)
			})
		}
	}
}

// TestInterleavingsCancel adds a CancelSend at every possible point of every
// schedule: the send is then either cancelled, and the receive never sees
// the message, or completes normally with the receive; never both, never
// neither.
func TestInterleavingsCancel(t *testing.T) {
	for _, p := range protos {
		for _, cancellable := range []bool{false, true} {
			name := p.name
			if cancellable {
				name += "/cancellable"
			}
			t.Run(name, func(t *testing.T) {
				c := msgCase{p: p, size: p.size(), recvLen: p.size(), cancel: true, cancellable: cancellable}
				cancelled, completed := 0, 0
				var dfs func(sched []step)
				dfs = func(sched []step) {
					m := replayMsg(t, c, sched)
					next := m.enabled()
					if len(next) == 0 {
						m.check(t, sched)
						if m.send.Status().Cancelled {
							cancelled++
						} else {
							completed++
						}
						return
					}
					for _, ev := range next {
						dfs(append(sched[:len(sched):len(sched)], ev))
					}
				}
				dfs(nil)
				t.Logf("%d schedules cancelled, %d completed", cancelled, completed)
				// An eager send that is not Cancellable (a blocking send)
				// cannot be cancelled; every other one can, until matched.
				if (p.waits() || cancellable) && (cancelled == 0 || completed == 0) {
					t.Errorf("%d schedules cancelled, %d completed: want some of each", cancelled, completed)
				}
				if !p.waits() && !cancellable && cancelled != 0 {
					t.Errorf("an eager standard send was cancelled")
				}
			})
		}
	}
}

// TestProtocolFrames checks which frames each protocol exchanges, and that
// the eager limit and chunk size are respected at their boundaries.
func TestProtocolFrames(t *testing.T) {
	tests := []struct {
		name   string
		cfg    engCfg
		mode   Mode
		size   int
		frames string // kinds delivered, in order, receive posted first
	}{
		{"eager", engCfg{EagerLimit: 32, ChunkSize: 16}, Standard, 32, "eager"},
		{"eager-empty", engCfg{EagerLimit: 32, ChunkSize: 16}, Standard, 0, "eager"},
		{"eager-sync", engCfg{EagerLimit: 32, ChunkSize: 16}, Synchronous, 32, "eager ack"},
		{"limit-zero-empty", engCfg{EagerLimit: 0, ChunkSize: 16}, Standard, 0, "eager"},
		{"direct", engCfg{EagerLimit: 32, ChunkSize: 16, Direct: true}, Standard, 33, "rts fin"},
		{"direct-sync", engCfg{EagerLimit: 32, ChunkSize: 16, Direct: true}, Synchronous, 1000, "rts fin"},
		{"stream-one-chunk", engCfg{EagerLimit: 32, ChunkSize: 64}, Standard, 33, "rts cts data"},
		{"stream-exact-chunks", engCfg{EagerLimit: 32, ChunkSize: 16}, Standard, 48, "rts cts data data data"},
		{"stream-partial-chunk", engCfg{EagerLimit: 32, ChunkSize: 16}, Standard, 49, "rts cts data data data data"},
		{"negative-limit", engCfg{EagerLimit: -1, ChunkSize: 16}, Standard, 1, "rts cts data"},
		{"direct-to-0-only", engCfg{EagerLimit: 32, ChunkSize: 16, DirectTo: func(p int) bool { return p == 0 }}, Standard, 40, "rts cts data data data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 2, tc.cfg)
			data := pattern(tc.size)
			r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(tc.size)}
			s := &Request{Mode: tc.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: data}
			h.recv(1, r)
			h.send(0, s)
			h.drain()
			if got := kinds(h, 0); got != tc.frames {
				t.Errorf("frames %q, want %q", got, tc.frames)
			}
			if !r.Done() || !s.Done() || checkGuarded(r.Buf, tc.size, data) != nil {
				t.Errorf("receive done %v, send done %v", r.Done(), s.Done())
			}
			h.checkClean(t)
		})
	}
	if c := New(0, Config{}, nil).Config(); c.ChunkSize != DefaultConfig().ChunkSize || c.EagerLimit != 0 {
		t.Errorf("New(Config{}) has %+v", c)
	}
	if e := New(3, Config{EagerLimit: -7}, nil); e.Config().EagerLimit != 0 || e.Rank() != 3 {
		t.Errorf("New clamps EagerLimit to %d, rank %d", e.Config().EagerLimit, e.Rank())
	}
}

// TestInterleavingsNonOvertaking checks MPI's non-overtaking rule over every
// schedule of two messages from one sender with the same envelope, for
// every pair of protocols: whatever the order of frames, receives and
// sends, the first receive gets the first message.
func TestInterleavingsNonOvertaking(t *testing.T) {
	type kind struct {
		name string
		mode Mode
		size int
	}
	// Sizes around an eager limit of 32 with 16-byte chunks; rendezvous
	// messages have two or three chunks, so streams interleave.
	kinds := []kind{
		{"eager", Standard, 20},
		{"eager-sync", Synchronous, 21},
		{"rndv", Standard, 40},
		{"rndv-sync", Synchronous, 33},
	}
	for _, direct := range []bool{false, true} {
		for _, a := range kinds {
			for _, b := range kinds {
				name := a.name + "+" + b.name
				if direct {
					name = "direct/" + name
				}
				t.Run(name, func(t *testing.T) {
					cfg := engCfg{EagerLimit: 32, ChunkSize: 16, Direct: direct}
					n := 0
					var dfs func(sched []step)
					dfs = func(sched []step) {
						h := newHarness(t, 2, cfg)
						var sends, recvs [2]*Request
						var data [2][]byte
						for i, k := range []kind{a, b} {
							data[i] = pattern(k.size)
							data[i][0] = byte(i)
							sends[i] = &Request{Mode: k.mode, Context: 1, Peer: 1, Self: 0, To: 1, Tag: 5, Buf: data[i]}
							tag := 5
							if i == 1 {
								tag = AnyTag
							}
							recvs[i] = &Request{Context: 1, Peer: AnySource, Tag: tag, Buf: guarded(64)}
						}
						posted, sent := 0, 0
						for _, ev := range sched {
							switch ev.kind {
							case 'r':
								h.recv(1, recvs[posted])
								posted++
							case 's':
								h.send(0, sends[sent])
								sent++
							case 'd':
								if err := h.deliver(ev.from, ev.to); err != nil {
									t.Fatalf("[%s]: %v", schedString(sched), err)
								}
							}
						}
						var next []step
						if posted < 2 {
							next = append(next, step{kind: 'r'})
						}
						if sent < 2 {
							next = append(next, step{kind: 's'})
						}
						for _, k := range h.busy() {
							next = append(next, step{'d', k[0], k[1]})
						}
						if len(next) > 0 {
							for _, ev := range next {
								dfs(append(sched[:len(sched):len(sched)], ev))
							}
							return
						}
						n++
						for i := range 2 {
							r := recvs[i]
							if !r.Done() || !sends[i].Done() {
								t.Fatalf("[%s]: message %d: receive done %v, send done %v\ntrace: %s", schedString(sched), i, r.Done(), sends[i].Done(), h.traceString())
							}
							st := r.Status()
							if st.Err != nil || st.Count != len(data[i]) || checkGuarded(r.Buf, st.Count, data[i]) != nil {
								t.Fatalf("[%s]: receive %d got %+v (first byte %d), want message %d\ntrace: %s", schedString(sched), i, st, r.Buf[0], i, h.traceString())
							}
						}
						h.checkClean(t)
					}
					dfs(nil)
					t.Logf("%d schedules", n)
				})
			}
		}
	}
}

// multiRun is a generic schedule explorer over a fixed set of operations:
// ops[i] runs at most once, in any order consistent with after (ops[i]
// may run only once ops[after[i]] has, if after[i] >= 0); frames are
// delivered whenever they are in flight.
type multiOp struct {
	name  string
	after int // index of an op that must run first, or -1
	run   func(h *harness)
}

// exploreOps runs every schedule of the operations that setup returns and
// calls check at the end of each. It returns the number of schedules.
func exploreOps(t *testing.T, setup func(h *harness) []multiOp, newH func() *harness, check func(h *harness, sched string)) int {
	n := 0
	var dfs func(sched []int)
	dfs = func(sched []int) {
		h := newH()
		ops := setup(h)
		done := make([]bool, len(ops))
		var names []string
		for _, s := range sched {
			if s >= 0 {
				ops[s].run(h)
				done[s] = true
				names = append(names, ops[s].name)
				continue
			}
			k := h.busy()[-s-1]
			names = append(names, fmt.Sprintf("d%d%d", k[0], k[1]))
			if err := h.deliver(k[0], k[1]); err != nil {
				t.Fatalf("[%s]: %v\ntrace: %s", strings.Join(names, " "), err, h.traceString())
			}
		}
		var next []int
		for i, op := range ops {
			if !done[i] && (op.after < 0 || done[op.after]) {
				next = append(next, i)
			}
		}
		for i := range h.busy() {
			next = append(next, -i-1)
		}
		if len(next) == 0 {
			n++
			check(h, strings.Join(names, " "))
			return
		}
		for _, s := range next {
			dfs(append(sched[:len(sched):len(sched)], s))
		}
	}
	dfs(nil)
	return n
}

// TestInterleavingsExchange: two ranks send each other a message at the
// same time (MPI_Sendrecv), for each protocol; rendezvous streams cross.
func TestInterleavingsExchange(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			size := 2*testChunk + 1
			if !p.rndv {
				size = 20
			}
			if testing.Short() && p.rndv && !p.direct {
				t.Skip("thousands of schedules")
			}
			var sends, recvs [2]*Request
			var data [2][]byte
			setup := func(h *harness) []multiOp {
				var ops []multiOp
				for r := range 2 {
					data[r] = pattern(size)
					data[r][0] = byte(r)
					sends[r] = &Request{Mode: p.mode, Context: 1, Peer: 1 - r, Self: r, To: 1 - r, Tag: 1, Buf: data[r]}
					recvs[r] = &Request{Context: 1, Peer: 1 - r, Tag: 1, Buf: guarded(size)}
					ops = append(ops,
						multiOp{fmt.Sprintf("recv%d", r), -1, func(h *harness) { h.recv(r, recvs[r]) }},
						multiOp{fmt.Sprintf("send%d", r), -1, func(h *harness) { h.send(r, sends[r]) }})
				}
				return ops
			}
			// Two Data frames per stream, so that the streams interleave.
			cfg := p.cfg()
			cfg.ChunkSize = size/2 + 1
			n := exploreOps(t, setup, func() *harness { return newHarness(t, 2, cfg) }, func(h *harness, sched string) {
				for r := range 2 {
					if !sends[r].Done() || !recvs[r].Done() || recvs[r].Status().Err != nil || checkGuarded(recvs[r].Buf, size, data[1-r]) != nil {
						t.Fatalf("[%s]: rank %d: send done %v, receive done %v %+v\ntrace: %s", sched, r, sends[r].Done(), recvs[r].Done(), recvs[r].Status(), h.traceString())
					}
				}
				h.checkClean(t)
			})
			t.Logf("%d schedules", n)
		})
	}
}

// TestInterleavingsTwoSenders: ranks 0 and 2 each send rank 1 a message;
// both senders number their first send 1, so the receiver must tell their
// protocol frames apart by rank. Rank 1 posts two AnySource receives at
// once; rank 2 also tries to cancel its send at every possible point.
// Every message is received exactly once unless it was cancelled, and rank
// 2's cancel never withdraws rank 0's message.
func TestInterleavingsTwoSenders(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			size := 2*testChunk + 1
			if !p.rndv {
				size = 20
			}
			if p.rndv && p.mode == Synchronous {
				t.Skip("the same frames as the standard-mode rendezvous")
			}
			if testing.Short() && p.rndv && !p.direct {
				t.Skip("thousands of schedules")
			}
			var sends, recvs [2]*Request
			var data [2][]byte
			setup := func(h *harness) []multiOp {
				var ops []multiOp
				for i, from := range []int{0, 2} {
					data[i] = pattern(size)
					data[i][0] = byte(from)
					sends[i] = &Request{Mode: p.mode, Context: 1, Peer: 1, Self: from, To: 1, Tag: 1, Buf: data[i]}
					recvs[i] = &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: guarded(size)}
				}
				ops = append(ops,
					multiOp{"recvs", -1, func(h *harness) { h.recv(1, recvs[0]); h.recv(1, recvs[1]) }},
					multiOp{"send0", -1, func(h *harness) { h.send(0, sends[0]) }},
					multiOp{"send2", -1, func(h *harness) { h.send(2, sends[1]) }},
					multiOp{"cancel2", 2, func(h *harness) { h.cancelSend(2, sends[1]) }},
				)
				return ops
			}
			// One Data frame per stream: with more, the schedules run into millions.
			cfg := p.cfg()
			cfg.ChunkSize = size
			cancelled := 0
			n := exploreOps(t, setup, func() *harness { return newHarness(t, 3, cfg) }, func(h *harness, sched string) {
				fail := func(format string, args ...any) {
					t.Helper()
					t.Fatalf("[%s]: %s\ntrace: %s", sched, fmt.Sprintf(format, args...), h.traceString())
				}
				if !sends[0].Done() || sends[0].Status() != (Status{}) {
					fail("rank 0's send: done %v %+v", sends[0].Done(), sends[0].Status())
				}
				got := map[byte]int{}
				for i, r := range recvs {
					if r.Done() {
						if st := r.Status(); st.Err != nil || st.Source != int(r.Buf[0]) || checkGuarded(r.Buf, size, data[st.Source/2]) != nil {
							fail("receive %d: %+v", i, st)
						}
						got[r.Buf[0]]++
					}
				}
				if !sends[1].Done() {
					fail("rank 2's send never completed")
				}
				if sends[1].Status().Cancelled {
					cancelled++
					if got[0] != 1 || got[2] != 0 || !recvs[0].Done() || recvs[1].Done() {
						fail("rank 2's send cancelled, messages received %v", got)
					}
					h.engs[1].CancelRecv(recvs[1])
				} else if got[0] != 1 || got[2] != 1 {
					fail("messages received %v", got)
				}
				h.checkClean(t)
			})
			t.Logf("%d schedules, %d with rank 2's send cancelled", n, cancelled)
			if p.waits() && cancelled == 0 {
				t.Error("no schedule cancelled rank 2's send")
			}
		})
	}
}

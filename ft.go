package mpi

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/ft"
)

// Fault tolerance: the MPI standard's ULFM interface (docs/fault-tolerance.md).
//
// With Config.FT (MPIGO_FT=1, mpigo run --ft) a rank that dies does not end
// the job. The protocol (heartbeats, the failed set, revoke notices, the
// agreement) is internal/ft's step machine; each rank runs a controller
// (ftProc) that keeps one receive posted on a private context, ftCtx, feeds
// the machine the control messages it gets there and the ticks of a
// ticker, and carries out what the machine outputs: messages on ftCtx,
// Engine.FailPeer for ranks newly known failed, Engine.Revoke for revoked
// communicators, and the wake-up of callers of Agree (ft_agree.go).
// Failures are learnt from the transports (a connection or a process
// ends), from the job (a goroutine rank returned an error or panicked),
// from missing heartbeats (a stopped process) and from agreements (a rank
// another rank declared failed).

var (
	// ErrRevoked is the class of the errors of operations on a
	// communicator that a rank revoked with Revoke (MPI_ERR_REVOKED).
	ErrRevoked = errors.New("communicator revoked")
	// ErrProcFailedPending is the class of the error of a receive from
	// AnySource that was waiting when a member of its communicator failed,
	// or that was started while such a failure had not been acknowledged
	// with AckFailed (MPI_ERR_PROC_FAILED_PENDING).
	ErrProcFailedPending = errors.New("a process failed while a receive from any source was pending")
)

// ftCtx is the context of the controllers' messages: above every context a
// communicator can have.
const ftCtx = 1<<31 - 2

// ftMaxMsg bounds a control message (a larger one is truncated and dropped).
const ftMaxMsg = 64 << 10

// ftProc is the fault-tolerance state of one rank: the protocol's step
// machine (internal/ft), the controller goroutine that feeds it the
// control messages received and the ticks of a ticker, and the executor of
// its outputs (engine sends, Engine.FailPeer, Engine.Revoke, waking the
// callers of Agree).
type ftProc struct {
	p *proc

	mu    sync.Mutex
	m     *ft.Machine
	inbox []ftMsg                   // control messages not handled yet
	queue []ftOut                   // outputs left for the controller, in the machine's order
	waits map[ft.AgreeID]*agreeWait // agreements entered here and not decided

	// revMu orders the handling of a revoke notice against the making of
	// a communicator (adopt): a notice that arrives before its
	// communicator exists here waits in the machine until it does.
	revMu   sync.Mutex
	notices atomic.Int64 // revoke notices handled (tests wait on it)

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// ftMsg is one control message received.
type ftMsg struct {
	from, tag int
	b         []byte
}

// ftOut is an output of the machine left for the controller: a message
// to send, or a caller of Agree to wake once the messages before it are
// sent.
type ftOut struct {
	send ft.Send
	wake *agreeWait
}

// agreeWait is a local call waiting for the decision of its agreement.
type agreeWait struct {
	done   chan struct{} // closed once decided (or abandoned)
	val    []byte
	failed []int
	err    error
}

// commFT is a communicator's own fault-tolerance state.
type commFT struct {
	mu    sync.Mutex
	acked int // failures of its members acknowledged with AckFailed
}

// startFT starts the fault-tolerance controller of every rank of j when
// cfg asks for it; local says which world ranks run in this process (nil:
// all of them, goroutine ranks, which need no heartbeat). The returned
// function stops the controllers.
func (j *job) startFT(cfg Config, local func(int) bool) func() {
	if !cfg.FT {
		return func() {}
	}
	j.ft = true
	var fts []*ftProc
	now := time.Now()
	for _, p := range j.procs {
		f := &ftProc{p: p, waits: map[ft.AgreeID]*agreeWait{},
			wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
		mc := ft.Config{Rank: p.Rank, Size: j.Size, Comm: f.comm}
		if local != nil {
			mc.Remote = make([]bool, j.Size)
			for r := range mc.Remote {
				mc.Remote[r] = !local(r)
			}
			mc.Period, mc.Timeout = cfg.FTHeartbeat, cfg.FTTimeout
		}
		f.m = ft.New(mc, now)
		p.ft = f
		fts = append(fts, f)
	}
	for _, f := range fts {
		f.post()
		go f.run()
	}
	return func() {
		for _, f := range fts {
			f.close()
		}
	}
}

func (f *ftProc) close() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

// post posts the controller's receive.
func (f *ftProc) post() {
	er := &engine.Request{Context: ftCtx, Peer: AnySource, Tag: AnyTag,
		Alloc: func(n int) []byte { return make([]byte, min(n, ftMaxMsg)) }}
	er.OnDone = func(r *engine.Request) {
		// This may run under the engine's lock: only queue the message.
		st := r.Status()
		f.mu.Lock()
		if st.Err == nil {
			f.inbox = append(f.inbox, ftMsg{from: st.Source, tag: st.Tag, b: r.Buf[:st.Count]})
		} else {
			f.inbox = append(f.inbox, ftMsg{from: -1}) // repost
		}
		f.mu.Unlock()
		f.poke()
	}
	var out engine.Outbox
	f.p.Eng.PostRecv(er, &out)
	f.p.Exec(&out)
}

func (f *ftProc) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// How a machine call's outputs are carried out (ftProc.step).
const (
	ftQueued     = iota // messages and wake-ups go to the controller
	ftController        // the controller: it sends what was queued, then its own
	ftDirect            // the caller sends itself (Revoke, a rank's own failure: the process may end right after)
)

// step runs one input of the machine, in, under f.mu, and carries out its
// outputs after: the failures (Engine.FailPeer) and revocations
// (Engine.Revoke, on c if the caller has it) at once, then the messages
// and the wake-ups of the callers decided, in the machine's order, as how
// says. Only the controller sends what was queued, so messages leave in
// the order the machine made them; a caller of Agree is woken only once
// the decision it learnt is on its way to the others (a launched rank may
// end right after its last agreement).
func (f *ftProc) step(how int, c *Comm, in func(m *ft.Machine, out *ft.Out)) {
	var out ft.Out
	var mine []ftOut
	f.mu.Lock()
	in(f.m, &out)
	if how == ftDirect {
		mine = f.outputs(&out, nil)
	} else {
		f.queue = f.outputs(&out, f.queue)
		if how == ftController {
			mine, f.queue = f.queue, nil
		}
	}
	f.mu.Unlock()
	for _, x := range out.Failures {
		f.failEngine(x.Rank, x.Cause)
	}
	for _, r := range out.Revokes {
		f.applyRevoke(c, r)
	}
	if how == ftQueued {
		if len(out.Sends)+len(out.Decisions) > 0 {
			f.poke()
		}
		return
	}
	for _, o := range mine {
		if o.wake != nil {
			close(o.wake.done)
		} else {
			f.send(o.send.To, int(o.send.Kind), o.send.Body)
		}
	}
}

// outputs appends out's messages, then the wake-ups of its decisions, to
// q. f.mu is held.
func (f *ftProc) outputs(out *ft.Out, q []ftOut) []ftOut {
	for _, s := range out.Sends {
		q = append(q, ftOut{send: s})
	}
	for _, d := range out.Decisions {
		if w := f.waits[d.ID]; w != nil {
			delete(f.waits, d.ID)
			w.val, w.failed, w.err = d.Value, d.Failed, d.Err
			q = append(q, ftOut{wake: w})
		}
	}
	return q
}

// send sends a control message to world rank to; it does not wait.
func (f *ftProc) send(to, tag int, b []byte) {
	if to == f.p.Rank {
		f.mu.Lock()
		f.inbox = append(f.inbox, ftMsg{from: to, tag: tag, b: b})
		f.mu.Unlock()
		f.poke()
		return
	}
	if f.known(to) {
		return
	}
	er := &engine.Request{Context: ftCtx, Peer: to, Self: f.p.Rank, To: to, Tag: tag, Buf: b}
	var out engine.Outbox
	f.p.Eng.Send(er, &out)
	f.p.Exec(&out)
}

// comm describes to the machine this rank's communicator of context ctx
// (ft.Config.Comm), for a revoke notice: none, one a notice cannot
// revoke (no members), or its key and members.
func (f *ftProc) comm(ctx uint32) (ft.Comm, bool) {
	c, _ := f.p.commOf(ctx)
	if c == nil {
		return ft.Comm{}, false
	}
	if c.ctx != ctx || c.inter != nil {
		return ft.Comm{}, true
	}
	return ft.CommOf(c.ctx, c.group), true
}

// known reports whether world rank r is known to have failed.
func (f *ftProc) known(r int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m.Known(r)
}

// failedIn returns the members of g known failed, in the order learnt.
func (f *ftProc) failedIn(g []int) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m.FailedIn(g)
}

// countFailedIn returns how many members of g are known failed.
func (f *ftProc) countFailedIn(g []int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m.CountFailedIn(g)
}

// noteFailed records that world rank peer has failed and fails what
// depends on it. It may run on any goroutine (a transport's reader too):
// what the machine wants sent goes to the controller.
func (f *ftProc) noteFailed(peer int, cause error) {
	f.step(ftQueued, nil, func(m *ft.Machine, out *ft.Out) { m.Fail(peer, cause, out) })
}

// failEngine fails, in the engine, what depends on world rank peer, newly
// known failed.
func (f *ftProc) failEngine(peer int, cause error) {
	f.p.Tr.LosePeer(peer, cause)
	err := fmt.Errorf("%w: rank %d: %w", ErrProcFailed, peer, cause)
	anyErr := fmt.Errorf("%w: rank %d: %w", ErrProcFailedPending, peer, cause)
	f.p.Eng.FailPeer(peer, err, anyErr, func(ctx uint32) bool {
		if ctx == ftCtx {
			return false
		}
		c, _ := f.p.commOf(ctx)
		return c == nil || c.inter != nil || slices.Contains(c.group, peer)
	})
}

// failPeer fails what depends on world rank peer, which is gone: under
// fault tolerance the rank is recorded as failed, otherwise every request
// that needs it fails (and the job usually ends).
func (p *proc) failPeer(peer int, err error) {
	// A transport whose waits on the peer would not end by themselves
	// learns it first (transport.PeerLoser).
	p.Tr.LosePeer(peer, err)
	if f := p.ft; f != nil {
		f.noteFailed(peer, err)
		return
	}
	p.Eng.FailAll(peer, err)
}

// ftRankFailed is called when goroutine rank p of a fault-tolerant job
// returned an error or panicked: the other ranks learn that it failed, and
// its own pending operations end.
func (j *job) ftRankFailed(p *proc, cause error) {
	for _, q := range j.procs {
		if q != nil && q != p && q.ft != nil {
			q.ft.noteFailed(p.Rank, fmt.Errorf("its function failed: %w", cause))
		}
	}
	if p.ft != nil {
		// Ranks in other processes would not notice: this process lives on.
		p.ft.step(ftDirect, nil, func(m *ft.Machine, out *ft.Out) { m.Died(out) })
	}
	p.Eng.Abort(fmt.Errorf("%w: rank %d failed: %w", ErrProcFailed, p.Rank, cause))
}

// run is the controller's loop.
func (f *ftProc) run() {
	defer close(f.done)
	var tick <-chan time.Time
	check := false
	if period := f.m.Period(); period > 0 {
		t := time.NewTicker(period)
		defer t.Stop()
		tick = t.C
		f.step(ftController, nil, func(m *ft.Machine, out *ft.Out) { m.Start(time.Now(), out) })
	}
	for {
		select {
		case <-f.stop:
			f.abandonAll(errors.New("the job ended during the agreement"))
			return
		case <-tick:
			check = true
		case <-f.wake:
		}
		f.mu.Lock()
		in := f.inbox
		f.inbox = nil
		f.mu.Unlock()
		for _, m := range in {
			f.handle(m)
		}
		if check {
			// After the messages that came meanwhile have been counted.
			check = false
			f.step(ftController, nil, func(m *ft.Machine, out *ft.Out) { m.Tick(time.Now(), out) })
		} else {
			f.step(ftController, nil, func(*ft.Machine, *ft.Out) {}) // what other goroutines queued
		}
	}
}

// handle hands the machine a control message received, after posting the
// controller's receive again.
func (f *ftProc) handle(m ftMsg) {
	if m.from < 0 {
		if err := f.p.Eng.Err(); err == nil {
			f.post()
		} else {
			// The job (or this rank) is going down: nobody waits in an
			// agreement for ever.
			f.abandonAll(err)
		}
		return
	}
	if m.from != f.p.Rank && f.p.Eng.Err() == nil {
		f.post() // the message took the posted receive
	}
	h := func(mc *ft.Machine, out *ft.Out) { mc.Handle(m.from, ft.Kind(m.tag), m.b, time.Now(), out) }
	if ft.Kind(m.tag) != ft.Revoke {
		f.step(ftController, nil, h)
		return
	}
	// The machine looks the communicator up (comm) and keeps a notice
	// for one not made yet, atomically with adopt's making of it.
	f.revMu.Lock()
	f.step(ftController, nil, h)
	f.revMu.Unlock()
	f.notices.Add(1)
}

// abandonAll ends every wait in an agreement, now and later, with err.
func (f *ftProc) abandonAll(err error) {
	f.step(ftController, nil, func(m *ft.Machine, out *ft.Out) { m.Stop(err, out) })
}

// revokeErr is the error of operations on a revoked communicator.
func revokeErr(by int, name string) error {
	return fmt.Errorf("%w: %s was revoked by rank %d", ErrRevoked, name, by)
}

// applyRevoke revokes, in the engine, the communicator r names: c, or the
// one this rank has with r's context.
func (f *ftProc) applyRevoke(c *Comm, r ft.Revocation) {
	if c == nil || c.ctx != r.Key.Ctx {
		c, _ = f.p.commOf(r.Key.Ctx)
		if c == nil || c.ctx != r.Key.Ctx || c.inter != nil {
			return
		}
	}
	f.p.Eng.Revoke(revokeErr(r.By, c.name), c.ftContexts()...)
}

// adopt is called as communicator c is made under fault tolerance: its
// contexts are new, so a revocation left on them by an earlier
// communicator goes, and a notice that came before c was made applies
// now.
func (f *ftProc) adopt(c *Comm) {
	f.revMu.Lock()
	defer f.revMu.Unlock()
	f.p.Eng.Unrevoke(c.ctx, c.ctx+1)
	f.p.noteComm(c)
	d := ft.Comm{Key: ft.Key{Ctx: c.ctx, Group: ft.GroupHash(c.group)}}
	if c.inter == nil {
		d.Members = c.group
	}
	f.step(ftDirect, c, func(m *ft.Machine, out *ft.Out) { m.Adopt(d, out) })
}

// ftContexts returns every context c's operations use: its own, its
// collective context and those of its hierarchy's communicators, if built.
func (c *Comm) ftContexts() []uint32 {
	ctxs := []uint32{c.ctx, c.ctx + 1}
	if hc := c.hc; hc != nil && hc.done.Load() && hc.h != nil {
		ctxs = append(ctxs, hc.h.local.ctx, hc.h.local.ctx+1)
		if l := hc.h.leaders; l != nil {
			ctxs = append(ctxs, l.ctx, l.ctx+1)
		}
	}
	return ctxs
}

// ftCheck is the check of the fault-tolerance calls: c is usable and the
// job runs with fault tolerance.
func (c *Comm) ftCheck(op string) error {
	if err := c.check(op); err != nil {
		return err
	}
	if c.p.ft == nil {
		return c.fail(op, ErrOther, loc{}, "fault tolerance is off: run the job with `mpigo run --ft`, MPIGO_FT=1 or Config.FT")
	}
	if c.inter != nil {
		return c.fail(op, ErrComm, loc{}, "not supported on an intercommunicator")
	}
	return nil
}

// Revoke revokes c on every rank (MPIX_Comm_revoke): every pending and
// later operation on c, point-to-point or collective, fails with
// ErrRevoked on every member, so that ranks waiting for a failed peer (or
// for a rank that gave up on one) all stop and can recover together.
// Agree, Shrink, GetFailed and AckFailed still work on a revoked
// communicator. Revoke does not wait for the other ranks. It needs fault
// tolerance (Config.FT, MPIGO_FT=1, mpigo run --ft).
func (c *Comm) Revoke() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Revoke", c, Undefined, Undefined), &err)
	}
	if err := c.ftCheck("Revoke"); err != nil {
		return err
	}
	d := ft.CommOf(c.ctx, c.group)
	c.p.ft.step(ftDirect, c, func(m *ft.Machine, out *ft.Out) { m.Revoke(d, out) })
	return nil
}

// IsRevoked reports whether c has been revoked (by any rank, as far as
// this rank has learnt).
func (c *Comm) IsRevoked() bool {
	return c != nil && c.p != nil && c.p.Eng.Revoked(c.ctx) != nil
}

// GetFailed returns the group of the members of c that this rank knows
// to have failed, in the order it learnt of them (MPIX_Comm_get_failed).
// Different ranks may know different failures; Agree and Shrink make them
// agree.
func (c *Comm) GetFailed() (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GetFailed", c, Undefined, Undefined), &err)
	}
	if err := c.ftCheck("GetFailed"); err != nil {
		return nil, err
	}
	return newGroup(c.p.ft.failedIn(c.group), c.p.Rank), nil
}

// AckFailed acknowledges the first n failures of members of c that this
// rank knows of (in the order of GetFailed; a larger n acknowledges all of
// them), and returns how many are acknowledged now
// (MPIX_Comm_ack_failed). Once every known failure is acknowledged,
// receives from AnySource on c no longer fail with ErrProcFailedPending
// because of them, and Agree no longer reports them.
func (c *Comm) AckFailed(n int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AckFailed", c, Undefined, Undefined), &err)
	}
	if err := c.ftCheck("AckFailed"); err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, c.fail("AckFailed", ErrArg, loc{}, "cannot acknowledge %d failures", n)
	}
	known := c.p.ft.countFailedIn(c.group)
	c.ftState.mu.Lock()
	defer c.ftState.mu.Unlock()
	c.ftState.acked = max(c.ftState.acked, min(n, known))
	return c.ftState.acked, nil
}

// acked returns the members of c whose failure this rank acknowledged.
func (c *Comm) ackedFailed() []int {
	l := c.p.ft.failedIn(c.group)
	c.ftState.mu.Lock()
	n := c.ftState.acked
	c.ftState.mu.Unlock()
	return l[:min(n, len(l))]
}

// ftAnyPending fails er, a receive from AnySource on c, with
// ErrProcFailedPending if a member of c failed and this rank has not
// acknowledged it, and reports whether it did.
func (c *Comm) ftAnyPending(er *engine.Request) bool {
	err := c.ftUnacked(AnySource)
	if err == nil {
		return false
	}
	er.Op = engine.OpRecv
	er.Fail(err)
	return true
}

// ftUnacked returns, for an operation from src on c, the error that a
// receive or probe from AnySource meets under fault tolerance while a
// failure in c's group is not acknowledged: ErrProcFailedPending, naming
// the first such rank (ULFM: it might have been the sender). nil from a
// named source, without fault tolerance, once every failure is
// acknowledged, and on the package's own collective contexts.
func (c *Comm) ftUnacked(src int) error {
	if src != AnySource || c.p.ft == nil || c.shadow == nil || c.inter != nil {
		return nil
	}
	l := c.p.ft.failedIn(c.group)
	c.ftState.mu.Lock()
	n := c.ftState.acked
	c.ftState.mu.Unlock()
	if len(l) <= n {
		return nil
	}
	return fmt.Errorf("%w: rank %d failed and its failure is not acknowledged (AckFailed)", ErrProcFailedPending, c.rankOf(l[n]))
}

// anyPending reports, for a non-blocking receive from AnySource whose
// engine request is done, whether it was interrupted by a failure
// (ErrProcFailedPending): then it returns that error and r stays
// pending; the next Wait or Test posts the receive again (rearmRecv), so
// that it can still complete once the failure is acknowledged (ULFM).
// r.mu is held.
func (r *Request) anyPending() error {
	if r.x == nil || r.x.repost == nil || !errors.Is(r.er.Status().Err, ErrProcFailedPending) {
		return nil
	}
	r.x.rearm = true
	return r.c.statusErr(r.opName(), r.at(), r.er.Status())
}

// rearmRecv posts again a receive that anyPending left pending. Until
// the failure is acknowledged with AckFailed the new receive fails at
// once with ErrProcFailedPending again. r.mu is held.
func (r *Request) rearmRecv() {
	if r.x == nil || !r.x.rearm {
		return
	}
	r.x.rearm = false
	note := r.er.Note // a typed receive's type (Request.complete)
	r.er.Reset()
	r.er.Note = note
	r.x.repost(r.er)
}

// blockingErr is the error of a blocking receive from AnySource that a
// failure interrupted: ErrProcFailed, not ErrProcFailedPending. Only a
// non-blocking receive has a request left to continue after the failure
// is acknowledged; a blocking one has ended (ULFM: MPI_ERR_PROC_FAILED
// for blocking operations, MPI_ERR_PROC_FAILED_PENDING for non-blocking
// ones). The cause keeps its words but no longer wraps the pending class.
func blockingErr(err error) error {
	var e *Error
	if err == nil || !errors.Is(err, ErrProcFailedPending) || !errors.As(err, &e) {
		return err
	}
	f := *e
	f.Class = ErrProcFailed
	if f.Cause != nil {
		f.Cause = errors.New(f.Cause.Error())
	}
	return &f
}

// ftReposts reports whether a non-blocking receive from src on c must be
// able to post itself again after ErrProcFailedPending (Request.repost):
// from AnySource, with fault tolerance on.
func (c *Comm) ftReposts(src int) bool {
	return src == AnySource && c.p.ft != nil && c.inter == nil
}

// rankOf returns the rank in c of world rank w, or -1.
func (c *Comm) rankOf(w int) int {
	return slices.Index(c.group, w)
}

// finalize is the end of a launched rank: nobody leaves while a peer may
// still be talking to it. Under fault tolerance the live ranks agree
// instead of meeting in a barrier, which a failed rank would break.
func (p *proc) finalize() error {
	if p.ft == nil {
		return Barrier(p.world)
	}
	if _, _, err := p.world.ftAgree([]byte{}, andBytes); err != nil {
		return p.world.errorf("Finalize", ErrProcFailed, loc{}, "%v", err)
	}
	return nil
}

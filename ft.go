package mpi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/engine"
)

// Fault tolerance: the MPI standard's ULFM interface (docs/fault-tolerance.md).
//
// With Config.FT (MPIGO_FT=1, mpigo run --ft) a rank that dies does not end
// the job. Each rank runs a controller (ftProc) that keeps one receive
// posted on a private context, ftCtx, on which the ranks exchange
// heartbeats, revoke notices and the messages of the fault-tolerant
// agreement (ft_agree.go). Failures are learnt from the transports (a
// connection or a process ends), from the job (a goroutine rank returned an
// error or panicked), from missing heartbeats (a stopped process) and from
// agreements (a rank another rank declared failed).

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

// Tags of the controllers' messages.
const (
	ftHeartbeat = 1 + iota
	ftRevokeMsg
	ftPropose
	ftDecide
	ftCollect
	ftFailedMsg // a goroutine rank of the sender's process failed
)

// ftProc is the fault-tolerance state of one rank.
type ftProc struct {
	p         *proc
	period    time.Duration // heartbeat period; 0: no heartbeats
	timeout   time.Duration
	remote    []bool // world ranks in other processes (heartbeats go to them)
	lastHeard []atomic.Int64

	mu       sync.Mutex
	failed   []int // world ranks known failed, in the order learnt
	isFailed map[int]bool
	inbox    []ftMsg // control messages not handled yet
	seqs     map[ftKey]uint64
	agrees   map[agreeID]*agreement // instances entered or heard of, recent decided ones
	open     map[agreeID]*agreement // instances entered and not decided
	enters   []*agreement           // entries the controller has not seen yet
	dead     error                  // the rank's engine was aborted: agreements fail

	// revMu orders the handling of a revoke notice against the making of
	// a communicator (adopt): a notice that arrives before its
	// communicator exists here waits in early until it does.
	revMu   sync.Mutex
	early   map[ftKey]int // revoke notices of communicators not made yet: the revoking rank
	notices atomic.Int64  // revoke notices handled (tests wait on it)

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

// ftKey names a communicator among the ranks: its context and a hash of
// its members.
type ftKey struct {
	ctx uint32
	gh  uint64
}

// commFT is a communicator's own fault-tolerance state.
type commFT struct {
	mu    sync.Mutex
	acked int // failures of its members acknowledged with AckFailed
}

func groupHash(g []int) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, r := range g {
		binary.LittleEndian.PutUint32(b[:], uint32(r))
		h.Write(b[:])
	}
	return h.Sum64()
}

// Default heartbeat period and timeout.
const (
	defaultFTHeartbeat = 250 * time.Millisecond
	defaultFTTimeout   = 3 * time.Second
)

// startFT starts the fault-tolerance controller of every rank of j when
// cfg asks for it; local says which world ranks run in this process (nil:
// all of them, goroutine ranks, which need no heartbeat). The returned
// function stops the controllers.
func (j *job) startFT(cfg Config, local func(int) bool) func() {
	if !cfg.FT {
		return func() {}
	}
	j.ft = true
	period, timeout := cfg.FTHeartbeat, cfg.FTTimeout
	if period <= 0 {
		period = defaultFTHeartbeat
	}
	if timeout <= 0 {
		timeout = defaultFTTimeout
	}
	if timeout < 2*period {
		timeout = 2 * period
	}
	var fts []*ftProc
	for _, p := range j.procs {
		f := &ftProc{p: p, isFailed: map[int]bool{}, seqs: map[ftKey]uint64{}, agrees: map[agreeID]*agreement{}, open: map[agreeID]*agreement{},
			wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
			remote: make([]bool, j.size), lastHeard: make([]atomic.Int64, j.size)}
		if local != nil {
			now := time.Now().UnixNano()
			for r := range f.remote {
				f.remote[r] = !local(r)
				f.lastHeard[r].Store(now)
			}
			f.period, f.timeout = period, timeout
		}
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
		st := r.Status()
		if st.Err == nil && st.Source >= 0 && st.Source < len(f.lastHeard) {
			f.lastHeard[st.Source].Store(time.Now().UnixNano())
		}
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
	f.p.eng.PostRecv(er, &out)
	f.p.exec(&out)
}

func (f *ftProc) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// send sends a control message to world rank to; it does not wait.
func (f *ftProc) send(to, tag int, b []byte) {
	if to == f.p.rank {
		f.mu.Lock()
		f.inbox = append(f.inbox, ftMsg{from: to, tag: tag, b: b})
		f.mu.Unlock()
		f.poke()
		return
	}
	if f.known(to) {
		return
	}
	er := &engine.Request{Context: ftCtx, Peer: to, Self: f.p.rank, To: to, Tag: tag, Buf: b}
	var out engine.Outbox
	f.p.eng.Send(er, &out)
	f.p.exec(&out)
}

// known reports whether world rank r is known to have failed.
func (f *ftProc) known(r int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.isFailed[r]
}

// failedIn returns the members of g known failed, in the order learnt.
func (f *ftProc) failedIn(g []int) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var l []int
	for _, r := range f.failed {
		if slices.Contains(g, r) {
			l = append(l, r)
		}
	}
	return l
}

// noteFailed records that world rank peer has failed and fails what
// depends on it.
func (f *ftProc) noteFailed(peer int, cause error) {
	if peer == f.p.rank || peer < 0 || peer >= f.p.job.size {
		return
	}
	f.mu.Lock()
	if f.isFailed[peer] {
		f.mu.Unlock()
		return
	}
	f.isFailed[peer] = true
	f.failed = append(f.failed, peer)
	f.mu.Unlock()
	err := fmt.Errorf("%w: rank %d: %w", ErrProcFailed, peer, cause)
	anyErr := fmt.Errorf("%w: rank %d: %w", ErrProcFailedPending, peer, cause)
	f.p.eng.FailPeer(peer, err, anyErr, func(ctx uint32) bool {
		if ctx == ftCtx {
			return false
		}
		c, _ := f.p.commOf(ctx)
		return c == nil || c.inter != nil || slices.Contains(c.group, peer)
	})
	f.poke()
}

// failPeer fails what depends on world rank peer, which is gone: under
// fault tolerance the rank is recorded as failed, otherwise every request
// that needs it fails (and the job usually ends).
func (p *proc) failPeer(peer int, err error) {
	if f := p.ft; f != nil {
		f.noteFailed(peer, err)
		return
	}
	p.eng.FailAll(peer, err)
}

// ftRankFailed is called when goroutine rank p of a fault-tolerant job
// returned an error or panicked: the other ranks learn that it failed, and
// its own pending operations end.
func (j *job) ftRankFailed(p *proc, cause error) {
	local := make([]bool, j.size)
	for _, q := range j.procs {
		if q != nil {
			local[q.rank] = true
		}
		if q != nil && q != p && q.ft != nil {
			q.ft.noteFailed(p.rank, fmt.Errorf("its function failed: %w", cause))
		}
	}
	if p.ft != nil {
		// Ranks in other processes would not notice: this process lives on.
		b := binary.LittleEndian.AppendUint32(nil, uint32(p.rank))
		for r := range j.size {
			if !local[r] {
				p.ft.send(r, ftFailedMsg, b)
			}
		}
	}
	p.eng.Abort(fmt.Errorf("%w: rank %d failed: %w", ErrProcFailed, p.rank, cause))
}

// abandonAll ends every wait in an agreement, now and later, with err.
func (f *ftProc) abandonAll(err error) {
	f.mu.Lock()
	f.dead = err
	enters := f.enters
	f.enters = nil
	f.mu.Unlock()
	for _, a := range f.open {
		a.abandon(err)
	}
	for _, a := range enters {
		a.abandon(err)
	}
	clear(f.open)
}

// run is the controller's loop.
func (f *ftProc) run() {
	defer close(f.done)
	var tick <-chan time.Time
	check, lastTick := false, time.Now()
	if f.period > 0 {
		t := time.NewTicker(f.period)
		defer t.Stop()
		tick = t.C
		f.beat()
	}
	for {
		select {
		case <-f.stop:
			f.abandonAll(errors.New("the job ended during the agreement"))
			return
		case <-tick:
			f.beat()
			check = true
		case <-f.wake:
		}
		f.mu.Lock()
		in, enters := f.inbox, f.enters
		f.inbox, f.enters = nil, nil
		f.mu.Unlock()
		for _, a := range enters {
			f.enter(a)
		}
		for _, m := range in {
			if m.from < 0 {
				if err := f.p.eng.Err(); err == nil {
					f.post()
				} else {
					// The job (or this rank) is going down: nobody waits
					// in an agreement for ever.
					f.abandonAll(err)
				}
				continue
			}
			if m.from >= len(f.lastHeard) {
				continue
			}
			if m.from != f.p.rank {
				f.lastHeard[m.from].Store(time.Now().UnixNano())
				if f.p.eng.Err() == nil {
					f.post() // the message took the posted receive
				}
			}
			switch m.tag {
			case ftFailedMsg:
				if len(m.b) == 4 {
					f.noteFailed(int(binary.LittleEndian.Uint32(m.b)), errors.New("its function failed"))
				}
			case ftRevokeMsg:
				f.onRevoke(m)
			case ftPropose, ftDecide, ftCollect:
				f.onAgree(m)
			}
		}
		f.stepAll()
		if check {
			// After the messages that came meanwhile have been counted.
			check = false
			now := time.Now()
			if now.Sub(lastTick) > f.timeout/2 {
				// This process itself did not run for a long while (a
				// loaded machine, or it was stopped): the silence of the
				// others may be ours. Start counting again.
				for r := range f.lastHeard {
					f.lastHeard[r].Store(now.UnixNano())
				}
			} else {
				f.checkHeartbeats()
			}
			lastTick = now
		}
	}
}

// beat sends a heartbeat to every live rank in another process.
func (f *ftProc) beat() {
	for r, remote := range f.remote {
		if remote && !f.known(r) {
			f.send(r, ftHeartbeat, []byte{})
		}
	}
}

// checkHeartbeats declares failed the ranks not heard from for the timeout.
func (f *ftProc) checkHeartbeats() {
	now := time.Now().UnixNano()
	for r, remote := range f.remote {
		if !remote || f.known(r) {
			continue
		}
		if d := time.Duration(now - f.lastHeard[r].Load()); d > f.timeout {
			f.noteFailed(r, fmt.Errorf("no heartbeat for %v (stopped, hung or unreachable; MPIGO_FT_TIMEOUT is %v)", d.Round(time.Millisecond), f.timeout))
		}
	}
}

// revokeErr is the error of operations on a revoked communicator.
func revokeErr(by int, name string) error {
	return fmt.Errorf("%w: %s was revoked by rank %d", ErrRevoked, name, by)
}

// revokeMsg encodes a revoke notice: context, group hash, revoking rank.
func revokeMsg(ctx uint32, gh uint64, by int) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b, ctx)
	binary.LittleEndian.PutUint64(b[4:], gh)
	binary.LittleEndian.PutUint32(b[12:], uint32(by))
	return b
}

// ftEarlyMax bounds the revoke notices kept for communicators a rank has
// not made yet.
const ftEarlyMax = 256

// onRevoke handles a revoke notice: the first one revokes the communicator
// here and is passed on to every other member, so that the notice reaches
// every live rank even if the one that revoked dies while sending it.
//
// A member can revoke a new communicator before this rank has made it
// (the agreement that made it decided here later than there): then the
// notice is kept, and adopt applies it when the communicator is made.
// Dropping it would leave this rank waiting in the communicator's first
// operations for members that gave up on it.
func (f *ftProc) onRevoke(m ftMsg) {
	defer f.notices.Add(1)
	if len(m.b) != 16 {
		return
	}
	ctx := binary.LittleEndian.Uint32(m.b)
	gh := binary.LittleEndian.Uint64(m.b[4:])
	by := int(binary.LittleEndian.Uint32(m.b[12:]))
	f.revMu.Lock()
	c, _ := f.p.commOf(ctx)
	if c == nil || c.ctx != ctx || c.inter != nil || groupHash(c.group) != gh {
		if c == nil {
			if f.early == nil {
				f.early = map[ftKey]int{}
			}
			if len(f.early) >= ftEarlyMax {
				for k := range f.early { // forget one at random
					delete(f.early, k)
					break
				}
			}
			f.early[ftKey{ctx: ctx, gh: gh}] = by
		}
		f.revMu.Unlock()
		return
	}
	f.revMu.Unlock()
	f.revokeHere(c, by, m.from)
}

// revokeHere revokes c on this rank for a notice from world rank from
// (revoked by rank by) and passes the notice on to the other members,
// unless c was revoked here already.
func (f *ftProc) revokeHere(c *Comm, by, from int) {
	ctxs := c.ftContexts()
	if f.p.eng.Revoked(c.ctx) != nil {
		return
	}
	f.p.eng.Revoke(revokeErr(by, c.name), ctxs...)
	b := revokeMsg(c.ctx, groupHash(c.group), by)
	for _, r := range c.group {
		if r != f.p.rank && r != from {
			f.send(r, ftRevokeMsg, b)
		}
	}
}

// adopt is called as communicator c is made under fault tolerance: its
// contexts are new, so a revocation left on them by an earlier
// communicator goes, and a notice that came before c was made applies
// now.
func (f *ftProc) adopt(c *Comm) {
	f.revMu.Lock()
	f.p.eng.Unrevoke(c.ctx, c.ctx+1)
	f.p.noteComm(c)
	key := ftKey{ctx: c.ctx, gh: groupHash(c.group)}
	by, ok := f.early[key]
	if ok {
		delete(f.early, key)
	}
	f.revMu.Unlock()
	if ok && c.inter == nil {
		f.revokeHere(c, by, -1)
	}
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
	f := c.p.ft
	if c.p.eng.Revoked(c.ctx) != nil {
		return nil
	}
	c.p.eng.Revoke(revokeErr(c.p.rank, c.name), c.ftContexts()...)
	b := revokeMsg(c.ctx, groupHash(c.group), c.p.rank)
	for _, r := range c.group {
		if r != c.p.rank {
			f.send(r, ftRevokeMsg, b)
		}
	}
	return nil
}

// IsRevoked reports whether c has been revoked (by any rank, as far as
// this rank has learnt).
func (c *Comm) IsRevoked() bool {
	return c != nil && c.p != nil && c.p.eng.Revoked(c.ctx) != nil
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
	return newGroup(c.p.ft.failedIn(c.group), c.p.rank), nil
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
	known := len(c.p.ft.failedIn(c.group))
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

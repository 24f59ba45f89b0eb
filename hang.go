package mpi

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/engine"
)

// This file is hang diagnosis: when every live rank of a job has been
// blocked inside MPI calls for longer than a threshold, the job prints one
// report of what each rank waits for and why that cannot complete.
//
// What it costs: nothing on a wait that completes while it spins or polls.
// A wait that parks its goroutine (which costs microseconds anyway) tells
// its rank's blockState, under a mutex, that it parks and when it ends;
// that is all. The costly part, finding the caller's file and line, is done
// only when a hang is suspected: the watcher wakes every parked goroutine
// and each one looks at its own stack, then parks again.

// defaultHangReport is the threshold when neither Config nor
// MPIGO_HANG_REPORT (config.go) says otherwise.
const defaultHangReport = 10 * time.Second

// blockedWait is one parked wait of a rank.
type blockedWait struct {
	r *engine.Request // nil for probes and WaitAny
	w *engine.Waiter
	// env describes a wait without a request (a probe).
	envCtx          uint32
	envPeer, envTag int
	hasEnv          bool
	gen             uint64    // the describe round info belongs to
	info            diag.Wait // filled by the waiting goroutine
}

// blockState is what hang diagnosis knows of one rank. It implements
// engine.Blocker.
type blockState struct {
	p     *proc
	mu    sync.Mutex
	waits []*blockedWait
	free  []*blockedWait
	gen   uint64        // current describe round, under mu
	want  atomic.Uint64 // = gen while a describe round runs, 0 otherwise
	// parked counts the waits parked now, progress the waits that ended
	// after parking; both under mu, which every change takes anyway (as
	// atomics they cost three more locked instructions a parked wait,
	// and only the watcher reads them: counts).
	parked   int32
	progress uint64
	// parkedNow is parked for readers without mu: a wait of the rank that
	// watched and completes leaves the rank's mailbox open only while no
	// goroutine of the rank is parked (progress.Rank).
	parkedNow atomic.Int32
	returned  atomic.Bool     // the rank's function has returned
	check     bool            // check mode is on (set before the rank starts)
	checkWG   *sync.WaitGroup // check messages not compared yet (coll_check.go)
	// coll is the rank's current collective, recorded in check mode.
	coll atomic.Pointer[collEntry]
	// comms maps contexts to the rank's communicators, for names.
	commMu sync.Mutex
	comms  map[uint32]weak.Pointer[Comm]
	// ctl counts the messages of hang diagnosis between processes that
	// the rank's engine matched (hangCoord): they are not the rank's
	// progress.
	ctl atomic.Uint64
	// orphanErr, once the job has failed and its engines' Abort had time
	// to end every wait they know of, is the error with which a parked
	// wait that is still incomplete when woken fails itself (endWaits).
	orphanErr atomic.Pointer[error]
}

// collEntry is a collective call as check mode saw it enter.
type collEntry struct {
	name string
	root int
	c    *Comm
	pcs  [16]uintptr // where it was called
}

// noteComm records c so that a report can name it.
func (p *proc) noteComm(c *Comm) {
	b := &p.blk
	b.commMu.Lock()
	if b.comms == nil {
		b.comms = map[uint32]weak.Pointer[Comm]{}
	}
	// Dead entries go as new ones come: the map stays as big as the live
	// communicators, plus the ones freed since the last sweep.
	if len(b.comms) >= 64 && len(b.comms)&(len(b.comms)-1) == 0 {
		for k, w := range b.comms {
			if w.Value() == nil {
				delete(b.comms, k)
			}
		}
	}
	b.comms[c.ctx] = weak.Make(c)
	b.commMu.Unlock()
}

// commOf returns the communicator whose point-to-point context (or, with
// its collective context, coll set) is ctx.
func (p *proc) commOf(ctx uint32) (c *Comm, coll bool) {
	b := &p.blk
	b.commMu.Lock()
	defer b.commMu.Unlock()
	if w, ok := b.comms[ctx]; ok {
		if c := w.Value(); c != nil {
			return c, false
		}
	}
	if ctx > 0 {
		if w, ok := b.comms[ctx-1]; ok {
			if c := w.Value(); c != nil && c.shadow != nil && c.shadow.ctx == ctx {
				return c, true
			}
		}
	}
	return nil, false
}

func (b *blockState) add(r *engine.Request, w *engine.Waiter) *blockedWait {
	b.parkedNow.Add(1)
	if b.p != nil && b.p.Mail != nil {
		// Nobody collects the mailbox of a parked goroutine: what
		// senders left there is delivered now, and later messages come
		// the ordinary way, with a wake-up.
		b.p.Mail.Close()
	}
	b.mu.Lock()
	var bw *blockedWait
	if n := len(b.free); n > 0 {
		bw = b.free[n-1]
		b.free = b.free[:n-1]
	} else {
		bw = new(blockedWait)
	}
	// Not *bw = blockedWait{...}: clearing the whole entry (its info is
	// most of it, with pointers) cost more than the rest of a park's
	// bookkeeping. info is read only when gen is the current round.
	bw.r, bw.w, bw.hasEnv, bw.gen = r, w, false, 0
	bw.envCtx, bw.envPeer, bw.envTag = 0, 0, 0 // describe reads them
	b.waits = append(b.waits, bw)
	b.parked++
	b.mu.Unlock()
	return bw
}

// remove takes off a wait registered with add or parkEnv. Like Unpark,
// it counts the wait out only if it was still on the list, so that parked
// always equals the number of waits listed: a count that drifted below
// zero would keep a rank that has returned "parked" for ever, and the
// watcher would report a hang of ranks that have all returned.
func (b *blockState) remove(bw *blockedWait) {
	b.mu.Lock()
	for i, x := range b.waits {
		if x == bw {
			b.drop(i)
			b.parked--
			b.progress++
			b.mu.Unlock()
			b.parkedNow.Add(-1)
			return
		}
	}
	b.mu.Unlock()
}

// anyParked reports whether a goroutine of the rank is parked.
func (b *blockState) anyParked() bool { return b.parkedNow.Load() != 0 }

// counts returns how many waits are parked now and how many ended after
// parking.
func (b *blockState) counts() (parked int32, progress uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.parked, b.progress
}

// drop takes wait i off the list and keeps it for reuse. b.mu is held.
func (b *blockState) drop(i int) {
	bw := b.waits[i]
	last := len(b.waits) - 1
	b.waits[i] = b.waits[last]
	b.waits[last] = nil
	b.waits = b.waits[:last]
	bw.r, bw.w = nil, nil
	if len(b.free) < 16 {
		b.free = append(b.free, bw)
	}
}

func (b *blockState) find(r *engine.Request) *blockedWait {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, x := range b.waits {
		if x.r == r {
			return x
		}
	}
	return nil
}

// Park implements engine.Blocker.
func (b *blockState) Park(r *engine.Request, w *engine.Waiter) {
	bw := b.add(r, w)
	if b.want.Load() != 0 {
		b.describe(bw)
	}
}

// Woken implements engine.Blocker. After the job failed, a wait that is
// still incomplete when endWaits wakes it ends itself with the job's
// error (see endWaits).
func (b *blockState) Woken(r *engine.Request) {
	if e := b.orphanErr.Load(); e != nil && !r.Completing() {
		// Its own completer may finish it at this very moment (a
		// non-blocking collective's goroutine, the executor): the
		// first of the two completes it.
		r.FailOnce(*e)
		return
	}
	if b.want.Load() == 0 {
		return
	}
	if bw := b.find(r); bw != nil {
		b.describe(bw)
	}
}

// Unpark implements engine.Blocker.
func (b *blockState) Unpark(r *engine.Request) {
	b.mu.Lock()
	for i, x := range b.waits {
		if x.r == r {
			b.drop(i)
			b.parked--
			b.progress++
			b.mu.Unlock()
			b.parkedNow.Add(-1)
			return
		}
	}
	b.mu.Unlock()
}

// parkEnv registers a parked wait that has no request: a probe for
// (src, tag) on context ctx.
func (b *blockState) parkEnv(w *engine.Waiter, ctx uint32, src, tag int) *blockedWait {
	bw := b.add(nil, w)
	b.mu.Lock()
	bw.envCtx, bw.envPeer, bw.envTag, bw.hasEnv = ctx, src, tag, true
	b.mu.Unlock()
	if b.want.Load() != 0 {
		b.describe(bw)
	}
	return bw
}

// woken is Woken for a wait registered with add or parkEnv; w is the
// waiter it parks on next.
func (b *blockState) woken(bw *blockedWait, w *engine.Waiter) {
	b.mu.Lock()
	bw.w = w
	b.mu.Unlock()
	if b.want.Load() != 0 {
		b.describe(bw)
	}
}

// describe fills bw.info for the current round, on the waiting goroutine.
func (b *blockState) describe(bw *blockedWait) {
	gen := b.want.Load()
	b.mu.Lock()
	if bw.gen == gen {
		b.mu.Unlock()
		return
	}
	r, hasEnv := bw.r, bw.hasEnv
	ctx, peer, tag := bw.envCtx, bw.envPeer, bw.envTag
	b.mu.Unlock()
	w := diag.Wait{Peer: diag.None, PeerWorld: -1, Tag: diag.None, Root: diag.None, Kind: diag.KindOther}
	call, file, line, fn := callerInfo()
	w.Call, w.File, w.Line, w.Func = call, file, line, fn
	op := engine.Op(0)
	if r != nil {
		ctx, peer, tag, op = r.Context, r.Peer, r.Tag, r.Op
		w.Bytes = b.p.Eng.SizeOf(r) // a receive's buffer may be allocated as it matches
		w.Sync = r.Op == engine.OpSend && r.Mode == engine.Synchronous
	}
	c, coll := b.p.commOf(ctx)
	switch {
	case b.returned.Load():
		w.Kind = diag.KindFinalize
		w.Call = "Finalize"
	case isCollective(call) || coll:
		w.Kind = diag.KindColl
		if w.Call == "" {
			w.Call = "a collective"
		}
		w.Bytes, w.Sync = 0, false
		if e := b.coll.Load(); e != nil && e.name == call {
			w.Root = e.root
			if e.c != nil {
				c = e.c
			}
		}
	case r != nil || hasEnv:
		if op == engine.OpSend {
			w.Kind = diag.KindSend
		} else {
			w.Kind = diag.KindRecv
		}
		w.Peer, w.Tag = peer, tag
		if c != nil && peer >= 0 && peer < len(c.group) && c.inter == nil {
			w.PeerWorld = c.group[peer]
		}
	}
	if c != nil {
		w.Comm = c.name
	} else if ctx != 0 || r != nil || hasEnv {
		w.Comm = fmt.Sprintf("communicator #%d", ctx/2)
	}
	b.mu.Lock()
	bw.info, bw.gen = w, gen
	b.mu.Unlock()
}

// collNames are the collectives hang diagnosis and check mode know.
var collNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields("Barrier Bcast Reduce Allreduce Gather Gatherv Scatter Scatterv Allgather Allgatherv " +
		"Alltoall Alltoallv Alltoallw ReduceScatter ReduceScatterBlock Scan Exscan NeighborAllgather NeighborAllgatherv " +
		"NeighborAlltoall NeighborAlltoallv NeighborAlltoallw Dup Split Create CreateGroup") {
		m[n] = true
	}
	return m
}()

// collName normalises a public call name to its collective, or "".
// "Comm.Allreduce", "AllreduceSliceInto" and "Allreduce" are all
// "Allreduce"; non-blocking ones keep their I.
func collName(call string) string {
	call = strings.TrimPrefix(call, "Comm.")
	for _, s := range []string{"SliceInto", "Slice", "Into"} {
		call = strings.TrimSuffix(call, s)
	}
	if collNames[call] || (strings.HasPrefix(call, "I") && collNames[call[1:]]) {
		return call
	}
	// A persistent collective's Init is ordered like the blocking call
	// (its Starts are not: they are not collective calls of their own).
	if base, ok := strings.CutSuffix(call, "Init"); ok && collNames[base] {
		return call
	}
	return ""
}

func isCollective(call string) bool { return collName(call) != "" }

const modPath = "github.com/mpigo/mpi"

// isMPIFunc reports whether a stack frame's function is mpigo's own.
func isMPIFunc(fn string) bool {
	return strings.HasPrefix(fn, modPath+".") || strings.HasPrefix(fn, modPath+"/internal/")
}

// publicName turns a frame's function into the call's Go name, or "" if
// it is not an exported function or method of the package:
// "github.com/mpigo/mpi.(*Comm).Ssend" is "Ssend",
// "github.com/mpigo/mpi.Allreduce[...]" is "Allreduce",
// "github.com/mpigo/mpi.(*Request).Wait" is "Request.Wait".
func publicName(fn string) string {
	s, ok := strings.CutPrefix(fn, modPath+".")
	if !ok || strings.Contains(s, ".func") {
		return ""
	}
	s = strings.ReplaceAll(s, "[...]", "")
	recv := ""
	if strings.HasPrefix(s, "(") {
		i := strings.Index(s, ")")
		if i < 0 {
			return ""
		}
		recv = strings.TrimPrefix(s[1:i], "*")
		s = strings.TrimPrefix(s[i+1:], ".")
	} else if i := strings.Index(s, "."); i >= 0 {
		recv, s = s[:i], s[i+1:]
	}
	if s == "" || s[0] < 'A' || s[0] > 'Z' || (recv != "" && (recv[0] < 'A' || recv[0] > 'Z')) {
		return ""
	}
	if recv == "" || recv == "Comm" {
		return s
	}
	return recv + "." + s
}

// callerInfo looks at the calling goroutine's stack: the public call it
// is in, and the first frame outside mpigo that made it.
func callerInfo() (call, file string, line int, fn string) {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		name := f.Function
		switch {
		case isMPIFunc(name):
			if p := publicName(name); p != "" {
				call = p
			}
		case isRuntime(name):
		default:
			if name != "" {
				return call, baseName(f.File), f.Line, shortFunc(name)
			}
		}
		if !more {
			return call, "", 0, ""
		}
	}
}

// snapshot describes rank p for a report: its waits, described in round
// gen, and its queues. The queues name communicators and world ranks.
func (p *proc) snapshot(gen uint64) diag.Rank {
	b := &p.blk
	rk := diag.Rank{Rank: p.Rank, State: diag.Running}
	b.mu.Lock()
	for _, bw := range b.waits {
		if bw.gen == gen {
			rk.Waits = append(rk.Waits, bw.info)
		}
	}
	b.mu.Unlock()
	if len(rk.Waits) > 0 {
		rk.State = diag.Blocked
	}
	if b.returned.Load() {
		rk.State = diag.Returned
	}
	sort.SliceStable(rk.Waits, func(i, j int) bool { return waitOrder(&rk.Waits[i]) < waitOrder(&rk.Waits[j]) })
	s := p.Eng.Snapshot(16)
	name := func(ctx uint32) (string, *Comm) {
		c, _ := p.commOf(ctx)
		if c == nil {
			return fmt.Sprintf("communicator #%d", ctx/2), nil
		}
		return c.name, c
	}
	// Collective traffic is left out: the waits say it better; and so is
	// the library's own (hang diagnosis's and fault tolerance's).
	isColl := func(ctx uint32) bool {
		if ctx >= hangCtx {
			return true
		}
		_, coll := p.commOf(ctx)
		return coll
	}
	world := func(c *Comm, r int) int {
		if c != nil && r >= 0 && r < len(c.group) && c.inter == nil {
			return c.group[r]
		}
		return -1
	}
	for _, q := range s.Posted {
		if isColl(q.Context) {
			continue
		}
		n, c := name(q.Context)
		rk.Posted = append(rk.Posted, diag.Queued{Comm: n, Peer: q.Source, PeerWorld: world(c, q.Source), Tag: q.Tag, Bytes: q.Size})
	}
	for _, q := range s.Unexpected {
		if isColl(q.Context) {
			continue
		}
		n, _ := name(q.Context)
		rk.Unexpected = append(rk.Unexpected, diag.Queued{Comm: n, Peer: q.Source, PeerWorld: q.From, Tag: q.Tag, Bytes: q.Size, Sync: q.Sync})
	}
	for _, q := range s.Sends {
		if isColl(q.Context) {
			continue
		}
		n, _ := name(q.Context)
		rk.Sends = append(rk.Sends, diag.Queued{Comm: n, Peer: q.Dest, PeerWorld: q.To, Tag: q.Tag, Bytes: q.Size, Sync: q.Sync})
	}
	return rk
}

// waitOrder puts a rank's point-to-point waits before others: they are
// what a diagnosis can follow.
func waitOrder(w *diag.Wait) int {
	switch w.Kind {
	case diag.KindSend, diag.KindRecv:
		return 0
	case diag.KindColl:
		return 1
	}
	return 2
}

// startDescribe begins a describe round on p: every parked goroutine of
// the rank is woken to describe itself. It returns the round.
func (b *blockState) startDescribe() uint64 {
	b.mu.Lock()
	b.gen++
	gen := b.gen
	b.want.Store(gen)
	ws := make([]*engine.Waiter, 0, len(b.waits))
	for _, bw := range b.waits {
		ws = append(ws, bw.w)
	}
	b.mu.Unlock()
	for _, w := range ws {
		if w != nil {
			w.Wake()
		}
	}
	return gen
}

// described reports whether every parked wait of the rank has described
// itself in round gen.
func (b *blockState) described(gen uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bw := range b.waits {
		if bw.gen != gen {
			return false
		}
	}
	return true
}

func (b *blockState) endDescribe() { b.want.Store(0) }

// wakeAll wakes every parked wait of the rank, and from now on (orphans
// set) has those still incomplete fail with cause when they wake
// (Woken). It reports whether any wait is parked.
func (b *blockState) wakeAll(cause error, orphans bool) bool {
	if orphans && b.orphanErr.Load() == nil {
		b.orphanErr.Store(&cause)
	}
	b.mu.Lock()
	ws := make([]*engine.Waiter, 0, len(b.waits))
	for _, bw := range b.waits {
		if bw.w != nil {
			ws = append(ws, bw.w)
		}
	}
	b.mu.Unlock()
	for _, w := range ws {
		w.Wake()
	}
	return len(ws) > 0
}

// How endWaits ends the waits an abort did not reach: it wakes the parked
// ones every reapTick, and after reapGrace has those still incomplete fail.
const (
	reapTick  = 20 * time.Millisecond
	reapGrace = 200 * time.Millisecond
)

// endWaits makes sure that no wait of the job stays parked once the job
// has failed with cause (an abort, a hang or check report). The engines'
// Abort fails every request they hold; a wait on a request that none
// holds (one that goroutines of a rank misused at once, such as two
// collectives on one communicator sharing a rank's meeting slot) would
// park for ever, and with it Run. So, until every rank has returned and
// no wait is parked, the job's parked goroutines are woken every
// reapTick; after reapGrace, in which every completion already under way
// (a copy out of a sender's buffer) has ended, a wait that is still
// incomplete when woken fails with cause (blockState.Woken).
func (j *job) endWaits(cause error) {
	j.reapOnce.Do(func() {
		go func() {
			start := time.Now()
			t := time.NewTicker(reapTick)
			defer t.Stop()
			for range t.C {
				orphans := time.Since(start) >= reapGrace
				busy := false
				for _, p := range j.procs {
					if p != nil && (p.blk.wakeAll(cause, orphans) || !p.blk.returned.Load()) {
						busy = true
					}
				}
				if !busy && orphans || time.Since(start) > reapMax {
					return
				}
			}
		}()
	})
}

// reapMax bounds endWaits: a rank that has not returned a minute after
// its job failed waits outside the library, where waking cannot reach.
const reapMax = time.Minute

// describeProcs describes the ranks ps: it wakes their parked goroutines,
// waits (up to a second) until they have looked at their stacks, and
// returns each rank's state.
func describeProcs(ps []*proc) []diag.Rank {
	gens := make([]uint64, len(ps))
	for i, p := range ps {
		gens[i] = p.blk.startDescribe()
	}
	deadline := time.Now().Add(time.Second)
	for _, p := range ps {
		for i := 0; !p.blk.described(gens[indexOf(ps, p)]) && time.Now().Before(deadline); i++ {
			time.Sleep(time.Millisecond)
		}
	}
	out := make([]diag.Rank, len(ps))
	for i, p := range ps {
		out[i] = p.snapshot(gens[i])
		p.blk.endDescribe()
	}
	return out
}

func indexOf(ps []*proc, p *proc) int {
	for i, x := range ps {
		if x == p {
			return i
		}
	}
	return 0
}

// hangError is the error of a hung job: the report.
type hangError struct {
	report string
	diag   []string
	stuck  []int  // ranks whose goroutine did not return after the report (Run left them)
	check  bool   // check mode's report, not a hang's
	note   string // where the report is, when another process printed it
}

// errHung is the cause with which the calls of a job that hang diagnosis
// (or check mode) stopped fail. No process failed: the class is ErrOther,
// and the text says what happened.
var errHung = fmt.Errorf("%w: the job hung, and hang diagnosis stopped it (see the hang report; MPIGO_HANG_ABORT=0 lets it run on)", ErrOther)

// errChecked is errHung for check mode's report.
var errChecked = fmt.Errorf("%w: check mode found the ranks in different collectives and stopped the job (see the check report)", ErrOther)

func (e *hangError) Error() string {
	s := "mpi: the job hung"
	if e.check {
		s = "mpi: check mode stopped the job"
	}
	if len(e.diag) > 0 {
		s += " (" + strings.Join(e.diag, "; ") + ")"
	}
	if e.note != "" {
		s += ": " + e.note
	}
	s += "\n" + e.report
	if len(e.stuck) > 0 {
		s += fmt.Sprintf("mpigo: %s did not return within %v after the report: a goroutine of %s waits outside MPI (a channel, a lock, a WaitGroup?); Run returned without %s\n",
			diag.Ranges(e.stuck), stuckGrace, themIt(e.stuck), themIt(e.stuck))
	}
	return s
}

func themIt(rs []int) string {
	if len(rs) == 1 {
		return "it"
	}
	return "them"
}

// withStuck is e for a job whose ranks left did not return after the
// report: it says so, and that Run left them behind.
func (e *hangError) withStuck(left []int) *hangError {
	x := *e
	x.stuck = left
	return &x
}

// stuckGrace is how long Run waits for its ranks to return once a hang
// report has failed the job: their MPI calls fail at once (endWaits), so
// only a goroutine that waits outside the library takes longer.
var stuckGrace = 3 * time.Second

// waitRanks waits for the ranks' goroutines (wg). Once a hang report
// has failed the job it waits stuckGrace more at most, and returns the
// ranks that have not returned by then.
func (j *job) waitRanks(wg *sync.WaitGroup) []int {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-j.hung:
	}
	t := time.NewTimer(stuckGrace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	var left []int
	for _, p := range j.procs {
		if !p.blk.returned.Load() {
			left = append(left, p.Rank)
		}
	}
	return left
}

// blocker returns the hang-diagnosis state of c's rank, or nil.
func (c *Comm) blocker() engine.Blocker {
	if c == nil || c.p == nil {
		return nil
	}
	return &c.p.blk
}

// progress returns what waits of c's rank do before they park, or nil.
func (c *Comm) progress() engine.Progress {
	if c == nil || c.p == nil {
		return nil
	}
	return c.p.prog
}

// watcher watches the ranks of one process for a hang.
type watcher struct {
	procs     []*proc
	threshold time.Duration
	tick      time.Duration
	stop      chan struct{}
	done      chan struct{}
	// onHang is called once with the report when every live rank has
	// been blocked for threshold; it returns whether to keep watching.
	onHang func(ranks []diag.Rank, why string) bool
	// onChange, if set, is called on every tick with whether every live
	// rank is blocked beyond the threshold (launched jobs tell the
	// launcher).
	onChange func(blocked bool)
}

func (w *watcher) run() {
	defer close(w.done)
	type seen struct {
		progress uint64
		since    time.Time
	}
	last := make([]seen, len(w.procs))
	t := time.NewTicker(w.tick)
	defer t.Stop()
	was := false
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		all, live := true, 0
		for i, p := range w.procs {
			b := &p.blk
			parked, _ := b.counts()
			if b.returned.Load() && parked == 0 {
				continue
			}
			live++
			pr := p.activity()
			if parked == 0 || pr != last[i].progress || last[i].since.IsZero() {
				last[i] = seen{progress: pr, since: now}
				all = false
				continue
			}
			if now.Sub(last[i].since) < w.threshold {
				all = false
			}
		}
		hung := all && live > 0
		if w.onChange != nil && hung != was {
			w.onChange(hung)
		}
		was = hung
		if !hung || w.onHang == nil {
			continue
		}
		ranks := describeProcs(w.procs)
		// Still stuck? A wait that ended meanwhile means it was slow, not hung.
		moved := false
		for i, p := range w.procs {
			if parked, _ := p.blk.counts(); p.activity() != last[i].progress && !(p.blk.returned.Load() && parked == 0) {
				moved = true
			}
		}
		if moved {
			for i := range last {
				last[i] = seen{}
			}
			continue
		}
		why := fmt.Sprintf("every rank has been blocked in MPI for %v with no progress (MPIGO_HANG_REPORT=%v)", w.threshold, w.threshold)
		if !w.onHang(ranks, why) {
			return
		}
		for i := range last {
			last[i] = seen{}
		}
	}
}

// activity is the rank's progress as hang diagnosis counts it: waits that
// ended after parking, plus messages its engine matched. The second counts
// a rank whose receives complete without ever blocking (its messages were
// already there) while another of its goroutines stays parked.
func (p *proc) activity() uint64 {
	_, n := p.blk.counts()
	if p.Eng != nil {
		n += p.Eng.Matched() - p.blk.ctl.Load()
	}
	return n
}

func (w *watcher) close() {
	close(w.stop)
	<-w.done
}

// startWatch starts watching ps with the threshold in cfg; nil if hang
// diagnosis is off.
func startWatch(ps []*proc, cfg Config, onHang func([]diag.Rank, string) bool, onChange func(bool)) *watcher {
	if cfg.HangReport <= 0 {
		return nil
	}
	tick := min(max(cfg.HangReport/8, 2*time.Millisecond), 500*time.Millisecond)
	w := &watcher{procs: ps, threshold: cfg.HangReport, tick: tick, stop: make(chan struct{}), done: make(chan struct{}),
		onHang: onHang, onChange: onChange}
	go w.run()
	return w
}

// localHang is what Run does when its goroutine ranks hang: fail the job
// with the report, so that Run returns it (Main prints it, once). With
// MPIGO_HANG_ABORT=0 it prints the report and lets the job run on.
func (j *job) localHang(ranks []diag.Rank, why string) bool {
	rep := &diag.Report{Why: why, Ranks: ranks}
	text := rep.Format()
	if j.hangKeep {
		fmt.Fprint(stderr, text+"mpigo: the job goes on (MPIGO_HANG_ABORT=0)\n")
		return false
	}
	j.failJob(&hangError{report: text, diag: rep.Diagnose()})
	return false
}

// failJob fails a job with err (a hang or check report): every rank's
// waits fail, so that Run returns err, and runLaunched too.
func (j *job) failJob(err *hangError) {
	if !j.hang.CompareAndSwap(nil, err) {
		return
	}
	j.failOnce.Do(func() {
		cause := errHung
		if err.check {
			cause = errChecked
		}
		j.failure.Store(&cause)
		for _, p := range j.procs {
			if p != nil {
				p.Eng.Abort(cause)
			}
		}
		j.endWaits(cause)
	})
	if j.hung != nil {
		close(j.hung) // once: after the CompareAndSwap above
	}
}

// reportNow prints the state of the ranks ps now (SIGQUIT).
func reportNow(ps []*proc, why string) {
	rep := &diag.Report{Why: why, Ranks: describeProcs(ps)}
	fmt.Fprint(stderr, rep.Format())
}

// rankStateJSON is the state of the ranks ps as the launcher gathers it.
func rankStateJSON(ps []*proc) string {
	b, _ := json.Marshal(describeProcs(ps))
	return string(b)
}

// startLocalDiag starts hang diagnosis (and check mode) for Run's
// goroutine ranks. The function it returns stops it and returns the hang
// error if the job hung.
func (j *job) startLocalDiag(cfg Config) func() error {
	finishTrace := startTrace(j.procs, cfg.Trace)
	stopCheck := startCheck(j, cfg)
	w := startWatch(j.procs, cfg, j.localHang, nil)
	stopQuit := onQuit(func() { reportNow(j.procs, "SIGQUIT: the state of every rank now") }, cfg)
	return func() error {
		stopQuit()
		if w != nil {
			w.close()
		}
		stopCheck()
		writeLocalTrace(finishTrace(), cfg.Trace)
		if h := j.hang.Load(); h != nil {
			return h
		}
		return nil
	}
}

func isRuntime(fn string) bool {
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "sync.")
}

func baseName(file string) string { return filepath.Base(file) }

// shortFunc drops the import path from a function name: "main.solve".
func shortFunc(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		fn = fn[i+1:]
	}
	return fn
}

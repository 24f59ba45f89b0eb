package mpi

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/engine"
)

// This file is hang diagnosis as package mpi sees it: the watcher, the
// waits and their describe rounds are the device's (internal/device
// waits.go, watch.go); here each wait is described in terms of the API
// (the public call, the caller's line, the communicator's name and the
// peer's world rank), the ranks' queues are named, and a hang fails the
// job with its report.

// defaultHangReport is the threshold when neither Config nor
// MPIGO_HANG_REPORT (config.go) says otherwise.
const defaultHangReport = 10 * time.Second

// commNames maps contexts to a rank's communicators, so that a report can
// name them.
type commNames struct {
	mu    sync.Mutex
	comms map[uint32]weak.Pointer[Comm]
}

// checkState is what check mode keeps of a rank (coll_check.go).
type checkState struct {
	on bool            // check mode is on (set before the rank starts)
	wg *sync.WaitGroup // check messages not compared yet
	// coll is the rank's current collective.
	coll atomic.Pointer[collEntry]
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
	b := &p.names
	b.mu.Lock()
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
	b.mu.Unlock()
}

// commOf returns the communicator whose point-to-point context (or, with
// its collective context, coll set) is ctx.
func (p *proc) commOf(ctx uint32) (c *Comm, coll bool) {
	b := &p.names
	b.mu.Lock()
	defer b.mu.Unlock()
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

// describeWait describes a parked wait of p for a hang report, on the
// waiting goroutine (device.Describer): r is its request, or nil for a
// probe (env) or a wait on many requests.
func (p *proc) describeWait(r *engine.Request, env *device.Env) diag.Wait {
	w := diag.Wait{Peer: diag.None, PeerWorld: -1, Tag: diag.None, Root: diag.None, Kind: diag.KindOther}
	call, file, line, fn := callerInfo()
	w.Call, w.File, w.Line, w.Func = call, file, line, fn
	var ctx uint32
	peer, tag, op := 0, 0, engine.Op(0)
	if env != nil {
		ctx, peer, tag = env.Ctx, env.Peer, env.Tag
	}
	if r != nil {
		ctx, peer, tag, op = r.Context, r.Peer, r.Tag, r.Op
		w.Bytes = p.Eng.SizeOf(r) // a receive's buffer may be allocated as it matches
		w.Sync = r.Op == engine.OpSend && r.Mode == engine.Synchronous
	}
	c, coll := p.commOf(ctx)
	switch {
	case p.Blk.Returned.Load():
		w.Kind = diag.KindFinalize
		w.Call = "Finalize"
	case isCollective(call) || coll:
		w.Kind = diag.KindColl
		if w.Call == "" {
			w.Call = "a collective"
		}
		w.Bytes, w.Sync = 0, false
		if e := p.chk.coll.Load(); e != nil && e.name == call {
			w.Root = e.root
			if e.c != nil {
				c = e.c
			}
		}
	case r != nil || env != nil:
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
	} else if ctx != 0 || r != nil || env != nil {
		w.Comm = fmt.Sprintf("communicator #%d", ctx/2)
	}
	return w
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
	rk := diag.Rank{Rank: p.Rank}
	rk.Waits, rk.State = p.Blk.Snapshot(gen)
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

// describeProcs describes the ranks ps: it wakes their parked goroutines,
// waits (up to a second) until they have looked at their stacks, and
// returns each rank's state.
func describeProcs(ps []*proc) []diag.Rank {
	ds := make([]*device.Device, len(ps))
	for i, p := range ps {
		ds[i] = &p.Device
	}
	return device.DescribeAll(ds, func(i int, gen uint64) diag.Rank { return ps[i].snapshot(gen) })
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
func (j *job) waitRanks(wg *sync.WaitGroup) []int { return j.WaitRanks(wg, j.hung, stuckGrace) }

// blocker returns the hang-diagnosis state of c's rank, or nil.
func (c *Comm) blocker() engine.Blocker {
	if c == nil || c.p == nil {
		return nil
	}
	return &c.p.Blk
}

// progress returns what waits of c's rank do before they park, or nil.
func (c *Comm) progress() engine.Progress {
	if c == nil || c.p == nil {
		return nil
	}
	return c.p.Prog
}

// startWatch starts watching ps for a hang with the threshold in cfg; nil
// if hang diagnosis is off.
func startWatch(ps []*proc, cfg Config, fam *device.Family, onHang func([]diag.Rank, string) bool, onChange func(bool)) *device.Watcher {
	ds := make([]*device.Device, len(ps))
	for i, p := range ps {
		ds[i] = &p.Device
	}
	return device.StartWatch(ds, device.Watch{
		Threshold: cfg.HangReport,
		Describe:  func() []diag.Rank { return describeProcs(ps) },
		OnHang:    onHang,
		OnChange:  onChange,
		Family:    fam,
	})
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
	cause := errHung
	if err.check {
		cause = errChecked
	}
	j.Fail(cause)
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
	w := startWatch(j.procs, cfg, j.family, j.localHang, nil)
	stopQuit := onQuit(func() { reportNow(j.procs, "SIGQUIT: the state of every rank now") }, cfg)
	return func() error {
		stopQuit()
		if w != nil {
			w.Close()
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

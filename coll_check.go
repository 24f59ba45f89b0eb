package mpi

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/engine"
)

// This file is check mode (Config.Check, MPIGO_CHECK=1, mpigo run
// --check): every collective call tells the next rank of its communicator
// which collective it is (name and root) in one small message, and
// compares what the previous rank told it with its own call. If every
// rank agrees with its neighbour, all agree; so one message per rank and
// call finds any mismatch, whatever the algorithm would have done with it
// (hang, or return garbage). Sizes and types need no check here: typed
// collectives already compare their signatures (ErrType, ErrCount).
//
// The messages go on the communicator's collective context with a tag no
// algorithm uses, and nothing waits for them: the receive is posted when
// the call enters and compared when it completes, so check mode adds no
// waiting and cannot make a correct program hang.

// checkTag is the tag of check messages on a collective context.
const checkTag = -1 << 20

var checkNames []string // collective names by index in check messages

func init() {
	for n := range collNames {
		checkNames = append(checkNames, n, "I"+n, n+"Init")
	}
	sort.Strings(checkNames)
}

func checkIndex(name string) int {
	i := sort.SearchStrings(checkNames, name)
	if i < len(checkNames) && checkNames[i] == name {
		return i
	}
	return -1
}

// rooted lists the collectives whose Call.Peer is a root.
var rooted = map[string]bool{"Bcast": true, "Reduce": true, "Gather": true, "Gatherv": true, "Scatter": true, "Scatterv": true,
	"Ibcast": true, "Ireduce": true, "Igather": true, "Igatherv": true, "Iscatter": true, "Iscatterv": true}

// checkProfiler is the Profiler check mode installs; it passes every call
// on to the Profiler it replaced.
type checkProfiler struct{ next Profiler }

var (
	checkMu   sync.Mutex
	checkJobs int
	checkProf *checkProfiler
)

// startCheck starts check mode for job j if cfg asks for it; the returned
// function stops it.
func startCheck(j *job, cfg Config) func() {
	if !cfg.Check {
		return func() {}
	}
	wg := new(sync.WaitGroup)
	for _, p := range j.procs {
		p.chk.on = true
		p.chk.wg = wg
	}
	checkMu.Lock()
	if checkJobs == 0 {
		// The profiler in force is chained behind this one, which is
		// complete before it is published: ranks of other jobs may call
		// it at once.
		for {
			old := profiler.Load()
			cp := &checkProfiler{}
			if old != nil {
				cp.next = old.p
			}
			if profiler.CompareAndSwap(old, &profHook{p: cp}) {
				checkProf = cp
				break
			}
		}
	}
	checkJobs++
	checkMu.Unlock()
	return func() {
		// A rank may return before the check message of its last
		// collective has come (a Bcast root): compare it before the
		// job ends, so that a mismatch is not lost.
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second): // a job that failed: messages that never come
		}
		checkMu.Lock()
		checkJobs--
		if checkJobs == 0 {
			if CurrentProfiler() == Profiler(checkProf) {
				SetProfiler(checkProf.next)
			}
			checkProf = nil
		}
		checkMu.Unlock()
	}
}

// Enter implements Profiler.
func (cp *checkProfiler) Enter(call *Call) {
	if cp.next != nil {
		cp.next.Enter(call)
	}
	c := call.Comm
	// A pinned view's call is the body of a non-blocking or persistent
	// collective, running on a goroutine of its own: the call that
	// started it was compared on the caller's goroutine, in the ranks'
	// common order (Iallreduce; the Init of a persistent one, whose
	// Starts MPI lets ranks make in any order).
	if c == nil || c.p == nil || !c.p.chk.on || c.inter != nil || c.shadow == nil || c.pinned != 0 {
		return
	}
	name := collName(call.Name)
	if name == "" {
		return
	}
	root := diag.None
	base := name
	if len(base) > 1 && base[0] == 'I' && collNames[base[1:]] {
		base = base[1:]
	}
	if b, ok := strings.CutSuffix(base, "Init"); ok && collNames[b] {
		base = b
	}
	if rooted[name] || rooted[base] {
		root = call.Peer
	}
	e := &collEntry{name: name, root: root, c: c}
	runtime.Callers(3, e.pcs[:])
	c.p.chk.coll.Store(e)
	size := len(c.group)
	if size < 2 {
		return
	}
	var desc [8]byte
	binary.LittleEndian.PutUint32(desc[:4], uint32(checkIndex(name)))
	binary.LittleEndian.PutUint32(desc[4:], uint32(int32(root)))
	sh := c.shadow
	next, prev := (c.rank+1)%size, (c.rank+size-1)%size
	var out engine.Outbox
	rr := &engine.Request{Context: sh.ctx, Peer: prev, FromWorld: c.group[prev] + 1, Tag: checkTag, Buf: make([]byte, 8)}
	wg := c.p.chk.wg
	wg.Add(1)
	rr.OnDone = func(r *engine.Request) {
		st := r.Status()
		if st.Err != nil || st.Count != 8 || string(r.Buf) == string(desc[:]) {
			wg.Done()
			return
		}
		k := int(binary.LittleEndian.Uint32(r.Buf[:4]))
		theirs := "an unknown collective"
		if k >= 0 && k < len(checkNames) {
			theirs = checkNames[k]
		}
		theirRoot := int(int32(binary.LittleEndian.Uint32(r.Buf[4:])))
		go func() {
			defer wg.Done()
			checkMismatch(e, c, prev, theirs, theirRoot)
		}()
	}
	c.p.Eng.PostRecv(rr, &out)
	c.p.Exec(&out)
	out.Reset()
	sr := &engine.Request{Context: sh.ctx, Peer: next, Self: c.rank, To: c.group[next], Tag: checkTag, Buf: desc[:]}
	c.p.Eng.Send(sr, &out)
	c.p.Exec(&out)
}

// Exit implements Profiler.
func (cp *checkProfiler) Exit(call *Call, err error) {
	if cp.next != nil {
		cp.next.Exit(call, err)
	}
	if c := call.Comm; c != nil && c.p != nil && c.p.chk.on && c.pinned == 0 && collName(call.Name) != "" {
		c.p.chk.coll.Store(nil)
	}
}

// Pcontrol implements Profiler.
func (cp *checkProfiler) Pcontrol(level int) {
	if cp.next != nil {
		cp.next.Pcontrol(level)
	}
}

// where is the entry's caller outside mpigo.
func (e *collEntry) where() (file string, line int, fn string) {
	frames := runtime.CallersFrames(e.pcs[:])
	for {
		f, more := frames.Next()
		if f.Function != "" && !isMPIFunc(f.Function) && !isRuntime(f.Function) {
			_, file, line, fn = "", baseName(f.File), f.Line, shortFunc(f.Function)
			return
		}
		if !more {
			return "", 0, ""
		}
	}
}

// checkMismatch reports that rank c.rank's call e disagrees with rank
// prev's (theirs, with theirRoot), and fails the job.
func checkMismatch(e *collEntry, c *Comm, prev int, theirs string, theirRoot int) {
	mine := diag.Wait{Call: e.name, Kind: diag.KindColl, Comm: c.name, Root: e.root, Peer: diag.None, Tag: diag.None, PeerWorld: -1}
	mine.File, mine.Line, mine.Func = e.where()
	other := diag.Wait{Call: theirs, Kind: diag.KindColl, Comm: c.name, Root: theirRoot, Peer: diag.None, Tag: diag.None, PeerWorld: -1}
	what := "mismatched collectives"
	if theirs == e.name {
		what = "different roots"
	}
	at := ""
	if mine.File != "" {
		at = fmt.Sprintf(" at %s:%d", mine.File, mine.Line)
	}
	line := fmt.Sprintf("rank %d is in %s%s, rank %d is in %s: %s", c.group[c.rank], mine.What(), at, c.group[prev], other.What(), what)
	j := c.p.job
	if !j.Local {
		j.abort(c.p.Rank, 1, fmt.Errorf("check: %s", line))
		return
	}
	ranks := make([]diag.Rank, len(j.procs))
	for i, p := range j.procs {
		ranks[i] = diag.Rank{Rank: p.Rank, State: diag.Running}
		if p.Blk.Returned.Load() {
			ranks[i].State = diag.Returned
		}
		if x := p.chk.coll.Load(); x != nil {
			w := diag.Wait{Call: x.name, Kind: diag.KindColl, Comm: x.c.name, Root: x.root, Peer: diag.None, Tag: diag.None, PeerWorld: -1}
			w.File, w.Line, w.Func = x.where()
			ranks[i].Waits = []diag.Wait{w}
			ranks[i].State = diag.Blocked
		}
	}
	// The diagnosis is the pairwise finding, which is certain; the ranks'
	// lines say where each rank is now.
	rep := &diag.Report{Title: "check report", Why: "check mode (MPIGO_CHECK): the ranks of a communicator called different collectives", Ranks: ranks, Diagnosis: []string{line}}
	j.failJob(&hangError{report: rep.Format(), diag: []string{line}, check: true})
}

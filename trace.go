package mpi

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/trace"
)

// This file records the message timeline (Config.Trace, MPIGO_TRACE,
// mpigo run --trace): every public call as a span, through the Profiler
// hook, and every message as its two ends, where the runtime already
// counts messages for performance variables (pvar.go). With tracing off
// the only cost is a nil test of p.trc beside the counter test that was
// there before. docs/trace.md describes the file.

// rankTrace is one rank's recorder.
type rankTrace struct {
	rec  trace.Recorder
	base time.Time // the process's trace clock starts here
	rank int       // world rank
}

func (t *rankTrace) now() int64 { return int64(time.Since(t.base)) }

// coll reports whether ctx is a collective context: communicators take
// even contexts and their collectives the odd one above (newComm).
func (t *rankTrace) coll(p *proc, ctx uint32) bool { return ctx&1 == 1 }

// Sent records a message the rank sent (device.Observer).
func (t *rankTrace) Sent(to, n int, ctx uint32, tag int) {
	t.rec.Send(trace.Msg{From: t.rank, To: to, Ctx: ctx, Coll: t.coll(nil, ctx), Tag: tag, Bytes: n, T: t.now()})
}

// Arrived records a message that arrived for the rank (device.Observer).
func (t *rankTrace) Arrived(from, n int, ctx uint32, tag int) {
	t.rec.Arrive(trace.Msg{From: from, To: t.rank, Ctx: ctx, Coll: t.coll(nil, ctx), Tag: tag, Bytes: n, T: t.now()})
}

// traceProfiler records spans; it passes every call on to the Profiler it
// replaced.
type traceProfiler struct{ next Profiler }

var (
	traceMu   sync.Mutex
	traceJobs int
	traceProf *traceProfiler
)

// Enter implements Profiler.
func (tp *traceProfiler) Enter(call *Call) {
	if tp.next != nil {
		tp.next.Enter(call)
	}
	if c := call.Comm; c != nil && c.p != nil && c.p.trc != nil {
		call.t0 = c.p.trc.now()
	}
}

// Exit implements Profiler.
func (tp *traceProfiler) Exit(call *Call, err error) {
	if tp.next != nil {
		tp.next.Exit(call, err)
	}
	c := call.Comm
	if c == nil || c.p == nil || c.p.trc == nil {
		return
	}
	start := call.t0
	t := c.p.trc
	s := trace.Span{Rank: c.p.Rank, Name: call.Name, Comm: c.name, Peer: call.Peer, Tag: call.Tag, Start: start, End: t.now()}
	if call.Peer == Undefined {
		s.Peer = trace.None
	}
	if call.Tag == Undefined {
		s.Tag = trace.None
	}
	if err != nil {
		s.Err = err.Error()
	}
	if c.p.Blk.Returned.Load() && call.Name == "Barrier" && c == c.p.world {
		// The rank's function has returned: this is the Barrier at the
		// end of mpi.Main (proc.finalize), which the program never wrote.
		s.Name, s.Internal = "Barrier (mpigo: end of Main)", true
	}
	t.rec.Span(s)
}

// Pcontrol implements Profiler.
func (tp *traceProfiler) Pcontrol(level int) {
	if tp.next != nil {
		tp.next.Pcontrol(level)
	}
}

// startTrace starts recording the ranks ps. finish stops it and returns
// what this process recorded (nil when tracing is off).
func startTrace(ps []*proc, file string) (finish func() *trace.Part) {
	if file == "" {
		return func() *trace.Part { return nil }
	}
	base := time.Now()
	for _, p := range ps {
		p.trc = &rankTrace{base: base, rank: p.Rank}
		p.Obs = p.trc // the device counts and tells it every message
	}
	traceMu.Lock()
	if traceJobs == 0 {
		traceProf = &traceProfiler{}
		traceProf.next = SetProfiler(traceProf)
	}
	traceJobs++
	traceMu.Unlock()
	return func() *trace.Part {
		traceMu.Lock()
		traceJobs--
		if traceJobs == 0 {
			if CurrentProfiler() == Profiler(traceProf) {
				SetProfiler(traceProf.next)
			}
			traceProf = nil
		}
		traceMu.Unlock()
		part := &trace.Part{Offset: base.UnixNano()}
		for _, p := range ps {
			part.Ranks = append(part.Ranks, p.Rank)
			p.trc.rec.AddTo(part)
		}
		return part
	}
}

// writeLocalTrace writes the timeline of Run's ranks to file.
func writeLocalTrace(part *trace.Part, file string) {
	if part == nil {
		return
	}
	if err := trace.Merge([]*trace.Part{part}).WriteFile(file); err != nil {
		fmt.Fprintf(stderr, "mpigo: cannot write the trace (MPIGO_TRACE): %v\n", err)
	}
}

// writeLaunchedTrace writes what this process recorded in a job started
// by a launcher: a part in dir (MPIGO_TRACE_DIR) for mpigo run, which merges
// them; otherwise FILE.rankR.part beside FILE, which `mpigo trace FILE`
// merges.
func writeLaunchedTrace(part *trace.Part, file, dir string, offset int64) {
	if part == nil || len(part.Ranks) == 0 {
		return
	}
	part.Offset += offset
	sort.Ints(part.Ranks)
	name := file + ".rank" + strconv.Itoa(part.Ranks[0]) + ".part"
	if dir != "" {
		name = filepath.Join(dir, "rank"+strconv.Itoa(part.Ranks[0])+".part")
	}
	if err := trace.WritePart(name, part); err != nil {
		fmt.Fprintf(stderr, "mpigo: rank %d: cannot write the trace: %v\n", part.Ranks[0], err)
	}
}

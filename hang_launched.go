package mpi

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/engine"
)

// Hang diagnosis in a job of processes: each process watches its own
// ranks. Under mpigo run it tells the launcher (through its key-value
// store) when all of them have been blocked for the threshold, and when
// they move again; the launcher prints the report once every process says
// so, and stops the job. On SIGQUIT the process puts the state of its
// ranks at once: mpigo run sends it to every rank when it gets SIGQUIT
// itself or its --timeout expires.
//
// Under another launcher (mpiexec, srun, mpirun) there is no store to
// talk through while the job runs (PMI's is read only after a fence, a
// collective that hung ranks never reach), so the processes tell each
// other over the job's own connections (hangCoord): each process's first
// rank sends the state of its ranks to world rank 0 when they have all
// been blocked for the threshold, and again when they move; rank 0's
// process, once every rank of the job is blocked, prints one report for
// the whole job and ends it. A process alone cannot decide: its ranks may
// wait for a rank of another process that computes.

// startLaunchedDiag starts hang diagnosis, check mode and tracing for the
// ranks of this process; the function it returns stops them.
func startLaunchedDiag(j *job, cfg Config, info *boot.Info) func() {
	finishTrace := startTrace(j.procs, cfg.Trace)
	var offset int64
	if cfg.Trace != "" && info.KVSAddr != "" {
		offset, _ = boot.ClockOffset(info.KV) // on error: the local clock, as on one machine
	}
	stopCheck := startCheck(j, cfg)
	first := strconv.Itoa(info.Rank)
	toLauncher := info.KVSAddr != "" // mpigo run: its store gathers the report
	var w *device.Watcher
	stopQuit := func() {}
	if toLauncher {
		w = startWatch(j.procs, cfg, nil, nil, func(blocked bool) {
			v := "running"
			if blocked {
				v = "blocked " + rankStateJSON(j.procs)
			}
			info.KV.Put(diag.KeyHang+first, v)
		})
		stopQuit = onQuit(func() { info.KV.Put(diag.KeyState+first, rankStateJSON(j.procs)) }, cfg)
	} else if cfg.HangReport > 0 && len(j.procs) > 0 {
		hc := newHangCoord(j, cfg, info.Size)
		w = startWatch(j.procs, cfg, nil, nil, hc.local)
		stopQuit = onQuit(func() {
			rep := &diag.Report{Why: "SIGQUIT: the state of this process's ranks now", Scope: hc.scope(), Ranks: describeProcs(j.procs)}
			fmt.Fprint(stderr, rep.Format())
		}, cfg)
	}
	return func() {
		stopQuit()
		if w != nil {
			w.Close()
		}
		stopCheck()
		writeLaunchedTrace(finishTrace(), cfg.Trace, cfg.traceDir, offset)
	}
}

func rankList(ps []*proc) []int {
	rs := make([]int, len(ps))
	for i, p := range ps {
		rs[i] = p.Rank
	}
	return rs
}

// hangCtx is the context of hang diagnosis's messages between processes:
// above every context a communicator can have, below ftCtx.
const hangCtx = ftCtx - 1

// Tags of hang diagnosis's messages.
const (
	hangTagState = 1 // a process's ranks to rank 0: hangMsg
	hangTagEnd   = 2 // rank 0 to a process's first rank: the job hung, end it
)

// hangMsg is what a process tells rank 0 of its ranks.
type hangMsg struct {
	Ranks   []int       `json:"ranks"`
	Blocked bool        `json:"blocked"`
	State   []diag.Rank `json:"state,omitempty"` // when blocked
}

// hangCoord is hang diagnosis across the processes of a job started by a
// launcher other than mpigo run.
type hangCoord struct {
	j    *job
	cfg  Config
	size int
	lead *proc // this process's first rank: it talks for the process
	mine []int // the ranks of this process

	mu     sync.Mutex
	states map[int]hangMsg // rank 0's process: by the sender's first rank
	done   bool
}

func newHangCoord(j *job, cfg Config, size int) *hangCoord {
	hc := &hangCoord{j: j, cfg: cfg, size: size, lead: j.procs[0], mine: rankList(j.procs), states: map[int]hangMsg{}}
	if hc.lead.Rank == 0 {
		hc.post(hangTagState, engine.AnySource)
	}
	if hc.size > len(hc.mine) {
		hc.post(hangTagEnd, 0)
	}
	return hc
}

// scope says which ranks this process sees.
func (hc *hangCoord) scope() string {
	if len(hc.mine) >= hc.size {
		return ""
	}
	return fmt.Sprintf("this process hosts %s of %d; the other ranks' state is not visible here", diag.Ranges(hc.mine), hc.size)
}

// ctl counts hang diagnosis's own messages matched by rank p's engine,
// which are no progress of the rank's (proc.activity).
func (hc *hangCoord) ctl() *atomic.Uint64 { return &hc.lead.Blk.Ctl }

// post posts the first rank's receive of a message with tag from src.
func (hc *hangCoord) post(tag, src int) {
	p := hc.lead
	er := &engine.Request{Context: hangCtx, Peer: src, Tag: tag,
		Alloc: func(n int) []byte { return make([]byte, min(n, ftMaxMsg)) }}
	er.OnDone = func(r *engine.Request) {
		st := r.Status()
		if st.Err != nil {
			return // the job is going down
		}
		hc.ctl().Add(1)
		b := r.Buf[:st.Count]
		go func() { // not under the engine's lock
			if tag == hangTagState {
				hc.post(tag, src)
				var m hangMsg
				if json.Unmarshal(b, &m) == nil && len(m.Ranks) > 0 {
					hc.got(m)
				}
				return
			}
			hc.end(string(b))
		}()
	}
	var out engine.Outbox
	p.Eng.PostRecv(er, &out)
	p.Exec(&out)
}

// local is the watcher's news: every live rank of this process has been
// blocked for the threshold, or no longer is.
func (hc *hangCoord) local(blocked bool) {
	m := hangMsg{Ranks: hc.mine, Blocked: blocked}
	if !blocked {
		returned := true
		for _, p := range hc.j.procs {
			returned = returned && p.Blk.Returned.Load()
		}
		if returned {
			return // the job is ending: rank 0 may be gone already
		}
	} else {
		m.State = describeProcs(hc.j.procs)
	}
	if hc.lead.Rank == 0 {
		hc.got(m)
		return
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) > ftMaxMsg {
		// Too many ranks here to say in one message: say only who.
		m.State = nil
		b, _ = json.Marshal(m)
	}
	hc.send(0, hangTagState, b)
}

// send sends a message of hang diagnosis from the first rank; it does not
// wait.
func (hc *hangCoord) send(to, tag int, b []byte) {
	p := hc.lead
	er := &engine.Request{Context: hangCtx, Peer: to, Self: p.Rank, To: to, Tag: tag, Buf: b}
	var out engine.Outbox
	p.Eng.Send(er, &out)
	p.Exec(&out)
}

// got is rank 0's process learning the state of a process's ranks: once
// every rank of the job is blocked, it prints the report and ends the job.
func (hc *hangCoord) got(m hangMsg) {
	hc.mu.Lock()
	if hc.done {
		hc.mu.Unlock()
		return
	}
	hc.states[m.Ranks[0]] = m
	covered := 0
	for _, s := range hc.states {
		if !s.Blocked {
			hc.mu.Unlock()
			return
		}
		covered += len(s.Ranks)
	}
	if covered < hc.size {
		hc.mu.Unlock()
		return
	}
	hc.done = true
	var ranks []diag.Rank
	var leads []int
	for first, s := range hc.states {
		leads = append(leads, first)
		if s.State != nil {
			ranks = append(ranks, s.State...)
			continue
		}
		for _, r := range s.Ranks {
			ranks = append(ranks, diag.Rank{Rank: r, State: diag.Blocked})
		}
	}
	hc.mu.Unlock()
	sort.Slice(ranks, func(a, b int) bool { return ranks[a].Rank < ranks[b].Rank })
	why := fmt.Sprintf("every rank has been blocked in MPI for %v with no progress (MPIGO_HANG_REPORT=%v; each process's report, gathered by rank 0's)", hc.cfg.HangReport, hc.cfg.HangReport)
	rep := &diag.Report{Why: why, Ranks: ranks}
	text := rep.Format()
	if hc.cfg.hangKeep {
		fmt.Fprint(stderr, text+"mpigo: the job goes on (MPIGO_HANG_ABORT=0)\n")
		return
	}
	slices.Sort(leads)
	for _, l := range leads {
		if l != hc.lead.Rank {
			hc.send(l, hangTagEnd, []byte("rank 0's process printed the hang report"))
		}
	}
	hc.j.failJob(&hangError{report: text, diag: rep.Diagnose()})
}

// end is a process other than rank 0's learning that the job hung.
func (hc *hangCoord) end(why string) {
	if hc.cfg.hangKeep {
		return
	}
	hc.j.failJob(&hangError{note: why})
}

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/trace"
)

// This file is mpigo run's side of hang diagnosis and tracing: the flags
// --hang-report, --check and --trace, gathering the ranks' states from the
// job's store into one hang report, and merging the ranks' trace parts.

// diagFlags are the run flags of this file.
type diagFlags struct {
	hang  string // --hang-report DURATION
	check bool
	trace string
	ft    bool // --ft: survivors go on when a rank dies (ft.go in the mpi package)
}

func addDiagFlags(fs *flag.FlagSet, d *diagFlags) {
	fs.StringVar(&d.hang, "hang-report", "", "print a hang report and stop the job when every rank has been blocked in MPI this long (default 10s, or MPIGO_HANG_REPORT; 0 disables)")
	fs.BoolVar(&d.check, "check", false, "check that the ranks of a communicator call the same collectives with the same roots (sets MPIGO_CHECK=1)")
	fs.StringVar(&d.trace, "trace", "", "record every MPI call and message into `FILE` (Chrome/Perfetto JSON; see mpigo trace)")
	fs.BoolVar(&d.ft, "ft", false, "fault tolerance: when a rank dies the others go on, and learn of it through mpi.ErrProcFailed (Revoke, Shrink, Agree; sets MPIGO_FT=1)")
}

// hangThreshold is the threshold in force: the flag, else the
// environment, else 10s; <= 0 disables.
func (d *diagFlags) hangThreshold() (time.Duration, error) {
	v := d.hang
	if v == "" {
		v = os.Getenv("MPIGO_HANG_REPORT")
	}
	if v == "" {
		return 10 * time.Second, nil
	}
	if v == "0" || v == "off" {
		return 0, nil
	}
	t, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("--hang-report %q: want a duration such as 10s or 2m, or 0 to disable", v)
	}
	return t, nil
}

// env is what the flags add to every rank's environment.
func (d *diagFlags) env(traceDir string) []string {
	var env []string
	if t, err := d.hangThreshold(); err == nil {
		if t <= 0 {
			env = append(env, "MPIGO_HANG_REPORT=0")
		} else {
			env = append(env, "MPIGO_HANG_REPORT="+t.String())
		}
	}
	if d.check {
		env = append(env, "MPIGO_CHECK=1")
	}
	if d.ft {
		env = append(env, "MPIGO_FT=1")
	}
	if d.trace != "" {
		abs, _ := filepath.Abs(d.trace)
		env = append(env, "MPIGO_TRACE="+abs, "MPIGO_TRACE_DIR="+traceDir)
	}
	return env
}

// hangWatch is the launcher's view of the job's blocked ranks.
type hangWatch struct {
	on   bool
	t    time.Duration // the threshold
	kvs  *boot.Server
	tick <-chan time.Time
	quit chan os.Signal
	done bool // a report was printed for the hang
	// keep: MPIGO_HANG_ABORT=0, the report does not stop the job.
	keep bool
	// fam holds the watches of the jobs of one mpigo run: the job it
	// started and those its ranks spawned. A job whose ranks all wait is
	// not hung while another's run: it may wait for them (a parent for
	// its children's results). nil: no family.
	fam *hangFamily
	// blocked: on its last tick every running process of this job said
	// its ranks were blocked (or none was running), for the family.
	blocked atomic.Bool
	// famMoved is the last tick at which another job of the family ran
	// or a job joined or left it (famGen, the family's gen then): the
	// ranks' own thresholds know nothing of the other jobs, so a job is
	// hung only once the whole family has been still for the threshold
	// too. A parent whose wait ends as its children finish still shows
	// the blocked state it put while they computed until its next tick;
	// without this, a launcher tick between the children's exit and that
	// one reported the parents hung (seen under load in
	// TestSpawnWaitIsNoHang).
	famMoved time.Time
	famGen   uint64
	// now is the clock (time.Now; a test's fake).
	now func() time.Time
}

// hangFamily is the set of hang watches of the jobs of one mpigo run.
type hangFamily struct {
	mu  sync.Mutex
	hw  []*hangWatch
	gen uint64 // counts joins and leaves
}

func (f *hangFamily) join(hw *hangWatch) {
	f.mu.Lock()
	f.hw = append(f.hw, hw)
	f.gen++
	f.mu.Unlock()
}

func (f *hangFamily) leave(hw *hangWatch) {
	f.mu.Lock()
	f.hw = slices.DeleteFunc(f.hw, func(x *hangWatch) bool { return x == hw })
	f.gen++
	f.mu.Unlock()
}

// busyBesides reports whether a job of the family other than hw's has a
// rank that runs, and the family's gen.
func (f *hangFamily) busyBesides(hw *hangWatch) (bool, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range f.hw {
		if x != hw && !x.blocked.Load() {
			return true, f.gen
		}
	}
	return false, f.gen
}

// newHangWatch starts watching unless hang diagnosis is off.
func newHangWatch(d *diagFlags, kvs *boot.Server, fam *hangFamily) *hangWatch {
	hw := &hangWatch{kvs: kvs, now: time.Now}
	t, err := d.hangThreshold()
	if err != nil || t <= 0 {
		return hw
	}
	if fam != nil {
		hw.fam = fam
		fam.join(hw)
	}
	hw.on, hw.t = true, t
	switch os.Getenv("MPIGO_HANG_ABORT") {
	case "0", "off", "false", "no":
		hw.keep = true
	}
	hw.tick = time.NewTicker(200 * time.Millisecond).C
	hw.quit = make(chan os.Signal, 1)
	signal.Notify(hw.quit, syscall.SIGQUIT)
	return hw
}

func (hw *hangWatch) stop() {
	if hw.quit != nil {
		signal.Stop(hw.quit)
	}
	if hw.fam != nil {
		hw.fam.leave(hw)
	}
}

// states returns the ranks' states under prefix for the processes that
// are still running, and whether every one of them has put one.
func (hw *hangWatch) states(procs []*rankProc, prefix string, blockedOnly bool) ([]diag.Rank, bool) {
	var ranks []diag.Rank
	all, live := true, 0
	for _, p := range procs {
		if p.done {
			continue
		}
		live++
		v, ok := hw.kvs.Lookup(prefix + strconv.Itoa(p.rank))
		if blockedOnly {
			v, ok = strings.CutPrefix(v, "blocked ")
		}
		var rs []diag.Rank
		if ok {
			ok = json.Unmarshal([]byte(v), &rs) == nil
		}
		if !ok {
			all = false
			for r := p.rank; r < p.rank+p.n; r++ {
				ranks = append(ranks, diag.Rank{Rank: r, State: diag.Running})
			}
			continue
		}
		ranks = append(ranks, rs...)
	}
	sort.Slice(ranks, func(i, j int) bool { return ranks[i].Rank < ranks[j].Rank })
	return ranks, all && live > 0
}

// hung reports, on each tick, whether every running process has said all
// its ranks are blocked; then it returns the report to print.
func (hw *hangWatch) hung(procs []*rankProc) (string, bool) {
	if !hw.on || hw.done {
		return "", false
	}
	ranks, all := hw.states(procs, diag.KeyHang, true)
	hw.blocked.Store(all || !anyRunning(procs))
	if hw.fam != nil {
		now := hw.now()
		busy, gen := hw.fam.busyBesides(hw)
		if busy || gen != hw.famGen {
			hw.famMoved, hw.famGen = now, gen
			return "", false
		}
		if !hw.famMoved.IsZero() && now.Sub(hw.famMoved) < hw.t {
			return "", false
		}
	}
	if !all {
		return "", false
	}
	hw.done = true
	rep := &diag.Report{Why: fmt.Sprintf("every rank has been blocked in MPI for %v with no progress (--hang-report)", hw.t), Ranks: ranks}
	return rep.Format(), true
}

func anyRunning(procs []*rankProc) bool {
	for _, p := range procs {
		if !p.done {
			return true
		}
	}
	return false
}

// gather asks every running local rank for its state now (SIGQUIT, which
// ranks catch while hang diagnosis is on) and returns the report; ranks
// that do not answer within two seconds are shown as running.
func (hw *hangWatch) gather(procs []*rankProc, why string, remote bool) string {
	if !hw.on || remote {
		return ""
	}
	hw.kvs.DeletePrefix(diag.KeyState)
	for _, p := range procs {
		if !p.done && p.cmd.Process != nil {
			p.cmd.Process.Signal(syscall.SIGQUIT) // not delivered on Windows: the rank shows as running
		}
	}
	var ranks []diag.Rank
	for deadline := time.Now().Add(2 * time.Second); ; {
		var all bool
		ranks, all = hw.states(procs, diag.KeyState, false)
		if all || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rep := &diag.Report{Why: why, Ranks: ranks}
	return rep.Format()
}

// mergeTrace merges the ranks' trace parts from dir into file.
func mergeTrace(dir, file string) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.part"))
	if err != nil {
		return 0, err
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("no rank wrote a trace (did the job finish?)")
	}
	var parts []*trace.Part
	ranks := 0
	for _, n := range names {
		p, err := trace.ReadPart(n)
		if err != nil {
			return 0, err
		}
		ranks += len(p.Ranks)
		parts = append(parts, p)
	}
	return ranks, trace.Merge(parts).WriteFile(file)
}

package mpi

import (
	"fmt"
	"strconv"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/diag"
)

// Hang diagnosis in a job of processes: each process watches its own
// ranks and tells the launcher (mpigo run, through its key-value store)
// when all of them have been blocked for the threshold, and when they move
// again; the launcher prints the report once every process says so. On
// SIGQUIT the process puts the state of its ranks at once: mpigo run sends
// it to every rank when it gets SIGQUIT itself or its --timeout expires.

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
	var w *watcher
	stopQuit := func() {}
	if toLauncher {
		w = startWatch(j.procs, cfg, nil, func(blocked bool) {
			v := "running"
			if blocked {
				v = "blocked " + rankStateJSON(j.procs)
			}
			info.KV.Put(diag.KeyHang+first, v)
		})
		stopQuit = onQuit(func() { info.KV.Put(diag.KeyState+first, rankStateJSON(j.procs)) }, cfg)
	} else {
		// Another launcher: each process reports its own ranks when they
		// are all blocked, on its standard error.
		w = startWatch(j.procs, cfg, func(ranks []diag.Rank, why string) bool {
			rep := &diag.Report{Why: why + " (ranks of this process only: " + diag.Ranges(rankList(j.procs)) + ")", Ranks: ranks}
			fmt.Fprint(stderr, rep.Format())
			return false
		}, nil)
		stopQuit = onQuit(func() { reportNow(j.procs, "SIGQUIT: the state of this process's ranks now") }, cfg)
	}
	return func() {
		stopQuit()
		if w != nil {
			w.close()
		}
		stopCheck()
		writeLaunchedTrace(finishTrace(), cfg.Trace, cfg.traceDir, offset)
	}
}

func rankList(ps []*proc) []int {
	rs := make([]int, len(ps))
	for i, p := range ps {
		rs[i] = p.rank
	}
	return rs
}

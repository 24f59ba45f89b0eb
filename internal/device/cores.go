package device

// This file is what a process started by a launcher does for the job's
// lifecycle before its ranks start: take its share of the node's cores,
// and leave when the launcher does.

import (
	"fmt"
	"os"
	"runtime"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/progress"
)

// ShareCores gives this process its share of the node's cores, as MPI
// launchers bind one rank per core, unless GOMAXPROCS is set (gomaxprocsSet): here hosts
// ranks of the local node's total, from rank. With fewer threads the Go
// scheduler does not wake idle threads on every message, which lowers
// latency (docs/performance.md, "Why the code is as it is"). A GOMAXPROCS
// set above the share under a real-time policy gets a warning, from the
// node's first process only (first) rather than from every rank, through warn.
//
// async (MPIGO_ASYNC_PROGRESS=1) adds a processor, so that the library's
// goroutines (a window's server, the transports' readers and progress)
// run while the ranks compute instead of waiting for Go to preempt them
// (docs/performance.md, "Asynchronous progress"). Under a real-time
// policy it is not added, with a warning: real-time threads that never
// block would keep a core from Go's runtime threads.
func ShareCores(rank, here, total int, first, gomaxprocsSet, async bool, warn func(string)) {
	if total < 1 {
		return
	}
	rt := realtime()
	async, w := asyncUnderRealtime(rank, async, rt)
	if w != "" && first {
		warn(w)
	}
	share := coreShare(runtime.NumCPU(), here, total, progress.LockedCallers() || async)
	if !gomaxprocsSet {
		runtime.GOMAXPROCS(share)
		return
	}
	if !first {
		return
	}
	if w := realtimeWarning(rank, runtime.GOMAXPROCS(0), share, rt); w != "" {
		warn(w)
	}
}

// coreShare is the number of processors (GOMAXPROCS) of a process that
// hosts here of the total ranks of a node of cpus cores: its share of
// the cores, at least one; one more with extra, for a program on the
// standard ABI or one that asked for asynchronous progress. A program
// on the standard ABI calls in from a thread of its own, which keeps a
// processor while it runs C between its calls (the runtime counts it
// in a system call until its monitor takes the processor back, after up
// to 10 ms): the processor more lets the library's goroutines (a
// window's server, the transports' readers) run meanwhile. With one
// processor per process,
// MPICH's rma/linked_list_bench_lock_excl took 55 s over tcp, 1.7 s with
// two (Open MPI: 0.3 s).
func coreShare(cpus, here, total int, extra bool) int {
	share := max(1, cpus*here/total)
	if extra {
		share++
	}
	return share
}

// asyncUnderRealtime reports whether a rank process that asked for
// asynchronous progress (async) gets it under a real-time scheduling
// policy or not (rt), and the warning for rank when it does not.
func asyncUnderRealtime(rank int, async, rt bool) (bool, string) {
	if !async || !rt {
		return async, ""
	}
	return false, fmt.Sprintf("mpigo: warning: rank %d runs under a real-time scheduling policy (chrt): MPIGO_ASYNC_PROGRESS is ignored, "+
		"since a processor more than its cores could leave Go's runtime threads waiting for a CPU forever; run at normal priority to use it.\n", rank)
}

// realtimeWarning is the warning for a rank process that runs under a
// real-time scheduling policy (rt) with gomaxprocs threads for Go code
// where its share of the node's cores is share, or "" if there is nothing
// to warn of. Real-time threads that never block keep their CPU from the
// others of their priority; with more of them than the process's cores,
// Go's runtime threads (its sweeper, its scheduler's lock) can wait for a
// CPU forever and the job hangs without a word (docs/performance.md, "Goroutine
// ranks and the idle processor").
func realtimeWarning(rank, gomaxprocs, share int, rt bool) string {
	if !rt || gomaxprocs <= share {
		return ""
	}
	return fmt.Sprintf("mpigo: warning: rank %d runs under a real-time scheduling policy (chrt) with GOMAXPROCS=%d, "+
		"more than its share of this node's cores (%d): Go's runtime threads may then wait for a CPU forever. "+
		"Unset GOMAXPROCS (mpigo sets %d) or run at normal priority.\n", rank, gomaxprocs, share, share)
}

// WatchLauncher makes the process leave when mpigo run, which started it,
// goes away: ranks started through ssh are not children of the launcher.
// say prints why; the rank's shared-memory inboxes not unlinked yet
// (start-up) go with it. Nothing is watched under other launchers.
func WatchLauncher(info *boot.Info, shmDir string, say func(string)) error {
	if info.KVSAddr == "" {
		return nil
	}
	base, k := info.Rank, info.RanksHere
	return boot.Watch(info, func() {
		say(fmt.Sprintf("mpigo: rank %d: the launcher went away; exiting\n", base))
		RemoveInboxes(shmDir, info.JobID, base, k)
		os.Exit(1)
	})
}

package mpi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/progress"
)

// shareCores gives this process its share of the node's cores, as MPI
// launchers bind one rank per core, unless GOMAXPROCS is set: here hosts
// ranks of the local node's total, from rank. With fewer threads the Go
// scheduler does not wake idle threads on every message, which lowers
// latency (docs/performance.md, "Why the code is as it is"). A GOMAXPROCS
// set above the share under a real-time policy gets a warning, from the
// node's first process only (first) rather than from every rank.
func shareCores(rank, here, total int, first bool) {
	if total < 1 {
		return
	}
	share := max(1, runtime.NumCPU()*here/total)
	if !gomaxprocsSet() {
		runtime.GOMAXPROCS(share)
		return
	}
	if !first {
		return
	}
	if w := realtimeWarning(rank, runtime.GOMAXPROCS(0), share, realtime()); w != "" {
		fmt.Fprint(stderr, w)
	}
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

// runLaunched runs f on the ranks this process hosts in a job started by a
// launcher. Every hosted rank listens for its peers and publishes its
// address in the job's store; the process waits at a fence for every
// process to do the same; then ranks connect to peers in other processes as
// they first send to them. Ranks hosted by the same process (the
// launcher's --ranks-per-proc) are goroutines that talk through inproc.
func runLaunched(info *boot.Info, cfg Config, f func(*Comm) error) error {
	j := &job{size: info.Size, exit: os.Exit, prog: progress.New(), hung: make(chan struct{}), hangKeep: cfg.hangKeep, apps: info.Apps}
	liveJobs.Add(1)
	defer liveJobs.Add(-1)
	if a, ok := info.KV.(boot.Aborter); ok {
		// mpi.Abort (or ErrorsAreFatal) under a PMI launcher: ask it to
		// end the whole job with this code, after a moment for the
		// launcher to forward what the rank printed.
		j.exit = func(code int) {
			time.Sleep(100 * time.Millisecond)
			a.Abort(code, fmt.Sprintf("rank %d called Abort with code %d", info.Rank, code))
			os.Exit(code)
		}
	}
	// Connections close only after a clean finish. On failure the caller
	// reports the error first and exits, which closes them: peers that
	// notice the closed connections then fail after this rank has said why.
	ok := false
	defer func() {
		if ok {
			j.close()
		}
	}()
	base, k := info.Rank, info.RanksHere
	shareCores(base, k, info.LocalSize, info.LocalRank == 0)
	if info.KVSAddr != "" {
		// Ranks started through ssh are not children of the launcher: they
		// leave when it does.
		err := boot.Watch(info, func() {
			fmt.Fprintf(stderr, "mpigo: rank %d: the launcher went away; exiting\n", base)
			// Inboxes not unlinked yet (start-up) go with the rank.
			device.RemoveInboxes(cfg.shmDir, info.JobID, base, k)
			os.Exit(1)
		})
		if err != nil {
			return err
		}
	}
	nt, err := device.NewLaunchedNet(info, netConfig(cfg), j.prog)
	if err != nil {
		return launchError(err)
	}
	ecfg := engine.DefaultConfig()
	ecfg.EagerLimit = cfg.EagerLimit
	// Where the node runs more ranks than cores, a wait that finds nothing
	// gives its core to the other processes.
	j.prog.SetOversubscribed(nt.Oversubscribed)
	defer func() {
		if !ok {
			nt.Abandon()
		}
	}()
	for r := base; r < base+k; r++ {
		p, err := newProc(j, rankPlan{rank: r, node: info.NodeRanks[0], multiNode: len(info.NodeRanks) < info.Size, nodeRanks: info.NodeRanks,
			eng: ecfg, peerEager: true, cfg: cfg, oversubscribed: nt.Oversubscribed, routes: nt.Routes})
		if err != nil {
			return launchError(err)
		}
		j.procs = append(j.procs, p)
	}
	if err := info.KV.Fence(); err != nil {
		return fenceError(err)
	}
	// SessionInit in this process joins these ranks (session.go).
	defer hostRanks(j.procs)()
	if err := nt.Start(j.devices()); err != nil {
		return fenceError(launchError(err))
	}
	stopDiag := startLaunchedDiag(j, cfg, info) // hang_launched.go
	local := func(r int) bool { return r >= base && r < base+k }
	stopFT := j.startFT(cfg, local) // ft.go
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i, p := range j.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Learn the other ranks' byte order and word size (hetero.go).
			if err := p.learnReprs(); err != nil {
				errs[i] = &RankError{Rank: p.Rank, Err: err}
				return
			}
			err := runRank(p, f)
			p.closeMail()
			if err != nil {
				errs[i] = &RankError{Rank: p.Rank, Err: err}
				return
			}
			p.blk.returned.Store(true)
			// Finalize: nobody leaves while a peer may still be talking to it.
			// mpigo run learns that this rank's function has returned, so
			// that if the job then hangs (a rank waits for a message this
			// one never sent) it can say which ranks returned.
			if info.Launcher == boot.LauncherMpigo {
				info.KV.Put(boot.ReturnedKey(p.Rank), "1")
			}
			if err := p.finalize(); err != nil { // ft.go
				errs[i] = &RankError{Rank: p.Rank, Err: err}
			}
		}()
	}
	if left := j.waitRanks(&wg); len(left) > 0 {
		// A hang report ended the job but a rank's goroutine waits
		// outside MPI: the process exits without it (Main).
		stopDiag()
		return j.hang.Load().withStuck(left)
	}
	stopFT()
	stopDiag()
	if h := j.hang.Load(); h != nil {
		// The ranks' errors only say that the job was stopped.
		return h
	}
	err = errors.Join(errs...)
	ok = err == nil
	return err
}

// fenceError is the error of a start-up fence: a process that left the job
// before it is a failed peer (the launcher then names that one, not this).
func fenceError(err error) error {
	if errors.Is(err, boot.ErrPeerLeft) {
		return fmt.Errorf("mpi: %w: %v", ErrProcFailed, err)
	}
	return err
}

package mpi

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
)

// runLaunched runs f on the ranks this process hosts in a job started by a
// launcher. Every hosted rank listens for its peers and publishes its
// address in the job's store; the process waits at a fence for every
// process to do the same; then ranks connect to peers in other processes as
// they first send to them. Ranks hosted by the same process (the
// launcher's --ranks-per-proc) are goroutines that talk through inproc.
func runLaunched(info *boot.Info, cfg Config, f func(*Comm) error) error {
	j := newJob(info.Size, false)
	j.hangKeep = cfg.hangKeep
	j.fabricRMA = cfg.fabricRMA
	j.fabricAtomics = cfg.fabricAtomics
	j.apps = info.Apps
	j.linkAddr, j.boot, j.universe = info.Addr, info, info.Size
	launchAddr.Store(info.Addr)
	launchInfo.Store(info)
	if cfg.universe > 0 {
		j.universe = cfg.universe
	}
	liveJobs.Add(1)
	defer liveJobs.Add(-1)
	if a, ok := info.KV.(boot.Aborter); ok {
		// mpi.Abort (or ErrorsAreFatal) under a PMI launcher: ask it to
		// end the whole job with this code, after a moment for the
		// launcher to forward what the rank printed.
		j.Exit = func(code int) {
			time.Sleep(100 * time.Millisecond)
			a.Abort(code, fmt.Sprintf("rank %d called Abort with code %d", info.Rank, code))
			os.Exit(exitStatus(code))
		}
	}
	// Connections close only after a clean finish. On failure the caller
	// reports the error first and exits, which closes them: peers that
	// notice the closed connections then fail after this rank has said why.
	ok := false
	defer func() {
		if ok {
			j.Close()
		}
	}()
	base, k := info.Rank, info.RanksHere
	device.ShareCores(base, k, info.LocalSize, info.LocalRank == 0, gomaxprocsSet(), cfg.asyncProgress, func(w string) { fmt.Fprint(stderr, w) })
	if err := device.WatchLauncher(info, cfg.shmDir, func(w string) { fmt.Fprint(stderr, w) }); err != nil {
		return err
	}
	nt, err := device.NewLaunchedNet(info, netConfig(cfg), j.Prog)
	if err != nil {
		return launchError(err)
	}
	ecfg := engine.DefaultConfig()
	ecfg.EagerLimit = cfg.EagerLimit
	// Where the node runs more ranks than cores, a wait that finds nothing
	// gives its core to the other processes.
	j.Prog.SetOversubscribed(nt.Oversubscribed)
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
		j.Devs = append(j.Devs, &p.Device)
	}
	if err := info.KV.Fence(); err != nil {
		return fenceError(err)
	}
	// SessionInit in this process joins these ranks (session.go).
	defer hostRanks(j.procs)()
	// The files of AllocMem's shared chunks go with the rank (rma_arena.go).
	defer removeArenaFiles()
	if err := nt.Start(j.devices()); err != nil {
		return fenceError(launchError(err))
	}
	stopDiag := startLaunchedDiag(j, cfg, info) // hang_launched.go
	local := func(r int) bool { return r >= base && r < base+k }
	stopFT := j.startFT(cfg, local) // ft.go
	errs := make([]error, k)
	g := withParent(cfg.parentPort, f)
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
			p.appNum = appOf(info.Apps, p.Rank, cfg.appNum)
			err := runRank(p, g)
			p.closeMail()
			if err != nil {
				errs[i] = &RankError{Rank: p.Rank, Err: err}
				return
			}
			p.Blk.Returned.Store(true)
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

// appOf is MPI_APPNUM of rank: the index of its MPMD group among apps
// (mpigo run A : B, or the commands of SpawnMultiple), or def (the
// launcher's MPIGO_APPNUM) when the launcher gave no groups.
func appOf(apps []int, rank, def int) int {
	lo := 0
	for i, n := range apps {
		if rank >= lo && rank < lo+n {
			return i
		}
		lo += n
	}
	return def
}

package mpi

// Run: a job of goroutine ranks in this process.

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/progress"
)

// newLocalJob builds n goroutine ranks connected by the transport cfg names.
func newLocalJob(n int, cfg Config) (*job, error) {
	j := newJob(n, true)
	j.procs = make([]*proc, n)
	j.inproc = cfg.Transport == "" || cfg.Transport == "inproc"
	nt, err := device.NewLocalNet(n, netConfig(cfg), j.Prog)
	if err != nil {
		return nil, runError(err)
	}
	if j.inproc && spinRanks(n) && cfg.Spin >= 0 {
		// Every wait watches (Config.Spin), collecting the rank's
		// mailbox (progress.Rank).
		spin := cfg.Spin
		if spin == 0 {
			spin = defaultSpin
		}
		j.Prog.SetPollTime(spin)
		j.Prog.SetSpin(true)
	}
	ecfg := engine.DefaultConfig()
	ecfg.EagerLimit = cfg.EagerLimit
	for r := 0; r < n; r++ {
		pl := rankPlan{rank: r, eng: ecfg, noDirectRead: cfg.NoDirectRead, routes: nt.Routes}
		lo, hi := 0, n
		if k := cfg.RanksPerNode; k > 0 && k < n {
			pl.node, pl.multiNode = r/k*k, true
			lo, hi = r/k*k, min(r/k*k+k, n)
		}
		for w := lo; w < hi; w++ {
			pl.nodeRanks = append(pl.nodeRanks, w)
		}
		p, err := newProc(j, pl)
		if err != nil {
			nt.Abandon()
			return nil, runError(err)
		}
		j.procs[r] = p
		j.Devs = append(j.Devs, &p.Device)
	}
	if err := nt.Start(j.devices()); err != nil {
		return nil, runError(err)
	}
	if j.Prog.Spins() {
		j.SweepMail() // the ranks' waits open their mailboxes
	}
	return j, nil
}

// defaultSpin is how long a wait of a goroutine rank watches before it
// parks, by default (Config.Spin 0), when every rank has a processor.
const defaultSpin = progress.DefaultPollTime

// spinRanks reports whether n goroutine ranks may watch their requests
// in their waits (Config.Spin): when each has a processor (GOMAXPROCS).
// With more ranks than processors a watching rank would keep one that
// another rank needs to send what it watches for.
func spinRanks(n int) bool { return n >= 2 && n <= runtime.GOMAXPROCS(0) }

// Run runs f on n ranks that are goroutines of this process, each with its
// own world communicator, and returns when all of them have returned.
// Messages between the ranks are copied once, from the sender's memory into
// the receiver's buffer.
//
// If a rank returns an error or panics, the job is aborted: every other
// rank's pending and later calls fail with ErrProcFailed, so no rank is left
// blocked. Run returns the ranks' errors joined, each prefixed with its rank.
func Run(n int, f func(world *Comm) error) error {
	return RunConfig(n, DefaultConfig(), f)
}

// RunConfig is Run with explicit tunables.
func RunConfig(n int, cfg Config, f func(world *Comm) error) error {
	return runLocal(n, cfg, f)
}

// runLocal is RunConfig; a spawned job's cfg names its parent's port.
func runLocal(n int, cfg Config, f func(world *Comm) error) error {
	if n < 1 {
		return (*Comm)(nil).errorf("Run", ErrArg, loc{}, "need at least one rank, got %d", n)
	}
	j, err := newLocalJob(n, cfg)
	if err != nil {
		return err
	}
	j.hangKeep = cfg.hangKeep
	j.fabricRMA = cfg.fabricRMA
	j.fabricAtomics = cfg.fabricAtomics
	j.family, j.hangAfter = cfg.family, cfg.HangReport
	if j.family == nil {
		j.family = new(device.Family)
	}
	stuck := false // a rank did not return after a hang report: keep the job's transports
	defer func() {
		if !stuck {
			j.Close()
		}
	}()
	liveJobs.Add(1)
	defer liveJobs.Add(-1)
	stopDiag := j.startLocalDiag(cfg) // hang.go
	defer j.startFT(cfg, nil)()       // ft.go
	errs := make([]error, n)
	g := withParent(cfg.parentPort, f)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(p *proc) {
			defer wg.Done()
			defer func() { // also after Abort's runtime.Goexit
				if ap := p.aborted.Load(); ap != nil {
					errs[p.Rank] = *ap
				}
				p.closeMail()
				p.Blk.Returned.Store(true)
			}()
			errs[p.Rank] = runRank(p, g)
		}(j.procs[r])
	}
	if left := j.waitRanks(&wg); len(left) > 0 {
		// A hang report failed the job, but some rank's goroutine waits
		// outside the library (on a channel, a lock, a WaitGroup of
		// goroutines that wait in MPI and handle the error by waiting
		// again...): Run returns the report anyway, as it promises,
		// and leaves that goroutine (and the job's transports, which it
		// may still use) behind.
		stuck = true
		h := stopDiag()
		if h == nil {
			h = j.hang.Load()
		}
		return h.(*hangError).withStuck(left)
	}
	if h := stopDiag(); h != nil {
		// The ranks' errors only say that the job was stopped.
		return h
	}
	var all []error
	for r, err := range errs {
		if err != nil {
			all = append(all, &RankError{Rank: r, Err: err})
		}
	}
	if ip := j.Intern.Load(); ip != nil && len(all) == 0 {
		// Every rank had returned when the error came.
		all = append(all, *ip)
	}
	return errors.Join(all...)
}

// runRank runs f on p, turning a panic into an error, and aborts the job
// (without exiting) if f fails so that no other rank waits forever.
func runRank(p *proc, f func(*Comm) error) (err error) {
	defer rankStarted()()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
		if ap := p.aborted.Load(); ap != nil && err == nil {
			return // this goroutine called Abort (runtime.Goexit): the job is already down
		}
		if err != nil {
			// Errors caused by another rank's failure are not new failures.
			if p.job.ft {
				p.job.ftRankFailed(p, err) // ft.go: the others survive it
			} else if p.job.Failure() == nil || !errors.Is(err, ErrProcFailed) {
				p.job.abort(p.Rank, 0, err)
			}
		}
	}()
	if err = f(p.world); err == nil {
		err = p.finalizeSelf()
	}
	return err
}

package mpi

// Run: a job of goroutine ranks in this process.

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sync"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/progress"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/inproc"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/tcp"
)

// tcpAddrHook, if set (by tests), rewrites the address a goroutine rank of
// a tcp job dials to reach peer: a test puts a relay there.
var tcpAddrHook func(peer int, addr string) string

// newLocalJob builds n goroutine ranks connected by the transport cfg names.
func newLocalJob(n int, cfg Config) (*job, error) {
	j := &job{size: n, procs: make([]*proc, n), exit: os.Exit, local: true, prog: progress.New()}
	ecfg := engine.DefaultConfig()
	ecfg.EagerLimit = cfg.EagerLimit
	var fab *inproc.Fabric
	var lns []net.Listener
	var secret []byte
	var protect tcp.Protect
	var shms []*shm.Transport
	var idb [8]byte
	rand.Read(idb[:])
	jobID := binary.LittleEndian.Uint64(idb[:])
	switch cfg.Transport {
	case "", "inproc":
		fab = inproc.NewFabric(n)
	case "shm":
		shms = make([]*shm.Transport, n)
	case "tcp":
		var err error
		if protect, err = tcp.ParseProtect(cfg.TCPProtect); err != nil {
			return nil, fmt.Errorf("mpi: %w: %v", ErrArg, err)
		}
		secret = make([]byte, 32)
		rand.Read(secret)
		for r := 0; r < n; r++ {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				for _, l := range lns {
					l.Close()
				}
				return nil, fmt.Errorf("mpi: %w: tcp transport: %v", ErrOther, err)
			}
			lns = append(lns, ln)
		}
	default:
		return nil, fmt.Errorf("mpi: %w: unknown transport %q (want inproc, shm or tcp)", ErrArg, cfg.Transport)
	}
	for r := 0; r < n; r++ {
		p := &proc{job: j, rank: r, prog: j.prog}
		if k := cfg.RanksPerNode; k > 0 && k < n {
			p.node, p.multiNode = r/k*k, true
		}
		me := self.New(r, p.deliver)
		var other transport.Transport
		if fab != nil {
			other = fab.Attach(r, p.deliver)
		} else if shms != nil {
			t, err := p.startShm(shm.Config{Size: n, JobID: jobID, Locals: everyone(n), NoCMA: cfg.NoDirectRead})
			if err != nil {
				for _, t := range shms[:r] {
					t.Abandon()
				}
				return nil, fmt.Errorf("mpi: %w: shm transport: %v", ErrOther, err)
			}
			shms[r] = t
			other = t
		} else {
			other = p.startTCP(lns[r], tcp.Config{Size: n, Secret: secret, SockBuf: cfg.TCPSockBuf, Protect: protect,
				Addrs: func(peer int) (string, error) {
					addr := lns[peer].Addr().String()
					if tcpAddrHook != nil {
						addr = tcpAddrHook(peer, addr)
					}
					return addr, nil
				}})
		}
		p.tr = transport.NewRouter(n, func(peer int) transport.Transport {
			if peer == r {
				return me
			}
			return other
		})
		p.noteRoutes()
		direct := p.tr.DirectRead
		if cfg.NoDirectRead {
			direct = nil
		}
		p.eng = engine.New(r, p.engineConfig(ecfg), direct)
		p.world = newWorld(p, n)
		j.procs[r] = p
	}
	if shms != nil {
		if err := attachShm(shms); err != nil {
			return nil, fmt.Errorf("mpi: %w: shm transport: %v", ErrOther, err)
		}
		for _, t := range shms {
			j.readyShm(t)
		}
	}
	return j, nil
}

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
	if n < 1 {
		return (*Comm)(nil).errorf("Run", ErrArg, loc{}, "need at least one rank, got %d", n)
	}
	j, err := newLocalJob(n, cfg)
	if err != nil {
		return err
	}
	defer j.close()
	liveJobs.Add(1)
	defer liveJobs.Add(-1)
	stopDiag := j.startLocalDiag(cfg) // hang.go
	defer j.startFT(cfg, nil)()       // ft.go
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(p *proc) {
			defer wg.Done()
			defer func() { // also after Abort's runtime.Goexit
				if ap := p.aborted.Load(); ap != nil {
					errs[p.rank] = *ap
				}
			}()
			errs[p.rank] = runRank(p, f)
			p.blk.returned.Store(true)
		}(j.procs[r])
	}
	wg.Wait()
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
	if ip := j.intern.Load(); ip != nil && len(all) == 0 {
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
			} else if fp := p.job.failure.Load(); fp == nil || !errors.Is(err, ErrProcFailed) {
				p.job.abort(p.rank, 0, err)
			}
		}
	}()
	return f(p.world)
}

package mpi

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/progress"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/inproc"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/tcp"
)

// shareCores gives this process its share of the node's cores, as MPI
// launchers bind one rank per core, unless GOMAXPROCS is set: here hosts
// ranks of the local node's total. Measured on 2 cores with 2 ranks, one
// thread each halves TCP ping-pong latency (25 us instead of 53 us): the
// Go scheduler no longer wakes idle threads on every message.
func shareCores(here, total int) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set || total < 1 {
		return
	}
	runtime.GOMAXPROCS(max(1, runtime.NumCPU()*here/total))
}

// isLocalName reports whether node names this machine's loopback (ranks
// then listen on 127.0.0.1 only).
func isLocalName(node string) bool {
	switch node {
	case "", "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// runLaunched runs f on the ranks this process hosts in a job started by a
// launcher. Every hosted rank listens for its peers and publishes its
// address in the job's store; the process waits at a fence for every
// process to do the same; then ranks connect to peers in other processes as
// they first send to them. Ranks hosted by the same process (the
// launcher's --ranks-per-proc) are goroutines that talk through inproc.
func runLaunched(info *boot.Info, cfg Config, f func(*Comm) error) error {
	j := &job{size: info.Size, exit: os.Exit, prog: progress.New()}
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
	shareCores(k, info.LocalSize)
	if info.KVSAddr != "" {
		// Ranks started through ssh are not children of the launcher: they
		// leave when it does.
		err := boot.Watch(info.KVSAddr, info.Secret, func() {
			fmt.Fprintf(stderr, "mpigo: rank %d: the launcher went away; exiting\n", base)
			// Inboxes not unlinked yet (start-up) go with the rank.
			for r := base; r < base+k; r++ {
				os.Remove(shm.Name("", info.JobID, r))
			}
			os.Exit(1)
		})
		if err != nil {
			return err
		}
	}
	// Ranks of a one-machine job listen on loopback; with remote hosts the
	// launcher names the address peers should dial (MPIGO_ADDR).
	bindHost, advertise := "127.0.0.1", "127.0.0.1"
	if a := info.Addr; a != "" && !isLocalName(a) {
		bindHost, advertise = "", a
	}
	local := func(r int) bool { return r >= base && r < base+k }
	fab := inproc.NewFabric(info.Size)
	addrKey := func(r int) string { return "mpigo.tcp." + strconv.Itoa(r) }
	ecfg := engine.DefaultConfig()
	ecfg.EagerLimit = cfg.EagerLimit
	// Processes of one node talk through shared memory unless told
	// otherwise. Every rank of the job makes the same choice (the launcher
	// gives them all the same MPIGO_TRANSPORT), so all fence alike.
	var useShm bool
	switch cfg.Transport {
	case "":
		// Where the platform has no shared memory (Windows), processes
		// of one node talk over tcp.
		useShm, _ = shm.Available()
	case "shm":
		useShm = true
	case "tcp":
	default:
		return fmt.Errorf("mpi: %w: MPIGO_TRANSPORT=%q: want shm or tcp", ErrArg, cfg.Transport)
	}
	protect, perr := tcp.ParseProtect(cfg.TCPProtect)
	if perr != nil {
		return fmt.Errorf("mpi: %w: MPIGO_TCP_PROTECT: %v", ErrArg, perr)
	}
	// Ranks in networks that cannot reach each other connect through
	// gateways (mpigo run --gateway; docs/gateways.md).
	gateways, gerr := tcp.ParseGateways(os.Getenv("MPIGO_GATEWAYS"))
	if gerr != nil {
		return fmt.Errorf("mpi: %w: MPIGO_GATEWAYS: %v", ErrArg, gerr)
	}
	if len(gateways.Nets) == 0 {
		gateways = nil
	}
	onNode := func(r int) bool { _, ok := slices.BinarySearch(info.NodeRanks, r); return ok }
	shmPeers := useShm && len(info.NodeRanks) > k
	// Large messages are copied once by cross-memory attach where the
	// kernel permits it (the shm transport's RegionReader), and streamed
	// through the rings where it does not or MPIGO_SHM_CMA=0 says so: the
	// single copy measured faster for one-way bandwidth and 4 MiB
	// Allreduce (docs/performance.md, "Large messages over shm").
	var spin time.Duration
	if shmPeers {
		if d, err := time.ParseDuration(os.Getenv("MPIGO_SHM_SPIN")); err == nil {
			spin = d
			if d == 0 {
				spin = -1
			}
			j.prog.SetPollTime(d)
		}
	}
	// Where the node runs more ranks than cores, a wait that finds nothing
	// gives its core to the other processes.
	j.prog.SetOversubscribed(len(info.NodeRanks) > runtime.NumCPU())
	var shms []*shm.Transport
	defer func() {
		if !ok {
			for _, t := range shms {
				t.Abandon()
			}
		}
	}()
	for r := base; r < base+k; r++ {
		p := &proc{job: j, rank: r, prog: j.prog}
		p.node, p.multiNode = info.NodeRanks[0], len(info.NodeRanks) < info.Size
		ln, err := net.Listen("tcp", net.JoinHostPort(bindHost, "0"))
		if err != nil {
			return fmt.Errorf("mpi: rank %d cannot listen for peers: %w", r, err)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		tr := p.startTCP(ln, tcp.Config{Size: info.Size, JobID: info.JobID, Secret: info.Secret, SockBuf: cfg.TCPSockBuf,
			Protect: protect, Gateways: gateways, Oversubscribed: len(info.NodeRanks) > runtime.NumCPU(),
			Addrs: func(peer int) (string, error) { return info.KV.Get(addrKey(peer)) }})
		in := fab.Attach(r, p.deliver)
		me := self.New(r, p.deliver)
		var sh *shm.Transport
		if shmPeers {
			if sh, err = p.startShm(shm.Config{Size: info.Size, JobID: info.JobID, Locals: info.NodeRanks,
				Spin: spin, Oversubscribed: len(info.NodeRanks) > runtime.NumCPU(),
				NoCMA: os.Getenv("MPIGO_SHM_CMA") == "0"}); err != nil {
				return fmt.Errorf("mpi: rank %d: shared memory with the ranks of node %s: %w (MPIGO_TRANSPORT=tcp avoids it)", r, info.Node, err)
			}
			shms = append(shms, sh)
		}
		p.tr = transport.NewRouter(info.Size, func(peer int) transport.Transport {
			switch {
			case peer == r:
				return me
			case local(peer):
				return in
			case sh != nil && onNode(peer):
				return sh
			}
			return tr
		})
		p.noteRoutes()
		pcfg := ecfg
		pcfg.PeerEager = p.peerEager(cfg, len(info.NodeRanks) > runtime.NumCPU())
		p.eng = engine.New(r, p.engineConfig(pcfg), p.tr.DirectRead)
		p.world = newWorld(p, info.Size)
		j.procs = append(j.procs, p)
		_ = tr
		if err := info.KV.Put(addrKey(r), net.JoinHostPort(advertise, port)); err != nil {
			return err
		}
	}
	if err := info.KV.Fence(); err != nil {
		return fenceError(err)
	}
	if useShm {
		// Every inbox of the node exists now: map the peers', then, once
		// every rank has, unlink our own and start delivering.
		for _, t := range shms {
			if err := t.Attach(); err != nil {
				return err
			}
		}
		if err := info.KV.Fence(); err != nil {
			return fenceError(err)
		}
		for _, t := range shms {
			j.readyShm(t)
		}
	}
	stopDiag := startLaunchedDiag(j, cfg, info) // hang_launched.go
	stopFT := j.startFT(cfg, local)             // ft.go
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i, p := range j.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Learn the other ranks' byte order and word size (hetero.go).
			if err := p.learnReprs(); err != nil {
				errs[i] = &RankError{Rank: p.rank, Err: err}
				return
			}
			if err := runRank(p, f); err != nil {
				errs[i] = &RankError{Rank: p.rank, Err: err}
				return
			}
			p.blk.returned.Store(true)
			// Finalize: nobody leaves while a peer may still be talking to it.
			// mpigo run learns that this rank's function has returned, so
			// that if the job then hangs (a rank waits for a message this
			// one never sent) it can say which ranks returned.
			if info.Launcher == boot.LauncherMpigo {
				info.KV.Put(boot.ReturnedKey(p.rank), "1")
			}
			if err := p.finalize(); err != nil { // ft.go
				errs[i] = &RankError{Rank: p.rank, Err: err}
			}
		}()
	}
	wg.Wait()
	stopFT()
	stopDiag()
	err := errors.Join(errs...)
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

package mpi

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/inproc"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/tcp"
	"github.com/mpigo/mpi/internal/wire"
)

// job is a set of ranks that started together and share a world
// communicator. With Run, all of them are goroutines of this process.
type job struct {
	size  int
	procs []*proc

	failOnce sync.Once
	failure  atomic.Pointer[error] // why the job is going down
	exitMu   sync.Mutex
	exiting  bool // a rank is printing why and exiting the process

	// exit ends the process; tests replace it.
	exit func(code int)
	// local: the job is Run's goroutine ranks. An internal error then
	// fails the job without exiting: Run returns it (intern).
	local  bool
	intern atomic.Pointer[error]

	closers []func() error // transports to close when the job ends

	hang atomic.Pointer[hangError] // set when hang diagnosis failed the job

	ft bool // ranks survive failures (ft.go)
}

func (j *job) close() {
	for i := len(j.closers) - 1; i >= 0; i-- { // transports first, then their reply senders
		j.closers[i]()
	}
}

// proc is the runtime of one rank: its engine, its transports, and the
// state MPI keeps per process.
type proc struct {
	job *job
	// aborted is the error of Abort called by this rank of a local job.
	aborted atomic.Pointer[error]
	rank    int // world rank
	eng     *engine.Engine
	tr      *transport.Router
	// shmTo is, for each world rank that the router sends to through
	// shared memory, that transport (else nil): small blocking sends call
	// it directly (shm.SendEager), without building a frame.
	shmTo []*shm.Transport

	// ers recycles the engine requests of non-blocking sends and
	// receives (reqpool.go).
	ers erFreeList

	bsend engine.BsendBuffer
	ctx   ctxAlloc
	q     *replies // reply sender for tcp deliveries

	node      int  // the node this rank runs on: the lowest world rank there
	multiNode bool // the job's ranks run on more than one node

	world *Comm

	selfOnce sync.Once
	self     *Comm // the rank's Self communicator, made on first use

	stats pstats // performance-variable counters (pvar.go)

	blk blockState // what hang diagnosis knows of the rank (hang.go)
	trc *rankTrace // the rank's timeline while tracing, else nil (trace.go)
	ft  *ftProc    // fault tolerance, if on (ft.go)
}

// exec hands the frames in out to the transports and completes the
// requests that were waiting for that.
func (p *proc) exec(out *engine.Outbox) {
	n := out.Len()
	if n == 0 {
		return
	}
	if p.counting() {
		p.countOut(out)
	}
	for i := 0; i < n; i++ {
		it := out.At(i)
		var err error
		if it.Fill != nil {
			err = sendFilled(p, it)
		} else {
			err = p.tr.Send(it.F)
		}
		if it.Done != nil {
			if err != nil {
				it.Done.Fail(fmt.Errorf("%w: %w", ErrProcFailed, err))
			} else {
				it.Done.Complete(engine.Status{})
			}
		} else if err != nil && it.F.Kind != wire.Eager {
			// A protocol reply that cannot be delivered: the peer is gone.
			p.failPeer(it.F.To, fmt.Errorf("%w: rank %d: %w", ErrProcFailed, it.F.To, err))
		}
	}
}

// fillPool holds the chunk buffers that non-contiguous sends pack into
// just before a frame leaves (engine.Item.Fill): at most one chunk
// (Config.ChunkSize, or the eager limit) per frame being sent.
var fillPool sync.Pool

func sendFilled(p *proc, it *engine.Item) error {
	var b []byte
	bp, _ := fillPool.Get().(*[]byte)
	if bp != nil && cap(*bp) >= it.FillLen {
		b = (*bp)[:it.FillLen]
	} else {
		nb := make([]byte, it.FillLen)
		bp, b = &nb, nb
	}
	it.Fill.Pack(b, it.FillOff)
	f := it.F
	f.Payload = b
	err := p.tr.Send(f)
	fillPool.Put(bp)
	return err
}

// deliver is the transport handler: a frame arrived for this rank.
func (p *proc) deliver(f wire.Frame) {
	if p.counting() {
		p.countFrame(&f.Header, f.From)
	}
	var out engine.Outbox
	if err := p.eng.Deliver(&f, &out); err != nil {
		p.internal(err)
	}
	p.exec(&out)
}

// internal takes the job down after the engine reported a protocol error
// (a frame it cannot make sense of). A process started by a launcher
// exits, so that the launcher ends the job; goroutine ranks under Run
// only fail, and Run returns the error: a library call never exits the
// caller's process.
func (p *proc) internal(err error) {
	err = fmt.Errorf("%w: rank %d: %w", ErrIntern, p.rank, err)
	if p.job.local {
		p.job.intern.CompareAndSwap(nil, &err)
		p.job.abort(p.rank, 0, err)
		return
	}
	p.job.abort(p.rank, 1, err)
}

// replies queues the frames that deliveries from a transport's own
// goroutine (tcp readers) want sent, and a goroutine of the proc sends them.
// A reader must never block in a write: if two ranks' readers each waited
// for the other to read, with both socket buffers full, neither would.
type replies struct {
	mu    sync.Mutex
	items []engine.Item
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

// startReplies starts p's reply sender; the returned function stops it.
func (p *proc) startReplies() func() error {
	if p.q != nil { // one reply sender serves every transport of the rank
		return func() error { return nil }
	}
	q := &replies{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	p.q = q
	go func() {
		defer close(q.done)
		var batch engine.Outbox
		for {
			select {
			case <-q.wake:
			case <-q.stop:
				return
			}
			q.mu.Lock()
			items := q.items
			q.items = nil
			q.mu.Unlock()
			for _, it := range items {
				batch.Reset()
				*batch.Add() = it
				p.exec(&batch)
			}
		}
	}()
	return func() error {
		close(q.stop)
		<-q.done
		return nil
	}
}

// startTCP starts p's tcp endpoint on ln: cfg gives the job's size, secret
// and address lookup; the rank, the handler and the failure callback are
// p's. The endpoint and its reply sender stop when the job closes.
func (p *proc) startTCP(ln net.Listener, cfg tcp.Config) *tcp.Transport {
	p.job.closers = append(p.job.closers, p.startReplies())
	cfg.Rank = p.rank
	cfg.Handler = p.deliverQueued
	cfg.Place = func(h *wire.Header, from, n int) []byte { return p.eng.DataDest(h, from, n) }
	cfg.OnPeerError = p.peerFailed
	t := tcp.New(cfg, ln)
	p.job.closers = append(p.job.closers, t.Close)
	return t
}

// peerFailed fails what depends on a peer that is gone; a negative peer is
// a stranger or a bad handshake, which is refused while the job goes on.
func (p *proc) peerFailed(peer int, err error) {
	if peer < 0 {
		fmt.Fprintf(stderr, "mpigo: rank %d: %v\n", p.rank, err)
		return
	}
	p.failPeer(peer, fmt.Errorf("%w: rank %d: %w", ErrProcFailed, peer, err))
}

// deliverQueued is the handler for transports that deliver on their own
// goroutines: the engine's answers go to the reply sender.
func (p *proc) deliverQueued(f wire.Frame) {
	if p.counting() {
		p.countFrame(&f.Header, f.From)
	}
	var out engine.Outbox
	if err := p.eng.Deliver(&f, &out); err != nil {
		p.internal(err)
	}
	if n := out.Len(); n > 0 {
		q := p.q
		q.mu.Lock()
		for i := 0; i < n; i++ {
			q.items = append(q.items, *out.At(i))
		}
		q.mu.Unlock()
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// abort takes the whole job down: every rank's pending and future
// operations fail with ErrProcFailed naming the cause. With exit, the
// process also exits with code after printing why.
func (j *job) abort(rank, code int, cause error) {
	// The first rank to take the process down is the one that explains
	// why; ranks that fail because of it wait for the exit.
	willExit := code != 0 && j.exit != nil && !j.local
	j.exitMu.Lock()
	if j.exiting {
		j.exitMu.Unlock()
		select {}
	}
	j.exiting = willExit
	j.exitMu.Unlock()
	j.failOnce.Do(func() {
		err := fmt.Errorf("%w: job aborted by rank %d: %w", ErrProcFailed, rank, cause)
		j.failure.Store(&err)
		for _, p := range j.procs {
			if p != nil {
				p.eng.Abort(err)
			}
		}
	})
	if willExit {
		fmt.Fprintf(stderr, "mpigo: rank %d aborted the job: %v\n", rank, cause)
		j.exit(code)
	}
}

// Config holds the tunables of the runtime. The zero value is not useful;
// start from DefaultConfig.
type Config struct {
	// EagerLimit is the largest message, in bytes, sent eagerly; larger
	// ones use the rendezvous protocol. Environment: MPIGO_EAGER_LIMIT.
	EagerLimit int
	// ShmEagerLimit is the eager limit towards processes reached through
	// shared memory, for jobs started by a launcher. 0 chooses: half a
	// ring (at most 512 KiB) on a node with a core per rank, unless
	// EagerLimit was changed from its default; EagerLimit otherwise. Over
	// the rings a rendezvous copies as much as an eager message does and
	// adds a round trip (measured: 1 MiB allreduce between 2 processes
	// 402 -> 256 us, median of 5); with more ranks than cores, eager
	// senders stall on receivers that are not running (4 on 2 cores: 976
	// -> 1055 us), so it stays off there. Environment:
	// MPIGO_SHM_EAGER_LIMIT.
	ShmEagerLimit int
	// NoDirectRead makes goroutine ranks use the streamed rendezvous
	// protocol (CTS, then Data frames) that byte-stream transports use,
	// instead of copying straight out of the sender's buffer. It exists to
	// test and measure that protocol.
	NoDirectRead bool
	// TCPSockBuf, if positive, sets the kernel socket buffer sizes of tcp
	// connections, in bytes (0: the kernel's default, which autotunes).
	// Environment: MPIGO_TCP_SOCKBUF.
	TCPSockBuf int
	// TCPProtect says how tcp connections protect their frames once the
	// handshake has proved both ends: "auto" (the default) encrypts every
	// connection except one between two loopback addresses, whose bytes
	// never leave the kernel and where encryption halves the bandwidth;
	// "on" encrypts every connection (AES-128-GCM with keys agreed per
	// connection: nobody between the ranks can read, alter, replay,
	// reorder or drop frames unnoticed); "off" encrypts none, for trusted
	// fabrics (the handshake still proves the job's secret). Every rank of
	// a job must use the same; docs/security.md has the design and its
	// cost. Environment: MPIGO_TCP_PROTECT (mpigo run --insecure-fabric
	// sets "off").
	TCPProtect string
	// Transport connects the goroutine ranks of Run: "inproc" (the
	// default), "tcp", which sends every message over loopback TCP as
	// separate processes would, or "shm", which sends it through shared
	// memory rings as processes on one node would; the last two exist to
	// test and measure those transports with the same programs. In a job
	// started by mpigo run it forces the transport between processes of
	// one node: "tcp" or "shm" (the default). Environment: MPIGO_TRANSPORT.
	Transport string
	// RanksPerNode, if positive, makes Run treat each run of RanksPerNode
	// consecutive goroutine ranks as one node, as processes on several
	// machines would be: node-aware collectives (docs/collectives.md) then
	// apply. It exists to test and measure them on one machine; it has no
	// effect on a job started by a launcher, which knows its nodes.
	// Environment: MPIGO_RANKS_PER_NODE.
	RanksPerNode int
	// HangReport is how long every live rank must have been blocked in
	// MPI calls, with no wait completing anywhere, before the job prints
	// a hang report and fails (docs/troubleshooting.md); 0 or less
	// disables it. Default 10s; environment: MPIGO_HANG_REPORT (a
	// duration, 0 to disable).
	HangReport time.Duration
	// Check makes every collective compare its name and root with the
	// other ranks' (one small message per rank and call): a mismatch
	// fails the job with both calls named instead of hanging or
	// returning garbage. Environment: MPIGO_CHECK=1 (mpigo run --check).
	Check bool
	// Trace, if set, records every MPI call and message of the job and
	// writes the timeline to this file when Run returns, in the
	// Chrome/Perfetto trace format (docs/trace.md). Environment:
	// MPIGO_TRACE=FILE (mpigo run --trace FILE).
	Trace string
	// FT keeps the job running when a rank fails (a process exits or is
	// killed, a connection is lost, a goroutine rank returns an error or
	// panics): operations that need the failed rank fail with
	// ErrProcFailed, and Revoke, Shrink, Agree, GetFailed and AckFailed
	// let the survivors recover (docs/fault-tolerance.md). Environment:
	// MPIGO_FT=1 (mpigo run --ft).
	FT bool
	// FTHeartbeat is how often, under FT, each process tells the others
	// it is alive (default 250ms), and FTTimeout how long a silent
	// process (stopped, hung in the kernel, cut off) may stay silent
	// before the others treat it as failed (default 3s). Environment:
	// MPIGO_FT_HEARTBEAT, MPIGO_FT_TIMEOUT (durations).
	FTHeartbeat, FTTimeout time.Duration
}

// DefaultConfig returns the built-in tunables, overridden by the
// environment (MPIGO_EAGER_LIMIT).
func DefaultConfig() Config {
	c := Config{EagerLimit: engine.DefaultConfig().EagerLimit}
	c.diagDefaults()
	c.ftDefaults() // ft.go
	if v, ok := envInt("MPIGO_EAGER_LIMIT"); ok && v >= 0 {
		c.EagerLimit = v
	}
	if v, ok := envInt("MPIGO_SHM_EAGER_LIMIT"); ok && v >= 0 {
		c.ShmEagerLimit = v
	}
	if v, ok := envInt("MPIGO_TCP_SOCKBUF"); ok && v >= 0 {
		c.TCPSockBuf = v
	}
	c.Transport = os.Getenv("MPIGO_TRANSPORT")
	c.TCPProtect = os.Getenv("MPIGO_TCP_PROTECT")
	if v, ok := envInt("MPIGO_RANKS_PER_NODE"); ok && v >= 0 {
		c.RanksPerNode = v
	}
	return c
}

// tcpAddrHook, if set (by tests), rewrites the address a goroutine rank of
// a tcp job dials to reach peer: a test puts a relay there.
var tcpAddrHook func(peer int, addr string) string

// newLocalJob builds n goroutine ranks connected by the transport cfg names.
func newLocalJob(n int, cfg Config) (*job, error) {
	j := &job{size: n, procs: make([]*proc, n), exit: os.Exit, local: true}
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
		ecfg.Fetch = shm.Fetch
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
		p := &proc{job: j, rank: r}
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
		p.noteShm()
		direct := p.tr.DirectRead
		if cfg.NoDirectRead {
			direct = nil
		}
		p.eng = engine.New(r, ecfg, direct)
		p.world = newWorld(p, n)
		j.procs[r] = p
	}
	if shms != nil {
		if err := attachShm(shms); err != nil {
			return nil, fmt.Errorf("mpi: %w: shm transport: %v", ErrOther, err)
		}
		for _, t := range shms {
			t.Ready()
		}
	}
	return j, nil
}

// shmEager returns the eager limits towards the peers p reaches through
// shared memory (see Config.ShmEagerLimit), or nil to use EagerLimit for
// every peer.
func (p *proc) shmEager(cfg Config, oversubscribed bool) []int {
	limit := cfg.ShmEagerLimit
	if limit == 0 {
		if cfg.EagerLimit != engine.DefaultConfig().EagerLimit || oversubscribed {
			return nil
		}
		for _, t := range p.shmTo {
			if t != nil {
				limit = min(t.RingSize()/2, 512<<10)
				break
			}
		}
	}
	if limit <= 0 || limit == cfg.EagerLimit {
		return nil
	}
	l := make([]int, len(p.shmTo))
	for peer, t := range p.shmTo {
		if t != nil {
			l[peer] = limit
		}
	}
	return l
}

// noteShm fills p.shmTo from p.tr: the peers it routes through shared
// memory.
func (p *proc) noteShm() {
	for peer := range p.job.size {
		t, ok := p.tr.For(peer).(*shm.Transport)
		if !ok || t == nil {
			continue
		}
		if p.shmTo == nil {
			p.shmTo = make([]*shm.Transport, p.job.size)
		}
		p.shmTo[peer] = t
	}
}

// everyone lists the ranks 0..n-1.
func everyone(n int) []int {
	l := make([]int, n)
	for i := range l {
		l[i] = i
	}
	return l
}

// attachShm attaches each of ts to its peers; on failure it removes every
// inbox.
func attachShm(ts []*shm.Transport) error {
	for _, t := range ts {
		if err := t.Attach(); err != nil {
			for _, t := range ts {
				t.Abandon()
			}
			return err
		}
	}
	return nil
}

// startShm creates p's shared-memory endpoint: cfg gives the job's size, id
// and local ranks; the rank, the handler and the failure callback are p's.
// The caller then attaches it and makes it ready around the job's fences.
func (p *proc) startShm(cfg shm.Config) (*shm.Transport, error) {
	cfg.Rank = p.rank
	cfg.Handler = p.deliverQueued
	// p.eng does not exist yet: look it up when a frame comes.
	cfg.Eager = func(h *wire.Header, from int, b []byte) error {
		if p.counting() {
			p.countRecv(from, int(h.Size), h.Context, int(h.Tag))
		}
		return p.eng.DeliverEager(h, from, b)
	}
	cfg.Place = func(h *wire.Header, from, n int) []byte { return p.eng.DataDest(h, from, n) }
	cfg.OnPeerError = p.peerFailed
	t, err := shm.New(cfg)
	if err != nil {
		return nil, err
	}
	p.job.closers = append(p.job.closers, p.startReplies(), t.Close)
	return t, nil
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
		return fmt.Errorf("mpi: Run: %w: need at least one rank, got %d", ErrArg, n)
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

// ExitPeerFailed is the exit status of a process started by a launcher
// whose ranks failed only because another rank of the job failed
// (ErrProcFailed). `mpigo run` uses it to name the rank that failed first
// rather than the ones that lost it.
const ExitPeerFailed = 75

// primaryErrors drops, from the errors of a failed job, the ones that only
// report that another rank failed, when there is such another failure: they
// are consequences, not causes.
func primaryErrors(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var causes []error
	for _, e := range j.Unwrap() {
		if !errors.Is(e, ErrProcFailed) {
			causes = append(causes, e)
		}
	}
	if len(causes) == 0 {
		return err
	}
	return errors.Join(causes...)
}

// onlyPeerFailures reports whether every error in err is ErrProcFailed.
func onlyPeerFailures(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyPeerFailures(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, ErrProcFailed)
}

// RankError is the error of one rank in a job.
type RankError struct {
	Rank int
	Err  error
}

// Error formats the error as "rank R: ERR".
func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }

// Unwrap returns the rank's error.
func (e *RankError) Unwrap() error { return e.Err }

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

// Main is the entry point of an MPI program. It finds out how the process
// was started, runs f on every rank this process hosts, and exits: with
// status 0 if every rank returned nil, and otherwise with status 1 after
// printing which rank failed and why.
//
// Under a launcher (`mpigo run`, MPICH's mpiexec, Slurm's srun
// --mpi=pmi2, Open MPI's mpirun; docs/launchers.md) the process hosts the
// ranks the launcher gave it and talks to the other processes through
// shared memory or TCP. A program started without a launcher runs as a
// single rank (a singleton job of size 1), or as MPIGO_NP goroutine ranks
// if that variable is set.
func Main(f func(world *Comm) error) {
	info, err := boot.Detect()
	if err != nil {
		fmt.Fprintf(stderr, "mpigo: %v\n", err)
		os.Exit(1)
	}
	if info.Launcher != boot.LauncherSingleton {
		err := runLaunched(info, DefaultConfig(), f)
		if err != nil {
			err = primaryErrors(err)
			fmt.Fprintf(stderr, "mpigo: %v\n", err)
			code := 1
			if onlyPeerFailures(err) {
				code = ExitPeerFailed
			}
			// Under a PMI launcher, ask it to end the whole job, also when
			// this rank only saw another fail: srun by default lets the
			// other tasks run on, and a rank that has no connection to the
			// failed one would not learn that it is gone (a rank that died
			// without a word asks nothing). The pause lets the launcher
			// forward the message above first (Hydra drops what it has
			// not forwarded when it aborts).
			if a, ok := info.KV.(boot.Aborter); ok {
				time.Sleep(100 * time.Millisecond)
				a.Abort(code, fmt.Sprintf("rank %d failed", info.Rank))
			}
			os.Exit(code)
		}
		if err := info.KV.Close(); err != nil {
			fmt.Fprintf(stderr, "mpigo: rank %d: leaving the job: %v\n", info.Rank, err)
		}
		os.Exit(0)
	}
	n, np, err := singletonRanks()
	if err != nil {
		fmt.Fprintf(stderr, "mpigo: %v\n", err)
		os.Exit(2)
	}
	if err := Run(n, f); err != nil {
		if code, ok := ExitCode(err); ok {
			fmt.Fprintf(stderr, "mpigo: job aborted:\n%v\n", primaryErrors(err))
			os.Exit(code)
		}
		fmt.Fprintf(stderr, "mpigo: job failed:\n%v\n", primaryErrors(err))
		if !np && errors.Is(err, ErrRank) {
			prog, gorun := os.Args[0], strings.Contains(os.Args[0], "go-build")
			if gorun {
				prog = "go run ."
			}
			fmt.Fprintf(stderr, "mpigo: hint: this program ran as a single rank, because no launcher started it and MPIGO_NP is not set; "+
				"start it with `mpigo run -n 4 PROGRAM` for processes, or `MPIGO_NP=4 %s` for goroutine ranks\n", prog)
		}
		os.Exit(1)
	}
	os.Exit(0)
}

// singletonRanks is the number of goroutine ranks for a program started
// without a launcher: MPIGO_NP, or 1 if it is not set (np false). A value
// that is not a positive number is an error, not silently one rank.
func singletonRanks() (n int, np bool, err error) {
	s, ok := os.LookupEnv("MPIGO_NP")
	if !ok || s == "" {
		return 1, false, nil
	}
	v, perr := strconv.Atoi(strings.TrimSpace(s))
	if perr != nil || v < 1 {
		return 0, true, fmt.Errorf("MPIGO_NP=%q: want a positive number of ranks, e.g. MPIGO_NP=4", s)
	}
	return v, true, nil
}

// Abort ends the whole job (MPI_Abort): every rank's pending and later
// calls fail. Under a launcher the process exits with code (the launcher
// then stops the other processes). Under Run, which never exits the
// process, the calling goroutine stops as if its function had returned,
// and Run returns an *Error of class ErrOther saying that the rank called
// Abort with code; ExitCode reads the code from it. Abort does not return
// to its caller. A nil communicator does nothing.
func Abort(c *Comm, code int) {
	if c == nil || c.p == nil {
		return
	}
	if h := profiler.Load(); h != nil {
		// Abort does not return: report its end before it acts.
		var err error
		h.exit(h.enter("Abort", c, Undefined, Undefined), &err)
	}
	if code == 0 {
		code = 1
	}
	j := c.p.job
	e := c.errorf("Abort", ErrOther, loc{}, "")
	e.(*Error).Cause = abortCode(code)
	j.abort(c.p.rank, code, fmt.Errorf("Abort called with code %d on %s", code, c.Name()))
	if j.local {
		c.p.aborted.Store(&e)
		runtime.Goexit()
	}
}

// abortCode is the Cause of the error of a rank that called Abort.
type abortCode int

func (a abortCode) Error() string { return fmt.Sprintf("Abort called with code %d", int(a)) }

// ExitCode returns the code a rank passed to Abort if err (such as Run's
// error) says a rank called Abort, and false otherwise.
func ExitCode(err error) (int, bool) {
	var a abortCode
	if errors.As(err, &a) {
		return int(a), true
	}
	return 0, false
}

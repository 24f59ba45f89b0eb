package mpi

// Routes: the one file of package mpi that names concrete transports
// (inproc, self, shm, tcp). It decides which transport reaches each peer
// of a rank and starts those transports, for both kinds of job: a
// goroutine job (Run: localNet) and a process of a launched job (Main:
// launchedNet). newProc (device_new.go) builds everything else of a rank
// from the routes made here; the rest of the package sees a rank's
// transports only through its router and the capabilities noteRoutes
// probes (device.go).

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/gateway"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/inproc"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/tcp"
	"github.com/mpigo/mpi/internal/wire"
)

// routeFunc returns the transport that reaches a peer (a world rank).
type routeFunc func(peer int) transport.Transport

// tcpAddrHook, if set (by tests), rewrites the address a goroutine rank of
// a tcp job dials to reach peer: a test puts a relay there.
var tcpAddrHook func(peer int, addr string) string

// localNet is the transports of a goroutine job: one kind (Config.Transport)
// between every two ranks, and self to the rank itself.
type localNet struct {
	n       int
	cfg     Config
	fab     *inproc.Fabric   // "inproc"
	shms    []*shm.Transport // "shm": each rank's, as it is made
	jobID   uint64           // "shm": names the inboxes
	lns     []net.Listener   // "tcp": each rank's
	secret  []byte           // "tcp"
	protect tcp.Protect      // "tcp"
}

// newLocalNet prepares the transports of n goroutine ranks connected as
// cfg.Transport says.
func newLocalNet(n int, cfg Config) (*localNet, error) {
	ln := &localNet{n: n, cfg: cfg}
	var idb [8]byte
	rand.Read(idb[:])
	ln.jobID = binary.LittleEndian.Uint64(idb[:])
	switch cfg.Transport {
	case "", "inproc":
		ln.fab = inproc.NewFabric(n)
	case "shm":
		ln.shms = make([]*shm.Transport, n)
	case "tcp":
		var err error
		if ln.protect, err = tcp.ParseProtect(cfg.TCPProtect); err != nil {
			return nil, runErr(ErrArg, err, "")
		}
		ln.secret = make([]byte, 32)
		rand.Read(ln.secret)
		for r := 0; r < n; r++ {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				for _, l := range ln.lns {
					l.Close()
				}
				return nil, runErr(ErrOther, err, "tcp transport")
			}
			ln.lns = append(ln.lns, l)
		}
	default:
		return nil, runErr(ErrArg, nil, "unknown transport %q (want inproc, shm or tcp)", cfg.Transport)
	}
	return ln, nil
}

// runErr is the error of a job of goroutine ranks that Run cannot build:
// an *Error of class, with cause (nil if none).
func runErr(class, cause error, format string, args ...any) error {
	return &Error{Class: class, Op: "Run", Rank: NoRank, Msg: fmt.Sprintf(format, args...), Cause: cause}
}

// routes starts p's transports and returns its routes.
func (ln *localNet) routes(p *proc) (routeFunc, error) {
	r, n := p.rank, ln.n
	me := self.New(r, p.deliver)
	var other transport.Transport
	switch {
	case ln.fab != nil:
		t := ln.fab.AttachEager(r, p.deliver, p.deliverEager)
		p.mail = t.Mailbox()
		other = t
	case ln.shms != nil:
		t, err := p.startShm(shm.Config{Size: n, JobID: ln.jobID, Locals: everyone(n), Dir: ln.cfg.shmDir, NoCMA: ln.cfg.NoDirectRead})
		if err != nil {
			return nil, runErr(ErrOther, err, "shm transport")
		}
		ln.shms[r] = t
		other = t
	default:
		lns := ln.lns
		other = p.startTCP(lns[r], tcp.Config{Size: n, Secret: ln.secret, SockBuf: ln.cfg.TCPSockBuf, Protect: ln.protect,
			Addrs: func(peer int) (string, error) {
				addr := lns[peer].Addr().String()
				if tcpAddrHook != nil {
					addr = tcpAddrHook(peer, addr)
				}
				return addr, nil
			}})
	}
	return func(peer int) transport.Transport {
		if peer == r {
			return me
		}
		return other
	}, nil
}

// abandon removes the inboxes of the ranks made so far, when the job
// cannot be built.
func (ln *localNet) abandon() {
	for _, t := range ln.shms {
		if t != nil {
			t.Abandon()
		}
	}
}

// start connects the transports once every rank of j exists.
func (ln *localNet) start(j *job) error {
	if ln.shms == nil {
		return nil
	}
	if err := attachShm(ln.shms); err != nil {
		return runErr(ErrOther, err, "shm transport")
	}
	j.readyShm(ln.shms)
	return nil
}

// launchedNet is the transports of the ranks this process hosts in a job
// started by a launcher: inproc between ranks of this process, shared
// memory to the other processes of the node (unless Config.Transport says
// tcp, or the platform has none), tcp to every other rank, and self.
type launchedNet struct {
	info *boot.Info
	cfg  Config
	// useShm: every process of the job fences for shared memory (they all
	// make the same choice); shmPeers: this one has peers on its node.
	useShm, shmPeers    bool
	spin                time.Duration
	oversubscribed      bool // the node runs more ranks than it has cores
	protect             tcp.Protect
	gateways            *gateway.Table
	bindHost, advertise string
	fab                 *inproc.Fabric
	shms                []*shm.Transport
}

// newLaunchedNet chooses the transports of this process's ranks in the job
// info describes, as cfg and the environment ask, and sets j's progress
// for them.
func newLaunchedNet(j *job, info *boot.Info, cfg Config) (*launchedNet, error) {
	ln := &launchedNet{info: info, cfg: cfg, oversubscribed: len(info.NodeRanks) > runtime.NumCPU()}
	// Ranks of a one-machine job listen on loopback; with remote hosts the
	// launcher names the address peers should dial (MPIGO_ADDR).
	ln.bindHost, ln.advertise = "127.0.0.1", "127.0.0.1"
	if a := info.Addr; a != "" && !isLocalName(a) {
		ln.bindHost, ln.advertise = "", a
	}
	ln.fab = inproc.NewFabric(info.Size)
	// Processes of one node talk through shared memory unless told
	// otherwise. Every rank of the job makes the same choice (the launcher
	// gives them all the same MPIGO_TRANSPORT), so all fence alike.
	switch cfg.Transport {
	case "":
		// Where the platform has no shared memory (Windows), processes
		// of one node talk over tcp.
		ln.useShm, _ = shm.Available()
	case "shm":
		ln.useShm = true
	case "tcp":
	default:
		return nil, fmt.Errorf("mpi: %w: MPIGO_TRANSPORT=%q: want shm or tcp", ErrArg, cfg.Transport)
	}
	var err error
	if ln.protect, err = tcp.ParseProtect(cfg.TCPProtect); err != nil {
		return nil, fmt.Errorf("mpi: %w: MPIGO_TCP_PROTECT: %v", ErrArg, err)
	}
	// Ranks in networks that cannot reach each other connect through
	// gateways (mpigo run --gateway; docs/gateways.md).
	if ln.gateways, err = gateway.Parse(cfg.gateways); err != nil {
		return nil, fmt.Errorf("mpi: %w: MPIGO_GATEWAYS: %v", ErrArg, err)
	}
	if len(ln.gateways.Nets) == 0 {
		ln.gateways = nil
	}
	ln.shmPeers = ln.useShm && len(info.NodeRanks) > info.RanksHere
	if ln.shmPeers && cfg.shmSpinSet {
		ln.spin = cfg.shmSpin
		if ln.spin == 0 {
			ln.spin = -1
		}
		j.prog.SetPollTime(cfg.shmSpin)
	}
	return ln, nil
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

// addrKey is the key under which rank r publishes its tcp address.
func addrKey(r int) string { return "mpigo.tcp." + strconv.Itoa(r) }

// routes starts p's transports, publishes its tcp address in the job's
// store, and returns its routes.
func (ln *launchedNet) routes(p *proc) (routeFunc, error) {
	info, r := ln.info, p.rank
	base, k := info.Rank, info.RanksHere
	l, err := net.Listen("tcp", net.JoinHostPort(ln.bindHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("mpi: rank %d cannot listen for peers: %w", r, err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	tr := p.startTCP(l, tcp.Config{Size: info.Size, JobID: info.JobID, Secret: info.Secret, SockBuf: ln.cfg.TCPSockBuf,
		Protect: ln.protect, Gateways: ln.gateways, Oversubscribed: ln.oversubscribed,
		Addrs: func(peer int) (string, error) { return info.KV.Get(addrKey(peer)) }})
	in := ln.fab.AttachEager(r, p.deliver, p.deliverEager)
	p.mail = in.Mailbox()
	me := self.New(r, p.deliver)
	var sh *shm.Transport
	if ln.shmPeers {
		if sh, err = p.startShm(shm.Config{Size: info.Size, JobID: info.JobID, Locals: info.NodeRanks,
			Dir: ln.cfg.shmDir, Spin: ln.spin, Oversubscribed: ln.oversubscribed,
			NoCMA: ln.cfg.shmNoCMA}); err != nil {
			return nil, fmt.Errorf("mpi: rank %d: shared memory with the ranks of node %s: %w (MPIGO_TRANSPORT=tcp avoids it)", r, info.Node, err)
		}
		ln.shms = append(ln.shms, sh)
	}
	if err := info.KV.Put(addrKey(r), net.JoinHostPort(ln.advertise, port)); err != nil {
		return nil, err
	}
	onNode := func(peer int) bool { _, ok := slices.BinarySearch(info.NodeRanks, peer); return ok }
	return func(peer int) transport.Transport {
		switch {
		case peer == r:
			return me
		case peer >= base && peer < base+k:
			return in
		case sh != nil && onNode(peer):
			return sh
		}
		return tr
	}, nil
}

// attachError classes an error of mapping the node's inboxes after the
// start-up fence. Every inbox existed at that fence, and its owner unlinks
// it only after the next one, which cannot complete without this rank: an
// inbox missing now was removed by a rank that gave up the start (it saw
// another fail), so this rank fails because a peer did (ErrProcFailed,
// exit status ExitPeerFailed), and the launcher names the rank that failed
// first rather than this one.
func attachError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mpi: %w: %v (its owner left the job during start-up)", ErrProcFailed, err)
	}
	return err
}

// abandon removes the inboxes of this process's ranks, when the job fails
// to start.
func (ln *launchedNet) abandon() {
	for _, t := range ln.shms {
		t.Abandon()
	}
}

// start connects the transports once every process of the job has made
// its ranks and the job's store has been fenced: every inbox of the node
// exists then, so each rank maps its peers', and once every rank has
// (another fence), unlinks its own and starts delivering.
func (ln *launchedNet) start(j *job) error {
	if !ln.useShm {
		return nil
	}
	for _, t := range ln.shms {
		if err := t.Attach(); err != nil {
			return attachError(err)
		}
	}
	if err := ln.info.KV.Fence(); err != nil {
		return fenceError(err)
	}
	j.readyShm(ln.shms)
	return nil
}

// removeInboxes removes the shared-memory inboxes in dir (Config's
// MPIGO_SHM_DIR) of ranks base..base+k-1 of job jobID, for a process that
// leaves before it has unlinked them.
func removeInboxes(dir string, jobID uint64, base, k int) {
	for r := base; r < base+k; r++ {
		os.Remove(shm.Name(dir, jobID, r))
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
	cfg.EagerRun = p.eagerRun
	cfg.Place = func(h *wire.Header, from, n int) []byte { return p.eng.DataDest(h, from, n) }
	cfg.OnPeerError = p.peerFailed
	t, err := shm.New(cfg)
	if err != nil {
		return nil, err
	}
	j := p.job
	// Closers run last first: t leaves the job's progress before it closes.
	j.closers = append(j.closers, p.startReplies(), t.Close, func() error { j.prog.Remove(t); return nil })
	return t, nil
}

// The memory of a window whose members share a node (window.go) is a
// segment in the shared-memory transport's folder, named after a member's
// inbox (transport.Segments).
var (
	segmentSuffix = shm.SegmentSuffix
	createSegment = shm.CreateSegment
	openSegment   = shm.OpenSegment
	removeSegment = shm.RemoveSegment
	unmapSegment  = shm.Unmap
	retireSegment = shm.Retire
)

// readyShm starts each of ts delivering and lets the job's waits poll
// it, once they are connected; then, with what the connections told (who
// can read whose memory), each rank lowers its eager limits where a
// single copy is cheaper (proc.lowerEager).
func (j *job) readyShm(ts []*shm.Transport) {
	for _, p := range j.procs {
		p.lowerEager()
	}
	for _, t := range ts {
		t.Ready()
		j.prog.Add(t)
	}
}

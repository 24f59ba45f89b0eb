package device

// Routes: the one file of the module, outside the transports themselves,
// that names concrete transports (inproc, self, shm, tcp, ucx, ofi). It decides
// which transport reaches each peer of a rank and starts those
// transports, for both kinds of job: a goroutine job (Run: LocalNet) and
// a process of a launched job (Main: LaunchedNet). package mpi builds
// everything else of a rank from the routes made here; the rest of the
// module sees a rank's transports only through its router and the
// capabilities NoteRoutes probes.

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/gateway"
	"github.com/mpigo/mpi/internal/progress"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/inproc"
	"github.com/mpigo/mpi/internal/transport/ofi"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/tcp"
	"github.com/mpigo/mpi/internal/transport/ucx"
	"github.com/mpigo/mpi/internal/wire"
)

// NetConfig is what the routes need of package mpi's Config (config.go
// reads the environment; the device reads none).
type NetConfig struct {
	Transport    string        // "", "inproc", "shm", "tcp" or (goroutine ranks) "ucx" or "ofi"
	TCPProtect   string        // MPIGO_TCP_PROTECT
	TCPSockBuf   int           // kernel socket buffer sizes, if positive
	NoDirectRead bool          // goroutine ranks: no single copy (Config.NoDirectRead)
	ShmNoCMA     bool          // launched: no single-copy reads between processes
	ShmDir       string        // where shared-memory inboxes and segments live
	ShmSpin      time.Duration // a launched job's poll time, if ShmSpinSet
	ShmSpinSet   bool
	Gateways     string // MPIGO_GATEWAYS: docs/gateways.md
	// Fabric is MPIGO_FABRIC: "" (the fabric between nodes if this
	// build has one), "ucx", "ofi", or "off" (docs/fabric.md).
	Fabric string
	// FabricLocal (MPIGO_FABRIC_LOCAL=1) takes the fabric between the
	// processes of one node too, instead of shared memory: for tests and
	// measurements on one machine.
	FabricLocal bool
	// FabricAtomics (MPIGO_FABRIC_ATOMICS=1): windows may take the
	// fabric's atomic operations, so libfabric's provider is asked for
	// them (ofi.Config.Atomics; UCX's worker has them always).
	FabricAtomics bool
	// NoGather (MPIGO_FABRIC_GATHER=0) sends every small frame over a
	// fabric alone, at once (ucx.Config.NoGather, ofi.Config.NoGather).
	NoGather bool
	// Verbose (MPIGO_VERBOSE=1, mpigo run --verbose): each process says
	// which transport reaches each peer of its ranks.
	Verbose bool
}

// Class is the kind of an Error, which package mpi turns into its error
// class.
type Class int

// The classes of the device's errors.
const (
	ClassArg        Class = iota + 1 // a bad setting (ErrArg)
	ClassOther                       // a transport could not start (ErrOther)
	ClassProcFailed                  // a peer left during start-up (ErrProcFailed)
)

// Error is an error of building a job's routes. Msg says what; Cause, if
// not nil, is the underlying error.
type Error struct {
	Class Class
	Msg   string
	Cause error
}

func (e *Error) Error() string {
	switch {
	case e.Cause == nil:
		return e.Msg
	case e.Msg == "":
		return e.Cause.Error()
	}
	return e.Msg + ": " + e.Cause.Error()
}

func (e *Error) Unwrap() error { return e.Cause }

// RouteFunc returns the transport that reaches a peer (a world rank).
type RouteFunc func(peer int) transport.Transport

// Routes starts a rank's transports and returns which one reaches each
// peer: LocalNet.Routes or LaunchedNet.Routes.
type Routes func(d *Device) (RouteFunc, error)

// TCPAddrHook, if set (by tests), rewrites the address a goroutine rank of
// a tcp job dials to reach peer: a test puts a relay there.
var TCPAddrHook func(peer int, addr string) string

// LocalNet is the transports of a goroutine job: one kind (Config.Transport)
// between every two ranks, and self to the rank itself.
type LocalNet struct {
	n       int
	cfg     NetConfig
	prog    *progress.Progress
	fab     *inproc.Fabric   // "inproc"
	shms    []*shm.Transport // "shm": each rank's, as it is made
	jobID   uint64           // "shm": names the inboxes
	lns     []net.Listener   // "tcp": each rank's
	ucxs    []*ucx.Transport // "ucx": each rank's, as it is made
	ofis    []*ofi.Transport // "ofi": each rank's, as it is made
	secret  []byte           // "tcp"
	protect tcp.Protect      // "tcp"
}

// NewLocalNet prepares the transports of n goroutine ranks connected as
// cfg.Transport says; prog is the job's progress, which polls shm.
func NewLocalNet(n int, cfg NetConfig, prog *progress.Progress) (*LocalNet, error) {
	ln := &LocalNet{n: n, cfg: cfg, prog: prog}
	var idb [8]byte
	rand.Read(idb[:])
	ln.jobID = binary.LittleEndian.Uint64(idb[:])
	switch cfg.Transport {
	case "", "inproc":
		ln.fab = inproc.NewFabric(n)
	case "shm":
		ln.shms = make([]*shm.Transport, n)
	case "ucx":
		if !ucx.Built {
			return nil, &Error{Class: ClassArg, Msg: "transport \"ucx\"", Cause: ucx.ErrNotBuilt}
		}
		ln.ucxs = make([]*ucx.Transport, n)
	case "ofi":
		if !ofi.Built {
			return nil, &Error{Class: ClassArg, Msg: "transport \"ofi\"", Cause: ofi.ErrNotBuilt}
		}
		ln.ofis = make([]*ofi.Transport, n)
	case "tcp":
		var err error
		if ln.protect, err = tcp.ParseProtect(cfg.TCPProtect); err != nil {
			return nil, &Error{Class: ClassArg, Cause: err}
		}
		ln.secret = make([]byte, 32)
		rand.Read(ln.secret)
		for r := 0; r < n; r++ {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				for _, l := range ln.lns {
					l.Close()
				}
				return nil, &Error{Class: ClassOther, Msg: "tcp transport", Cause: err}
			}
			ln.lns = append(ln.lns, l)
		}
	default:
		return nil, &Error{Class: ClassArg, Msg: fmt.Sprintf("unknown transport %q (want inproc, shm, tcp, ucx or ofi)", cfg.Transport)}
	}
	return ln, nil
}

// Routes starts d's transports and returns its routes.
func (ln *LocalNet) Routes(d *Device) (RouteFunc, error) {
	r, n := d.Rank, ln.n
	me := self.New(r, d.Deliver)
	var other transport.Transport
	switch {
	case ln.fab != nil:
		t := ln.fab.AttachEager(r, d.Deliver, d.DeliverEager)
		d.Mail = t.Mailbox()
		other = t
	case ln.shms != nil:
		t, err := d.startShm(shm.Config{Size: n, JobID: ln.jobID, Locals: everyone(n), Dir: ln.cfg.ShmDir, NoCMA: ln.cfg.NoDirectRead}, ln.prog)
		if err != nil {
			return nil, &Error{Class: ClassOther, Msg: "shm transport", Cause: err}
		}
		ln.shms[r] = t
		other = t
	case ln.ucxs != nil:
		ucxs := ln.ucxs
		t, err := d.startUCX(ucx.Config{Size: n, Addrs: func(peer int) ([]byte, error) {
			if ucxs[peer] == nil {
				return nil, fmt.Errorf("rank %d has no ucx endpoint", peer)
			}
			return ucxs[peer].Address(), nil
		}, NoGather: ln.cfg.NoGather}, ln.prog)
		if err != nil {
			return nil, &Error{Class: ClassOther, Msg: "ucx transport", Cause: err}
		}
		ln.ucxs[r] = t
		other = t
	case ln.ofis != nil:
		ofis := ln.ofis
		t, err := d.startOFI(ofi.Config{Size: n, Addrs: func(peer int) ([]byte, error) {
			if ofis[peer] == nil {
				return nil, fmt.Errorf("rank %d has no ofi endpoint", peer)
			}
			return ofis[peer].Address(), nil
		}, NoGather: ln.cfg.NoGather, Atomics: ln.cfg.FabricAtomics, ShmName: ofiShmName(ln.jobID, r)}, ln.prog)
		if err != nil {
			return nil, &Error{Class: ClassOther, Msg: "ofi transport", Cause: err}
		}
		ln.ofis[r] = t
		other = t
	default:
		lns := ln.lns
		other = d.startTCP(lns[r], tcp.Config{Size: n, Secret: ln.secret, SockBuf: ln.cfg.TCPSockBuf, Protect: ln.protect,
			Addrs: func(peer int) (string, error) {
				addr := lns[peer].Addr().String()
				if TCPAddrHook != nil {
					addr = TCPAddrHook(peer, addr)
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

// Abandon removes the inboxes of the ranks made so far, when the job
// cannot be built.
func (ln *LocalNet) Abandon() {
	for _, t := range ln.shms {
		if t != nil {
			t.Abandon()
		}
	}
}

// Start connects the transports once every rank (devs) exists.
func (ln *LocalNet) Start(devs []*Device) error {
	if ln.shms == nil {
		return nil
	}
	if err := attachShm(ln.shms); err != nil {
		return &Error{Class: ClassOther, Msg: "shm transport", Cause: err}
	}
	readyShm(devs, ln.shms, ln.prog)
	return nil
}

// LaunchedNet is the transports of the ranks this process hosts in a job
// started by a launcher: inproc between ranks of this process, shared
// memory to the other processes of the node (unless Config.Transport says
// tcp, or the platform has none), tcp to every other rank, and self.
type LaunchedNet struct {
	info *boot.Info
	cfg  NetConfig
	prog *progress.Progress
	// useShm: every process of the job fences for shared memory (they all
	// make the same choice); shmPeers: this one has peers on its node.
	useShm, shmPeers    bool
	spin                time.Duration
	Oversubscribed      bool // the node runs more ranks than it has cores
	protect             tcp.Protect
	gateways            *gateway.Table
	bindHost, advertise string
	fab                 *inproc.Fabric
	shms                []*shm.Transport
	// fabric: every process of the job starts an endpoint of this fabric
	// library ("ucx" or "ofi"; "" for none) and publishes its address
	// (they all make the same choice, from the same settings), or
	// noFabric if it cannot start it and fabricAuto allows that
	// (fallback.go). fabAddrs reads the peers' addresses.
	fabric     string
	fabricAuto bool
	fabAddrs   *fabricAddrs
	fabWarn    sync.Once
}

// NewLaunchedNet chooses the transports of this process's ranks in the job
// info describes, as cfg and the environment ask, and sets the job's
// progress prog for them.
func NewLaunchedNet(info *boot.Info, cfg NetConfig, prog *progress.Progress) (*LaunchedNet, error) {
	ln := &LaunchedNet{info: info, cfg: cfg, prog: prog, Oversubscribed: len(info.NodeRanks) > runtime.NumCPU()}
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
		return nil, &Error{Class: ClassArg, Msg: fmt.Sprintf("MPIGO_TRANSPORT=%q: want shm or tcp", cfg.Transport)}
	}
	var err error
	if ln.protect, err = tcp.ParseProtect(cfg.TCPProtect); err != nil {
		return nil, &Error{Class: ClassArg, Msg: "MPIGO_TCP_PROTECT: " + err.Error()}
	}
	// Ranks in networks that cannot reach each other connect through
	// gateways (mpigo run --gateway; docs/gateways.md).
	if ln.gateways, err = gateway.Parse(cfg.Gateways); err != nil {
		return nil, &Error{Class: ClassArg, Msg: "MPIGO_GATEWAYS: " + err.Error()}
	}
	if len(ln.gateways.Nets) == 0 {
		ln.gateways = nil
	}
	if ln.fabric, err = chooseFabric(cfg, len(info.NodeRanks) < info.Size); err != nil {
		return nil, err
	}
	switch ln.fabric {
	case "ucx":
		ln.fabAddrs = newFabricAddrs(info.KV, info.Size, "UCX", ucxKey)
	case "ofi":
		ln.fabAddrs = newFabricAddrs(info.KV, info.Size, "libfabric", ofiKey)
	}
	if ln.fabAddrs != nil {
		ln.fabricAuto = cfg.Fabric == "" || cfg.Fabric == "auto"
		if cfg.Verbose {
			here := describeRanks(info.Rank, info.RanksHere)
			ln.fabAddrs.note = func(peer int) {
				fmt.Fprintf(os.Stderr, "mpigo: node %s: rank %d is reached over tcp from %s (its process could not start %s)\n", info.Node, peer, here, ln.fabAddrs.lib)
			}
		}
	}
	ln.shmPeers = ln.useShm && len(info.NodeRanks) > info.RanksHere
	if ln.shmPeers && cfg.ShmSpinSet {
		ln.spin = cfg.ShmSpin
		if ln.spin == 0 {
			ln.spin = -1
		}
		prog.SetPollTime(cfg.ShmSpin)
	}
	return ln, nil
}

// chooseFabric says which fabric library a launched job uses ("ucx",
// "ofi", or "" for none), as MPIGO_FABRIC asks: by default the one this
// build has (UCX first) when the job spans nodes (or MPIGO_FABRIC_LOCAL
// asks for it on one).
func chooseFabric(cfg NetConfig, multiNode bool) (string, error) {
	use := multiNode || cfg.FabricLocal
	pick := func(name string) string {
		if use {
			return name
		}
		return ""
	}
	switch cfg.Fabric {
	case "off", "tcp":
		return "", nil
	case "", "auto":
		switch {
		case ucx.Built:
			return pick("ucx"), nil
		case ofi.Built:
			return pick("ofi"), nil
		}
		return "", nil
	case "ucx":
		if !ucx.Built {
			return "", &Error{Class: ClassArg, Msg: "MPIGO_FABRIC=ucx", Cause: ucx.ErrNotBuilt}
		}
		return pick("ucx"), nil
	case "ofi", "libfabric":
		if !ofi.Built {
			return "", &Error{Class: ClassArg, Msg: "MPIGO_FABRIC=" + cfg.Fabric, Cause: ofi.ErrNotBuilt}
		}
		return pick("ofi"), nil
	}
	return "", &Error{Class: ClassArg, Msg: fmt.Sprintf("MPIGO_FABRIC=%q: want ucx, ofi or off", cfg.Fabric)}
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

// ucxKey is the key under which rank r publishes its UCX worker's address
// (in hex: some stores take only printable values).
func ucxKey(r int) string { return "mpigo.ucx." + strconv.Itoa(r) }

// ofiKey is the key under which rank r publishes its libfabric endpoint's
// name (in hex).
func ofiKey(r int) string { return "mpigo.ofi." + strconv.Itoa(r) }

// Routes starts d's transports, publishes its tcp address in the job's
// store, and returns its routes.
func (ln *LaunchedNet) Routes(d *Device) (RouteFunc, error) {
	info, r := ln.info, d.Rank
	base, k := info.Rank, info.RanksHere
	l, err := net.Listen("tcp", net.JoinHostPort(ln.bindHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("mpi: rank %d cannot listen for peers: %w", r, err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	tr := d.startTCP(l, tcp.Config{Size: info.Size, JobID: info.JobID, Secret: info.Secret, SockBuf: ln.cfg.TCPSockBuf,
		Protect: ln.protect, Gateways: ln.gateways, Oversubscribed: ln.Oversubscribed,
		Addrs: func(peer int) (string, error) { return info.KV.Get(addrKey(peer)) }})
	in := ln.fab.AttachEager(r, d.Deliver, d.DeliverEager)
	d.Mail = in.Mailbox()
	me := self.New(r, d.Deliver)
	var sh *shm.Transport
	if ln.shmPeers {
		if sh, err = d.startShm(shm.Config{Size: info.Size, JobID: info.JobID, Locals: info.NodeRanks,
			Dir: ln.cfg.ShmDir, Spin: ln.spin, Oversubscribed: ln.Oversubscribed,
			NoCMA: ln.cfg.ShmNoCMA}, ln.prog); err != nil {
			return nil, fmt.Errorf("mpi: rank %d: shared memory with the ranks of node %s: %w (MPIGO_TRANSPORT=tcp avoids it)", r, info.Node, err)
		}
		ln.shms = append(ln.shms, sh)
	}
	// The fabric between nodes (fallback.go: when it was chosen by
	// default, a process that cannot start it reaches the other nodes
	// over tcp, and they reach it so).
	var fab transport.Transport
	var fabErr error
	// On an oversubscribed node the fabric's goroutine sleeps in its
	// library as soon as it finds nothing: a goroutine that spins after
	// each event keeps a core from the other ranks, which is what the
	// rank waits for (MPICH's sendflood, 8 ranks on 2 cores over either
	// fabric: more than 120 s, Open MPI 27 s).
	var fabSpin int64
	if ln.Oversubscribed {
		fabSpin = -1
	}
	switch ln.fabric {
	case "ucx":
		t, err := d.startUCX(ucx.Config{Size: info.Size, Addrs: ln.fabAddrs.address, Spin: fabSpin, NoGather: ln.cfg.NoGather}, ln.prog)
		if err == nil {
			err = info.KV.Put(ucxKey(r), hex.EncodeToString(t.Address()))
			fab = t
		}
		fabErr = err
	case "ofi":
		t, err := d.startOFI(ofi.Config{Size: info.Size, Addrs: ln.fabAddrs.address, Spin: fabSpin, NoGather: ln.cfg.NoGather, Atomics: ln.cfg.FabricAtomics,
			ShmName: ofiShmName(info.JobID, r)}, ln.prog)
		if err == nil {
			err = info.KV.Put(ofiKey(r), hex.EncodeToString(t.Address()))
			fab = t
			if ln.cfg.Verbose {
				fmt.Fprintf(os.Stderr, "mpigo: rank %d on node %s: libfabric provider %s\n", r, info.Node, t.Provider())
			}
		}
		fabErr = err
	}
	if fabErr != nil {
		lib := ln.fabAddrs.lib
		if !ln.fabricAuto || fab != nil {
			// Asked for by name, or the store failed.
			return nil, fmt.Errorf("mpi: rank %d on node %s cannot use %s: %w (MPIGO_FABRIC=off uses tcp between nodes; docs/fabric.md)", r, info.Node, lib, fabErr)
		}
		ln.fabWarn.Do(func() {
			fmt.Fprintf(os.Stderr, "mpigo: warning: rank %d on node %s cannot use %s: %v; the ranks of its process reach the other nodes over tcp, and are reached so (MPIGO_FABRIC=%s makes this an error; docs/fabric.md)\n",
				r, info.Node, lib, fabErr, ln.fabric)
		})
		if err := info.KV.Put(ln.fabAddrs.key(r), noFabric); err != nil {
			return nil, err
		}
	}
	var fabRoute transport.Transport
	if fab != nil {
		fabRoute = fab
		if ln.fabricAuto {
			fabRoute = newFabricOrTCP(fab, tr, ln.fabAddrs)
		}
	}
	if err := info.KV.Put(addrKey(r), net.JoinHostPort(ln.advertise, port)); err != nil {
		return nil, err
	}
	onNode := func(peer int) bool { _, ok := slices.BinarySearch(info.NodeRanks, peer); return ok }
	if fabRoute != nil && ln.cfg.FabricLocal && sh != nil {
		d.SegmentsBeside = func(peer int) transport.Segments {
			if peer != r && onNode(peer) {
				return sh
			}
			return nil
		}
	}
	route := func(peer int) transport.Transport {
		switch {
		case peer == r:
			return me
		case peer >= base && peer < base+k:
			return in
		case fabRoute != nil && ln.cfg.FabricLocal:
			return fabRoute
		case sh != nil && onNode(peer):
			return sh
		case fabRoute != nil && !onNode(peer):
			return fabRoute
		}
		return tr
	}
	if ln.cfg.Verbose {
		fmt.Fprintf(os.Stderr, "mpigo: rank %d on node %s reaches %s\n", r, info.Node, describeRoutes(info.Size, route))
	}
	return route, nil
}

// describeRanks names ranks first..first+k-1: "rank 3", "ranks 4-7".
func describeRanks(first, k int) string {
	if k == 1 {
		return fmt.Sprintf("rank %d", first)
	}
	return fmt.Sprintf("ranks %d-%d", first, first+k-1)
}

// describeRoutes says which transport reaches each of n peers: "self 0,
// shm 1-3, ucx 4-7".
func describeRoutes(n int, route func(peer int) transport.Transport) string {
	var parts []string
	last, from := "", 0
	flush := func(to int) {
		if last == "" {
			return
		}
		if from == to {
			parts = append(parts, fmt.Sprintf("%s %d", last, from))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d-%d", last, from, to))
		}
	}
	for p := 0; p < n; p++ {
		name := fmt.Sprintf("%T", route(p))
		if nm, ok := route(p).(interface{ Name() string }); ok {
			name = nm.Name()
		}
		if name != last {
			flush(p - 1)
			last, from = name, p
		}
	}
	flush(n - 1)
	return strings.Join(parts, ", ")
}

// startUCX starts d's UCX endpoint: cfg gives the job's size and address
// lookup; the rank, the handler and the failure callback are d's. A job's
// waits poll it; it closes when the job does.
func (d *Device) startUCX(cfg ucx.Config, prog *progress.Progress) (*ucx.Transport, error) {
	d.StartReplies()
	cfg.Rank = d.Rank
	cfg.Handler = d.DeliverQueued
	cfg.OnPeerError = d.Hooks.PeerFailed
	t, err := ucx.New(cfg)
	if err != nil {
		return nil, err
	}
	// Closers run last first: t leaves the job's progress before it closes.
	d.Hooks.AddCloser(t.Close)
	d.Hooks.AddCloser(func() error { prog.Remove(t); return nil })
	prog.Add(t)
	return t, nil
}

// ofiShmName names rank's endpoint of libfabric's shm provider after the
// job, as the rank's inbox is named (shm.Name): no file a killed process
// left can take it, and the launcher's removal of the job's files
// (shm.RemoveJob, in the default directory) takes it too.
func ofiShmName(jobID uint64, rank int) string {
	return filepath.Base(shm.Name("", jobID, rank)) + "-ofi"
}

// startOFI starts d's libfabric endpoint: cfg gives the job's size and
// address lookup; the rank, the handler and the failure callback are d's.
// A job's waits poll it; it closes when the job does.
func (d *Device) startOFI(cfg ofi.Config, prog *progress.Progress) (*ofi.Transport, error) {
	d.StartReplies()
	cfg.Rank = d.Rank
	cfg.Handler = d.DeliverQueued
	cfg.OnPeerError = d.Hooks.PeerFailed
	t, err := ofi.New(cfg)
	if err != nil {
		return nil, err
	}
	// Closers run last first: t leaves the job's progress before it closes.
	d.Hooks.AddCloser(t.Close)
	d.Hooks.AddCloser(func() error { prog.Remove(t); return nil })
	prog.Add(t)
	return t, nil
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
		return &Error{Class: ClassProcFailed, Msg: err.Error() + " (its owner left the job during start-up)"}
	}
	return err
}

// Abandon removes the inboxes of this process's ranks, when the job fails
// to start.
func (ln *LaunchedNet) Abandon() {
	for _, t := range ln.shms {
		t.Abandon()
	}
}

// Start connects the transports once every process of the job has made
// its ranks and the job's store has been fenced: every inbox of the node
// exists then, so each rank maps its peers', and once every rank has
// (another fence), unlinks its own and starts delivering.
func (ln *LaunchedNet) Start(devs []*Device) error {
	if !ln.useShm {
		return nil
	}
	for _, t := range ln.shms {
		if err := t.Attach(); err != nil {
			return attachError(err)
		}
	}
	if err := ln.info.KV.Fence(); err != nil {
		return err // the caller classes a fence's error
	}
	readyShm(devs, ln.shms, ln.prog)
	return nil
}

// RemoveInboxes removes the shared-memory inboxes in dir (Config's
// MPIGO_SHM_DIR) of ranks base..base+k-1 of job jobID, for a process that
// leaves before it has unlinked them.
func RemoveInboxes(dir string, jobID uint64, base, k int) {
	for r := base; r < base+k; r++ {
		os.Remove(shm.Name(dir, jobID, r))
		os.Remove(shm.WakeName(shm.Name(dir, jobID, r)))
	}
}

// startTCP starts d's tcp endpoint on ln: cfg gives the job's size, secret
// and address lookup; the rank, the handler and the failure callback are
// d's. The endpoint and its reply sender stop when the job closes.
func (d *Device) startTCP(ln net.Listener, cfg tcp.Config) *tcp.Transport {
	d.StartReplies()
	cfg.Rank = d.Rank
	cfg.Handler = d.DeliverQueued
	// d.Eng does not exist yet: look it up when a frame comes.
	cfg.Place = func(h *wire.Header, from, n int) []byte { return d.Eng.DataDest(h, from, n) }
	cfg.OnPeerError = d.Hooks.PeerFailed
	t := tcp.New(cfg, ln)
	d.Hooks.AddCloser(t.Close)
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
func (d *Device) startShm(cfg shm.Config, prog *progress.Progress) (*shm.Transport, error) {
	cfg.Rank = d.Rank
	cfg.Handler = d.DeliverQueued
	// d.Eng does not exist yet: the handlers look it up when a frame comes.
	cfg.Eager = d.deliverEagerRef
	cfg.EagerRun = d.EagerRun
	cfg.Place = func(h *wire.Header, from, n int) []byte { return d.Eng.DataDest(h, from, n) }
	cfg.OnPeerError = d.Hooks.PeerFailed
	t, err := shm.New(cfg)
	if err != nil {
		return nil, err
	}
	// Closers run last first: t leaves the job's progress before it closes.
	d.StartReplies()
	d.Hooks.AddCloser(t.Close)
	d.Hooks.AddCloser(func() error { prog.Remove(t); return nil })
	return t, nil
}

// The memory of a window whose members share a node (window.go) is a
// segment in the shared-memory transport's folder, named after a member's
// inbox (transport.Segments).
var (
	SegmentSuffix = shm.SegmentSuffix
	CreateSegment = shm.CreateSegment
	OpenSegment   = shm.OpenSegment
	RemoveSegment = shm.RemoveSegment
	UnmapSegment  = shm.Unmap
	RetireSegment = shm.Retire
	MapPrivate    = shm.MapPrivate
	// SleepOn and WakeOn sleep on a word of a segment and wake its
	// sleepers (a futex shared between processes).
	SleepOn = shm.SleepOn
	WakeOn  = shm.WakeOn
)

// readyShm starts each of ts delivering and lets the job's waits poll
// it, once they are connected; then, with what the connections told (who
// can read whose memory), each rank (devs) lowers its eager limits where
// a single copy is cheaper (LowerEager).
func readyShm(devs []*Device, ts []*shm.Transport, prog *progress.Progress) {
	for _, d := range devs {
		d.LowerEager()
	}
	for _, t := range ts {
		t.Ready()
		prog.Add(t)
	}
}

// LinkListener is where this rank listens for the members of another
// group while it joins them (links.go); it belongs to the link once
// started.
type LinkListener struct{ ln net.Listener }

// ListenLink listens for the other group's members: on loopback, unless
// advertise names another address that peers must dial (MPIGO_ADDR). It
// returns the address to tell them.
func ListenLink(advertise string) (*LinkListener, string, error) {
	bind := "127.0.0.1"
	if advertise != "" && !isLocalName(advertise) {
		bind = ""
	} else {
		advertise = "127.0.0.1"
	}
	l, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		return nil, "", err
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return &LinkListener{ln: l}, net.JoinHostPort(advertise, port), nil
}

// Close gives up a listener that was never started.
func (ll *LinkListener) Close() error { return ll.ln.Close() }

// StartLink connects d to the other group of a bridge over tcp, whatever
// the transports of d's own job: the two groups' processes may be on any
// hosts. Frames from a member arrive as from its peer number here.
func (d *Device) StartLink(ll *LinkListener, cfg LinkConfig) (*Link, error) {
	l, slot := d.addLinkPeers(cfg)
	d.startReplies(l.addCloser)
	peerOf := func(b int) int { return linkPeer(l, &cfg, b) }
	t := tcp.New(tcp.Config{Rank: cfg.Me, Size: len(cfg.Addrs), JobID: cfg.JobID, Secret: cfg.Secret, Protect: tcp.ProtectAuto,
		Addrs: func(peer int) (string, error) {
			if peer < 0 || peer >= len(cfg.Addrs) {
				return "", fmt.Errorf("no member %d in the link", peer)
			}
			return cfg.Addrs[peer], nil
		},
		Handler: func(f wire.Frame) {
			if f.From = peerOf(f.From); f.From >= 0 {
				d.DeliverQueued(f)
			}
		},
		Place: func(h *wire.Header, from, n int) []byte {
			if p := peerOf(from); p >= 0 {
				return d.Eng.DataDest(h, p, n)
			}
			return nil
		},
		OnPeerError: func(peer int, err error) {
			if p := peerOf(peer); p >= 0 && cfg.OnPeerError != nil {
				cfg.OnPeerError(p, err)
			}
		},
	}, ll.ln)
	*slot = t
	l.addCloser(t.Close)
	if cfg.Me < cfg.RemoteBase {
		// The accepting group connects at once: a member of the other
		// group that dies (or whose job ends) is noticed even by a rank
		// that never sent to it, so its waits end.
		go func() {
			for b := cfg.RemoteBase; b < cfg.RemoteBase+cfg.RemoteN; b++ {
				if err := t.Connect(b); err != nil && cfg.OnPeerError != nil {
					cfg.OnPeerError(peerOf(b), err)
				}
			}
		}()
	}
	return l, nil
}

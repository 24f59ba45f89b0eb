package mpi

// Building a rank: the one constructor both kinds of job use, and what
// turns the device's start-up errors into the package's.

import (
	"errors"
	"fmt"

	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
)

// rankPlan is what newProc needs to build one rank of a job.
type rankPlan struct {
	rank int
	// node is the lowest world rank on the rank's node; multiNode tells
	// that the job's ranks run on more than one node.
	node      int
	multiNode bool
	// nodeRanks are the world ranks on the rank's node, ascending.
	nodeRanks []int
	// eng is the engine configuration of the job's ranks.
	eng engine.Config
	// peerEager chooses per-peer eager limits (Device.PeerEager, from cfg
	// and oversubscribed) towards peers with a short road.
	peerEager      bool
	cfg            Config
	oversubscribed bool
	// noDirectRead makes the engine stream rendezvous data instead of
	// reading it from the sender (Config.NoDirectRead).
	noDirectRead bool
	// routes starts the rank's transports and says which one reaches
	// each peer (internal/device/routes.go).
	routes device.Routes
}

// newProc builds a rank of j as pl says and returns it, in this order:
// its device with its hooks into the job, its transports and their routes
// (pl.routes: each transport's frames are delivered to the device's
// executor: self and inproc ones to Device.Deliver, tcp and shm ones to
// Device.DeliverQueued, which starts the rank's reply sender), the router
// over them, the capabilities of each peer's transport (NoteRoutes), the
// engine (with the single copy of large messages where a peer's transport
// offers transport.RegionReader: Device.EngineConfig; on by default
// between processes of a node, MPIGO_SHM_CMA=0 streams them through the
// rings instead, docs/performance.md "Large messages over shm"), and the
// world communicator. The job connects the transports once every rank
// exists.
func newProc(j *job, pl rankPlan) (*proc, error) {
	p := &proc{job: j, node: pl.node, multiNode: pl.multiNode, nodeRanks: pl.nodeRanks}
	p.Rank, p.Size = pl.rank, j.Size
	// Waits of collectives that meet in memory watch through job.Prog
	// (Progress.WatchFor); the others poll through Prog.
	p.Prog = j.Prog
	p.InitWaits(p.describeWait)
	p.Hooks = device.Hooks{
		ProcFailed: ErrProcFailed,
		Internal:   p.internal,
		PeerFailed: p.peerFailed,
		FailPeer:   p.failPeer,
		AddCloser:  j.AddCloser,
	}
	p.Hooks.AddCloser(p.closeLinks) // after the transports: closers run last first
	route, err := pl.routes(&p.Device)
	if err != nil {
		return nil, err
	}
	p.Tr = transport.NewRouter(j.Size, route)
	if p.Mail != nil {
		p.Prog = j.Prog.ForRank(p.Mail, p.Blk.AnyParked)
	}
	p.NoteRoutes()
	ecfg := pl.eng
	if pl.peerEager {
		custom := pl.cfg.EagerLimit != engine.DefaultConfig().EagerLimit
		ecfg.PeerEager = p.PeerEager(pl.cfg.ShmEagerLimit, pl.cfg.EagerLimit, custom, pl.oversubscribed)
	}
	direct := p.Tr.DirectRead
	if pl.noDirectRead {
		direct = nil
	}
	p.Eng = engine.New(pl.rank, p.EngineConfig(ecfg), direct)
	p.world = newWorld(p, j.Size)
	return p, nil
}

// netConfig is what the device's routes need of cfg.
func netConfig(cfg Config) device.NetConfig {
	return device.NetConfig{
		Transport: cfg.Transport, TCPProtect: cfg.TCPProtect, TCPSockBuf: cfg.TCPSockBuf,
		NoDirectRead: cfg.NoDirectRead, ShmNoCMA: cfg.shmNoCMA, ShmDir: cfg.shmDir,
		ShmSpin: cfg.shmSpin, ShmSpinSet: cfg.shmSpinSet, Gateways: cfg.gateways,
		Fabric: cfg.fabric, FabricLocal: cfg.fabricLocal, FabricAtomics: cfg.fabricAtomics, NoGather: cfg.fabricGather == "0", Verbose: cfg.verbose,
	}
}

// deviceClass is the error class of a device error's class.
func deviceClass(c device.Class) error {
	switch c {
	case device.ClassArg:
		return ErrArg
	case device.ClassProcFailed:
		return ErrProcFailed
	}
	return ErrOther
}

// runError is a start-up error of the device as Run returns it: an *Error
// of the device's class (see runErr); other errors pass as they are.
func runError(err error) error {
	var de *device.Error
	if errors.As(err, &de) {
		return runErr(deviceClass(de.Class), de.Cause, "%s", de.Msg)
	}
	return err
}

// launchError is a start-up error of the device as a launched rank
// reports it: "mpi: <class>: <what>"; other errors pass as they are.
func launchError(err error) error {
	var de *device.Error
	if errors.As(err, &de) {
		return fmt.Errorf("mpi: %w: %v", deviceClass(de.Class), de)
	}
	return err
}

// runErr is the error of a job of goroutine ranks that Run cannot build:
// an *Error of class, with cause (nil if none).
func runErr(class, cause error, format string, args ...any) error {
	return &Error{Class: class, Op: "Run", Rank: NoRank, Msg: fmt.Sprintf(format, args...), Cause: cause}
}

// The memory of a window whose members share a node (window.go) is a
// segment in the shared-memory transport's folder, named after a member's
// inbox (transport.Segments); the device names the transport.
var (
	segmentSuffix = device.SegmentSuffix
	createSegment = device.CreateSegment
	openSegment   = device.OpenSegment
	removeSegment = device.RemoveSegment
	unmapSegment  = device.UnmapSegment
	retireSegment = device.RetireSegment
	mapPrivate    = device.MapPrivate
	sleepOn       = device.SleepOn
	wakeOn        = device.WakeOn
)

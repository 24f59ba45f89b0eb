package mpi

// Building a rank: the one constructor both kinds of job use.

import (
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
	// eng is the engine configuration of the job's ranks.
	eng engine.Config
	// peerEager chooses per-peer eager limits (proc.peerEager, from cfg
	// and oversubscribed) towards peers with a short road.
	peerEager      bool
	cfg            Config
	oversubscribed bool
	// noDirectRead makes the engine stream rendezvous data instead of
	// reading it from the sender (Config.NoDirectRead).
	noDirectRead bool
	// routes starts the rank's transports and says which one reaches
	// each peer (device_routes.go).
	routes func(p *proc) (routeFunc, error)
}

// newProc builds a rank of j as pl says and returns it, in this order:
// its transports and their routes (pl.routes: each transport's frames are
// delivered to the rank's executor: self and inproc ones to proc.deliver,
// tcp and shm ones to proc.deliverQueued, which starts the rank's reply
// sender), the router over them, the capabilities of each peer's transport
// (noteRoutes), the engine (with the single copy of large messages where a
// peer's transport offers transport.RegionReader: proc.engineConfig; on by
// default between processes of a node, MPIGO_SHM_CMA=0 streams them
// through the rings instead, docs/performance.md "Large messages over
// shm"), and the world communicator. The job connects the transports once every rank exists.
func newProc(j *job, pl rankPlan) (*proc, error) {
	p := &proc{job: j, rank: pl.rank, prog: j.prog, node: pl.node, multiNode: pl.multiNode}
	route, err := pl.routes(p)
	if err != nil {
		return nil, err
	}
	p.tr = transport.NewRouter(j.size, route)
	if p.mail != nil {
		p.prog = j.prog.ForRank(p.mail, p.blk.anyParked)
	}
	p.noteRoutes()
	ecfg := pl.eng
	if pl.peerEager {
		ecfg.PeerEager = p.peerEager(pl.cfg, pl.oversubscribed)
	}
	direct := p.tr.DirectRead
	if pl.noDirectRead {
		direct = nil
	}
	p.eng = engine.New(pl.rank, p.engineConfig(ecfg), direct)
	p.world = newWorld(p, j.size)
	return p, nil
}

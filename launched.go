package mpi

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/transport/tcp"
)

// runLaunched runs f as one rank of a job started by a launcher: the rank
// listens for its peers, publishes its address in the job's store, waits
// at a fence for every rank to do the same, and then connects to peers as
// it first sends to them.
func runLaunched(info *boot.Info, cfg Config, f func(*Comm) error) error {
	j := &job{size: info.Size, exit: os.Exit}
	p := &proc{job: j, rank: info.Rank}
	j.procs = []*proc{p}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("mpi: rank %d cannot listen for peers: %w", info.Rank, err)
	}
	addrKey := func(r int) string { return "mpigo.tcp." + strconv.Itoa(r) }
	defer p.startReplies()()
	tr := tcp.New(tcp.Config{
		Rank: info.Rank, Size: info.Size, JobID: info.JobID,
		Addrs:   func(peer int) (string, error) { return info.KV.Get(addrKey(peer)) },
		Handler: p.deliverQueued,
		OnPeerError: func(peer int, err error) {
			if peer < 0 {
				fmt.Fprintf(stderr, "mpigo: rank %d: %v\n", info.Rank, err)
				return
			}
			p.eng.FailAll(peer, fmt.Errorf("%w: rank %d: %w", ErrProcFailed, peer, err))
		},
	}, ln)
	defer tr.Close()
	me := self.New(info.Rank, p.deliver)
	p.tr = transport.NewRouter(info.Size, func(peer int) transport.Transport {
		if peer == info.Rank {
			return me
		}
		return tr
	})
	ecfg := engine.DefaultConfig()
	ecfg.EagerLimit = cfg.EagerLimit
	p.eng = engine.New(info.Rank, ecfg, p.tr.DirectRead)
	p.world = newWorld(p, info.Size)

	if err := info.KV.Put(addrKey(info.Rank), tr.Addr()); err != nil {
		return err
	}
	if err := info.KV.Fence(); err != nil {
		return err
	}
	if err := runRank(p, f); err != nil {
		return err
	}
	// Finalize: nobody leaves while a peer may still be talking to it.
	return Barrier(p.world)
}

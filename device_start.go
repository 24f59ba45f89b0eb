package mpi

// Starting a rank's transports: the tcp and shared-memory endpoints of a
// rank, for both kinds of job (run.go, launched.go).

import (
	"net"

	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/tcp"
	"github.com/mpigo/mpi/internal/wire"
)

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

// readyShm starts t delivering and lets the job's waits poll it.
func (j *job) readyShm(t *shm.Transport) {
	t.Ready()
	j.prog.Add(t)
}

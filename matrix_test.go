package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	shmtr "github.com/mpigo/mpi/internal/transport/shm"
)

// The conformance tests run over every transport configuration in this
// matrix, so that a new transport is tested by adding one line here. The
// inproc variants force each protocol path: the default (eager, then
// single-copy rendezvous), rendezvous for every message, and the streamed
// CTS/Data rendezvous that byte-stream transports use; tcp runs the ranks
// over loopback TCP, as separate processes would talk; shm runs them over
// shared-memory rings with large messages copied by cross-memory attach,
// and shm-ring with every large message streamed through the rings (the
// fallback where the kernel refuses cross-memory attach).
type transportCase struct {
	name string
	cfg  mpi.Config
}

func transports() []transportCase {
	d := mpi.DefaultConfig()
	rndv := d
	rndv.EagerLimit = 0
	stream := d
	stream.EagerLimit = 64
	stream.NoDirectRead = true
	tcp := d
	tcp.Transport = "tcp"
	shm := d
	shm.Transport = "shm"
	shmRing := shm
	shmRing.EagerLimit = 64
	shmRing.NoDirectRead = true
	cases := []transportCase{
		{"inproc", d},
		{"inproc-rendezvous", rndv},
		{"inproc-stream", stream},
		{"tcp", tcp},
	}
	if ok, _ := shmtr.Available(); !ok {
		return cases // no shared memory on this platform (Windows)
	}
	return append(cases, transportCase{"shm", shm}, transportCase{"shm-ring", shmRing})
}

// matrix runs f on n ranks over every transport configuration, as subtests.
func matrix(t *testing.T, n int, f func(world *mpi.Comm) error) {
	t.Helper()
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			if err := mpi.RunConfig(n, tc.cfg, f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// check turns a failed condition into an error naming the rank.
func check(c *mpi.Comm, ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("rank %d: %s", c.Rank(), fmt.Sprintf(format, args...))
}

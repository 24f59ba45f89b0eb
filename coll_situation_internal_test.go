package mpi

import (
	"testing"

	shmtr "github.com/mpigo/mpi/internal/transport/shm"
)

// TestSharedMemoryNode checks the situation the pipelined broadcasts
// depend on: true only when the ranks talk through node shared memory,
// and the same answer on every rank (and for a split communicator).
func TestSharedMemoryNode(t *testing.T) {
	cases := []struct {
		transport string
		want      bool
	}{{"inproc", false}, {"tcp", false}}
	if ok, _ := shmtr.Available(); ok {
		cases = append(cases, struct {
			transport string
			want      bool
		}{"shm", true})
	}
	for _, tc := range cases {
		t.Run(tc.transport, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Transport = tc.transport
			err := RunConfig(3, cfg, func(c *Comm) error {
				if got := c.sharedMemoryNode(); got != tc.want {
					t.Errorf("rank %d: sharedMemoryNode = %v, want %v", c.Rank(), got, tc.want)
				}
				// A communicator of this rank alone never talks to
				// another process.
				self, err := c.Split(c.Rank(), 0)
				if err != nil {
					return err
				}
				if self.sharedMemoryNode() {
					t.Errorf("rank %d: a communicator of one rank reports shared memory", c.Rank())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

package mpi_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// TestIntercommOverlap: IntercommCreate with groups that overlap returns
// an *mpi.Error of class ErrComm (MPICH's MPI_ERR_COMM) on every rank
// instead of hanging, over every transport: when the remote leader is a
// member of the local group (which used to hang: the local leader waited
// for an answer from a rank that was waiting for it), and when two real
// leaders lead groups that share a rank.
func TestIntercommOverlap(t *testing.T) {
	wantComm := func(c *mpi.Comm, what string, err error) error {
		var e *mpi.Error
		if !errors.As(err, &e) || !errors.Is(err, mpi.ErrComm) {
			return fmt.Errorf("rank %d: %s: got %v, want an *mpi.Error of class ErrComm", c.Rank(), what, err)
		}
		return nil
	}
	body := func(world *mpi.Comm) error {
		// Both groups are the whole world; the remote leader, rank 2, is
		// a member of the local group.
		ic, err := mpi.IntercommCreate(world, 0, world, 2, 9)
		if err := wantComm(world, "remote leader in the local group", err); err != nil {
			return err
		}
		if ic != nil {
			return fmt.Errorf("rank %d: got a communicator", world.Rank())
		}
		// Groups {0,1,2} and {2,3}, led by world ranks 0 and 3: rank 2 is
		// in both and takes part in both creations, one after the other
		// (the leaders find the overlap in the groups they exchange).
		wg := world.Group()
		ga, err := wg.Incl([]int{0, 1, 2})
		if err != nil {
			return err
		}
		gb, err := wg.Incl([]int{2, 3})
		if err != nil {
			return err
		}
		r := world.Rank()
		var a, b *mpi.Comm
		if r <= 2 {
			if a, err = world.CreateGroup(ga, 1); err != nil {
				return err
			}
		}
		if r >= 2 {
			if b, err = world.CreateGroup(gb, 2); err != nil {
				return err
			}
		}
		if a != nil {
			_, err = mpi.IntercommCreate(a, 0, world, 3, 10)
			if err := wantComm(world, "groups sharing a rank (first)", err); err != nil {
				return err
			}
		}
		if b != nil {
			_, err = mpi.IntercommCreate(b, 1, world, 0, 10)
			if err := wantComm(world, "groups sharing a rank (second)", err); err != nil {
				return err
			}
		}
		// The world still works.
		v, err := mpi.Allreduce(world, 1, mpi.Sum[int]())
		return check(world, err == nil && v == 4, "Allreduce after: %v, %v", v, err)
	}
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- mpi.RunConfig(4, tc.cfg, body) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("IntercommCreate with overlapping groups hangs")
			}
		})
	}
}

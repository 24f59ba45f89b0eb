package comm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Dup gives a congruent communicator whose messages never match the
// original's (MPICH comm/dup, ctxalloc).
func TestDupIsolation(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		d, err := c.Dup()
		if err != nil {
			return err
		}
		if got := mpi.CompareComms(c, d); got != mpi.Congruent {
			return fmt.Errorf("Compare(c, Dup) = %d, want Congruent", got)
		}
		if c.Rank() == 0 {
			r1, err := mpi.Isend(c, "on c", 1, 0)
			if err != nil {
				return err
			}
			r2, err := mpi.Isend(d, "on dup", 1, 0)
			if err != nil {
				return err
			}
			return mpi.WaitAll(r1, r2)
		}
		s, _, err := mpi.Recv[string](d, mpi.AnySource, mpi.AnyTag)
		if err != nil || s != "on dup" {
			return fmt.Errorf("dup received %q %v", s, err)
		}
		s, _, err = mpi.Recv[string](c, 0, 0)
		if err != nil || s != "on c" {
			return fmt.Errorf("c received %q %v", s, err)
		}
		return d.Free()
	})
}

// Split by colour and key orders ranks by key, then old rank; Undefined
// gives no communicator (MPICH comm/cmsplit).
func TestSplit(t *testing.T) {
	conformance.Run(t, 5, func(c *mpi.Comm) error {
		r := c.Rank()
		color := r % 2
		if r == 4 {
			color = mpi.Undefined
		}
		s, err := c.Split(color, -r)
		if err != nil {
			return err
		}
		if r == 4 {
			if s != nil {
				return fmt.Errorf("Undefined colour gave a communicator")
			}
			return nil
		}
		if s.Size() != 2 {
			return fmt.Errorf("rank %d: size %d", r, s.Size())
		}
		// Key -r reverses the order.
		want := 1
		if r >= 2 {
			want = 0
		}
		if s.Rank() != want {
			return fmt.Errorf("rank %d: new rank %d, want %d", r, s.Rank(), want)
		}
		sum, err := mpi.Allreduce(s, r, mpi.Sum[int]())
		if err != nil || sum != color+color+2 {
			return fmt.Errorf("rank %d: allreduce in split: %d %v", r, sum, err)
		}
		return nil
	})
}

// Create from a group, Idup, and Free; a freed communicator is refused
// with ErrComm.
func TestCreateIdupFree(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		g, err := c.Group().Incl([]int{3, 1})
		if err != nil {
			return err
		}
		n, err := c.Create(g)
		if err != nil {
			return err
		}
		if c.Rank() == 3 && (n == nil || n.Rank() != 0) || c.Rank() == 0 && n != nil {
			return fmt.Errorf("rank %d: Create gave %v", c.Rank(), n)
		}
		d, req, err := c.Idup()
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if err := mpi.Barrier(d); err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		if err := mpi.Barrier(d); !errors.Is(err, mpi.ErrComm) {
			return fmt.Errorf("barrier on a freed communicator: %v", err)
		}
		return nil
	})
}

// Intercommunicators: create, point-to-point across, collectives, merge
// (MPICH comm/icm, ic1, icsplit).
func TestIntercomm(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		r := c.Rank()
		half, err := c.Split(r%2, r)
		if err != nil {
			return err
		}
		ic, err := mpi.IntercommCreate(half, 0, c, 1-r%2, 9)
		if err != nil {
			return err
		}
		if !ic.IsInter() || ic.RemoteSize() != 2 {
			return fmt.Errorf("intercomm: inter %v remote size %d", ic.IsInter(), ic.RemoteSize())
		}
		// Each rank sends its world rank to the same local rank in
		// the other group.
		got, _, err := mpi.Sendrecv[int](ic, r, ic.Rank(), 0, ic.Rank(), 0)
		if err != nil || got%2 == r%2 {
			return fmt.Errorf("across: %d %v", got, err)
		}
		sum, err := mpi.Allreduce(ic, r, mpi.Sum[int]())
		want := 1 + 3 // the odd group's ranks
		if r%2 == 1 {
			want = 0 + 2
		}
		if err != nil || sum != want {
			return fmt.Errorf("inter allreduce: %d %v, want %d", sum, err, want)
		}
		m, err := ic.IntercommMerge(r%2 == 1)
		if err != nil {
			return err
		}
		if m.Size() != 4 || (r%2 == 0) != (m.Rank() < 2) {
			return fmt.Errorf("merge: rank %d of %d", m.Rank(), m.Size())
		}
		return nil
	})
}

// A communicator's name is kept and the world's is WORLD (comm/commname).
func TestNames(t *testing.T) {
	conformance.Run(t, 1, func(c *mpi.Comm) error {
		if c.Name() != "WORLD" {
			return fmt.Errorf("world's name %q", c.Name())
		}
		d, err := c.Dup()
		if err != nil {
			return err
		}
		d.SetName("mine")
		if d.Name() != "mine" || c.Name() != "WORLD" {
			return fmt.Errorf("names %q %q", d.Name(), c.Name())
		}
		return nil
	})
}

package mpi_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// TestFreedTypeInFlight: MPI lets a program free a datatype that a
// pending operation uses (the operation goes on with it), as MPICH's
// coll/nonblocking2 does between MPI_Igather and MPI_Wait; a persistent
// collective keeps the datatype it was made with. A datatype freed before
// the call is still an error.
func TestFreedTypeInFlight(t *testing.T) {
	forSizes(t, func(c *mpi.Comm) error {
		n, me := c.Size(), c.Rank()
		dup := func() (*mpi.Datatype, error) {
			d, err := mpi.Int32.Dup()
			if err == nil {
				err = d.Commit()
			}
			return d, err
		}
		// Igather with a datatype freed before Wait.
		d, err := dup()
		if err != nil {
			return err
		}
		send := mpi.AsBytes([]int32{int32(me), int32(me * 10)})
		recv := make([]int32, 2*n)
		r, err := c.Igather(send, 2, mpi.Int32, mpi.AsBytes(recv), 2, d, 0)
		if err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return fmt.Errorf("Igather whose datatype was freed after the call: %v", err)
		}
		if me == 0 {
			for i := range n {
				if recv[2*i] != int32(i) || recv[2*i+1] != int32(i*10) {
					return fmt.Errorf("Igather: got %v", recv)
				}
			}
		}
		// A persistent Allreduce keeps its datatype across Starts.
		d, err = dup()
		if err != nil {
			return err
		}
		in, out := []int32{int32(me + 1)}, []int32{0}
		p, err := c.AllreduceInit(mpi.AsBytes(in), mpi.AsBytes(out), 1, d, mpi.OpSum, nil)
		if err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		for round := range 2 {
			if err := p.Start(); err != nil {
				return err
			}
			if _, err := p.Wait(); err != nil {
				return fmt.Errorf("persistent Allreduce round %d after its datatype was freed: %v", round, err)
			}
			if want := int32(n * (n + 1) / 2); out[0] != want {
				return fmt.Errorf("persistent Allreduce round %d: %d, want %d", round, out[0], want)
			}
		}
		if err := p.Free(); err != nil {
			return err
		}
		// Freed before the call: an error, on every rank.
		d, err = dup()
		if err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		r, err = c.Ibcast(mpi.AsBytes(in), 1, d, 0)
		if err == nil {
			_, err = r.Wait()
		}
		if !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("Ibcast of a datatype freed before the call: %v, want ErrType", err)
		}
		return c.Barrier()
	})
}

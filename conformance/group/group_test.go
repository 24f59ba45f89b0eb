package group_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Set operations, ranges and translation of groups (MPICH group/gtranks,
// groupcreate, grouptest).
func TestGroupOps(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		w := c.Group()
		if w.Size() != 4 || w.Rank() != c.Rank() {
			return fmt.Errorf("world group: size %d rank %d", w.Size(), w.Rank())
		}
		even, err := w.Incl([]int{0, 2})
		if err != nil {
			return err
		}
		odd, err := w.Excl([]int{0, 2})
		if err != nil {
			return err
		}
		u, err := even.Union(odd)
		if err != nil {
			return err
		}
		if mpi.CompareGroups(u, w) != mpi.Similar {
			return fmt.Errorf("even ∪ odd vs world: %d, want Similar", mpi.CompareGroups(u, w))
		}
		in, err := even.Intersection(odd)
		if err != nil || in.Size() != 0 {
			return fmt.Errorf("even ∩ odd: %v %v", in, err)
		}
		d, err := w.Difference(odd)
		if err != nil || mpi.CompareGroups(d, even) != mpi.Ident {
			return fmt.Errorf("world - odd: %v", err)
		}
		rg, err := w.RangeIncl([]mpi.Range{{3, 0, -2}})
		if err != nil || fmt.Sprint(rg.WorldRanks()) != "[3 1]" {
			return fmt.Errorf("RangeIncl(3..0 step -2): %v %v", rg.WorldRanks(), err)
		}
		tr, err := rg.TranslateRanks([]int{0, 1}, w)
		if err != nil || fmt.Sprint(tr) != "[3 1]" {
			return fmt.Errorf("TranslateRanks: %v %v", tr, err)
		}
		tr, err = w.TranslateRanks([]int{0, 1}, odd)
		if err != nil || tr[0] != mpi.Undefined || tr[1] != 0 {
			return fmt.Errorf("TranslateRanks to odd: %v %v", tr, err)
		}
		if (c.Rank()%2 == 0) != (even.Rank() != mpi.Undefined) {
			return fmt.Errorf("rank %d in even: %d", c.Rank(), even.Rank())
		}
		return nil
	})
}

// Invalid ranks in Incl are refused with ErrRank (or ErrGroup).
func TestGroupErrors(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if _, err := c.Group().Incl([]int{0, 5}); err == nil {
			return fmt.Errorf("Incl of rank 5 of 2 succeeded")
		}
		if _, err := c.Group().Incl([]int{1, 1}); err == nil {
			return fmt.Errorf("Incl of a repeated rank succeeded")
		}
		return nil
	})
}

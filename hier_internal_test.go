package mpi

import (
	"fmt"
	"testing"
)

// The hierarchy is built where it helps, and only there.
func TestHierarchyShape(t *testing.T) {
	tests := []struct {
		n, perNode  int
		hier        bool
		localSize   []int // by world rank
		leaderCount int
	}{
		{4, 0, false, nil, 0}, // one node
		{4, 1, false, nil, 0}, // one rank per node
		{4, 2, true, []int{2, 2, 2, 2}, 2},
		{5, 2, true, []int{2, 2, 2, 2, 1}, 3},
		{7, 3, true, []int{3, 3, 3, 3, 3, 3, 1}, 3},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d-%d", tc.n, tc.perNode), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RanksPerNode = tc.perNode
			err := RunConfig(tc.n, cfg, func(w *Comm) error {
				if err := Barrier(w); err != nil {
					return err
				}
				h, err := w.hierarchy()
				if err != nil {
					return err
				}
				if (h != nil) != tc.hier {
					return fmt.Errorf("rank %d: hierarchy %v, want %v", w.Rank(), h != nil, tc.hier)
				}
				if h == nil {
					return nil
				}
				if h.local.Size() != tc.localSize[w.Rank()] {
					return fmt.Errorf("rank %d: node of %d ranks, want %d", w.Rank(), h.local.Size(), tc.localSize[w.Rank()])
				}
				if (h.leaders != nil) != (h.local.Rank() == 0) {
					return fmt.Errorf("rank %d: leader communicator on a non-leader or missing", w.Rank())
				}
				if h.leaders != nil && h.leaders.Size() != tc.leaderCount {
					return fmt.Errorf("rank %d: %d leaders, want %d", w.Rank(), h.leaders.Size(), tc.leaderCount)
				}
				// Freeing the communicator frees the hierarchy's too.
				d, err := w.Dup()
				if err != nil {
					return err
				}
				if err := Barrier(d); err != nil {
					return err
				}
				dh, _ := d.hierarchy()
				if err := d.Free(); err != nil {
					return err
				}
				if !dh.local.freed.Load() {
					return fmt.Errorf("rank %d: the node communicator outlived its parent", w.Rank())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

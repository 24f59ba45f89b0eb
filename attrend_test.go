package mpi_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// TestSelfAttrsDeletedAtRankEnd: when a rank's function returns (its
// MPI_Finalize), the attributes of its Self communicator are deleted, the
// last set first, with their callbacks, while the rank can still
// communicate.
func TestSelfAttrsDeletedAtRankEnd(t *testing.T) {
	var mu sync.Mutex
	deleted := map[int][]string{}
	err := mpi.Run(2, func(world *mpi.Comm) error {
		rank := world.Rank()
		del := func(c *mpi.Comm, _ *mpi.Keyval, v any) error {
			if c != world.Self() {
				return fmt.Errorf("delete callback on %s, want Self", c.Name())
			}
			// MPI still works here: a collective on the world.
			if _, err := mpi.Allreduce(world, 1, mpi.Sum[int]()); err != nil {
				return err
			}
			mu.Lock()
			deleted[rank] = append(deleted[rank], v.(string))
			mu.Unlock()
			return nil
		}
		for _, name := range []string{"b", "a", "d", "c"} {
			k, err := mpi.CreateKeyval(nil, del)
			if err != nil {
				return err
			}
			if err := world.Self().SetAttr(k, name); err != nil {
				return err
			}
			if err := mpi.FreeKeyval(k); err != nil { // the attribute stays
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 2; r++ {
		if want := []string{"c", "d", "a", "b"}; !slices.Equal(deleted[r], want) {
			t.Errorf("rank %d deleted %q, want %q", r, deleted[r], want)
		}
	}
}

// TestFreedKeyvalDeletesItsAttributes: a freed key sets and reads no
// attribute, but still deletes those set before the free (MPI-4.1
// section 7.7.2), on communicators and datatypes.
func TestFreedKeyvalDeletesItsAttributes(t *testing.T) {
	err := mpi.Run(1, func(world *mpi.Comm) error {
		calls := 0
		k, err := mpi.CreateKeyval(nil, func(*mpi.Comm, *mpi.Keyval, any) error { calls++; return nil })
		if err != nil {
			return err
		}
		if err := world.SetAttr(k, 7); err != nil {
			return err
		}
		if err := mpi.FreeKeyval(k); err != nil {
			return err
		}
		if err := world.SetAttr(k, 8); !errors.Is(err, mpi.ErrKeyval) {
			return fmt.Errorf("SetAttr with a freed key: %v, want ErrKeyval", err)
		}
		if _, _, err := world.GetAttr(k); !errors.Is(err, mpi.ErrKeyval) {
			return fmt.Errorf("GetAttr with a freed key: %v, want ErrKeyval", err)
		}
		if err := world.DeleteAttr(k); err != nil || calls != 1 {
			return fmt.Errorf("DeleteAttr with a freed key: %v, %d callbacks, want nil and 1", err, calls)
		}
		if err := world.DeleteAttr(k); !errors.Is(err, mpi.ErrKeyval) {
			return fmt.Errorf("second DeleteAttr: %v, want ErrKeyval", err)
		}

		tcalls := 0
		tk, err := mpi.CreateTypeKeyval(nil, func(*mpi.Datatype, *mpi.TypeKeyval, any) error { tcalls++; return nil })
		if err != nil {
			return err
		}
		if err := mpi.Float64.SetAttr(tk, 1); err != nil {
			return err
		}
		if err := mpi.FreeTypeKeyval(tk); err != nil {
			return err
		}
		if err := mpi.Float64.SetAttr(tk, 2); !errors.Is(err, mpi.ErrKeyval) {
			return fmt.Errorf("Datatype.SetAttr with a freed key: %v, want ErrKeyval", err)
		}
		if err := mpi.Float64.DeleteAttr(tk); err != nil || tcalls != 1 {
			return fmt.Errorf("Datatype.DeleteAttr with a freed key: %v, %d callbacks, want nil and 1", err, tcalls)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

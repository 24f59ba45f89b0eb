package mpi_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/mpigo/mpi"
)

// membersOf returns the world ranks of c's members in rank order, learned
// by communicating on c.
func membersOf(world, c *mpi.Comm) ([]int, error) {
	return mpi.Allgather(c, world.Rank())
}

func TestSplitRandomColorsKeys(t *testing.T) {
	matrix(t, 6, func(world *mpi.Comm) error {
		for round := 0; round < 5; round++ {
			rng := rand.New(rand.NewSource(int64(round*100 + world.Rank())))
			color, key := rng.Intn(3), rng.Intn(4)-2
			if rng.Intn(5) == 0 {
				color = mpi.Undefined
			}
			all, err := mpi.Allgather(world, [2]int{color, key})
			if err != nil {
				return err
			}
			s, err := world.Split(color, key)
			if err != nil {
				return err
			}
			if color == mpi.Undefined {
				if s != nil {
					return check(world, false, "Undefined color got a communicator")
				}
				continue
			}
			var want []int
			for r, ck := range all {
				if ck[0] == color {
					want = append(want, r)
				}
			}
			sort.SliceStable(want, func(i, j int) bool { return all[want[i]][1] < all[want[j]][1] })
			got, err := membersOf(world, s)
			if err != nil {
				return err
			}
			if err := check(world, slices.Equal(got, want) && got[s.Rank()] == world.Rank(), "round %d color %d: members %v, want %v", round, color, got, want); err != nil {
				return err
			}
			if err := s.Free(); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestCreateAndCompare(t *testing.T) {
	matrix(t, 5, func(world *mpi.Comm) error {
		wg := world.Group()
		odd, _ := wg.Incl([]int{3, 1})
		c, err := world.Create(odd)
		if err != nil {
			return err
		}
		if world.Rank()%2 == 0 {
			return check(world, c == nil, "non-member got a communicator")
		}
		got, err := membersOf(world, c)
		if err != nil {
			return err
		}
		if err := check(world, slices.Equal(got, []int{3, 1}), "members %v", got); err != nil {
			return err
		}
		d, err := c.Dup()
		if err != nil {
			return err
		}
		c2, err := c.Split(0, -c.Rank()) // reversed
		if err != nil {
			return err
		}
		for _, tc := range []struct {
			a, b *mpi.Comm
			want int
		}{{c, c, mpi.Ident}, {c, d, mpi.Congruent}, {c, c2, mpi.Similar}, {c, world, mpi.Unequal}} {
			if got := mpi.CompareComms(tc.a, tc.b); got != tc.want {
				return check(world, false, "compare %s %s = %d, want %d", tc.a.Name(), tc.b.Name(), got, tc.want)
			}
		}
		for _, x := range []*mpi.Comm{c2, d, c} {
			if err := x.Free(); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestCreateGroupSubset: a subset creates a communicator while the other
// ranks exchange messages among themselves and never call CreateGroup.
func TestCreateGroupSubset(t *testing.T) {
	matrix(t, 5, func(world *mpi.Comm) error {
		in := []int{4, 0, 2}
		g, _ := world.Group().Incl(in)
		if g.Rank() == mpi.Undefined {
			// Ranks 1 and 3 ping-pong meanwhile.
			other := 4 - world.Rank()
			for i := 0; i < 20; i++ {
				v, _, err := mpi.Sendrecv[int, int](world, i, other, 5, other, 5)
				if err != nil || v != i {
					return check(world, false, "ping-pong %d: %d %v", i, v, err)
				}
			}
			return nil
		}
		c, err := world.CreateGroup(g, 11)
		if err != nil {
			return err
		}
		got, err := membersOf(world, c)
		if err != nil {
			return err
		}
		if err := check(world, slices.Equal(got, in), "members %v", got); err != nil {
			return err
		}
		return c.Free()
	})
}

func TestIdupDupWithInfoSplitTypeSelf(t *testing.T) {
	matrix(t, 4, func(world *mpi.Comm) error {
		info := mpi.NewInfo()
		info.Set("mpi_assert_no_any_tag", "true")
		if err := world.SetInfo(info); err != nil {
			return err
		}
		d, req, err := world.Idup()
		if err != nil {
			return err
		}
		// A collective on world may run while the Idup is in flight.
		s, err := mpi.Allreduce(world, 1, mpi.Sum[int]())
		if err != nil || s != 4 {
			return check(world, false, "allreduce during Idup: %d %v", s, err)
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if v, ok := d.Info().Get("mpi_assert_no_any_tag"); !ok || v != "true" {
			return check(world, false, "Idup lost the info")
		}
		if got, err := membersOf(world, d); err != nil || !slices.Equal(got, []int{0, 1, 2, 3}) {
			return check(world, false, "Idup members %v %v", got, err)
		}
		hints := mpi.NewInfo()
		hints.Set("a", "1")
		e, err := world.DupWithInfo(hints)
		if err != nil {
			return err
		}
		if keys := e.Info().Keys(); !slices.Equal(keys, []string{"a"}) {
			return check(world, false, "DupWithInfo keys %v", keys)
		}
		// All goroutine ranks share a node: one communicator, by key.
		sh, err := world.SplitType(mpi.SplitTypeShared, -world.Rank(), nil)
		if err != nil {
			return err
		}
		if got, err := membersOf(world, sh); err != nil || !slices.Equal(got, []int{3, 2, 1, 0}) {
			return check(world, false, "SplitType members %v %v", got, err)
		}
		none, err := world.SplitType(mpi.Undefined, 0, nil)
		if err != nil || none != nil {
			return check(world, false, "SplitType(Undefined) = %v, %v", none, err)
		}
		self := world.Self()
		if self != world.Self() || self.Size() != 1 || self.Rank() != 0 || world.World() != world {
			return check(world, false, "Self/World")
		}
		if v, err := mpi.Allreduce(self, 7, mpi.Sum[int]()); err != nil || v != 7 {
			return check(world, false, "allreduce on Self: %d %v", v, err)
		}
		if err := self.Free(); !errors.Is(err, mpi.ErrComm) {
			return check(world, false, "freeing Self: %v", err)
		}
		for _, c := range []*mpi.Comm{d, e, sh} {
			if err := c.Free(); err != nil {
				return err
			}
		}
		if err := d.Free(); !errors.Is(err, mpi.ErrComm) {
			return check(world, false, "double Free: %v", err)
		}
		return nil
	})
}

func TestAttributes(t *testing.T) {
	err := mpi.Run(3, func(world *mpi.Comm) error {
		var log []string
		record := func(what string) { log = append(log, what) }
		counter, _ := mpi.CreateKeyval(
			func(old *mpi.Comm, k *mpi.Keyval, v any) (any, bool, error) {
				record("copy counter")
				return v.(int) + 1, true, nil
			},
			func(c *mpi.Comm, k *mpi.Keyval, v any) error { record(fmt.Sprintf("delete counter %d", v)); return nil })
		dropped, _ := mpi.CreateKeyval(nil, func(c *mpi.Comm, k *mpi.Keyval, v any) error {
			record(fmt.Sprintf("delete dropped %v", v))
			return nil
		})
		same, _ := mpi.CreateKeyval(mpi.DupFn, nil)
		stubborn, _ := mpi.CreateKeyval(nil, func(*mpi.Comm, *mpi.Keyval, any) error { return errors.New("still in use") })

		c, err := world.Dup()
		if err != nil {
			return err
		}
		c.SetAttr(counter, 1)
		c.SetAttr(dropped, "x")
		c.SetAttr(same, []int{9})
		c.SetAttr(dropped, "y") // overwrite: deletes "x"
		d, err := c.Dup()
		if err != nil {
			return err
		}
		if v, ok, _ := d.GetAttr(counter); !ok || v != 2 {
			return check(world, false, "copied counter %v %v", v, ok)
		}
		if _, ok, _ := d.GetAttr(dropped); ok {
			return check(world, false, "a nil copy callback copied")
		}
		if v, ok, _ := d.GetAttr(same); !ok || v.([]int)[0] != 9 {
			return check(world, false, "DupFn did not copy")
		}
		if err := d.DeleteAttr(counter); err != nil {
			return err
		}
		if err := d.DeleteAttr(counter); !errors.Is(err, mpi.ErrKeyval) {
			return check(world, false, "deleting twice: %v", err)
		}
		if err := d.Free(); err != nil {
			return err
		}
		// Free deletes the last set first; a failing callback stops Free.
		c.SetAttr(stubborn, 0)
		if err := c.Free(); err == nil {
			return check(world, false, "Free with a failing delete callback succeeded")
		}
		c.DeleteAttr(dropped) // "delete dropped y"
		if err := mpi.FreeKeyval(stubborn); err != nil {
			return err
		}
		if err := c.SetAttr(stubborn, 1); !errors.Is(err, mpi.ErrKeyval) {
			return check(world, false, "SetAttr with a freed key: %v", err)
		}
		// The attribute set before FreeKeyval still has its callback.
		if err := c.Free(); err == nil {
			return check(world, false, "freed key lost its delete callback")
		}
		want := []string{"delete dropped x", "copy counter", "delete counter 2", "delete dropped y"}
		if !slices.Equal(log, want) {
			return check(world, false, "callbacks %q, want %q", log, want)
		}
		if v, ok, err := world.GetAttr(mpi.AttrTagUB); !ok || err != nil || v != mpi.TagUB {
			return check(world, false, "TagUB attribute %v %v %v", v, ok, err)
		}
		if err := world.SetAttr(mpi.AttrTagUB, 5); !errors.Is(err, mpi.ErrKeyval) {
			return check(world, false, "setting a predefined attribute: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInfo(t *testing.T) {
	in := mpi.NewInfo()
	for _, kv := range [][2]string{{"b", "1"}, {"a", "2"}, {"c", "3"}, {"b", "4"}} {
		if err := in.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if k := in.Keys(); !slices.Equal(k, []string{"b", "a", "c"}) {
		t.Fatalf("keys %v", k)
	}
	if v, ok := in.Get("b"); !ok || v != "4" {
		t.Fatalf("b = %q %v", v, ok)
	}
	d := in.Dup()
	if err := in.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if err := in.Delete("a"); !errors.Is(err, mpi.ErrArg) {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if k := d.Keys(); !slices.Equal(k, []string{"b", "a", "c"}) {
		t.Fatalf("dup keys %v", k)
	}
	var null *mpi.Info
	if _, ok := null.Get("x"); ok || null.Keys() != nil || null.Dup() != nil {
		t.Fatal("nil Info is not empty")
	}
	if err := null.Set("x", "y"); !errors.Is(err, mpi.ErrArg) {
		t.Fatalf("Set on nil Info: %v", err)
	}
	if err := in.Set("", "y"); !errors.Is(err, mpi.ErrArg) {
		t.Fatalf("empty key: %v", err)
	}
}

// Callbacks may use the attributes of the communicator they are called on.
func TestAttributeCallbackReentry(t *testing.T) {
	err := mpi.Run(1, func(world *mpi.Comm) error {
		other, _ := mpi.CreateKeyval(nil, nil)
		k, _ := mpi.CreateKeyval(mpi.DupFn, func(c *mpi.Comm, _ *mpi.Keyval, v any) error {
			_, ok, err := c.GetAttr(other)
			if err != nil || !ok {
				return fmt.Errorf("other attribute: %v %v", ok, err)
			}
			return c.DeleteAttr(other)
		})
		c, _ := world.Dup()
		c.SetAttr(other, 1)
		c.SetAttr(k, 2)
		if err := c.Free(); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// With goroutine ranks grouped into pretend nodes, SplitType follows the
// nodes, and communicators from CreateGroup and intercommunicators work
// with the node-aware collectives underneath.
func TestSplitTypeNodesAndHierarchy(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.RanksPerNode = 2
	err := mpi.RunConfig(6, cfg, func(world *mpi.Comm) error {
		sh, err := world.SplitType(mpi.SplitTypeShared, 0, nil)
		if err != nil {
			return err
		}
		node := world.Rank() / 2 * 2
		if got, err := membersOf(world, sh); err != nil || !slices.Equal(got, []int{node, node + 1}) {
			return check(world, false, "SplitType on pretend nodes: %v %v", got, err)
		}
		if err := sh.Free(); err != nil {
			return err
		}
		g, _ := world.Group().Incl([]int{5, 0, 3, 2})
		if g.Rank() != mpi.Undefined {
			c, err := world.CreateGroup(g, 1)
			if err != nil {
				return err
			}
			for i := 0; i < 3; i++ {
				s, err := mpi.AllreduceSlice(c, []float64{float64(world.Rank()), 1}, mpi.Sum[float64]())
				if err != nil || s[0] != 10 || s[1] != 4 {
					return check(world, false, "hierarchical allreduce on a CreateGroup communicator: %v %v", s, err)
				}
				if err := c.Barrier(); err != nil {
					return err
				}
			}
			if err := c.Free(); err != nil {
				return err
			}
		}
		s, err := makeInter(world, 3, false)
		if err != nil {
			return err
		}
		if err := interColls(s); err != nil {
			return err
		}
		return s.free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SplitType on an intercommunicator (MPI-4.1) joins each group's ranks on
// a node with the other group's ranks on that node. With pretend nodes
// {0,1} {2,3} {4,5} and groups {0,1,2} and {3,4,5}, only node {2,3} has
// ranks of both groups: ranks 2 and 3 get an intercommunicator of one
// rank each side, the others nil (mpi4py's test_comm_inter).
func TestSplitTypeIntercomm(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.RanksPerNode = 2
	err := mpi.RunConfig(6, cfg, func(world *mpi.Comm) error {
		r := world.Rank()
		half, err := world.Split(r/3, r)
		if err != nil {
			return err
		}
		ic, err := mpi.IntercommCreate(half, 0, world, 3-r/3*3, 5)
		if err != nil {
			return err
		}
		sh, err := ic.SplitType(mpi.SplitTypeShared, 0, nil)
		if err != nil {
			return err
		}
		if r != 2 && r != 3 {
			if sh != nil {
				return fmt.Errorf("rank %d: SplitType gave a communicator of %d+%d ranks, want nil", r, sh.Size(), sh.RemoteSize())
			}
		} else {
			if sh == nil || !sh.IsInter() || sh.Size() != 1 || sh.RemoteSize() != 1 {
				return fmt.Errorf("rank %d: SplitType gave %v, want an intercommunicator of 1+1 ranks", r, sh)
			}
			got, _, err := mpi.Sendrecv[int](sh, 10*r, 0, 4, 0, 4)
			if err != nil || got != 10*(5-r) {
				return fmt.Errorf("rank %d: exchange over the split intercommunicator: %d, %v", r, got, err)
			}
			if err := sh.Free(); err != nil {
				return err
			}
		}
		if none, err := ic.SplitType(mpi.Undefined, 0, nil); none != nil || err != nil {
			return fmt.Errorf("rank %d: SplitType(Undefined) on an intercommunicator = %v, %v", r, none, err)
		}
		if err := ic.Free(); err != nil {
			return err
		}
		return half.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

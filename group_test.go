package mpi_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/mpigo/mpi"
)

// Serial references for the group operations, on lists of world ranks.
func refUnion(a, b []int) []int {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func refIntersection(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func refDifference(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// withGroups runs f on rank 0 of a world of n goroutine ranks.
func withGroups(t *testing.T, n int, f func(world *mpi.Comm) error) {
	t.Helper()
	err := mpi.Run(n, func(world *mpi.Comm) error {
		if world.Rank() != 0 {
			return nil
		}
		return f(world)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGroupSetOpsRandom(t *testing.T) {
	const n = 9
	withGroups(t, n, func(world *mpi.Comm) error {
		wg := world.Group()
		rng := rand.New(rand.NewSource(7))
		sub := func() ([]int, *mpi.Group) {
			ranks := rng.Perm(n)[:rng.Intn(n+1)]
			g, err := wg.Incl(ranks)
			if err != nil {
				t.Fatal(err)
			}
			return ranks, g
		}
		for i := 0; i < 500; i++ {
			ra, a := sub()
			rb, b := sub()
			for _, tc := range []struct {
				name string
				op   func(*mpi.Group) (*mpi.Group, error)
				want []int
			}{
				{"union", a.Union, refUnion(ra, rb)},
				{"intersection", a.Intersection, refIntersection(ra, rb)},
				{"difference", a.Difference, refDifference(ra, rb)},
			} {
				g, err := tc.op(b)
				if err != nil {
					return err
				}
				if got := g.WorldRanks(); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
					return fmt.Errorf("%v %s %v = %v, want %v", ra, tc.name, rb, got, tc.want)
				}
				if wantRank := slices.Index(tc.want, 0); (wantRank < 0 && g.Rank() != mpi.Undefined) || (wantRank >= 0 && g.Rank() != wantRank) {
					return fmt.Errorf("%s: Rank %d, want %d", tc.name, g.Rank(), wantRank)
				}
			}
			// Translate a's ranks into b.
			all := make([]int, len(ra))
			for i := range all {
				all[i] = i
			}
			tr, err := a.TranslateRanks(append(all, mpi.ProcNull), b)
			if err != nil {
				return err
			}
			for i, w := range ra {
				want := slices.Index(rb, w)
				if want < 0 {
					want = mpi.Undefined
				}
				if tr[i] != want {
					return fmt.Errorf("translate %v -> %v: rank %d gave %d, want %d", ra, rb, i, tr[i], want)
				}
			}
			if tr[len(ra)] != mpi.ProcNull {
				return fmt.Errorf("ProcNull translated to %d", tr[len(ra)])
			}
			// Compare against a reference.
			want := mpi.Unequal
			if slices.Equal(ra, rb) {
				want = mpi.Ident
			} else if len(ra) == len(rb) && len(refDifference(ra, rb)) == 0 {
				want = mpi.Similar
			}
			if got := mpi.CompareGroups(a, b); got != want {
				return fmt.Errorf("compare %v %v = %d, want %d", ra, rb, got, want)
			}
		}
		return nil
	})
}

func TestGroupRanges(t *testing.T) {
	const n = 10
	withGroups(t, n, func(world *mpi.Comm) error {
		wg := world.Group()
		for _, tc := range []struct {
			ranges []mpi.Range
			incl   []int
		}{
			{[]mpi.Range{{0, 9, 2}}, []int{0, 2, 4, 6, 8}},
			{[]mpi.Range{{9, 0, -3}}, []int{9, 6, 3, 0}},
			{[]mpi.Range{{1, 1, 5}, {7, 8, 1}}, []int{1, 7, 8}},
			{[]mpi.Range{{5, 2, -1}, {0, 1, 1}}, []int{5, 4, 3, 2, 0, 1}},
			{[]mpi.Range{{3, 1, 1}}, nil}, // empty triplet
			{nil, nil},
		} {
			g, err := wg.RangeIncl(tc.ranges)
			if err != nil {
				return fmt.Errorf("RangeIncl %v: %w", tc.ranges, err)
			}
			if got := g.WorldRanks(); !slices.Equal(got, tc.incl) {
				return fmt.Errorf("RangeIncl %v = %v, want %v", tc.ranges, got, tc.incl)
			}
			e, err := wg.RangeExcl(tc.ranges)
			if err != nil {
				return fmt.Errorf("RangeExcl %v: %w", tc.ranges, err)
			}
			var want []int
			for r := 0; r < n; r++ {
				if !slices.Contains(tc.incl, r) {
					want = append(want, r)
				}
			}
			if got := e.WorldRanks(); !slices.Equal(got, want) {
				return fmt.Errorf("RangeExcl %v = %v, want %v", tc.ranges, got, want)
			}
		}
		for _, tc := range []struct {
			ranges []mpi.Range
			class  error
		}{
			{[]mpi.Range{{0, 10, 1}}, mpi.ErrRank},
			{[]mpi.Range{{-1, 3, 1}}, mpi.ErrRank},
			{[]mpi.Range{{0, 3, 0}}, mpi.ErrArg},
			{[]mpi.Range{{0, 3, 1}, {3, 5, 1}}, mpi.ErrArg}, // 3 twice
		} {
			if _, err := wg.RangeIncl(tc.ranges); !errors.Is(err, tc.class) {
				return fmt.Errorf("RangeIncl %v: %v, want %v", tc.ranges, err, tc.class)
			}
			if _, err := wg.RangeExcl(tc.ranges); !errors.Is(err, tc.class) {
				return fmt.Errorf("RangeExcl %v: %v, want %v", tc.ranges, err, tc.class)
			}
		}
		return nil
	})
}

func TestGroupErrorsAndEmpty(t *testing.T) {
	withGroups(t, 4, func(world *mpi.Comm) error {
		wg := world.Group()
		if wg.Size() != 4 || wg.Rank() != 0 {
			return fmt.Errorf("world group size %d rank %d", wg.Size(), wg.Rank())
		}
		for _, tc := range []struct {
			name  string
			err   error
			class error
		}{
			{"incl out of range", second(wg.Incl([]int{4})), mpi.ErrRank},
			{"incl duplicate", second(wg.Incl([]int{1, 1})), mpi.ErrArg},
			{"excl negative", second(wg.Excl([]int{-1})), mpi.ErrRank},
			{"translate out of range", second(wg.TranslateRanks([]int{7}, wg)), mpi.ErrRank},
			{"union nil", second(wg.Union(nil)), mpi.ErrGroup},
		} {
			if !errors.Is(tc.err, tc.class) {
				return fmt.Errorf("%s: %v, want %v", tc.name, tc.err, tc.class)
			}
		}
		e, _ := wg.Incl(nil)
		if mpi.CompareGroups(e, mpi.GroupEmpty) != mpi.Ident || e.Rank() != mpi.Undefined || mpi.GroupEmpty.Size() != 0 {
			return fmt.Errorf("empty group")
		}
		if u, _ := mpi.GroupEmpty.Union(wg); mpi.CompareGroups(u, wg) != mpi.Ident || u.Rank() != 0 {
			return fmt.Errorf("GroupEmpty ∪ world is not world")
		}
		rev, _ := wg.Incl([]int{3, 2, 1, 0})
		if wg.Compare(rev) != mpi.Similar || rev.Rank() != 3 {
			return fmt.Errorf("reversed group: compare %d rank %d", wg.Compare(rev), rev.Rank())
		}
		if err := rev.Free(); err != nil {
			return err
		}
		if _, err := rev.Union(wg); !errors.Is(err, mpi.ErrGroup) {
			return fmt.Errorf("freed group: %v", err)
		}
		return mpi.GroupEmpty.Free()
	})
}

func second[T any](_ T, err error) error { return err }

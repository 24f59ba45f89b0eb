package mpi_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// Conformance tests for collectives and communicators, modelled on the
// MPICH test suite's coll and comm directories.

var collSizes = []int{1, 2, 3, 4, 5, 7, 8}

func forSizes(t *testing.T, f func(world *mpi.Comm) error) {
	for _, n := range collSizes {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) { matrix(t, n, f) })
	}
}

func TestBarrierBcast(t *testing.T) {
	forSizes(t, func(world *mpi.Comm) error {
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		for root := 0; root < world.Size(); root++ {
			v := []int{-1}
			s := ""
			m := map[string][]int(nil)
			if world.Rank() == root {
				v = []int{root, 2, 3}
				s = strings.Repeat("s", 30_000+root)
				m = map[string][]int{"root": {root}}
			}
			gv, err := mpi.Bcast(world, v, root)
			if err != nil {
				return err
			}
			gs, err := mpi.Bcast(world, s, root)
			if err != nil {
				return err
			}
			gm, err := mpi.Bcast(world, m, root)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(gv, []int{root, 2, 3}) || len(gs) != 30_000+root || gm["root"][0] != root {
				return fmt.Errorf("root %d: got %v, %d bytes, %v", root, gv, len(gs), gm)
			}
		}
		return nil
	})
}

func TestReduceAllreduce(t *testing.T) {
	forSizes(t, func(world *mpi.Comm) error {
		n, me := world.Size(), world.Rank()
		sum, err := mpi.Allreduce(world, me+1, mpi.Sum[int]())
		if err != nil || sum != n*(n+1)/2 {
			return fmt.Errorf("Allreduce sum: %d %v", sum, err)
		}
		mx, err := mpi.Allreduce(world, float64(me), mpi.Max[float64]())
		if err != nil || mx != float64(n-1) {
			return fmt.Errorf("Allreduce max: %v %v", mx, err)
		}
		all, err := mpi.Allreduce(world, me != 0 || n == 1, mpi.Land[bool]())
		if err != nil || all != (n == 1) {
			return fmt.Errorf("Allreduce land: %v %v", all, err)
		}
		bits, err := mpi.Allreduce(world, uint64(1)<<me, mpi.Bor[uint64]())
		if err != nil || bits != 1<<n-1 {
			return fmt.Errorf("Allreduce bor: %b %v", bits, err)
		}
		for root := 0; root < n; root++ {
			p, err := mpi.Reduce(world, int64(me+2), mpi.Prod[int64](), root)
			if err != nil {
				return err
			}
			want := int64(1)
			for r := 0; r < n; r++ {
				want *= int64(r + 2)
			}
			if me == root && p != want {
				return fmt.Errorf("Reduce prod at %d: %d want %d", root, p, want)
			}
		}
		// Elementwise over slices, with the zero-allocation Into form.
		v := []float64{float64(me), 1, -float64(me)}
		out := make([]float64, 3)
		if err := mpi.AllreduceSliceInto(world, v, out, mpi.Sum[float64]()); err != nil {
			return err
		}
		tri := float64(n * (n - 1) / 2)
		if !reflect.DeepEqual(out, []float64{tri, float64(n), -tri}) {
			return fmt.Errorf("AllreduceSlice: %v", out)
		}
		mins, err := mpi.ReduceSlice(world, []int32{int32(me), int32(-me)}, mpi.Min[int32](), n-1)
		if err != nil {
			return err
		}
		if me == n-1 && !reflect.DeepEqual(mins, []int32{0, int32(1 - n)}) {
			return fmt.Errorf("ReduceSlice min: %v", mins)
		}
		return nil
	})
}

// Non-commutative user ops are applied in rank order, and results may grow
// (string concatenation, MPI.NET's showcase); closures may carry state.
func TestUserOps(t *testing.T) {
	forSizes(t, func(world *mpi.Comm) error {
		n, me := world.Size(), world.Rank()
		want := ""
		for r := 0; r < n; r++ {
			want += fmt.Sprint(r, ";")
		}
		calls := 0
		concat := mpi.NewOp(func(a, b string) string { calls++; return a + b }, false)
		s, err := mpi.Allreduce(world, fmt.Sprint(me, ";"), concat)
		if err != nil || s != want {
			return fmt.Errorf("Allreduce concat: %q %v", s, err)
		}
		r, err := mpi.Reduce(world, fmt.Sprint(me, ";"), concat, n/2)
		if err != nil || (me == n/2 && r != want) {
			return fmt.Errorf("Reduce concat: %q %v", r, err)
		}
		// Which rank applies the operation is the algorithm's choice
		// (goroutine ranks combine in memory, on the last rank to come),
		// but some rank must have called it.
		if total, err := mpi.Allreduce(world, calls, mpi.Sum[int]()); err != nil || (n > 1 && total == 0) {
			return fmt.Errorf("the closure was never called (%d calls, %v)", total, err)
		}
		// Non-commutative, non-associative-looking op on structs: 2x2 matrix product.
		type mat [4]int
		mul := mpi.NewOp(func(a, b mat) mat {
			return mat{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
		}, false)
		mine := mat{1, me, 0, 1} // upper-triangular: product adds the off-diagonals, order matters for general ones
		if me%2 == 1 {
			mine = mat{0, 1, 1, 0}
		}
		got, err := mpi.Allreduce(world, mine, mul)
		if err != nil {
			return err
		}
		wantM := mat{1, 0, 0, 1}
		for rr := 0; rr < n; rr++ {
			m := mat{1, rr, 0, 1}
			if rr%2 == 1 {
				m = mat{0, 1, 1, 0}
			}
			a, b := wantM, m
			wantM = mat{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
		}
		if got != wantM {
			return fmt.Errorf("matrix product %v, want %v", got, wantM)
		}
		return nil
	})
}

func TestScanExscan(t *testing.T) {
	forSizes(t, func(world *mpi.Comm) error {
		me := world.Rank()
		s, err := mpi.Scan(world, me+1, mpi.Sum[int]())
		if err != nil || s != (me+1)*(me+2)/2 {
			return fmt.Errorf("Scan: %d %v", s, err)
		}
		cat, err := mpi.Scan(world, fmt.Sprint(me), mpi.NewOp(func(a, b string) string { return a + b }, false))
		want := ""
		for r := 0; r <= me; r++ {
			want += fmt.Sprint(r)
		}
		if err != nil || cat != want {
			return fmt.Errorf("Scan concat: %q want %q (%v)", cat, want, err)
		}
		e, err := mpi.Exscan(world, me+1, mpi.Sum[int]())
		if err != nil || (me > 0 && e != me*(me+1)/2) || (me == 0 && e != 0) {
			return fmt.Errorf("Exscan: %d %v", e, err)
		}
		return nil
	})
}

func TestGatherScatterAlltoall(t *testing.T) {
	forSizes(t, func(world *mpi.Comm) error {
		n, me := world.Size(), world.Rank()
		for root := 0; root < n; root++ {
			// Values of different sizes per rank (Gatherv).
			g, err := mpi.Gather(world, strings.Repeat("x", me), root)
			if err != nil {
				return err
			}
			if me == root {
				for r, s := range g {
					if len(s) != r {
						return fmt.Errorf("Gather root %d: rank %d sent %d bytes", root, r, len(s))
					}
				}
			} else if g != nil {
				return fmt.Errorf("Gather: non-root got %v", g)
			}
			var vs []point
			if me == root {
				for r := 0; r < n; r++ {
					vs = append(vs, point{X: float64(r), ID: int32(root)})
				}
			}
			p, err := mpi.Scatter(world, vs, root)
			if err != nil || p.X != float64(me) || p.ID != int32(root) {
				return fmt.Errorf("Scatter root %d: %+v %v", root, p, err)
			}
		}
		all, err := mpi.Allgather(world, []int{me, me * me})
		if err != nil {
			return err
		}
		for r, v := range all {
			if !reflect.DeepEqual(v, []int{r, r * r}) {
				return fmt.Errorf("Allgather[%d] = %v", r, v)
			}
		}
		out := make([]string, n)
		for j := range out {
			out[j] = fmt.Sprintf("%d->%d", me, j)
		}
		in, err := mpi.Alltoall(world, out)
		if err != nil {
			return err
		}
		for j, s := range in {
			if s != fmt.Sprintf("%d->%d", j, me) {
				return fmt.Errorf("Alltoall[%d] = %q", j, s)
			}
		}
		return nil
	})
}

// Dup and Split give communicators whose traffic never mixes with the
// parent's, and Split orders ranks by key.
func TestDupSplit(t *testing.T) {
	forSizes(t, func(world *mpi.Comm) error {
		n, me := world.Size(), world.Rank()
		dup, err := world.Dup()
		if err != nil {
			return err
		}
		if dup.Size() != n || dup.Rank() != me {
			return fmt.Errorf("Dup: rank %d size %d", dup.Rank(), dup.Size())
		}
		// A message on dup is not received by an AnyTag receive on world.
		peer := (me + 1) % n
		r1, err := mpi.Isend(dup, "on dup", peer, 1)
		if err != nil {
			return err
		}
		r2, err := mpi.Isend(world, "on world", peer, 1)
		if err != nil {
			return err
		}
		defer mpi.WaitAll(r1, r2)
		from := (me + n - 1) % n
		w, _, err := mpi.Recv[string](world, from, mpi.AnyTag)
		if err != nil || w != "on world" {
			return fmt.Errorf("world received %q %v", w, err)
		}
		d, _, err := mpi.Recv[string](dup, from, mpi.AnyTag)
		if err != nil || d != "on dup" {
			return fmt.Errorf("dup received %q %v", d, err)
		}
		// Split into evens and odds, reversed order by key.
		color := me % 2
		if me == n-1 && n > 2 {
			color = mpi.Undefined
		}
		sub, err := world.Split(color, -me)
		if err != nil {
			return err
		}
		if color == mpi.Undefined {
			if sub != nil {
				return fmt.Errorf("Undefined color got a communicator")
			}
		} else {
			var members []int
			for r := 0; r < n; r++ {
				if r%2 == color && !(r == n-1 && n > 2) {
					members = append(members, r)
				}
			}
			sort.Sort(sort.Reverse(sort.IntSlice(members)))
			if sub.Size() != len(members) || members[sub.Rank()] != me {
				return fmt.Errorf("Split: rank %d of %d, members %v", sub.Rank(), sub.Size(), members)
			}
			got, err := mpi.Allgather(sub, me)
			if err != nil || !reflect.DeepEqual(got, members) {
				return fmt.Errorf("Allgather on split: %v %v", got, err)
			}
			if err := sub.Free(); err != nil {
				return err
			}
			if err := mpi.Barrier(sub); err == nil {
				return fmt.Errorf("Barrier on a freed communicator succeeded")
			}
		}
		return dup.Free()
	})
}

// Collectives on different communicators run concurrently from different
// goroutines of every rank, and point-to-point traffic with AnyTag on the
// same communicator never sees collective messages.
func TestConcurrentCollectives(t *testing.T) {
	matrix(t, 4, func(world *mpi.Comm) error {
		const k = 4
		comms := make([]*mpi.Comm, k)
		for i := range comms {
			var err error
			if comms[i], err = world.Dup(); err != nil {
				return err
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, k+1)
		for i, c := range comms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for it := 0; it < 50; it++ {
					s, err := mpi.Allreduce(c, i+it, mpi.Sum[int]())
					if err == nil && s != 4*(i+it) {
						err = fmt.Errorf("comm %d: %d", i, s)
					}
					if err == nil && it%10 == 0 { // long vectors: Rabenseifner and friends
						v := make([]float64, 20_000)
						v[19_999] = float64(i)
						var got []float64
						if got, err = mpi.AllreduceSlice(c, v, mpi.Sum[float64]()); err == nil && got[19_999] != float64(4*i) {
							err = fmt.Errorf("comm %d: long allreduce %v", i, got[19_999])
						}
						if err == nil {
							err = mpi.BcastInto(c, v, it%4)
						}
					}
					if err != nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() { // p2p with wildcards on world meanwhile
			defer wg.Done()
			me, n := world.Rank(), world.Size()
			for it := 0; it < 50; it++ {
				r, err := mpi.Isend(world, it, (me+1)%n, it)
				if err != nil {
					errs[k] = err
					return
				}
				v, st, err := mpi.Recv[int](world, mpi.AnySource, mpi.AnyTag)
				if err == nil {
					_, err = r.Wait()
				}
				if err == nil && (v != it || st.Tag != it) {
					err = fmt.Errorf("p2p got %d tag %d, want %d", v, st.Tag, it)
				}
				if err != nil {
					errs[k] = err
					return
				}
			}
		}()
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// The Into forms of ReduceSlice, ScanSlice and ReduceScatterBlock give
// what the allocating forms give, for predefined operations (the paths
// that allocate nothing) and Go functions, in place and not, at every
// root; an out of the wrong length is ErrCount on the rank that passed it.
func TestReductionsInto(t *testing.T) {
	ops := []struct {
		name string
		op   mpi.Op[float64]
	}{
		{"sum", mpi.Sum[float64]()},
		{"max", mpi.Max[float64]()},
		{"closure", mpi.NewOp(func(a, b float64) float64 { return a*0.5 + b }, false)},
	}
	for _, n := range []int{1, 2, 3, 4} {
		for _, o := range ops {
			t.Run(fmt.Sprintf("%dranks/%s", n, o.name), func(t *testing.T) {
				err := mpi.Run(n, func(c *mpi.Comm) error {
					for _, l := range []int{n, 4 * n, 1024 * n} {
						v := make([]float64, l)
						for i := range v {
							v[i] = float64(c.Rank()*7 + i%13)
						}
						for root := range n {
							want, err := mpi.ReduceSlice(c, v, o.op, root)
							if err != nil {
								return err
							}
							var out []float64
							if c.Rank() == root {
								out = make([]float64, l)
							}
							if err := mpi.ReduceSliceInto(c, v, out, o.op, root); err != nil {
								return err
							}
							if c.Rank() == root && !slices.Equal(out, want) {
								return fmt.Errorf("ReduceSliceInto, %d elements, root %d: %v, want %v", l, root, out[:min(l, 8)], want[:min(l, 8)])
							}
						}
						want, err := mpi.ScanSlice(c, v, o.op)
						if err != nil {
							return err
						}
						in := slices.Clone(v) // in place
						if err := mpi.ScanSliceInto(c, in, in, o.op); err != nil {
							return err
						}
						if !slices.Equal(in, want) {
							return fmt.Errorf("ScanSliceInto, %d elements: %v, want %v", l, in[:min(l, 8)], want[:min(l, 8)])
						}
						if o.name == "closure" {
							continue // ReduceScatterBlock wants a commutative operation
						}
						blk, err := mpi.ReduceScatterBlock(c, v, o.op)
						if err != nil {
							return err
						}
						got := make([]float64, l/n)
						if err := mpi.ReduceScatterBlockInto(c, v, got, o.op); err != nil {
							return err
						}
						if !slices.Equal(got, blk) {
							return fmt.Errorf("ReduceScatterBlockInto, %d elements: %v, want %v", l, got[:min(len(got), 8)], blk[:min(len(blk), 8)])
						}
					}
					// A wrong out is refused, by the rank that passed it,
					// before anything is sent.
					v := make([]float64, 2*n)
					if err := mpi.ScanSliceInto(c, v, make([]float64, 1), mpi.Sum[float64]()); !errors.Is(err, mpi.ErrCount) {
						return fmt.Errorf("ScanSliceInto with a short out: %v, want ErrCount", err)
					}
					if err := mpi.ReduceScatterBlockInto(c, v, make([]float64, 3), mpi.Sum[float64]()); !errors.Is(err, mpi.ErrCount) {
						return fmt.Errorf("ReduceScatterBlockInto with a wrong out: %v, want ErrCount", err)
					}
					if c.Rank() == 0 {
						if err := mpi.ReduceSliceInto(c, v, nil, mpi.Sum[float64](), 0); !errors.Is(err, mpi.ErrCount) {
							return fmt.Errorf("ReduceSliceInto with no out at the root: %v, want ErrCount", err)
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

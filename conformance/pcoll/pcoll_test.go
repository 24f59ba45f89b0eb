// Package pcoll_test holds the conformance tests of the persistent
// collectives (MPI-4.0 section 6.13), modelled on the coll/p_* directory
// of MPICH's test suite: every Init form is started several times with
// new data each time and cross-checked against its plain form.
package pcoll_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// pcase is one collective: set fills the buffers for round i, plain runs
// the blocking call, init makes the persistent request over the same
// buffers, and out returns what to compare.
type pcase struct {
	name  string
	set   func(i int)
	plain func() error
	init  func() (*mpi.Request, error)
	out   func() []int32
}

// crossCheck runs each case: for every round, the plain call's result and
// the persistent request's (started again with the round's data) agree.
func crossCheck(c *mpi.Comm, cases []pcase) error {
	var errs conformance.Errs
	for _, pc := range cases {
		req, err := pc.init()
		if err != nil {
			errs.Add(fmt.Errorf("rank %d: %s: Init: %w", c.Rank(), pc.name, err))
			continue
		}
		for round := range 3 {
			pc.set(round)
			if err := pc.plain(); err != nil {
				errs.Add(fmt.Errorf("rank %d: %s: plain: %w", c.Rank(), pc.name, err))
				break
			}
			want := slices.Clone(pc.out())
			pc.set(round)
			if err := req.Start(); err != nil {
				errs.Add(fmt.Errorf("rank %d: %s: Start: %w", c.Rank(), pc.name, err))
				break
			}
			if _, err := req.Wait(); err != nil {
				errs.Add(fmt.Errorf("rank %d: %s: Wait: %w", c.Rank(), pc.name, err))
				break
			}
			errs.Addf(c, slices.Equal(want, pc.out()), "%s round %d: persistent %v, plain %v", pc.name, round, pc.out(), want)
		}
		// Waiting again on the inactive request gives the empty status.
		st, err := req.Wait()
		errs.Addf(c, err == nil && st == mpi.EmptyStatus(), "%s: Wait on the inactive request: %v %v", pc.name, st, err)
		errs.Addf(c, req.Free() == nil, "%s: Free", pc.name)
	}
	return errs.Err()
}

// fill sets b[j] to a value of rank r, round i and position j.
func fill(b []int32, r, i int) {
	for j := range b {
		b[j] = int32(1000*i + 100*r + j)
	}
}

func cases(c *mpi.Comm, k int) []pcase {
	p, r := c.Size(), c.Rank()
	i32 := mpi.Int32
	bs := mpi.AsBytes[int32]
	send, recv := make([]int32, k*p), make([]int32, k*p)
	set := func(i int) { fill(send, r, i); clear(recv) }
	counts, displs := make([]int, p), make([]int, p)
	off := 0
	for j := range p {
		counts[j], displs[j] = j%k+1, off
		off += k
	}
	// Alltoallv's counts: what r sends j is what j receives from r.
	sym := make([]int, p)
	types := make([]*mpi.Datatype, p)
	bdispls := make([]int, p)
	for j := range p {
		sym[j] = (r+j)%k + 1
		types[j], bdispls[j] = i32, 4*displs[j]
	}
	root := p - 1
	return []pcase{
		{"Barrier", set, c.Barrier, func() (*mpi.Request, error) { return c.BarrierInit(nil) }, func() []int32 { return nil }},
		{"Bcast", set, func() error { return c.Bcast(bs(send), k, i32, root) },
			func() (*mpi.Request, error) { return c.BcastInit(bs(send), k, i32, root, nil) }, func() []int32 { return send[:k] }},
		{"Gather", set, func() error { return c.Gather(bs(send), k, i32, bs(recv), k, i32, root) },
			func() (*mpi.Request, error) { return c.GatherInit(bs(send), k, i32, bs(recv), k, i32, root, nil) }, func() []int32 { return recv }},
		{"Gatherv", set, func() error { return c.Gatherv(bs(send), counts[r], i32, bs(recv), counts, displs, i32, 0) },
			func() (*mpi.Request, error) {
				return c.GathervInit(bs(send), counts[r], i32, bs(recv), counts, displs, i32, 0, nil)
			}, func() []int32 { return recv }},
		{"Scatter", set, func() error { return c.Scatter(bs(send), k, i32, bs(recv), k, i32, root) },
			func() (*mpi.Request, error) { return c.ScatterInit(bs(send), k, i32, bs(recv), k, i32, root, nil) }, func() []int32 { return recv }},
		{"Scatterv", set, func() error { return c.Scatterv(bs(send), counts, displs, i32, bs(recv), counts[r], i32, 0) },
			func() (*mpi.Request, error) {
				return c.ScattervInit(bs(send), counts, displs, i32, bs(recv), counts[r], i32, 0, nil)
			}, func() []int32 { return recv }},
		{"Allgather", set, func() error { return c.Allgather(bs(send), k, i32, bs(recv), k, i32) },
			func() (*mpi.Request, error) { return c.AllgatherInit(bs(send), k, i32, bs(recv), k, i32, nil) }, func() []int32 { return recv }},
		{"Allgatherv", set, func() error { return c.Allgatherv(bs(send), counts[r], i32, bs(recv), counts, displs, i32) },
			func() (*mpi.Request, error) {
				return c.AllgathervInit(bs(send), counts[r], i32, bs(recv), counts, displs, i32, nil)
			}, func() []int32 { return recv }},
		{"Alltoall", set, func() error { return c.Alltoall(bs(send), k, i32, bs(recv), k, i32) },
			func() (*mpi.Request, error) { return c.AlltoallInit(bs(send), k, i32, bs(recv), k, i32, nil) }, func() []int32 { return recv }},
		{"Alltoallv", set, func() error { return c.Alltoallv(bs(send), sym, displs, i32, bs(recv), sym, displs, i32) },
			func() (*mpi.Request, error) {
				return c.AlltoallvInit(bs(send), sym, displs, i32, bs(recv), sym, displs, i32, nil)
			}, func() []int32 { return recv }},
		{"Alltoallw", set, func() error { return c.Alltoallw(bs(send), sym, bdispls, types, bs(recv), sym, bdispls, types) },
			func() (*mpi.Request, error) {
				return c.AlltoallwInit(bs(send), sym, bdispls, types, bs(recv), sym, bdispls, types, nil)
			}, func() []int32 { return recv }},
		{"Reduce", set, func() error { return c.Reduce(bs(send), bs(recv), k, i32, mpi.OpSum, root) },
			func() (*mpi.Request, error) { return c.ReduceInit(bs(send), bs(recv), k, i32, mpi.OpSum, root, nil) }, func() []int32 { return recv }},
		{"Allreduce", set, func() error { return c.Allreduce(bs(send), bs(recv), k*p, i32, mpi.OpSum) },
			func() (*mpi.Request, error) { return c.AllreduceInit(bs(send), bs(recv), k*p, i32, mpi.OpSum, nil) }, func() []int32 { return recv }},
		{"Allreduce/max-inplace", func(i int) { fill(recv, r, i) }, func() error { return c.Allreduce(mpi.InPlace, bs(recv), k, i32, mpi.OpMax) },
			func() (*mpi.Request, error) { return c.AllreduceInit(mpi.InPlace, bs(recv), k, i32, mpi.OpMax, nil) }, func() []int32 { return recv }},
		{"ReduceScatterBlock", set, func() error { return c.ReduceScatterBlock(bs(send), bs(recv), k, i32, mpi.OpSum) },
			func() (*mpi.Request, error) {
				return c.ReduceScatterBlockInit(bs(send), bs(recv), k, i32, mpi.OpSum, nil)
			}, func() []int32 { return recv }},
		{"ReduceScatter", set, func() error { return c.ReduceScatter(bs(send), bs(recv), counts, i32, mpi.OpSum) },
			func() (*mpi.Request, error) {
				return c.ReduceScatterInit(bs(send), bs(recv), counts, i32, mpi.OpSum, nil)
			}, func() []int32 { return recv }},
		{"Scan", set, func() error { return c.Scan(bs(send), bs(recv), k, i32, mpi.OpSum) },
			func() (*mpi.Request, error) { return c.ScanInit(bs(send), bs(recv), k, i32, mpi.OpSum, nil) }, func() []int32 { return recv }},
		{"Exscan", set, func() error { return c.Exscan(bs(send), bs(recv), k, i32, mpi.OpSum) },
			func() (*mpi.Request, error) { return c.ExscanInit(bs(send), bs(recv), k, i32, mpi.OpSum, nil) }, func() []int32 { return recv[:k] }},
	}
}

// nbrCases are the neighbourhood collectives on a periodic ring (c must
// have the topology).
func nbrCases(c *mpi.Comm, k int) []pcase {
	r := c.Rank()
	i32 := mpi.Int32
	bs := mpi.AsBytes[int32]
	send, recv := make([]int32, 2*k), make([]int32, 2*k)
	set := func(i int) { fill(send, r, i); clear(recv) }
	counts, displs := []int{k, k}, []int{0, k}
	types := []*mpi.Datatype{i32, i32}
	bd := []int{0, 4 * k}
	return []pcase{
		{"NeighborAllgather", set, func() error { return c.NeighborAllgather(bs(send), k, i32, bs(recv), k, i32) },
			func() (*mpi.Request, error) { return c.NeighborAllgatherInit(bs(send), k, i32, bs(recv), k, i32, nil) }, func() []int32 { return recv }},
		{"NeighborAllgatherv", set, func() error { return c.NeighborAllgatherv(bs(send), k, i32, bs(recv), counts, displs, i32) },
			func() (*mpi.Request, error) {
				return c.NeighborAllgathervInit(bs(send), k, i32, bs(recv), counts, displs, i32, nil)
			}, func() []int32 { return recv }},
		{"NeighborAlltoall", set, func() error { return c.NeighborAlltoall(bs(send), k, i32, bs(recv), k, i32) },
			func() (*mpi.Request, error) { return c.NeighborAlltoallInit(bs(send), k, i32, bs(recv), k, i32, nil) }, func() []int32 { return recv }},
		{"NeighborAlltoallv", set, func() error { return c.NeighborAlltoallv(bs(send), counts, displs, i32, bs(recv), counts, displs, i32) },
			func() (*mpi.Request, error) {
				return c.NeighborAlltoallvInit(bs(send), counts, displs, i32, bs(recv), counts, displs, i32, nil)
			}, func() []int32 { return recv }},
		{"NeighborAlltoallw", set, func() error { return c.NeighborAlltoallw(bs(send), counts, bd, types, bs(recv), counts, bd, types) },
			func() (*mpi.Request, error) {
				return c.NeighborAlltoallwInit(bs(send), counts, bd, types, bs(recv), counts, bd, types, nil)
			}, func() []int32 { return recv }},
	}
}

// TestPersistentMatchesPlain: every persistent collective, started three
// times with new data, gives what its plain form gives (small counts, and
// for the reductions and Bcast a count large enough for the algorithms
// chosen for long vectors).
func TestPersistentMatchesPlain(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			conformance.Run(t, n, func(c *mpi.Comm) error {
				if err := crossCheck(c, cases(c, 3)); err != nil {
					return err
				}
				ring, err := c.CartCreate([]int{c.Size()}, []bool{true}, false)
				if err != nil {
					return err
				}
				defer ring.Free()
				return crossCheck(ring, nbrCases(ring, 2))
			})
		})
	}
}

// TestPersistentLarge: Allreduce and Bcast of 256 KiB, where the
// algorithms for long vectors (and the rendezvous protocol) are chosen.
func TestPersistentLarge(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		const k = 1 << 16
		all := cases(c, k/c.Size())
		var pick []pcase
		for _, pc := range all {
			if pc.name == "Allreduce" || pc.name == "Bcast" || pc.name == "Reduce" {
				pick = append(pick, pc)
			}
		}
		return crossCheck(c, pick)
	})
}

// TestPersistentErrors: starting an active request, freeing it while
// active, and Init orders that differ across ranks are errors, not hangs.
func TestPersistentErrors(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		var errs conformance.Errs
		in, out := []float64{1}, []float64{0}
		req, err := mpi.AllreduceInit(c, in, out, mpi.Sum[float64]())
		if err != nil {
			return err
		}
		if err := req.Start(); err != nil {
			return err
		}
		err = req.Start()
		errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Start of an active request: %v", err)
		err = req.Free()
		errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Free of an active request: %v", err)
		_, err = req.Wait()
		errs.Addf(c, err == nil && out[0] == float64(c.Size()), "Wait: %v, out %v", err, out)
		errs.Addf(c, req.Free() == nil, "Free of the inactive request")
		_, err = req.Wait()
		errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Wait after Free: %v", err)

		// Init orders differ: rank 0 makes a Bcast then an Allreduce,
		// the others the other way round. Each Init fails on every rank.
		first, second := "bcast", "allreduce"
		if c.Rank() != 0 {
			first, second = second, first
		}
		for _, which := range []string{first, second} {
			var err error
			if which == "bcast" {
				_, err = mpi.BcastInit(c, in, 0)
			} else {
				_, err = mpi.AllreduceInit(c, in, out, mpi.Sum[float64]())
			}
			errs.Addf(c, errors.Is(err, mpi.ErrOther), "mismatched %s Init: %v", which, err)
		}
		// A root out of range on one rank fails Init on every rank.
		root := 0
		if c.Rank() == 1 {
			root = 7
		}
		_, err = c.BcastInit(mpi.AsBytes(in), 1, mpi.Float64, root, nil)
		if c.Rank() == 1 {
			errs.Addf(c, errors.Is(err, mpi.ErrRoot), "bad root: %v", err)
		} else {
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "another rank's bad root: %v", err)
		}
		// The communicator still works.
		s, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
		errs.Addf(c, err == nil && s == c.Size(), "Allreduce after the errors: %v %v", s, err)
		return errs.Err()
	})
}

// TestPersistentStartOrder: MPI lets ranks start persistent collectives in
// different orders (only their Init is ordered); each request keeps its
// own tags, so both complete with the right data. StartAll starts both.
func TestPersistentStartOrder(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		a, asum := []int64{int64(c.Rank())}, []int64{0}
		b := []int64{0}
		ra, err := mpi.AllreduceInit(c, a, asum, mpi.Sum[int64]())
		if err != nil {
			return err
		}
		rb, err := mpi.BcastInit(c, b, 2)
		if err != nil {
			return err
		}
		for round := range 4 {
			if c.Rank() == 2 {
				b[0] = int64(100 + round)
			}
			if c.Rank()%2 == 0 {
				err = mpi.StartAll(rb, ra)
			} else {
				err = mpi.StartAll(ra, rb)
			}
			if err != nil {
				return err
			}
			// Waited for in crossed orders too, one Wait at a time: a
			// Wait runs its own request's Start on the waiting goroutine
			// when it comes first, and the other Start's goroutine runs
			// that one meanwhile.
			first, second := ra, rb
			if c.Rank()%2 == 1 {
				first, second = rb, ra
			}
			if round%2 == 0 {
				err = mpi.WaitAll(first, second)
			} else if _, err = first.Wait(); err == nil {
				_, err = second.Wait()
			}
			if err != nil {
				return err
			}
			n := int64(c.Size())
			if asum[0] != n*(n-1)/2 || b[0] != int64(100+round) {
				return fmt.Errorf("rank %d round %d: sum %d, bcast %d", c.Rank(), round, asum[0], b[0])
			}
		}
		return errors.Join(ra.Free(), rb.Free())
	})
}

// TestTypedPersistent: the typed Init forms against their Into forms.
func TestTypedPersistent(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		p, r := c.Size(), c.Rank()
		v := make([]float64, 4)
		out, want := make([]float64, 4), make([]float64, 4)
		gv, gout := []int32{0, 0}, make([]int32, 2*p)
		reqs := map[string]*mpi.Request{}
		var err error
		mk := func(name string, f func() (*mpi.Request, error)) {
			if err != nil {
				return
			}
			reqs[name], err = f()
		}
		mk("Allreduce", func() (*mpi.Request, error) { return mpi.AllreduceInit(c, v, out, mpi.Sum[float64]()) })
		mk("Reduce", func() (*mpi.Request, error) { return mpi.ReduceInit(c, v, out, mpi.Max[float64](), 1) })
		mk("Scan", func() (*mpi.Request, error) { return mpi.ScanInit(c, v, out, mpi.Sum[float64]()) })
		mk("Bcast", func() (*mpi.Request, error) { return mpi.BcastInit(c, v, 2) })
		mk("Allgather", func() (*mpi.Request, error) { return mpi.AllgatherInit(c, gv, gout) })
		mk("Alltoall", func() (*mpi.Request, error) { return mpi.AlltoallInit(c, gout, gout[:0:0]) })
		mk("Barrier", func() (*mpi.Request, error) { return mpi.BarrierInit(c) })
		if err != nil {
			return err
		}
		set := func(i int) {
			for j := range v {
				v[j] = float64(10*i + r + j)
			}
		}
		for i := range 2 {
			set(i)
			if err := mpi.AllreduceSliceInto(c, v, want, mpi.Sum[float64]()); err != nil {
				return err
			}
			if err := run(reqs["Allreduce"]); err != nil || !slices.Equal(out, want) {
				return fmt.Errorf("AllreduceInit: %v %v, want %v", err, out, want)
			}
			if err := mpi.ScanSliceInto(c, v, want, mpi.Sum[float64]()); err != nil {
				return err
			}
			if err := run(reqs["Scan"]); err != nil || !slices.Equal(out, want) {
				return fmt.Errorf("ScanInit: %v %v, want %v", err, out, want)
			}
			clear(want)
			clear(out)
			if err := mpi.ReduceSliceInto(c, v, want, mpi.Max[float64](), 1); err != nil {
				return err
			}
			if err := run(reqs["Reduce"]); err != nil || !slices.Equal(out, want) {
				return fmt.Errorf("ReduceInit: %v %v, want %v", err, out, want)
			}
			if err := run(reqs["Bcast"]); err != nil || v[0] != float64(10*i+2) {
				return fmt.Errorf("BcastInit: %v %v", err, v)
			}
			gv[0], gv[1] = int32(r), int32(i)
			if err := run(reqs["Allgather"]); err != nil || gout[2*(p-1)] != int32(p-1) || gout[1] != int32(i) {
				return fmt.Errorf("AllgatherInit: %v %v", err, gout)
			}
			if err := run(reqs["Barrier"]); err != nil {
				return err
			}
		}
		// AlltoallInto with a receive slice of the wrong length fails at
		// Start on every rank alike, and the request can be freed.
		err = run(reqs["Alltoall"])
		if err == nil {
			return fmt.Errorf("AlltoallInit with an empty receive slice: no error")
		}
		for _, rq := range reqs {
			if err := rq.Free(); err != nil {
				return err
			}
		}
		return nil
	})
}

func run(r *mpi.Request) error {
	if err := r.Start(); err != nil {
		return err
	}
	_, err := r.Wait()
	return err
}

// TestPersistentTestLoop: a Start that no Wait runs (the rank polls with
// Test, as a program overlapping work does) is run by the request's own
// goroutine, and completes with the right data.
func TestPersistentTestLoop(t *testing.T) {
	conformance.Run(t, 3, func(c *mpi.Comm) error {
		a, sum := []int64{int64(c.Rank() + 1)}, []int64{0}
		r, err := mpi.AllreduceInit(c, a, sum, mpi.Sum[int64]())
		if err != nil {
			return err
		}
		deadline := time.Now().Add(20 * time.Second)
		for round := range 5 {
			if err := r.Start(); err != nil {
				return err
			}
			for {
				done, _, err := r.Test()
				if err != nil {
					return err
				}
				if done {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("rank %d round %d: Test never saw the Start complete", c.Rank(), round)
				}
				runtime.Gosched()
			}
			if want := int64(c.Size() * (c.Size() + 1) / 2); sum[0] != want {
				return fmt.Errorf("rank %d round %d: sum %d, want %d", c.Rank(), round, sum[0], want)
			}
		}
		return r.Free()
	})
}

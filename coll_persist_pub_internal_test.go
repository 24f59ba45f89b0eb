package mpi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// pubReqs are the persistent collectives TestPersistentPublications
// starts: every form that goes by publications between goroutine ranks.
type pubReqs struct {
	sum        []int64   // AllreduceInit's contribution (Sum)
	sumOut     []int64   // and result
	max, maxTo []float64 // ReduceInit's (Max to the last rank)
	bc         []byte    // Comm.BcastInit's buffer (root 1 % n)
	low        []float64 // Comm.AllreduceInit's, in place (Sum)
	all        []*Request
}

func newPubReqs(c *Comm) (*pubReqs, error) {
	q := &pubReqs{sum: make([]int64, 3), sumOut: make([]int64, 3), max: make([]float64, 2), maxTo: make([]float64, 2), bc: make([]byte, 16), low: make([]float64, 4)}
	n := c.Size()
	mk := []func() (*Request, error){
		func() (*Request, error) { return AllreduceInit(c, q.sum, q.sumOut, Sum[int64]()) },
		func() (*Request, error) { return ReduceInit(c, q.max, q.maxTo, Max[float64](), n-1) },
		func() (*Request, error) { return c.BcastInit(q.bc, len(q.bc), Byte, 1%n, nil) },
		func() (*Request, error) { return BarrierInit(c) },
		func() (*Request, error) {
			return c.AllreduceInit(InPlace, AsBytes(q.low), len(q.low), Float64, OpSum, nil)
		},
	}
	for _, f := range mk {
		r, err := f()
		if err != nil {
			return nil, err
		}
		if r.x.pub == nil {
			return nil, fmt.Errorf("rank %d: %s does not go by publications", c.Rank(), r.opName())
		}
		q.all = append(q.all, r)
	}
	return q, nil
}

// round runs round i of the tests: fill, start every request (in
// reverse order on odd ranks, after before if not nil), a blocking
// collective of the communicator, complete every request in the way of
// round i, check every result.
func (q *pubReqs) round(c *Comm, i int, before func()) error {
	q.set(c, i)
	order := slices.Clone(q.all)
	if c.Rank()%2 == 1 {
		slices.Reverse(order)
	}
	if before != nil {
		before()
	}
	if err := StartAll(order...); err != nil {
		return err
	}
	if _, err := Allreduce(c, 1, Sum[int]()); err != nil {
		return err
	}
	if err := q.complete(c, i); err != nil {
		return err
	}
	return q.check(c, i)
}

// set fills round i's contributions.
func (q *pubReqs) set(c *Comm, i int) {
	r := c.Rank()
	for j := range q.sum {
		q.sum[j] = int64(100*i + 10*r + j)
	}
	for j := range q.max {
		q.max[j] = float64(i*r - j)
	}
	clear(q.maxTo)
	for j := range q.bc {
		q.bc[j] = 0
		if r == 1%c.Size() {
			q.bc[j] = byte(i + j)
		}
	}
	for j := range q.low {
		q.low[j] = float64(i + r + j)
	}
}

// check compares round i's results with what they must be.
func (q *pubReqs) check(c *Comm, i int) error {
	n, r := c.Size(), c.Rank()
	for j := range q.sum {
		want := int64(0)
		for k := range n {
			want += int64(100*i + 10*k + j)
		}
		if q.sumOut[j] != want {
			return fmt.Errorf("rank %d round %d: Allreduce %v", r, i, q.sumOut)
		}
	}
	if r == n-1 {
		for j := range q.maxTo {
			if want := float64(i*(n-1) - j); q.maxTo[j] != want {
				return fmt.Errorf("rank %d round %d: Reduce %v, want %v at %d", r, i, q.maxTo, want, j)
			}
		}
	} else if q.maxTo[0] != 0 || q.maxTo[1] != 0 {
		return fmt.Errorf("rank %d round %d: Reduce wrote %v outside the root", r, i, q.maxTo)
	}
	for j := range q.bc {
		if q.bc[j] != byte(i+j) {
			return fmt.Errorf("rank %d round %d: Bcast %v", r, i, q.bc)
		}
	}
	for j := range q.low {
		want := 0.0
		for k := range n {
			want += float64(i + k + j)
		}
		if q.low[j] != want {
			return fmt.Errorf("rank %d round %d: Comm.AllreduceInit %v", r, i, q.low)
		}
	}
	return nil
}

// complete waits for every request of q, in the way of round i: Wait in
// a rank's own order, WaitAll, WaitAny, Test in a loop, TestAll in a
// loop, WaitSome.
func (q *pubReqs) complete(c *Comm, i int) error {
	reqs := slices.Clone(q.all)
	rot := (c.Rank() + i) % len(reqs)
	reqs = append(reqs[rot:], reqs[:rot]...)
	deadline := time.Now().Add(time.Minute)
	switch i % 6 {
	case 0:
		for _, r := range reqs {
			if _, err := r.Wait(); err != nil {
				return err
			}
		}
	case 1:
		return WaitAll(toWaiters(reqs)...)
	case 2:
		for range reqs {
			if _, _, err := WaitAny(toWaiters(reqs)...); err != nil {
				return err
			}
		}
	case 3:
		for _, r := range reqs {
			for {
				done, _, err := r.Test()
				if err != nil {
					return err
				}
				if done {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("rank %d round %d: Test never completed %s", c.Rank(), i, r.opName())
				}
			}
		}
	case 4:
		for {
			done, _, err := TestAll(toWaiters(reqs)...)
			if err != nil {
				return err
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("rank %d round %d: TestAll never completed", c.Rank(), i)
			}
		}
	default:
		for left := len(reqs); left > 0; {
			idx, _, err := WaitSome(toWaiters(reqs)...)
			if err != nil {
				return err
			}
			left -= len(idx)
		}
	}
	return nil
}

func toWaiters(rs []*Request) []Waiter {
	ws := make([]Waiter, len(rs))
	for i, r := range rs {
		ws[i] = r
	}
	return ws
}

// TestPersistentPublications: persistent collectives of goroutine ranks
// by publication, on 1 to 4 ranks that watch or park: round after round,
// started in another order on every rank, with a blocking collective of
// the communicator in between, and completed by each way of waiting and
// testing; every result right every round.
func TestPersistentPublications(t *testing.T) {
	for _, spin := range []time.Duration{0, -1} {
		for _, n := range []int{1, 2, 3, 4} {
			t.Run(fmt.Sprintf("%dranks/spin%v", n, spin), func(t *testing.T) {
				cfg := DefaultConfig()
				if spin != 0 {
					cfg.Spin = spin
				}
				err := runConfigWithin(t, n, cfg, 2*time.Minute, func(c *Comm) error {
					q, err := newPubReqs(c)
					if err != nil {
						return err
					}
					for i := range 36 {
						if err := q.round(c, i, nil); err != nil {
							return err
						}
					}
					for _, r := range q.all {
						if err := r.Free(); err != nil {
							return err
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

// TestPersistentPublicationOrders: two persistent allreduces started in
// opposite orders on the two ranks, each rank waiting for its second
// Start first: no order of Starts and waits hangs, since a Start never
// waits for anything.
func TestPersistentPublicationOrders(t *testing.T) {
	err := runWithin(t, 2, time.Minute, func(c *Comm) error {
		a, b := []int64{1}, []int64{int64(c.Rank())}
		outA, outB := []int64{0}, []int64{0}
		ra, err := AllreduceInit(c, a, outA, Sum[int64]())
		if err != nil {
			return err
		}
		rb, err := AllreduceInit(c, b, outB, Sum[int64]())
		if err != nil {
			return err
		}
		first, second := ra, rb
		if c.Rank() == 1 {
			first, second = rb, ra
		}
		for i := range 200 {
			if err := first.Start(); err != nil {
				return err
			}
			if err := second.Start(); err != nil {
				return err
			}
			if _, err := second.Wait(); err != nil {
				return err
			}
			if _, err := first.Wait(); err != nil {
				return err
			}
			if outA[0] != 2 || outB[0] != 1 {
				return fmt.Errorf("rank %d round %d: %d %d", c.Rank(), i, outA[0], outB[0])
			}
		}
		return errors.Join(ra.Free(), rb.Free())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPersistentPublicationRoads: ranks whose arguments would take
// different roads (a predefined operation on some, a function of the
// program's on another) fail Init on every rank, instead of starting
// collectives that never meet; under fault tolerance, and with too many
// ranks to publish for, persistent collectives go by messages, as before.
func TestPersistentPublicationRoads(t *testing.T) {
	err := runWithin(t, 3, time.Minute, func(c *Comm) error {
		op := Sum[int64]()
		if c.Rank() == 2 {
			op = NewOp(func(a, b int64) int64 { return a + b }, true)
		}
		_, err := AllreduceInit(c, []int64{1}, []int64{0}, op)
		if !errors.Is(err, ErrOther) {
			return fmt.Errorf("rank %d: Init with another operation on rank 2: %v, want ErrOther", c.Rank(), err)
		}
		// Init of every rank also checks the buffers a Start would.
		buf := make([]byte, 8)
		if c.Rank() == 1 {
			buf = buf[:4]
		}
		_, err = c.AllreduceInit(buf, make([]byte, 8), 1, Int64, OpSum, nil)
		if c.Rank() == 1 && !errors.Is(err, ErrBuffer) || c.Rank() != 1 && !errors.Is(err, ErrArg) {
			return fmt.Errorf("rank %d: Init with a short sendbuf on rank 1: %v", c.Rank(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.FT = true
	for _, tc := range []struct {
		n   int
		cfg Config
	}{{2, cfg}, {meetPubMax + 1, DefaultConfig()}} {
		err := runConfigWithin(t, tc.n, tc.cfg, time.Minute, func(c *Comm) error {
			out := []int64{0}
			r, err := AllreduceInit(c, []int64{1}, out, Sum[int64]())
			if err != nil {
				return err
			}
			if r.x.pub != nil {
				return fmt.Errorf("%d ranks, FT %v: by publications", tc.n, tc.cfg.FT)
			}
			if err := r.Start(); err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil || out[0] != int64(tc.n) {
				return fmt.Errorf("rank %d: %v, %d", c.Rank(), err, out[0])
			}
			return r.Free()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPersistentPublicationHang: a rank that frees its persistent
// collective and leaves while another rank waits for a Start of it: the
// wait is a hang the report explains, and the job ends.
func TestPersistentPublicationHang(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HangReport = 300 * time.Millisecond
	err := persistentLeaverJob(t, cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "hang") {
		t.Fatalf("got %v, want a hang report", err)
	}
}

// persistentLeaverJob runs the job of the hang tests of persistent
// collectives on 2 ranks: rank 0 frees its persistent Allreduce and
// leaves, rank 1 starts it and waits; check, if not nil, looks at the
// request first. It returns the job's error, or fails the test if the
// job has not ended within a minute.
func persistentLeaverJob(t *testing.T, cfg Config, check func(*Comm, *Request) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- RunConfig(2, cfg, func(c *Comm) error {
			r, err := AllreduceInit(c, []int64{1}, []int64{0}, Sum[int64]())
			if err != nil {
				return err
			}
			if check != nil {
				if err := check(c, r); err != nil {
					return err
				}
			}
			if c.Rank() == 0 {
				return r.Free()
			}
			if err := r.Start(); err != nil {
				return err
			}
			_, err = r.Wait()
			return err
		})
	}()
	select {
	case err := <-done:
		t.Log(err)
		return err
	case <-time.After(time.Minute):
		t.Fatal("the job did not end: the wait for a rank that left is not reported")
		return nil
	}
}

// TestPersistentPublicationLate: rank 0 waits for a persistent Allreduce
// by publications in every way (Wait, WaitAll, WaitAny, WaitSome, a Test
// loop) before the others publish, late; with and without watching
// first. A rank is present from its Start on and marks itself absent
// only on its way to parking, so each way of waiting that parks must
// mark it, for the last rank to publish to wake it: without the mark
// rank 0 would sleep past the deadline.
func TestPersistentPublicationLate(t *testing.T) {
	for _, spin := range []time.Duration{0, -1} {
		t.Run(fmt.Sprintf("spin%v", spin), func(t *testing.T) {
			cfg := DefaultConfig()
			if spin != 0 {
				cfg.Spin = spin
			}
			err := runConfigWithin(t, 3, cfg, time.Minute, func(c *Comm) error {
				v, out := []int64{int64(c.Rank() + 1)}, []int64{0}
				r, err := AllreduceInit(c, v, out, Sum[int64]())
				if err != nil {
					return err
				}
				if r.x.pub == nil {
					return fmt.Errorf("rank %d: AllreduceInit does not go by publications", c.Rank())
				}
				ways := []func() error{
					func() error { _, err := r.Wait(); return err },
					func() error { return WaitAll(r) },
					func() error { _, _, err := WaitAny(r); return err },
					func() error { _, _, err := WaitSome(r); return err },
					func() error {
						for {
							done, _, err := r.Test()
							if done || err != nil {
								return err
							}
							time.Sleep(time.Millisecond)
						}
					},
				}
				for i, wait := range ways {
					if c.Rank() != 0 {
						time.Sleep(20 * time.Millisecond)
					}
					if err := r.Start(); err != nil {
						return err
					}
					if err := wait(); err != nil {
						return err
					}
					if out[0] != 6 {
						return fmt.Errorf("rank %d, way %d: %d, want 6", c.Rank(), i, out[0])
					}
				}
				return r.Free()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

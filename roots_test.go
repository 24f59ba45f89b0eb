package mpi_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// A rooted call of the table of TestDifferentRoots: it runs the call on c
// with root and reports an error if a rank returned, without an error,
// data that its own arguments (its root) do not give.
type rootedCall struct {
	name string
	call func(c *mpi.Comm, root int) error
}

// rootedCalls is every rooted collective, typed and low-level, blocking
// and non-blocking: each rank contributes values of its own rank, so that
// what a rank returns names the root it came from.
func rootedCalls() []rootedCall {
	own := func(c *mpi.Comm, what string, got, want any) error {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("rank %d: %s returned %v, not what its root gives (%v)", c.Rank(), what, got, want)
		}
		return nil
	}
	f64 := func(v ...float64) []byte { return mpi.AsBytes(v) }
	ranks := func(c *mpi.Comm, base float64) []float64 {
		v := make([]float64, c.Size())
		for i := range v {
			v[i] = base + float64(i)
		}
		return v
	}
	sum := func(c *mpi.Comm) float64 { n := c.Size(); return float64(100*n + n*(n-1)/2) }
	gatherWant := func(c *mpi.Comm, root int) any {
		if c.Rank() != root {
			return []float64(nil)
		}
		return ranks(c, 100)
	}
	return []rootedCall{
		{"Bcast", func(c *mpi.Comm, root int) error {
			r, err := mpi.Bcast(c, 100+c.Rank(), root)
			if err != nil {
				return err
			}
			return own(c, "Bcast", r, 100+root)
		}},
		{"Bcast(slice)", func(c *mpi.Comm, root int) error {
			r, err := mpi.Bcast(c, []int{100 + c.Rank(), 7}, root)
			if err != nil {
				return err
			}
			return own(c, "Bcast", r, []int{100 + root, 7})
		}},
		{"Bcast(string)", func(c *mpi.Comm, root int) error {
			r, err := mpi.Bcast(c, fmt.Sprint("from ", c.Rank()), root)
			if err != nil {
				return err
			}
			return own(c, "Bcast", r, fmt.Sprint("from ", root))
		}},
		{"BcastInto", func(c *mpi.Comm, root int) error {
			v := []float64{float64(c.Rank()), 1}
			if err := mpi.BcastInto(c, v, root); err != nil {
				return err
			}
			return own(c, "BcastInto", v, []float64{float64(root), 1})
		}},
		{"Gather", func(c *mpi.Comm, root int) error {
			r, err := mpi.Gather(c, 100+float64(c.Rank()), root)
			if err != nil {
				return err
			}
			return own(c, "Gather", r, gatherWant(c, root))
		}},
		{"Scatter", func(c *mpi.Comm, root int) error {
			r, err := mpi.Scatter(c, ranks(c, float64(100*c.Rank())), root)
			if err != nil {
				return err
			}
			return own(c, "Scatter", r, 100*root+c.Rank())
		}},
		{"Reduce", func(c *mpi.Comm, root int) error {
			r, err := mpi.Reduce(c, 100+float64(c.Rank()), mpi.Sum[float64](), root)
			if err != nil || c.Rank() != root {
				return err
			}
			return own(c, "Reduce", r, sum(c))
		}},
		{"ReduceSlice", func(c *mpi.Comm, root int) error {
			r, err := mpi.ReduceSlice(c, []float64{100 + float64(c.Rank()), 1}, mpi.Sum[float64](), root)
			if err != nil || c.Rank() != root {
				return err
			}
			return own(c, "ReduceSlice", r, []float64{sum(c), float64(c.Size())})
		}},
		{"Comm.Bcast", func(c *mpi.Comm, root int) error {
			v := []float64{float64(c.Rank())}
			if err := c.Bcast(mpi.AsBytes(v), 1, mpi.Float64, root); err != nil {
				return err
			}
			return own(c, "Comm.Bcast", v[0], root)
		}},
		{"Comm.Gather", func(c *mpi.Comm, root int) error {
			out := make([]float64, c.Size())
			if err := c.Gather(f64(100+float64(c.Rank())), 1, mpi.Float64, mpi.AsBytes(out), 1, mpi.Float64, root); err != nil {
				return err
			}
			if c.Rank() != root {
				return nil
			}
			return own(c, "Comm.Gather", out, ranks(c, 100))
		}},
		{"Comm.Gatherv", func(c *mpi.Comm, root int) error {
			out := make([]float64, c.Size())
			counts := slices.Repeat([]int{1}, c.Size())
			if err := c.Gatherv(f64(100+float64(c.Rank())), 1, mpi.Float64, mpi.AsBytes(out), counts, nil, mpi.Float64, root); err != nil {
				return err
			}
			if c.Rank() != root {
				return nil
			}
			return own(c, "Comm.Gatherv", out, ranks(c, 100))
		}},
		{"Comm.Scatter", func(c *mpi.Comm, root int) error {
			out := []float64{-1}
			if err := c.Scatter(mpi.AsBytes(ranks(c, float64(100*c.Rank()))), 1, mpi.Float64, mpi.AsBytes(out), 1, mpi.Float64, root); err != nil {
				return err
			}
			return own(c, "Comm.Scatter", out[0], 100*root+c.Rank())
		}},
		{"Comm.Scatterv", func(c *mpi.Comm, root int) error {
			out := []float64{-1}
			counts := slices.Repeat([]int{1}, c.Size())
			if err := c.Scatterv(mpi.AsBytes(ranks(c, float64(100*c.Rank()))), counts, nil, mpi.Float64, mpi.AsBytes(out), 1, mpi.Float64, root); err != nil {
				return err
			}
			return own(c, "Comm.Scatterv", out[0], 100*root+c.Rank())
		}},
		{"Comm.Reduce", func(c *mpi.Comm, root int) error {
			out := []float64{0}
			if err := c.Reduce(f64(100+float64(c.Rank())), mpi.AsBytes(out), 1, mpi.Float64, mpi.OpSum, root); err != nil || c.Rank() != root {
				return err
			}
			return own(c, "Comm.Reduce", out[0], sum(c))
		}},
		{"Ibcast", func(c *mpi.Comm, root int) error {
			f, err := mpi.Ibcast(c, 100+c.Rank(), root)
			if err != nil {
				return err
			}
			r, err := f.Wait()
			if err != nil {
				return err
			}
			return own(c, "Ibcast", r, 100+root)
		}},
		{"Igather", func(c *mpi.Comm, root int) error {
			f, err := mpi.Igather(c, 100+float64(c.Rank()), root)
			if err != nil {
				return err
			}
			r, err := f.Wait()
			if err != nil {
				return err
			}
			return own(c, "Igather", r, gatherWant(c, root))
		}},
		{"Iscatter", func(c *mpi.Comm, root int) error {
			f, err := mpi.Iscatter(c, ranks(c, float64(100*c.Rank())), root)
			if err != nil {
				return err
			}
			r, err := f.Wait()
			if err != nil {
				return err
			}
			return own(c, "Iscatter", r, 100*root+c.Rank())
		}},
		{"Ireduce", func(c *mpi.Comm, root int) error {
			f, err := mpi.Ireduce(c, 100+float64(c.Rank()), mpi.Sum[float64](), root)
			if err != nil {
				return err
			}
			r, err := f.Wait()
			if err != nil || c.Rank() != root {
				return err
			}
			return own(c, "Ireduce", r, sum(c))
		}},
		{"Comm.Ibcast", func(c *mpi.Comm, root int) error {
			v := []float64{float64(c.Rank())}
			req, err := c.Ibcast(mpi.AsBytes(v), 1, mpi.Float64, root)
			if err != nil {
				return err
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			return own(c, "Comm.Ibcast", v[0], root)
		}},
	}
}

// rootOutcome runs one rooted call on n ranks where rank odd passes root
// odd and the others root 0, and returns each rank's outcome: nil, or
// its error. A job whose ranks wait for each other ends with the hang
// report (HangReport, short here), which ends every rank's wait with an
// error.
func rootOutcome(t *testing.T, cfg mpi.Config, n, odd int, rc rootedCall) []error {
	t.Helper()
	cfg.HangReport = 150 * time.Millisecond
	errs := make([]error, n)
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
			root := 0
			if c.Rank() == odd {
				root = odd
			}
			err := rc.call(c, root)
			mu.Lock()
			errs[c.Rank()] = err
			mu.Unlock()
			return nil
		})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<22)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%s, rank %d passes root %d: the job did not end; every goroutine's stack:\n%s", rc.name, odd, odd, buf)
	}
	return errs
}

// TestDifferentRoots: ranks that pass different roots to a rooted
// collective (rank odd passes itself, the others 0) never return, without
// an error, data that their own root does not give: a message from a rank
// of the other root carries it in its signature (ErrRoot naming both
// roots and suggesting --check), and a rank left waiting for a message
// that never comes ends with the hang report's error. What no message can
// tell (a rank that believes itself the root of a Bcast or Scatter
// receives nothing; see docs/collectives.md) is left to check mode.
func TestDifferentRoots(t *testing.T) {
	for _, tc := range transports() {
		switch tc.name {
		case "inproc", "shm", "tcp":
		default:
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			// The jobs run at once: most of their time is waiting for
			// the hang report.
			type job struct {
				rc   rootedCall
				odd  int
				errs []error
			}
			var jobs []*job
			for _, rc := range rootedCalls() {
				for _, odd := range []int{1, 2} {
					jobs = append(jobs, &job{rc: rc, odd: odd})
				}
			}
			var wg sync.WaitGroup
			for _, j := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					j.errs = rootOutcome(t, tc.cfg, 4, j.odd, j.rc)
				}()
			}
			wg.Wait()
			for _, j := range jobs {
				{
					rc, odd, errs := j.rc, j.odd, j.errs
					var roots int
					for r, err := range errs {
						switch {
						case err == nil:
						case errors.Is(err, mpi.ErrRoot):
							roots++
							msg := err.Error()
							if !strings.Contains(msg, "root") || !strings.Contains(msg, "--check") {
								t.Errorf("%s, rank %d passes root %d: ErrRoot does not name the roots and suggest --check: %v", rc.name, odd, odd, err)
							}
						case strings.Contains(err.Error(), "hung"):
						default:
							t.Errorf("%s, rank %d passes root %d: rank %d: %v", rc.name, odd, odd, r, err)
						}
					}
					t.Logf("%s, rank %d passes root %d: %d ErrRoot, outcomes %v", rc.name, odd, odd, roots, errs)
				}
			}
		})
	}
}

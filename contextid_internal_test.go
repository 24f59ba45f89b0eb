package mpi

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand"
	"strings"
	"sync"
	"testing"
)

// inUse counts the context ids p holds.
func inUse(p *proc) int {
	p.ctx.mu.Lock()
	defer p.ctx.mu.Unlock()
	n := 0
	for _, w := range p.ctx.used {
		n += bits.OnesCount64(w)
	}
	return n
}

// TestContextChurn creates and frees thousands of communicators on random,
// overlapping subsets, with Create (collective over the world) and
// CreateGroup (collective over the subset only), freeing them in random
// order; at the end every rank must hold exactly the ids it started with.
func TestContextChurn(t *testing.T) {
	for _, tr := range []string{"inproc", "tcp"} {
		t.Run(tr, func(t *testing.T) { contextChurn(t, tr) })
	}
}

func contextChurn(t *testing.T, transport string) {
	const n, cycles = 4, 2000
	cfg := DefaultConfig()
	cfg.Transport = transport
	err := RunConfig(n, cfg, func(w *Comm) error {
		start := inUse(w.p)
		shared := rand.New(rand.NewSource(42))            // the same on every rank
		mine := rand.New(rand.NewSource(int64(w.Rank()))) // this rank's free order
		var live []*Comm
		for i := 0; i < cycles; i++ {
			members := shared.Perm(n)[:1+shared.Intn(n)]
			useCreate := shared.Intn(3) == 0
			g, err := w.Group().Incl(members)
			if err != nil {
				return err
			}
			var c *Comm
			if useCreate {
				c, err = w.Create(g)
			} else if g.Rank() != Undefined {
				c, err = w.CreateGroup(g, i%7)
			}
			if err != nil {
				return fmt.Errorf("cycle %d: %w", i, err)
			}
			if c != nil {
				if c.Size() != len(members) || c.Rank() != g.Rank() {
					return fmt.Errorf("cycle %d: size %d rank %d, want %d %d", i, c.Size(), c.Rank(), len(members), g.Rank())
				}
				live = append(live, c)
			}
			if i%100 == 99 && c != nil {
				// The newest communicator works.
				s, err := Allreduce(c, w.Rank(), Sum[int]())
				if err != nil {
					return err
				}
				want := 0
				for _, m := range members {
					want += m
				}
				if s != want {
					return fmt.Errorf("cycle %d: sum %d, want %d", i, s, want)
				}
			}
			for len(live) > 0 && mine.Intn(3) != 0 {
				k := mine.Intn(len(live))
				if err := live[k].Free(); err != nil {
					return err
				}
				live = append(live[:k], live[k+1:]...)
			}
		}
		for _, c := range live {
			if err := c.Free(); err != nil {
				return err
			}
		}
		if got := inUse(w.p); got != start {
			return fmt.Errorf("rank %d holds %d context ids, started with %d", w.Rank(), got, start)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCreateGroupConcurrent runs Create (each goroutine on its own
// parent) and CreateGroup (distinct tags) on overlapping groups from
// several goroutines of every rank at once, many times, and checks that
// the communicators work and no id leaks.
func TestCreateGroupConcurrent(t *testing.T) {
	for _, tr := range []string{"inproc", "tcp"} {
		t.Run(tr, func(t *testing.T) { createConcurrent(t, tr) })
	}
}

func createConcurrent(t *testing.T, transport string) {
	const n, workers, rounds = 4, 6, 200
	cfg := DefaultConfig()
	cfg.Transport = transport
	// Worker k's group in round r: a subset every rank derives alike.
	groupOf := func(k, r int) []int {
		rng := rand.New(rand.NewSource(int64(k*1000 + r)))
		return rng.Perm(n)[:2+rng.Intn(n-1)]
	}
	retries := agreeRetries.Load()
	defer func() { t.Logf("%d context agreements retried", agreeRetries.Load()-retries) }()
	err := RunConfig(n, cfg, func(w *Comm) error {
		start := inUse(w.p)
		// Each worker also has its own parent for Create, which is
		// collective over all of it.
		parents := make([]*Comm, workers)
		for k := range parents {
			var err error
			if parents[k], err = w.Dup(); err != nil {
				return err
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for k := 0; k < workers; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					members := groupOf(k, r)
					g, _ := w.Group().Incl(members)
					var c *Comm
					var err error
					if r%2 == 0 {
						c, err = parents[k].Create(g)
					} else if g.Rank() != Undefined {
						c, err = w.CreateGroup(g, k)
					}
					if err != nil {
						errs[k] = err
						return
					}
					if c == nil {
						continue
					}
					// Talk on it: each member sends its world rank around a ring.
					right, left := (c.Rank()+1)%c.Size(), (c.Rank()+c.Size()-1)%c.Size()
					got, _, err := Sendrecv[int, int](c, w.Rank(), right, 3, left, 3)
					if err != nil {
						errs[k] = err
						return
					}
					if got != members[left] {
						errs[k] = fmt.Errorf("worker %d round %d: got %d from the left, want %d", k, r, got, members[left])
						return
					}
					if err := c.Free(); err != nil {
						errs[k] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		for _, p := range parents {
			if err := p.Free(); err != nil {
				return err
			}
		}
		if err := Barrier(w); err != nil {
			return err
		}
		if got := inUse(w.p); got != start {
			return fmt.Errorf("rank %d holds %d context ids, started with %d", w.Rank(), got, start)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSingletonRanks(t *testing.T) {
	for _, tc := range []struct {
		env    string
		set    bool
		n      int
		np, ok bool
	}{
		{"", false, 1, false, true},
		{"4", true, 4, true, true},
		{" 3 ", true, 3, true, true},
		{"abc", true, 0, true, false},
		{"0", true, 0, true, false},
		{"-2", true, 0, true, false},
	} {
		if tc.set {
			t.Setenv("MPIGO_NP", tc.env)
		} else {
			t.Setenv("MPIGO_NP", "")
		}
		n, np, err := singletonRanks()
		if n != tc.n || np != tc.np || (err == nil) != tc.ok {
			t.Errorf("MPIGO_NP=%q: got %d %v %v, want %d %v ok=%v", tc.env, n, np, err, tc.n, tc.np, tc.ok)
		}
	}
}

// Running out of context ids is the program's doing (communicators made in
// a loop and never freed), so Dup reports it as ErrOther with advice, not
// as ErrIntern; freeing communicators makes room again. The test takes all
// but three ids on every rank first, instead of making 16382 communicators.
func TestContextExhaustion(t *testing.T) {
	const left = 3
	err := Run(2, func(w *Comm) error {
		var taken []uint32
		for id := uint32(0); id < ctxIDs; id++ {
			if w.p.ctx.tryTake(id) {
				taken = append(taken, id)
			}
		}
		for _, id := range taken[:left] {
			w.p.ctx.release(id)
		}
		var dups []*Comm
		var err error
		for range left + 1 {
			var d *Comm
			if d, err = w.Dup(); err != nil {
				break
			}
			dups = append(dups, d)
		}
		if len(dups) != left {
			return fmt.Errorf("%d dups before the error %v, want %d", len(dups), err, left)
		}
		if !errors.Is(err, ErrOther) || errors.Is(err, ErrIntern) || !strings.Contains(err.Error(), "Free the communicators") {
			return fmt.Errorf("Dup with no context id left: %v, want ErrOther advising to Free communicators", err)
		}
		if err := dups[0].Free(); err != nil {
			return err
		}
		d, err := w.Dup()
		if err != nil {
			return fmt.Errorf("Dup after a Free: %v", err)
		}
		dups[0] = d
		for _, d := range dups {
			if err := d.Free(); err != nil {
				return err
			}
		}
		for _, id := range taken[left:] {
			w.p.ctx.release(id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

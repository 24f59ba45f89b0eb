package mpi

import (
	"sync"
	"testing"
	"time"
)

// TestPersistentGraceAdapts: the timer of a persistent collective that
// goes over messages (collPlan) waits longer and longer while every
// Start is waited for (up to maxGrace, so that it seldom fires in a
// solver's loop), and goes back to startGrace once it had to run a Start
// that nobody waited for; that Start still completes.
func TestPersistentGraceAdapts(t *testing.T) {
	var mu sync.Mutex
	plans := map[int]*collPlan{}
	collPlanHook = func(c *Comm, pl *collPlan) {
		mu.Lock()
		plans[c.Rank()] = pl
		mu.Unlock()
	}
	defer func() { collPlanHook = nil }()
	err := Run(2, func(c *Comm) error {
		v, out := make([]float64, 8192), make([]float64, 8192) // 64 KiB: over messages
		for i := range v {
			v[i] = float64(c.Rank() + 1)
		}
		req, err := AllreduceInit(c, v, out, Sum[float64]())
		if err != nil {
			return err
		}
		defer req.Free()
		mu.Lock()
		pl := plans[c.Rank()]
		mu.Unlock()
		if pl == nil {
			t.Errorf("rank %d: the 64 KiB AllreduceInit made no collPlan", c.Rank())
			return nil
		}
		if g := time.Duration(pl.grace.Load()); g != startGrace {
			t.Errorf("rank %d: grace %v at Init, want %v", c.Rank(), g, startGrace)
		}
		// Start and Wait until the timer has grown to maxGrace (six
		// doublings: about 1.3 ms of ticks), well within 5 s.
		for end := time.Now().Add(5 * time.Second); ; {
			if err := req.Start(); err != nil {
				return err
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			if out[0] != 3 {
				t.Errorf("rank %d: sum %v, want 3", c.Rank(), out[0])
				return nil
			}
			done := time.Duration(pl.grace.Load()) == maxGrace
			// Every rank stops at the same iteration.
			all, err := AllreduceSlice(c, []int{btoi(done)}, Min[int]())
			if err != nil {
				return err
			}
			if all[0] == 1 {
				break
			}
			if time.Now().After(end) {
				t.Errorf("rank %d: grace still %v after 5 s of Start and Wait, want %v", c.Rank(), time.Duration(pl.grace.Load()), maxGrace)
				return nil
			}
		}
		// Rank 0 starts and only tests: its timer must run the Start.
		out[0] = 0
		if err := req.Start(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			for end := time.Now().Add(5 * time.Second); ; {
				ok, _, err := req.Test()
				if err != nil {
					return err
				}
				if ok {
					break
				}
				if time.Now().After(end) {
					t.Errorf("rank 0: an unwaited Start did not complete in 5 s")
					return nil
				}
				time.Sleep(50 * time.Microsecond)
			}
			if g := time.Duration(pl.grace.Load()); g != startGrace {
				t.Errorf("rank 0: grace %v after the timer ran a Start, want %v", g, startGrace)
			}
		} else if _, err := req.Wait(); err != nil {
			return err
		}
		if out[0] != 3 {
			t.Errorf("rank %d: sum %v after the unwaited Start, want 3", c.Rank(), out[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

package mpi

import (
	"runtime"
	"testing"
	"time"
)

// mailboxJob runs f on 2 goroutine ranks whose waits watch and collect
// their mailboxes (progress.Rank), as they do by default on a machine
// with a processor per rank, and fails t if the job does not end within a
// few seconds. The waits watch for up to spin.
func mailboxJob(t *testing.T, spin time.Duration, f func(c *Comm) error) {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	cfg := DefaultConfig()
	cfg.Spin = spin
	done := make(chan error, 1)
	go func() { done <- RunConfig(2, cfg, f) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the job hangs: a message waits in a mailbox nobody collects")
	}
}

// A receive that watched leaves the rank's mailbox open, so the next
// small message waits there; a loop of Iprobe (or of Test) must still see
// it, with no wait to collect it.
func TestMailboxPolledByProbeAndTest(t *testing.T) {
	opened := 0
	// Waits watch for up to a second, so that they watch (and leave the
	// mailbox open) on a busy machine too.
	mailboxJob(t, time.Second, func(c *Comm) error {
		for round := range 50 {
			if c.Rank() == 0 {
				if err := Send(c, round, 1, 1); err != nil {
					return err
				}
				if err := Send(c, round, 1, 2); err != nil {
					return err
				}
				if _, _, err := Recv[int](c, 1, 3); err != nil {
					return err
				}
				continue
			}
			if _, _, err := Recv[int](c, 0, 1); err != nil {
				return err
			}
			if c.p.mail.IsOpen() {
				opened++
			}
			if round%2 == 0 {
				for {
					ok, _, err := c.Iprobe(0, 2)
					if err != nil {
						return err
					}
					if ok {
						break
					}
				}
				if _, _, err := Recv[int](c, 0, 2); err != nil {
					return err
				}
			} else {
				r, err := IrecvInto(c, make([]int, 1), 0, 2)
				if err != nil {
					return err
				}
				for {
					ok, _, err := r.Test()
					if err != nil {
						return err
					}
					if ok {
						break
					}
				}
			}
			if err := Send(c, round, 0, 3); err != nil {
				return err
			}
		}
		return nil
	})
	if opened == 0 {
		t.Error("no receive left the mailbox open: the test tests nothing")
	}
}

// A goroutine of a rank parked in a receive gets its message though
// another goroutine of the rank watched, left its wait and now blocks
// outside MPI: a wait leaves the mailbox open only while no goroutine of
// the rank is parked.
func TestMailboxParkedGoroutine(t *testing.T) {
	mailboxJob(t, 50*time.Microsecond, func(c *Comm) error {
		for range 20 {
			if c.Rank() == 0 {
				if err := Send(c, 1, 1, 1); err != nil {
					return err
				}
				time.Sleep(time.Millisecond) // rank 1's other goroutine parks
				if err := Send(c, 2, 1, 2); err != nil {
					return err
				}
				if _, _, err := Recv[int](c, 1, 3); err != nil {
					return err
				}
				continue
			}
			got := make(chan error, 1)
			go func() {
				_, _, err := Recv[int](c, 0, 2)
				got <- err
			}()
			for c.p.blk.parkedNow.Load() == 0 && len(got) == 0 {
				runtime.Gosched()
			}
			if _, _, err := Recv[int](c, 0, 1); err != nil {
				return err
			}
			if err := <-got; err != nil { // blocks outside MPI
				return err
			}
			if err := Send(c, 3, 0, 3); err != nil {
				return err
			}
		}
		return nil
	})
}

package mpi

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/device"
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

// mailboxSync is what ranks 0 and 1 of mailboxRound tell each other out
// of band: the last round whose tag 1 rank 1 waits for, and the last
// whose tag 2 rank 0 has sent.
type mailboxSync struct{ waiting, sent atomic.Int64 }

// mailboxRound is one round of the mailbox tests between ranks 0 and 1:
// rank 1 starts a receive for tag 2 (start), receives tag 1 in a wait that
// watches and leaves its mailbox open, and answers. Rank 0 then sends tag
// 2, which waits in rank 1's mailbox, and says so through s, out of
// band: rank 1 then calls look (no wait between: nobody else collects),
// and both end the round with tag 5. opened counts the rounds where rank
// 1's mailbox was open when the message of tag 2 had come.
func mailboxRound(c *Comm, round int, s *mailboxSync, opened *int, start func() error, look func() error) error {
	if c.Rank() == 0 {
		// Send tag 1 once rank 1 waits for it: a message that is there
		// before the receive completes it without a wait, and the
		// mailbox stays as it was.
		for s.waiting.Load() != int64(round+1) {
			runtime.Gosched()
		}
		time.Sleep(20 * time.Microsecond)
		if err := Send(c, round, 1, 1); err != nil {
			return err
		}
		if _, _, err := Recv[int](c, 1, 3); err != nil {
			return err
		}
		if err := Send(c, round, 1, 2); err != nil {
			return err
		}
		s.sent.Store(int64(round + 1))
		_, _, err := Recv[int](c, 1, 5)
		return err
	}
	if err := start(); err != nil {
		return err
	}
	s.waiting.Store(int64(round + 1))
	if _, _, err := Recv[int](c, 0, 1); err != nil {
		return err
	}
	if err := Send(c, round, 0, 3); err != nil {
		return err
	}
	for s.sent.Load() != int64(round+1) {
		runtime.Gosched()
	}
	if c.p.Mail.IsOpen() {
		*opened++
	}
	if err := look(); err != nil {
		return err
	}
	return Send(c, round, 0, 5)
}

// mailboxPolls are the ways a program looks for a message without
// waiting: start starts its look (posts its receive); once looks once,
// and reports whether the message has come and it has received it.
var mailboxPolls = []struct {
	name  string
	start func(c *Comm) (once func() (bool, error), err error)
}{
	{"Iprobe", func(c *Comm) (func() (bool, error), error) {
		return func() (bool, error) {
			ok, _, err := c.Iprobe(0, 2)
			if !ok || err != nil {
				return false, err
			}
			_, _, err = Recv[int](c, 0, 2)
			return true, err
		}, nil
	}},
	{"Improbe", func(c *Comm) (func() (bool, error), error) {
		return func() (bool, error) {
			ok, m, _, err := c.Improbe(0, 2)
			if !ok || err != nil {
				return false, err
			}
			_, _, err = Mrecv[int](m)
			return true, err
		}, nil
	}},
	{"Request.Test", func(c *Comm) (func() (bool, error), error) {
		r, err := IrecvInto(c, make([]int, 1), 0, 2)
		return func() (bool, error) { ok, _, err := r.Test(); return ok, err }, err
	}},
	{"Request.GetStatus", func(c *Comm) (func() (bool, error), error) {
		r, err := IrecvInto(c, make([]int, 1), 0, 2)
		return func() (bool, error) {
			ok, _, err := r.GetStatus()
			if !ok || err != nil {
				return false, err
			}
			_, err = r.Wait()
			return true, err
		}, err
	}},
	{"TestAny", func(c *Comm) (func() (bool, error), error) {
		r, err := IrecvInto(c, make([]int, 1), 0, 2)
		return func() (bool, error) { _, ok, _, err := TestAny(r); return ok, err }, err
	}},
	{"TestSome", func(c *Comm) (func() (bool, error), error) {
		r, err := IrecvInto(c, make([]int, 1), 0, 2)
		return func() (bool, error) { idx, _, err := TestSome(r); return len(idx) > 0, err }, err
	}},
	{"TestAll", func(c *Comm) (func() (bool, error), error) {
		r, err := IrecvInto(c, make([]int, 1), 0, 2)
		return func() (bool, error) { ok, _, err := TestAll(r); return ok, err }, err
	}},
	{"Pending.Test", func(c *Comm) (func() (bool, error), error) {
		p, err := Irecv[int](c, 0, 2)
		return func() (bool, error) { ok, _, _, err := p.Test(); return ok, err }, err
	}},
	{"Requests.TestAll", func(c *Comm) (func() (bool, error), error) {
		rs := new(Requests)
		err := PostIrecvInto(rs, c, make([]int, 1), 0, 2)
		return func() (bool, error) { return rs.TestAll() }, err
	}},
}

// withoutSweeper makes the jobs the test starts sweep their mailboxes
// only every hour: the test checks that a look at the messages collects
// them itself.
func withoutSweeper(t *testing.T) {
	old := device.MailSweep.Swap(int64(time.Hour))
	t.Cleanup(func() { device.MailSweep.Store(old) })
}

// A receive that watched leaves the rank's mailbox open, so the next
// small message waits there; every way of polling for it (Iprobe, Test,
// GetStatus, ...) must still see it, with no wait to collect it.
func TestMailboxPolled(t *testing.T) {
	withoutSweeper(t)
	for _, poll := range mailboxPolls {
		t.Run(poll.name, func(t *testing.T) {
			var s mailboxSync
			opened := 0
			// Waits watch for up to a second, so that they watch (and
			// leave the mailbox open) on a busy machine too.
			mailboxJob(t, time.Second, func(c *Comm) error {
				for round := range 20 {
					var once func() (bool, error)
					start := func() (err error) { once, err = poll.start(c); return err }
					look := func() error {
						for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
							if ok, err := once(); ok || err != nil {
								return err
							}
						}
						return fmt.Errorf("round %d: %s did not see a message that had come in 5s", round, poll.name)
					}
					if err := mailboxRound(c, round, &s, &opened, start, look); err != nil {
						return err
					}
				}
				return nil
			})
			if opened == 0 {
				t.Error("rank 1's mailbox was never open when the message came: the test tests nothing")
			}
		})
	}
}

// A receive cancelled after its message came finds it, though the
// message waits in the mailbox: the cancel fails and the receive gets the
// message, as when the sender delivers it itself.
func TestMailboxCancelledReceive(t *testing.T) {
	withoutSweeper(t)
	var s mailboxSync
	opened := 0
	mailboxJob(t, time.Second, func(c *Comm) error {
		for round := range 20 {
			buf := make([]int, 1)
			var r *Request
			start := func() (err error) { r, err = IrecvInto(c, buf, 0, 2); return err }
			look := func() error {
				if err := r.Cancel(); err != nil {
					return err
				}
				st, err := r.Wait()
				if err != nil {
					return err
				}
				if st.Cancelled() || buf[0] != round {
					return fmt.Errorf("round %d: the receive was cancelled (%v) or got %d, though its message had come", round, st.Cancelled(), buf[0])
				}
				return nil
			}
			if err := mailboxRound(c, round, &s, &opened, start, look); err != nil {
				return err
			}
		}
		return nil
	})
	if opened == 0 {
		t.Error("rank 1's mailbox was never open when the message came: the test tests nothing")
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
			for !c.p.Blk.AnyParked() && len(got) == 0 {
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

// A rank that blocks outside the library with its mailbox open (here on a
// channel, after a wait that watched) still gets its messages: the job's
// sweeper closes the mailbox, and the receive it posted before completes
// while it is blocked, as it does with the mailbox closed.
func TestMailboxSwept(t *testing.T) {
	var s mailboxSync
	opened := 0
	var swept *atomic.Int64
	posted := make(chan *Request, 1)
	release := make(chan error)
	mailboxJob(t, time.Second, func(c *Comm) error {
		if c.Rank() == 0 {
			swept = &c.p.job.Swept
		}
		for round := range 5 {
			if c.Rank() == 1 {
				var r *Request
				start := func() (err error) {
					r, err = IrecvInto(c, make([]int, 1), 0, 2)
					posted <- r
					return err
				}
				look := func() error {
					if err := <-release; err != nil { // blocked outside the library
						return err
					}
					_, err := r.Wait()
					return err
				}
				if err := mailboxRound(c, round, &s, &opened, start, look); err != nil {
					return err
				}
				continue
			}
			r := <-posted
			go func() {
				// Once rank 0 has sent tag 2, see rank 1's receive complete
				// while rank 1 is blocked, then let rank 1 go.
				for s.sent.Load() != int64(round+1) {
					runtime.Gosched()
				}
				deadline := time.Now().Add(5 * time.Second)
				for !r.er.Done() && time.Now().Before(deadline) {
					time.Sleep(100 * time.Microsecond)
				}
				var err error
				if !r.er.Done() {
					err = fmt.Errorf("round %d: rank 1's receive did not complete in 5s while rank 1 was blocked", round)
				}
				release <- err
			}()
			if err := mailboxRound(c, round, &s, &opened, nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if opened == 0 {
		t.Error("rank 1's mailbox was never open when the message came: the test tests nothing")
	}
	if swept == nil || swept.Load() == 0 {
		t.Error("the sweeper never closed a mailbox")
	}
}

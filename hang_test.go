package mpi_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// hangCase is a classic MPI mistake and the diagnosis the hang report
// must give for it.
type hangCase struct {
	name  string
	n     int
	check bool
	f     func(c *mpi.Comm) error
	// want are regular expressions one diagnosis line must all match.
	want []string
}

// hangCases are the mistakes of docs/troubleshooting.md. cmd/mpigo runs
// some of them again as processes (testdata/hang).
var hangCases = []hangCase{
	// A lock another rank holds, taken directly in memory (goroutine
	// ranks; processes of a node): the waiting rank spins and sleeps
	// instead of parking in a receive, and was never counted as blocked,
	// so this job hung without a report.
	{name: "LockHeld", n: 2, f: func(c *mpi.Comm) error {
		w, err := mpi.NewWindow[int64](c, 1)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			if err := w.Lock(0, true); err != nil {
				return err
			}
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			_, _, err := mpi.Recv[int64](c, 1, 0)
			return err
		}
		return w.Lock(0, true)
	}, want: []string{`rank 0 waits in Recv from 1 tag 0 at hang_test\.go:\d+ while rank 1 waits in Window\.Lock from 0 on window of WORLD`}},
	{name: "SsendCycle", n: 2, f: func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		if err := mpi.Ssend(c, int64(1), peer, 5); err != nil { // both ranks send first
			return err
		}
		_, _, err := mpi.Recv[int64](c, peer, 5)
		return err
	}, want: []string{`rank 0 waits in Ssend to 1 tag 5 at hang_test\.go:\d+ while rank 1 waits in Ssend to 0 tag 5 at hang_test\.go:\d+: each waits for the other`}},
	{name: "RecvCycle", n: 2, f: func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		if _, _, err := mpi.Recv[int64](c, peer, 0); err != nil { // both ranks receive first
			return err
		}
		return mpi.Send(c, int64(1), peer, 0)
	}, want: []string{`rank 0 waits in Recv from 1 tag 0 at hang_test\.go:\d+ while rank 1 waits in Recv from 0 tag 0`, `each waits for the other`}},
	{name: "WrongTag", n: 2, f: func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			return mpi.Ssend(c, int64(1), 1, 1)
		}
		_, _, err := mpi.Recv[int64](c, 0, 2)
		return err
	}, want: []string{`rank 1 waits in Recv from 0 tag 2 at hang_test\.go:\d+ but rank 0 waits in Ssend to 1 tag 1`, `the tags differ`}},
	{name: "WrongTagEager", n: 2, f: func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			if err := mpi.Send(c, int64(1), 1, 1); err != nil { // eager: completes at once
				return err
			}
			_, _, err := mpi.Recv[int64](c, 1, 3)
			return err
		}
		_, _, err := mpi.Recv[int64](c, 0, 2)
		return err
	}, want: []string{`rank 1 waits in Recv from 0 tag 2 at hang_test\.go:\d+, but the message that arrived from rank 0 has tag 1`, `the tags differ`}},
	{name: "WrongSource", n: 3, f: func(c *mpi.Comm) error {
		switch c.Rank() {
		case 0:
			return mpi.Ssend(c, int64(1), 1, 0)
		case 1:
			_, _, err := mpi.Recv[int64](c, 2, 0)
			return err
		}
		_, _, err := mpi.Recv[int64](c, 0, 9)
		return err
	}, want: []string{`rank 1 waits in Recv from 2 tag 0 at hang_test\.go:\d+.* rank 0.*: the sources differ`}},
	{name: "RecvNoSend", n: 2, f: func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			_, _, err := mpi.Recv[int64](c, 1, 7)
			return err
		}
		return mpi.Barrier(c)
	}, want: []string{`rank 0 waits in Recv from 1 tag 7 at hang_test\.go:\d+, but rank 1 is in Barrier on WORLD at hang_test\.go:\d+ and has sent nothing that matches`}},
	{name: "BarrierMissing", n: 4, f: func(c *mpi.Comm) error {
		if c.Rank() == 3 {
			_, _, err := mpi.Recv[int64](c, 0, 1) // rank 3 skips the barrier
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		return mpi.Send(c, int64(1), 3, 1)
	}, want: []string{`ranks 0-2 are in Barrier on WORLD at hang_test\.go:\d+, rank 3 is in Recv from 0 tag 1 at hang_test\.go:\d+: rank 3 never called Barrier`}},
	{name: "SelfSsend", n: 2, f: func(c *mpi.Comm) error {
		if err := mpi.Ssend(c, int64(1), c.Rank(), 0); err != nil {
			return err
		}
		_, _, err := mpi.Recv[int64](c, c.Rank(), 0)
		return err
	}, want: []string{`rank 0 waits in Ssend to 0 tag 0 at hang_test\.go:\d+: a blocking Ssend to itself`}},
	{name: "MismatchedCollectives", n: 4, f: func(c *mpi.Comm) error {
		if c.Rank() == 3 {
			_, err := mpi.Bcast(c, int64(1), 0)
			return err
		}
		_, err := mpi.Allreduce(c, int64(1), mpi.Sum[int64]())
		return err
	}, check: true, want: []string{`(rank 3 is in Bcast root 0 on WORLD at hang_test\.go:\d+, rank 2 is in Allreduce on WORLD|rank 0 is in Allreduce on WORLD at hang_test\.go:\d+, rank 3 is in Bcast root 0 on WORLD): mismatched collectives`}},
	{name: "BcastRoots", n: 3, f: func(c *mpi.Comm) error {
		root := 0
		if c.Rank() == 2 {
			root = 1
		}
		if _, err := mpi.Bcast(c, int64(c.Rank()), root); err != nil {
			return err
		}
		return mpi.Barrier(c)
	}, check: true, want: []string{`rank \d is in Bcast root [01] on WORLD at hang_test\.go:\d+, rank \d is in Bcast root [01] on WORLD: different roots`}},
	{name: "EarlyReturn", n: 2, f: func(c *mpi.Comm) error {
		if c.Rank() == 1 {
			return nil // forgot to send
		}
		_, _, err := mpi.Recv[int64](c, 1, 4)
		return err
	}, want: []string{`rank 1 returned from its function while rank 0 waits in Recv from it \(tag 4\) at hang_test\.go:\d+`}},
	{name: "SetRecvCycle", n: 2, f: func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		var rs mpi.Requests // both ranks wait for their receives before sending
		if err := mpi.PostIrecvInto(&rs, c, make([]int64, 1), peer, 6); err != nil {
			return err
		}
		if err := rs.WaitAll(); err != nil {
			return err
		}
		return mpi.Send(c, int64(1), peer, 6)
	}, want: []string{`rank 0 waits in Requests\.WaitAll from 1 tag 6 at hang_test\.go:\d+ while rank 1 waits in Requests\.WaitAll from 0 tag 6 at hang_test\.go:\d+: each waits for the other`}},
	{name: "ThreeCycle", n: 3, f: func(c *mpi.Comm) error {
		next := (c.Rank() + 1) % c.Size()
		if err := mpi.Ssend(c, int64(1), next, 0); err != nil {
			return err
		}
		_, _, err := mpi.Recv[int64](c, mpi.AnySource, 0)
		return err
	}, want: []string{`rank 0 waits in Ssend to 1 tag 0 .*rank 1 waits in Ssend to 2 tag 0 .*rank 2 waits in Ssend to 0 tag 0 .*in a cycle`}},
}

// TestHangDiagnosis runs each mistake over goroutine ranks with a short
// threshold: Run must return the hang report with the expected diagnosis
// instead of hanging. The two-rank cases run again with ranks that watch
// their requests before they park (Config.Spin): a watching rank must
// still park, and be seen blocked.
func TestHangDiagnosis(t *testing.T) {
	for _, tc := range hangCases {
		for _, spin := range []time.Duration{0, 50 * time.Microsecond} {
			if spin > 0 && tc.n > 2 {
				continue
			}
			name := tc.name
			if spin > 0 {
				name += "/spin"
			}
			t.Run(name, func(t *testing.T) { hangDiagnosis(t, tc, spin) })
		}
	}
}

func hangDiagnosis(t *testing.T, tc hangCase, spin time.Duration) {
	t.Parallel()
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 300 * time.Millisecond
	cfg.Check = tc.check
	cfg.Spin = spin
	done := make(chan error, 1)
	go func() { done <- mpi.RunConfig(tc.n, cfg, tc.f) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return: the hang was not detected")
	}
	if err == nil {
		t.Fatal("Run returned nil for a job that hangs")
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if d, ok := strings.CutPrefix(l, "diagnosis: "); ok {
			lines = append(lines, d)
		}
	}
	for _, l := range lines {
		ok := true
		for _, w := range tc.want {
			if !regexp.MustCompile(w).MatchString(l) {
				ok = false
			}
		}
		if ok {
			return
		}
	}
	t.Errorf("no diagnosis line matches %q; Run returned:\n%v", tc.want, err)
}

// TestHangReportOff checks that MPIGO_HANG_REPORT=0 (HangReport <= 0)
// leaves a slow but correct job alone, and that a job that blocks for
// less than the threshold is not reported.
func TestHangReportSlowJob(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 2 * time.Second
	err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			time.Sleep(300 * time.Millisecond) // rank 1 waits, rank 0 computes
			return mpi.Send(c, int64(1), 1, 0)
		}
		_, _, err := mpi.Recv[int64](c, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.HangReport = 100 * time.Millisecond
	err = mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		// Rank 0 computes for longer than the threshold while rank 1
		// waits: not every rank is blocked, so no report.
		if c.Rank() == 0 {
			time.Sleep(400 * time.Millisecond)
			return mpi.Send(c, int64(1), 1, 0)
		}
		_, _, err := mpi.Recv[int64](c, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if errors.Is(err, mpi.ErrProcFailed) {
		t.Fatal(err)
	}
}

// TestHangReportBusyReceiver is the false report TestStress met on a slow
// machine: every rank has a goroutine parked (a sender in WaitAll), while
// another goroutine of one rank keeps receiving messages that were already
// there, so its receives never park. The job is progressing, not hung.
func TestHangReportBusyReceiver(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 100 * time.Millisecond
	const n = 150
	err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		if c.Rank() == 1 {
			for i := range n {
				if err := mpi.Send(c, int64(i), 0, 1); err != nil {
					return err
				}
			}
			if err := mpi.Send(c, int64(n), 0, 4); err != nil { // all sent
				return err
			}
			// Parked until rank 0 has received them all.
			_, _, err := mpi.Recv[int64](c, 0, 2)
			if err != nil {
				return err
			}
			return mpi.Send(c, int64(0), 0, 3)
		}
		done := make(chan error, 1)
		go func() { // parked for the whole run
			_, _, err := mpi.Recv[int64](c, 1, 3)
			done <- err
		}()
		// Let every message arrive, then take them slowly: each receive
		// finds its message queued and never parks.
		if _, _, err := mpi.Recv[int64](c, 1, 4); err != nil {
			return err
		}
		for i := range n {
			time.Sleep(3 * time.Millisecond)
			v, _, err := mpi.Recv[int64](c, 1, 1)
			if err != nil {
				return err
			}
			if v != int64(i) {
				return fmt.Errorf("message %d: got %d", i, v)
			}
		}
		if err := mpi.Send(c, int64(0), 1, 2); err != nil {
			return err
		}
		return <-done
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHangReportEndsRun is issue 40's promise that a hang report fails
// the job: here each rank's function waits (outside the library) for a
// goroutine of its own that waits in MPI, and that goroutine, when its
// call fails, waits again for a result that never comes. Run must still
// return the report, and name the ranks it had to leave behind, instead
// of blocking for ever after the report.
func TestHangReportEndsRun(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 200 * time.Millisecond
	never := make(chan struct{})
	defer close(never) // lets the goroutines left behind go at the end
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
			res := make(chan int64, 1) // lets the goroutines end at the test's end
			go func() {
				v, _, err := mpi.Recv[int64](c, 1-c.Rank(), 0) // both receive: a deadlock
				if err != nil {
					<-never // the program's bug: no result on error
				}
				res <- v
			}()
			<-res
			return nil
		})
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return 15s after the hang began")
	}
	if err == nil {
		t.Fatal("Run returned nil for a job that hung")
	}
	for _, want := range []string{"each waits for the other", "ranks 0,1 did not return within"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run's error lacks %q:\n%v", want, err)
		}
	}
	t.Logf("Run returned after %v", time.Since(start).Round(time.Millisecond))
}

package mpi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/engine"
)

// TestFailJobEndsOrphanWait is issue 40's hang that a report did not end:
// a rank's goroutine parked on a request that its engine no longer holds
// (goroutines of a rank that ran collectives on one communicator at once
// shared the rank's meeting slot, and one reset the request another waited
// on). The engine's Abort fails only the requests it holds, so the wait,
// and Run with it, stayed blocked for ever after the report. Failing the
// job must end every parked wait.
func TestFailJobEndsOrphanWait(t *testing.T) {
	j, err := newLocalJob(2, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	p := j.procs[0]
	r := &engine.Request{Context: 7, Peer: 1, Tag: 3} // posted nowhere: nothing completes it
	done := make(chan error, 1)
	go func() { done <- p.WaitRefIn(r, nil).Err }()
	for deadline := time.Now().Add(5 * time.Second); !p.Blk.AnyParked(); {
		if time.Now().After(deadline) {
			t.Fatal("the wait did not park")
		}
		time.Sleep(time.Millisecond)
	}
	for _, q := range j.procs {
		q.Blk.Returned.Store(true)
	}
	j.failJob(&hangError{report: "mpigo: hang report: test\n", diag: []string{"test"}})
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, errHung) {
			t.Fatalf("the wait ended with %v, want the job's failure", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait is still parked 5s after the job failed")
	}
}

// TestHangReportOnce is issue 41's noise: Run printed the report on
// standard error and returned it again in its error, so Main printed it
// twice; and the ranks' calls failed with "process failed", though no
// process had. The report must come once (in the error), and the calls
// of a hung job fail with ErrOther saying that the job hung.
func TestHangReportOnce(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HangReport = 200 * time.Millisecond
	var callErr [2]error
	var runErr error
	printed := captureStderr(t, func() {
		runErr = RunConfig(2, cfg, func(c *Comm) error {
			_, _, err := Recv[int64](c, 1-c.Rank(), 0) // both receive first
			callErr[c.Rank()] = err
			return err
		})
	})
	if runErr == nil || !strings.Contains(runErr.Error(), "mpigo: hang report:") {
		t.Fatalf("Run returned %v, want the hang report", runErr)
	}
	if len(printed) > 0 {
		t.Errorf("Run printed, besides returning the report:\n%s", printed)
	}
	for rank, err := range callErr {
		if errors.Is(err, ErrProcFailed) || !errors.Is(err, ErrOther) || !strings.Contains(fmt.Sprint(err), "the job hung") {
			t.Errorf("rank %d's Recv failed with %v, want ErrOther saying the job hung", rank, err)
		}
	}
}

// TestCheckReportHeader: check mode's report starts with its header (no
// diagnosis line before it), calls itself a check report, not a hang
// report, and states its finding once.
func TestCheckReportHeader(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Check = true
	cfg.HangReport = 200 * time.Millisecond
	err := RunConfig(3, cfg, func(c *Comm) error {
		root := 0
		if c.Rank() == 2 {
			root = 1
		}
		if _, err := Bcast(c, int64(1), root); err != nil {
			return err
		}
		return Barrier(c)
	})
	text := fmt.Sprint(err)
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "mpigo: check report: ") {
		t.Fatalf("Run's error does not start with the check report's header on its second line:\n%s", text)
	}
	if n := strings.Count(text, "different roots"); n != 2 { // the summary line and the diagnosis
		t.Errorf("the finding appears %d times, want 2 (summary, diagnosis):\n%s", n, text)
	}
}

// TestHangAbortOff: with MPIGO_HANG_ABORT=0 a hang report is printed and
// the job goes on; here the "hang" ends when a goroutine of rank 0 that
// slept outside MPI sends, and Run returns nil.
func TestHangAbortOff(t *testing.T) {
	t.Setenv("MPIGO_HANG_ABORT", "0")
	cfg := DefaultConfig()
	if !cfg.hangKeep {
		t.Fatal("MPIGO_HANG_ABORT=0 did not reach the Config")
	}
	cfg.HangReport = 100 * time.Millisecond
	var err error
	printed := captureStderr(t, func() {
		err = RunConfig(2, cfg, func(c *Comm) error {
			if c.Rank() == 0 {
				sent := make(chan error, 1)
				go func() {
					time.Sleep(800 * time.Millisecond) // every rank waits meanwhile
					sent <- Send(c, int64(1), 1, 0)
				}()
				if _, _, err := Recv[int64](c, 1, 1); err != nil {
					return err
				}
				return <-sent
			}
			if _, _, err := Recv[int64](c, 0, 0); err != nil {
				return err
			}
			return Send(c, int64(2), 0, 1)
		})
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(printed, "mpigo: hang report:") || !strings.Contains(printed, "the job goes on (MPIGO_HANG_ABORT=0)") {
		t.Errorf("no report saying that the job goes on:\n%s", printed)
	}
}

package mpi

import (
	"errors"
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
	defer j.close()
	p := j.procs[0]
	r := &engine.Request{Context: 7, Peer: 1, Tag: 3} // posted nowhere: nothing completes it
	done := make(chan error, 1)
	go func() { done <- p.waitRefIn(r, nil).Err }()
	for deadline := time.Now().Add(5 * time.Second); !p.blk.anyParked(); {
		if time.Now().After(deadline) {
			t.Fatal("the wait did not park")
		}
		time.Sleep(time.Millisecond)
	}
	for _, q := range j.procs {
		q.blk.returned.Store(true)
	}
	j.failJob(&hangError{report: "mpigo: hang report: test\n", diag: []string{"test"}})
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, ErrProcFailed) {
			t.Fatalf("the wait ended with %v, want the job's failure", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait is still parked 5s after the job failed")
	}
}

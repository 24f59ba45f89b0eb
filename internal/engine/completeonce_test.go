package engine

import (
	"errors"
	"sync"
	"testing"
)

// TestCompleteOnce races a request's own completer against a second one
// (a failed job's wait reaper): exactly one completes it, the status is
// the winner's, and the race detector sees no conflicting writes.
func TestCompleteOnce(t *testing.T) {
	errJob := errors.New("the job hung")
	for i := 0; i < 200; i++ {
		r := &Request{Peer: 3, Tag: 7}
		var wg sync.WaitGroup
		var won [2]bool
		wg.Add(2)
		go func() { defer wg.Done(); won[0] = r.CompleteOnce(Status{Source: -1, Tag: -1}) }()
		go func() { defer wg.Done(); won[1] = r.FailOnce(errJob) }()
		wg.Wait()
		if won[0] == won[1] {
			t.Fatalf("round %d: both or neither completed the request (%v)", i, won)
		}
		if !r.Done() {
			t.Fatalf("round %d: not done", i)
		}
		if st := r.Status(); won[1] != (st.Err == errJob) {
			t.Fatalf("round %d: status %+v does not belong to the winner (%v)", i, st, won)
		}
		if r.CompleteOnce(Status{}) || r.FailOnce(errJob) {
			t.Fatalf("round %d: a completed request was completed again", i)
		}
	}
}

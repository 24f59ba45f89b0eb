package device

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// A peer's inbox gone after the start-up fence means the peer left the
// job: this rank fails as a consequence (ClassProcFailed, which package
// mpi makes ErrProcFailed, so that the launcher names the rank that
// failed first); other errors of mapping an inbox stay what they are.
func TestAttachError(t *testing.T) {
	gone := fmt.Errorf("shm: rank 2: opening the inbox of rank 3: %w", fs.ErrNotExist)
	var de *Error
	if err := attachError(gone); !errors.As(err, &de) || de.Class != ClassProcFailed {
		t.Errorf("inbox gone: %v, want a peer failure", err)
	}
	other := fmt.Errorf("shm: rank 2: the inbox of rank 3 does not match this job's layout")
	if err := attachError(other); errors.As(err, &de) || err != other {
		t.Errorf("layout mismatch: %v, want it unchanged", err)
	}
}

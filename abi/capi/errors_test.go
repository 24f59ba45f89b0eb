//go:build cgo

package capi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// A rank that meets MPI_ERRORS_ARE_FATAL ends with the error's class,
// unless it ends only because another rank failed: then with
// mpi.ExitPeerFailed, which the launcher reads as "not the culprit".
func TestFatalStatus(t *testing.T) {
	lost := fmt.Errorf("mpi: Recv on rank 0 of WORLD (source 1, tag 0): %w: rank 1 is gone", mpi.ErrProcFailed)
	for _, tc := range []struct {
		err   error
		class int32
		want  int
	}{
		{errors.New("rank 9 does not exist"), MPI_ERR_RANK, int(MPI_ERR_RANK)},
		{lost, MPIX_ERR_PROC_FAILED, mpi.ExitPeerFailed},
		{classErr(MPI_ERR_TRUNCATE, "too long"), MPI_ERR_TRUNCATE, int(MPI_ERR_TRUNCATE)},
	} {
		if got := fatalStatus(tc.err, tc.class); got != tc.want {
			t.Errorf("fatalStatus(%v, %d) = %d, want %d", tc.err, tc.class, got, tc.want)
		}
	}
}

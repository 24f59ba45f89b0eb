package mpi

import "testing"

// MPI_APPNUM is the index of the rank's MPMD group (mpigo run A : B
// gives MPIGO_APPS, and no MPIGO_APPNUM): it was the launcher's
// MPIGO_APPNUM alone, 0 for every rank of such a job.
func TestAppOf(t *testing.T) {
	for _, tc := range []struct {
		apps      []int
		rank, def int
		want      int
	}{
		{[]int{2, 1}, 0, 0, 0},
		{[]int{2, 1}, 1, 0, 0},
		{[]int{2, 1}, 2, 0, 1},
		{[]int{1, 2, 3}, 5, 0, 2},
		{nil, 3, 4, 4}, // no groups: the launcher's word
	} {
		if got := appOf(tc.apps, tc.rank, tc.def); got != tc.want {
			t.Errorf("appOf(%v, %d, %d) = %d, want %d", tc.apps, tc.rank, tc.def, got, tc.want)
		}
	}
}

package device

import "testing"

// A process's share of its node's cores: at least one; one more (extra)
// for a program on the standard ABI, whose own thread keeps a processor
// while it runs C between its calls, or for one that asked for
// asynchronous progress.
func TestCoreShare(t *testing.T) {
	for _, tc := range []struct {
		cpus, here, total int
		extra             bool
		want              int
	}{
		{2, 1, 2, false, 1},
		{2, 1, 2, true, 2},
		{2, 1, 4, false, 1},
		{2, 1, 4, true, 2},
		{16, 2, 4, false, 8},
		{16, 2, 4, true, 9},
		{4, 1, 1, false, 4},
	} {
		if got := coreShare(tc.cpus, tc.here, tc.total, tc.extra); got != tc.want {
			t.Errorf("coreShare(%d cores, %d of %d ranks, extra %v) = %d, want %d", tc.cpus, tc.here, tc.total, tc.extra, got, tc.want)
		}
	}
}

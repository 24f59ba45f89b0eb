package mpi

import (
	"strings"
	"testing"
)

// MPIGO_ASYNC_PROGRESS reaches a launched process's config: 1 (and its
// spellings) asks for the processor more, 0 or unset does not, and
// anything else is refused with a word on standard error.
func TestAsyncProgressEnv(t *testing.T) {
	for _, tc := range []struct {
		v     string
		want  bool
		warns bool
	}{
		{"", false, false},
		{"0", false, false},
		{"off", false, false},
		{"1", true, false},
		{"on", true, false},
		{"yes", true, false},
		{"2", false, true},
		{"fast", false, true},
	} {
		t.Setenv("MPIGO_ASYNC_PROGRESS", tc.v)
		var cfg Config
		printed := captureStderr(t, func() { cfg = DefaultConfig() })
		if cfg.asyncProgress != tc.want {
			t.Errorf("MPIGO_ASYNC_PROGRESS=%q: asyncProgress %v, want %v", tc.v, cfg.asyncProgress, tc.want)
		}
		if warned := strings.Contains(printed, "MPIGO_ASYNC_PROGRESS="); warned != tc.warns {
			t.Errorf("MPIGO_ASYNC_PROGRESS=%q: printed %q, want a warning: %v", tc.v, printed, tc.warns)
		}
	}
}

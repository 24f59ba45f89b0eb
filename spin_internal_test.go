package mpi

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/progress"
)

// Config.Spin makes the job's waits watch their requests only for
// goroutine ranks over inproc that each have a processor, by default for
// 50 us; below 0 none does. Meetings watch as the other waits do.
func TestSpinSetting(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	tests := []struct {
		name      string
		n         int
		spin      time.Duration
		transport string
		want      bool // every wait watches
	}{
		{"two ranks", 2, 50 * time.Microsecond, "", procs >= 2},
		{"by default", 2, 0, "", procs >= 2},
		{"off", 2, -1, "", false},
		{"more ranks than processors", procs + 1, 50 * time.Microsecond, "", false},
		{"more ranks than processors, default", procs + 1, 0, "", false},
		{"one rank", 1, 50 * time.Microsecond, "", false},
		{"tcp ranks poll their sockets their own way", 2, 50 * time.Microsecond, "tcp", false},
		{"tcp, default", 2, 0, "tcp", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Spin = tt.spin
			cfg.Transport = tt.transport
			j, err := newLocalJob(tt.n, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if got := j.Prog.Spins(); got != tt.want {
				t.Errorf("spinning = %v, want %v (GOMAXPROCS %d)", got, tt.want, procs)
			}
			want := tt.spin
			if want == 0 {
				want = defaultSpin
			}
			if tt.want && j.Prog.PollTime() != want {
				t.Errorf("poll time %v, want the spin time %v", j.Prog.PollTime(), want)
			}
			for _, p := range j.procs {
				if _, rank := p.Prog.(*progress.Rank); !rank && tt.transport == "" {
					t.Errorf("rank %d waits through %T, want its own *progress.Rank (it has a mailbox)", p.Rank, p.Prog)
				}
			}
		})
	}
}

// MPIGO_SPIN sets Config.Spin; a value that is neither a duration nor
// "off" is refused with a warning, and the default stays.
func TestSpinEnvironment(t *testing.T) {
	tests := []struct {
		env  string
		want time.Duration
		warn bool
	}{
		{"", 0, false},
		{"50us", 50 * time.Microsecond, false},
		{"0", 0, false},
		{"fast", 0, true},
		{"-1ms", -time.Millisecond, false},
		{"off", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv("MPIGO_SPIN", tt.env)
			out := captureStderr(t, func() {
				if got := DefaultConfig().Spin; got != tt.want {
					t.Errorf("MPIGO_SPIN=%q: Spin = %v, want %v", tt.env, got, tt.want)
				}
			})
			if got := strings.Contains(out, "MPIGO_SPIN"); got != tt.warn {
				t.Errorf("MPIGO_SPIN=%q: warning %v, want %v (stderr %q)", tt.env, got, tt.warn, out)
			}
		})
	}
}

// captureStderr returns what f writes to the package's stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := stderr
	stderr = w
	f()
	stderr = old
	w.Close()
	b, _ := io.ReadAll(r)
	r.Close()
	return string(b)
}

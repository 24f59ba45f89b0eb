package device

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A rank process with GOMAXPROCS above its share of the cores is warned
// only under a real-time policy, and the warning says what to do.
func TestRealtimeWarning(t *testing.T) {
	for _, tc := range []struct {
		gomaxprocs, share int
		rt                bool
		warn              bool
	}{
		{2, 1, true, true},
		{8, 2, true, true},
		{1, 1, true, false},  // at its share
		{1, 2, true, false},  // below it
		{2, 1, false, false}, // normal priority: the kernel shares the CPUs
	} {
		w := realtimeWarning(3, tc.gomaxprocs, tc.share, tc.rt)
		if (w != "") != tc.warn {
			t.Errorf("GOMAXPROCS %d, share %d, real-time %v: warning %q, want one: %v", tc.gomaxprocs, tc.share, tc.rt, w, tc.warn)
			continue
		}
		if tc.warn {
			for _, want := range []string{"rank 3", "GOMAXPROCS=" + strconv.Itoa(tc.gomaxprocs), "(" + strconv.Itoa(tc.share) + ")", "Unset GOMAXPROCS"} {
				if !strings.Contains(w, want) {
					t.Errorf("warning %q does not say %q", w, want)
				}
			}
		}
	}
}

// realtime agrees with the kernel's account of this process's policy.
func TestRealtimeAgreesWithProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		if realtime() {
			t.Fatal("realtime is true off Linux")
		}
		return
	}
	b, err := os.ReadFile("/proc/self/sched")
	if err != nil {
		t.Skipf("no /proc/self/sched: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "policy" {
			p, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatalf("policy line %q", l)
			}
			if want := p == 1 || p == 2; realtime() != want {
				t.Fatalf("realtime() = %v, but /proc/self/sched says policy %d", realtime(), p)
			}
			return
		}
	}
	t.Skip("/proc/self/sched has no policy line")
}

// Asynchronous progress is not given under a real-time policy, with a
// warning naming the rank and the variable; otherwise as asked, silently.
func TestAsyncUnderRealtime(t *testing.T) {
	for _, tc := range []struct{ async, rt, want bool }{
		{false, false, false},
		{true, false, true},
		{false, true, false},
		{true, true, false},
	} {
		got, w := asyncUnderRealtime(5, tc.async, tc.rt)
		if got != tc.want {
			t.Errorf("async %v, real-time %v: %v, want %v", tc.async, tc.rt, got, tc.want)
		}
		if warned := tc.async && tc.rt; (w != "") != warned {
			t.Errorf("async %v, real-time %v: warning %q, want one: %v", tc.async, tc.rt, w, warned)
		} else if warned && (!strings.Contains(w, "rank 5") || !strings.Contains(w, "MPIGO_ASYNC_PROGRESS is ignored")) {
			t.Errorf("warning %q names neither the rank nor the variable", w)
		}
	}
}

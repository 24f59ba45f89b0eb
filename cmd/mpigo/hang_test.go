package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/trace"
)

// buildHangProg builds testdata/hangprog once for a test.
func buildHangProg(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hangprog")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/hangprog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestRunHangReport runs classic mistakes as processes: mpigo run must
// gather every rank's state, print one report with the diagnosis and stop
// the job, well before --timeout.
func TestRunHangReport(t *testing.T) {
	bin := buildHangProg(t)
	cases := []struct {
		mode  string
		n     int
		flags []string
		want  string // a regular expression for one diagnosis line
	}{
		{"ssendcycle", 2, nil, `diagnosis: rank 0 waits in Ssend to 1 tag 5 at main\.go:\d+ while rank 1 waits in Ssend to 0 tag 5 at main\.go:\d+: each waits for the other`},
		{"wrongtag", 2, nil, `diagnosis: rank 1 waits in Recv from 0 tag 2 at main\.go:\d+ but rank 0 waits in Ssend to 1 tag 1 at main\.go:\d+: the tags differ`},
		{"earlyreturn", 2, nil, `diagnosis: rank 1 returned from its function while rank 0 waits in Recv from it \(tag 4\) at main\.go:\d+`},
		{"barriermissing", 3, nil, `diagnosis: ranks 0,1 are in Barrier on WORLD at main\.go:\d+, rank 2 is in Recv from 0 tag 1 at main\.go:\d+: rank 2 never called Barrier`},
		{"bcastroots", 3, []string{"--check"}, `rank \d is in Bcast root [01] on WORLD at main\.go:\d+, rank \d is in Bcast root [01] on WORLD: different roots`},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			start := time.Now()
			args := append([]string{"--hang-report", "500ms", "--timeout", "60s"}, tc.flags...)
			args = append(args, "-n", strconv.Itoa(tc.n), bin, tc.mode)
			_, errs, code := runJob(t, args...)
			if code == 0 {
				t.Fatalf("a hung job exited 0:\n%s", errs)
			}
			if !regexp.MustCompile(tc.want).MatchString(errs) {
				t.Fatalf("no line matches %q in:\n%s", tc.want, errs)
			}
			if strings.Count(errs, "mpigo: hang report") > 1 {
				t.Errorf("more than one report:\n%s", errs)
			}
			if d := time.Since(start); d > 40*time.Second {
				t.Errorf("took %v: the hang was found by the timeout, not the report", d)
			}
		})
	}
}

// TestRunTimeoutReport checks that --timeout prints the state of every
// rank before it stops them (hang diagnosis disabled, so only the timeout
// can end the job).
func TestRunTimeoutReport(t *testing.T) {
	bin := buildHangProg(t)
	_, errs, code := runJob(t, "--hang-report", "0", "--timeout", "3s", "-n", "2", bin, "ssendcycle")
	if code != 124 {
		t.Errorf("exit %d, want 124", code)
	}
	// With hang diagnosis off the ranks do not catch SIGQUIT: there is
	// no report, only the timeout message.
	if !strings.Contains(errs, "timeout after 3s") {
		t.Fatalf("stderr:\n%s", errs)
	}
	_, errs, _ = runJob(t, "--hang-report", "30s", "--timeout", "3s", "-n", "2", bin, "ssendcycle")
	if !strings.Contains(errs, "--timeout 3s expired") || !regexp.MustCompile(`each waits for the other`).MatchString(errs) {
		t.Fatalf("no report at the timeout:\n%s", errs)
	}
}

// TestRunTrace records a job's timeline with mpigo run --trace, checks
// the file, and summarises it.
func TestRunTrace(t *testing.T) {
	bin := buildHangProg(t)
	file := filepath.Join(t.TempDir(), "job.json")
	out, errs, code := runJob(t, "--trace", file, "--timeout", "60s", "-n", "3", bin, "trace")
	if code != 0 || !strings.Contains(out, "sum 3") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
	}
	v := checkTraceFile(t, file)
	if len(v.Ranks) != 3 {
		t.Fatalf("ranks %v", v.Ranks)
	}
	user := 0
	for _, a := range v.Arrows {
		if !a.Coll {
			user++
		}
	}
	if user != 12 {
		t.Errorf("%d message arrows, want 12 (4 Sendrecv on 3 ranks)", user)
	}
	// Issue 41: the Barrier at the end of mpi.Main is mpigo's, not the
	// program's (which calls none): it is labelled so, on every rank.
	internal := 0
	for _, s := range v.Spans {
		if s.Name == "Barrier" {
			t.Errorf("rank %d: a span named Barrier, which the program never calls", s.Rank)
		}
		if s.Internal && s.Name == "Barrier (mpigo: end of Main)" {
			internal++
		}
	}
	if internal != 3 {
		t.Errorf("%d spans of the end-of-Main Barrier marked internal, want 3 (one per rank)", internal)
	}
	var sum strings.Builder
	if c := run([]string{"trace", file}, &sum, &sum); c != 0 {
		t.Fatalf("mpigo trace: %d\n%s", c, sum.String())
	}
	for _, w := range []string{"3 ranks", "(and 3 by mpigo itself", "time in MPI per rank", "rank 2", "Sendrecv", "Allreduce", "late senders", "late receivers", "largest messages"} {
		if !strings.Contains(sum.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, sum.String())
		}
	}
}

// checkTraceFile parses a trace: arrows have both ends and go forward,
// spans of a track nest, each track's clock goes forward.
func checkTraceFile(t *testing.T, file string) *trace.View {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := trace.Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	v, err := trace.NewView(f)
	if err != nil {
		t.Fatal(err)
	}
	stacks, last := map[int][]float64{}, map[int]float64{}
	for _, e := range f.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Ts < last[e.Tid] {
			t.Fatalf("track %d goes back in time", e.Tid)
		}
		last[e.Tid] = e.Ts
		st := stacks[e.Tid]
		for len(st) > 0 && st[len(st)-1] <= e.Ts {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && e.Ts+e.Dur > st[len(st)-1]+1e-6 {
			t.Fatalf("track %d: span %s does not nest", e.Tid, e.Name)
		}
		stacks[e.Tid] = append(st, e.Ts+e.Dur)
	}
	for _, a := range v.Arrows {
		if a.End < a.Start {
			t.Fatalf("message %d -> %d arrives before it leaves", a.From, a.To)
		}
	}
	return v
}

// TestFamilyStillForTheThreshold: a job whose ranks said they were blocked
// while the family's other job ran is hung only once the family has been
// still for the threshold. Parents blocked while their children computed
// show that state until their next tick, also after their wait ended as
// the children finished and left: a launcher tick in between must not
// report them hung (TestSpawnWaitIsNoHang failed so under load). A real
// hang is still reported, a threshold later.
func TestFamilyStillForTheThreshold(t *testing.T) {
	kvs, err := boot.NewServer("127.0.0.1:0", 3, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer kvs.Close()
	var fam hangFamily
	d := &diagFlags{hang: "1s"}
	clock := time.Unix(1000, 0)
	now := func() time.Time { return clock }
	parents := newHangWatch(d, kvs, &fam)
	defer parents.stop()
	children := newHangWatch(d, kvs, &fam)
	defer children.stop()
	parents.now, children.now = now, now
	pp := []*rankProc{{rank: 0, n: 1}, {rank: 1, n: 1}}
	cp := []*rankProc{{rank: 2, n: 1}}
	// The parents have said they are blocked (in Recv from a child); the
	// child computes, so it has said nothing.
	kvs.Preset(diag.KeyHang+"0", `blocked [{"rank":0}]`)
	kvs.Preset(diag.KeyHang+"1", `blocked [{"rank":1}]`)
	tick := func(d time.Duration) (string, bool) {
		clock = clock.Add(d)
		children.hung(cp)
		return parents.hung(pp)
	}
	if _, hung := tick(0); hung {
		t.Fatal("parents reported hung while their child runs")
	}
	// The child answered and exited; the parents' states are the old ones
	// until their next tick.
	cp[0].done = true
	children.stop()
	if rep, hung := tick(200 * time.Millisecond); hung {
		t.Fatalf("parents reported hung at the launcher's first tick after their child left:\n%s", rep)
	}
	if rep, hung := tick(500 * time.Millisecond); hung {
		t.Fatalf("parents reported hung before the family was still for the threshold:\n%s", rep)
	}
	// Still blocked a threshold after the family went still: a hang.
	if _, hung := tick(600 * time.Millisecond); !hung {
		t.Fatal("parents blocked with the family still for the threshold: no report")
	}
}

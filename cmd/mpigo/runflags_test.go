package main

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The flags of mpiexec and mpirun that mpigo run has, read without
// starting anything.
func TestRunFlagParsing(t *testing.T) {
	t.Setenv("MPIGO_CLI_TEST_FOO", "from shell")
	for _, tc := range []struct {
		args    []string
		env     []string // -x, -genv
		genv    []string // the first group's -env
		n       int
		slots   []int
		byNode  bool
		bind    bool
		outDir  string
		outCopy bool
		note    string // placementNote must contain it (and be empty if "")
		err     string
	}{
		{args: []string{"-x", "MPIGO_CLI_TEST_FOO", "-x", "B=1", "-n", "2", "prog", "-x", "C"}, env: []string{"MPIGO_CLI_TEST_FOO=from shell", "B=1"}, n: 2, outCopy: true},
		{args: []string{"-genv", "A", "a b", "-genv", "B=c=d", "--genv=C=", "prog"}, env: []string{"A=a b", "B=c=d", "C="}, n: 1, outCopy: true},
		{args: []string{"-env", "A", "1", "--env", "B=2", "-n", "3", "prog", "-env", "X", "Y"}, genv: []string{"A=1", "B=2"}, n: 3, outCopy: true},
		{args: []string{"--host", "a,b:3", "-ppn", "2", "prog"}, n: 4, slots: []int{2, 2}, outCopy: true},
		{args: []string{"--host", "a,b,c", "-ppn", "2", "-n", "9", "prog"}, n: 9, slots: []int{2, 2, 2}, outCopy: true},
		{args: []string{"--host", "a,b", "--map-by", "ppr:3:node", "prog"}, n: 6, slots: []int{3, 3}, outCopy: true},
		{args: []string{"--host", "a,b", "-npernode", "1", "-n", "2", "prog"}, n: 2, slots: []int{1, 1}, outCopy: true},
		{args: []string{"--host", "a:2,b:2", "--map-by", "node:oversubscribe", "-n", "4", "prog"}, n: 4, slots: []int{2, 2}, byNode: true, outCopy: true},
		{args: []string{"--bind-to", "core", "--output-filename", "out", "prog"}, n: 1, bind: true, outDir: "out", outCopy: true},
		{args: []string{"--bind-to", "none", "--output-filename", "out:nocopy", "prog"}, n: 1, outDir: "out"},
		{args: []string{"--map-by", "core", "prog"}, n: 1, outCopy: true, note: "--map-by core is taken as --map-by slot"},
		{args: []string{"--map-by", "hwthread:oversubscribe", "prog"}, n: 1, outCopy: true, note: "--map-by hwthread is taken as --map-by slot"},
		{args: []string{"-x", "1A", "prog"}, err: "want VAR or VAR=VALUE"},
		{args: []string{"-genv", "A"}, err: "no value"},
		{args: []string{"--host", "a,b", "--map-by", "ppr:2:node", "-n", "5", "prog"}, err: "2 ranks per host on 2 host(s) make 4 ranks, but the job has 5"},
		{args: []string{"--map-by", "ppr:2:socket", "prog"}, err: "only ppr:N:node"},
		{args: []string{"--map-by", "numa", "prog"}, err: "--map-by numa is not supported"},
		{args: []string{"--map-by", "slot:PE=2", "prog"}, err: `modifier "PE=2" is not supported`},
		{args: []string{"-ppn", "2", "-npernode", "2", "prog"}, err: "give one of them"},
		{args: []string{"-ppn", "3", "--ranks-per-proc", "2", "prog"}, err: "multiple of the ranks per process"},
		{args: []string{"--bind-to", "socket", "prog"}, err: "--bind-to socket is not supported"},
		{args: []string{"--output-filename", "d:copy", "prog"}, err: "the only option is :nocopy"},
	} {
		cfg, err := parseRunConfig(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		var slots []int
		for _, h := range cfg.hosts {
			slots = append(slots, h.slots)
		}
		if !reflect.DeepEqual(cfg.env, tc.env) || !reflect.DeepEqual(cfg.groups[0].env, tc.genv) || cfg.groups[0].n != tc.n ||
			!reflect.DeepEqual(slots, tc.slots) || cfg.byNode != tc.byNode || cfg.bind != tc.bind || cfg.outputDir != tc.outDir || cfg.outputCopy != tc.outCopy {
			t.Errorf("%q: env %q group env %q n %d slots %v byNode %v bind %v out %q copy %v", tc.args, cfg.env, cfg.groups[0].env,
				cfg.groups[0].n, slots, cfg.byNode, cfg.bind, cfg.outputDir, cfg.outputCopy)
		}
		if (tc.note == "") != (cfg.placementNote == "") || !strings.Contains(cfg.placementNote, tc.note) {
			t.Errorf("%q: placement note %q, want one with %q", tc.args, cfg.placementNote, tc.note)
		}
	}
	// The program's own arguments are never rewritten.
	fs := runFlags(&runConfig{}, &runGroup{}, new(int), nil)
	got := joinPairs([]string{"-n", "2", "--tag-output", "-genv", "A", "1", "prog", "-genv", "B", "2"}, fs)
	want := []string{"-n", "2", "--tag-output", "-genv=A=1", "prog", "-genv", "B", "2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("joinPairs: %q, want %q", got, want)
	}
}

// parseRunConfig runs the checks runCmd makes before it starts anything.
func parseRunConfig(args []string) (*runConfig, error) {
	cfg, err := parseRun(args, nil)
	if err != nil {
		return nil, err
	}
	return cfg, cfg.check()
}

// -x, -genv and -env reach every rank (each group its own -env); -x VAR
// passes on the launcher's value and warns when there is none.
func TestRunEnvironmentFlags(t *testing.T) {
	needSh(t)
	t.Setenv("MPIGO_CLI_TEST_FOO", "from shell")
	os.Unsetenv("MPIGO_CLI_TEST_UNSET")
	out, errs, code := runJob(t, "-x", "MPIGO_CLI_TEST_FOO", "-x", "MPIGO_CLI_TEST_UNSET", "-genv", "B", "b b", "-n", "2", "-env", "C=c1", "--tag-output",
		"sh", "-c", `echo "$MPIGO_CLI_TEST_FOO|$B|$C"`, ":", "-n", "1", "-env", "C", "c2", "sh", "-c", `echo "[g2] $MPIGO_CLI_TEST_FOO|$B|$C"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{"[0] from shell|b b|c1", "[1] from shell|b b|c1", "[2] [g2] from shell|b b|c2"}
	if got := sortedLines(out); !reflect.DeepEqual(got, want) {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if !strings.Contains(errs, "-x MPIGO_CLI_TEST_UNSET: MPIGO_CLI_TEST_UNSET is not set") {
		t.Errorf("no warning for an unset -x variable: %q", errs)
	}
}

// --output-filename DIR: DIR/rank.N/stdout and stderr, also printed here
// unless DIR:nocopy.
func TestRunOutputFilename(t *testing.T) {
	needSh(t)
	for _, nocopy := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "out")
		spec := dir
		if nocopy {
			spec += ":nocopy"
		}
		out, errs, code := runJob(t, "-n", "3", "--output-filename", spec, "sh", "-c", `echo "out $MPIGO_RANK"; echo "err $MPIGO_RANK" >&2`)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for r := 0; r < 3; r++ {
			for _, f := range []string{"stdout", "stderr"} {
				b, err := os.ReadFile(filepath.Join(dir, "rank."+strconv.Itoa(r), f))
				want := map[string]string{"stdout": "out ", "stderr": "err "}[f] + strconv.Itoa(r) + "\n"
				if err != nil || string(b) != want {
					t.Errorf("rank.%d/%s: %q, %v; want %q", r, f, b, err, want)
				}
			}
		}
		if shown := strings.Count(out, "out "); (nocopy && shown != 0) || (!nocopy && shown != 3) {
			t.Errorf("nocopy %v: printed here %q", nocopy, out)
		}
	}
}

// A rank that leaves while the others need it is named first: one that
// exits (status 0) in the middle of mpi.Main at once, over shm and tcp;
// one whose function returns (it then waits in mpi.Main for the others,
// which wait for it) after returnedQuiet.
func TestRunEarlyReturnBlame(t *testing.T) {
	dir := testProgs(t)
	prog := filepath.Join(dir, "earlyreturn")
	for _, tr := range []string{"shm", "tcp"} {
		_, errs, code := runJob(t, "--timeout", "60s", "-transport", tr, "-n", "3", prog, "exit")
		first := firstLauncherLine(errs)
		if code == 0 || code == 124 || !strings.Contains(first, "rank 1 (pid") || !strings.Contains(first, "exited (status 0) before mpi.Main finished, while other ranks still needed it") {
			t.Errorf("%s, exit: status %d, first line %q\n%s", tr, code, first, errs)
		}
		if strings.Contains(errs, "after losing a peer") {
			t.Errorf("%s: a waiting rank is blamed:\n%s", tr, errs)
		}
	}
	old := returnedQuiet
	returnedQuiet = time.Second
	defer func() { returnedQuiet = old }()
	for _, tr := range []string{"shm", "tcp"} {
		_, errs, code := runJob(t, "--timeout", "15s", "-transport", tr, "-n", "3", prog, "return")
		first := firstLauncherLine(errs)
		// The hang report (10 s) then ends the job, before --timeout.
		if code != 1 || !strings.HasPrefix(first, "mpigo run: rank(s) 1 returned from their function") || !strings.Contains(first, "rank(s) 0, 2 have not returned") ||
			!strings.Contains(errs, "diagnosis: rank 1 returned from its function while rank 0 waits in Recv from it") {
			t.Errorf("%s, return: status %d, first line %q\n%s", tr, code, first, errs)
		}
	}
}

// firstLauncherLine is the first line of the launcher's own in errs.
func firstLauncherLine(errs string) string {
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, "mpigo run: ") {
			return l
		}
	}
	return ""
}

// While ranks are slow to start, the launcher says which ones it still
// waits for, and where.
func TestRunStartupProgress(t *testing.T) {
	dir := testProgs(t)
	_, errs, code := runJob(t, "--timeout", "60s", "-n", "3", filepath.Join(dir, "earlydie"), "late", "5s")
	host, _ := os.Hostname()
	if code != 0 || !strings.Contains(errs, "2 of 3 processes have reported; still waiting for rank 1 (on "+host+")") {
		t.Errorf("exit %d, %q", code, errs)
	}
	if strings.Contains(errs, "rank 0 (on") || strings.Contains(errs, "rank 2 (on") {
		t.Errorf("ranks that reported are named: %q", errs)
	}
}

// Over ssh: -x, -genv and the launcher's MPIGO_ tunables (not MPIGO_TEST_)
// reach remote ranks; -ppn and --map-by place them; --bind-to core pins
// them.
func TestRunSSHFlags(t *testing.T) {
	agent := sshAgent(t)
	t.Setenv("MPIGO_CLI_TEST_FOO", "it's here")
	t.Setenv("MPIGO_COLL_CLITEST", "9")
	out, errs, code := runJob(t, "--launch-agent", agent, "--host", "localhost:1", "-n", "2", "--tag-output", "-x", "MPIGO_CLI_TEST_FOO", "-genv", "B", "b b",
		"sh", "-c", `echo "$MPIGO_CLI_TEST_FOO|$B|$MPIGO_COLL_CLITEST|$MPIGO_TEST_SSH"`)
	want := []string{"[0] it's here|b b|9|", "[1] it's here|b b|9|"}
	if got := sortedLines(out); code != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("env over ssh: exit %d, %q, want %q\n%s", code, got, want, errs)
	}
	script := `echo "$MPIGO_NODE $MPIGO_LOCAL_RANK"`
	bind := runtime.GOOS == "linux"
	if bind {
		script = `echo "$MPIGO_NODE $MPIGO_LOCAL_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"`
	}
	out, errs, code = runJob(t, "--launch-agent", agent, "--host", "localhost:3,127.0.0.1:3", "-ppn", "2", "--bind-to", "core", "--tag-output", "sh", "-c", script)
	want = []string{"[0] localhost 0", "[1] localhost 1", "[2] 127.0.0.1 0", "[3] 127.0.0.1 1"}
	got := sortedLines(out)
	for i, l := range got {
		if f := strings.Fields(l); bind && len(f) == 4 {
			if strings.ContainsAny(f[3], ",-") {
				t.Errorf("--bind-to core over ssh: %q is not one core", l)
			}
			got[i] = strings.Join(f[:3], " ")
		}
	}
	if code != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("-ppn 2: exit %d, %q, want %q\n%s", code, got, want, errs)
	}
	out, errs, code = runJob(t, "--launch-agent", agent, "--host", "localhost:2,127.0.0.1:2", "--map-by", "node", "-n", "3", "--tag-output", "sh", "-c", `echo "$MPIGO_NODE"`)
	want = []string{"[0] localhost", "[1] 127.0.0.1", "[2] localhost"}
	if got := sortedLines(out); code != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("--map-by node: exit %d, %q, want %q\n%s", code, got, want, errs)
	}
}

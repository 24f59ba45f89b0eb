package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func needSh(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this machine")
	}
}

func runJob(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"run"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func sortedLines(s string) []string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return l
}

func TestRunTagOutputAndEnv(t *testing.T) {
	needSh(t)
	out, errs, code := runJob(t, "-np", "3", "--tag-output", "sh", "-c", `echo "r=$MPIGO_RANK s=$MPIGO_SIZE"; echo err >&2`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{"[0] r=0 s=3", "[1] r=1 s=3", "[2] r=2 s=3"}
	if got := sortedLines(out); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if strings.Count(errs, "err\n") != 3 || !strings.Contains(errs, "[1] err") {
		t.Errorf("stderr %q", errs)
	}
}

func TestRunMPMD(t *testing.T) {
	needSh(t)
	out, errs, code := runJob(t, "-n", "1", "sh", "-c", `echo master $MPIGO_RANK/$MPIGO_SIZE`, ":", "-n", "2", "sh", "-c", `echo worker $MPIGO_RANK/$MPIGO_SIZE`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{"master 0/3", "worker 1/3", "worker 2/3"}
	if got := sortedLines(out); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunFailureStopsJob(t *testing.T) {
	needSh(t)
	start := time.Now()
	_, errs, code := runJob(t, "-n", "4", "sh", "-c", `if [ $MPIGO_RANK = 2 ]; then exit 7; fi; sleep 30`)
	if code != 7 {
		t.Errorf("exit %d, want 7 (the failed rank's status)", code)
	}
	if !strings.Contains(errs, "rank 2") || !strings.Contains(errs, "exited with status 7") {
		t.Errorf("stderr does not name the failed rank: %q", errs)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the other ranks were not stopped promptly")
	}
	_, errs, code = runJob(t, "-n", "2", "sh", "-c", `if [ $MPIGO_RANK = 1 ]; then kill -9 $$; fi; sleep 30`)
	if code != 128+9 || !strings.Contains(errs, "rank 1") || !strings.Contains(errs, "killed by signal 9") {
		t.Errorf("killed rank: exit %d, stderr %q", code, errs)
	}
}

func TestRunTimeout(t *testing.T) {
	needSh(t)
	_, errs, code := runJob(t, "--timeout", "300ms", "-n", "2", "sh", "-c", `if [ $MPIGO_RANK = 0 ]; then exit 0; fi; sleep 30`)
	if code != 124 || !strings.Contains(errs, "timeout after 300ms") || !strings.Contains(errs, "still running: 1") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestRunBuildsPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, errs, code := runJob(t, "-n", "2", "./testdata/envprog", "a", "b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{"rank 0 of 2 kvs-set=true args=[a b]", "rank 1 of 2 kvs-set=true args=[a b]"}
	if got := sortedLines(out); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(errs, "building ./testdata/envprog") {
		t.Errorf("no progress message for the build: %q", errs)
	}
}

// Each rank process gets its share of the node's cores as Go processors,
// and one more with --async-progress (MPIGO_ASYNC_PROGRESS=1), so that
// the library's goroutines serve its peers while its ranks compute.
func TestRunAsyncProgress(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("GOMAXPROCS is set here, and the ranks would keep it")
	}
	prog := filepath.Join(t.TempDir(), "procsprog")
	if out, err := exec.Command("go", "build", "-o", prog, "./testdata/procsprog").CombinedOutput(); err != nil {
		t.Fatalf("building procsprog: %v\n%s", err, out)
	}
	share := max(1, runtime.NumCPU()/2)
	for _, tc := range []struct {
		args  []string
		procs int
	}{
		{nil, share},
		{[]string{"--async-progress"}, share + 1},
	} {
		out, errs, code := runJob(t, append(append(tc.args, "-n", "2"), prog)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		want := []string{fmt.Sprintf("rank 0 procs %d", tc.procs), fmt.Sprintf("rank 1 procs %d", tc.procs)}
		if got := sortedLines(out); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%v: got %q, want %q", tc.args, got, want)
		}
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"-n", "2"}, "no program given"},
		{[]string{"-n", "0", "true"}, "need at least one process"},
		{[]string{"./no/such/prog"}, "no such file or directory"},
		{[]string{"no-such-program-anywhere"}, "not found in PATH"},
	}
	for _, tt := range tests {
		_, errs, code := runJob(t, tt.args...)
		if code == 0 || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errs, tt.msg)
		}
	}
}

// A real MPI program under mpigo run: four processes over TCP.
func TestRunMPIProgram(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, errs, code := runJob(t, "-n", "4", "../../examples/pi", "-intervals", "100000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "pi is approximately 3.14159") || !strings.Contains(out, "(4 ranks, 100000 intervals)") {
		t.Errorf("output %q", out)
	}
	out, errs, code = runJob(t, "-n", "3", "../../examples/ring", "-laps", "5")
	if code != 0 || !strings.Contains(out, "token is 15 after 5 laps of 3 ranks") {
		t.Errorf("ring: exit %d, %q %q", code, out, errs)
	}
	// Hybrid: goroutine ranks inside processes, tcp between them.
	out, errs, code = runJob(t, "-n", "7", "--ranks-per-proc", "3", "--tag-output", "../../examples/ring", "-laps", "4")
	if code != 0 || !strings.Contains(out, "[0-2] token is 28 after 4 laps of 7 ranks") {
		t.Errorf("hybrid ring: exit %d, %q %q", code, out, errs)
	}
}

func TestRunStdinToRankZero(t *testing.T) {
	needSh(t)
	cmd := exec.Command("go", "run", ".", "run", "-n", "2", "--tag-output", "sh", "-c", `read line; echo "got $line"`)
	cmd.Stdin = strings.NewReader("hello\n")
	out, _ := cmd.CombinedOutput() // rank 1 reads end of file and prints "got "
	if !strings.Contains(string(out), "[0] got hello") || strings.Contains(string(out), "[1] got hello") {
		t.Errorf("stdin went to the wrong rank:\n%s", out)
	}
}

// A rank that fails while the others wait for it: the job ends at once,
// with the failed rank named, and nothing hangs.
func TestRunMPIFailure(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, mode := range []string{"error", "panic", "hybrid"} {
		start := time.Now()
		args := []string{"--timeout", "60s", "-n", "3", "./testdata/failprog", mode}
		if mode == "hybrid" {
			args = append([]string{"--ranks-per-proc", "2"}, args...)
		}
		_, errs, code := runJob(t, args...)
		if code == 0 || code == 124 {
			t.Errorf("%s: exit %d", mode, code)
		}
		if !strings.Contains(errs, "rank 1") || !strings.Contains(errs, "on purpose") {
			t.Errorf("%s: stderr does not explain: %q", mode, errs)
		}
		if time.Since(start) > 30*time.Second {
			t.Errorf("%s: took %v", mode, time.Since(start))
		}
	}
}

// Killing the launcher itself (kill -9) takes its ranks with it: no orphans.
func TestRunLauncherKilled(t *testing.T) {
	needSh(t)
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's parent-death signal")
	}
	bin := filepath.Join(t.TempDir(), "mpigo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	marker := fmt.Sprintf("mpigo-orphan-test-%d", os.Getpid())
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "-n", "3", "sh", "-c", `echo $$ > `+dir+`/pid.$MPIGO_RANK; exec sleep 30 # `+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pids) < 3 && time.Now().Before(deadline) {
		pids = pids[:0]
		for r := 0; r < 3; r++ {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("pid.%d", r)))
			if pid, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
				pids = append(pids, pid)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(pids) < 3 {
		t.Fatal("the ranks did not start")
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for pidExists(pid) {
			if time.Now().After(deadline) {
				killPid(pid)
				t.Fatalf("rank process %d outlived its launcher", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// mpi.Abort ends the whole job with the given code.
func TestRunAbort(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	_, errs, code := runJob(t, "--timeout", "60s", "-n", "3", "./testdata/failprog", "abort")
	if code != 5 || !strings.Contains(errs, "rank 1 aborted the job: Abort called with code 5") || !strings.Contains(errs, "exited with status 5") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestParseHosts(t *testing.T) {
	dir := t.TempDir()
	hf := filepath.Join(dir, "hosts")
	os.WriteFile(hf, []byte("# cluster\nnode1 slots=4\nnode2:2\nnode3   # one slot\n\n"), 0o644)
	hosts, err := parseHosts("a:2,b", hf)
	if err != nil {
		t.Fatal(err)
	}
	want := []hostSlots{{"a", 2}, {"b", 1}, {"node1", 4}, {"node2", 2}, {"node3", 1}}
	if fmt.Sprint(hosts) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", hosts, want)
	}
	order := ""
	for s := 0; s < 12; s++ {
		order += hostFor(hosts[:2], s) + " "
	}
	if order != "a a b a a b a a b a a b " {
		t.Errorf("placement %q", order)
	}
	for _, bad := range []string{"a:0", "a:x", "a:-1"} {
		if _, err := parseHosts(bad, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	os.WriteFile(hf, []byte("node1 slots=zero\n"), 0o644)
	if _, err := parseHosts("", hf); err == nil || !strings.Contains(err.Error(), "hosts:1") {
		t.Errorf("bad hostfile: %v", err)
	}
	if q := shellQuote("it's"); q != `'it'\''s'` {
		t.Errorf("shellQuote: %s", q)
	}
}

// sshAgent returns the launch agent for the ssh tests (an sshd that
// accepts the current user's key on localhost), or skips.
func sshAgent(t *testing.T) string {
	agent := os.Getenv("MPIGO_TEST_SSH")
	if agent == "" {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("MPIGO_TEST_SSH is not set: .ci/run sets up sshd on localhost and sets it")
		}
		t.Skip("no sshd for the ssh tests: set MPIGO_TEST_SSH to a launch agent such as \"ssh -p 2222 -o BatchMode=yes\" (.ci/run does)")
	}
	return agent
}

// Ranks started over ssh (to localhost, as to any host): results, a
// hostfile in Open MPI's format, and a failing rank that ends the job.
func TestRunSSH(t *testing.T) {
	agent := sshAgent(t)
	out, errs, code := runJob(t, "--launch-agent", agent, "--host", "localhost:2", "-n", "3", "--tag-output", "../../examples/pi", "-intervals", "1000")
	if code != 0 || !strings.Contains(out, "[0] pi is approximately 3.14159") {
		t.Fatalf("pi over ssh: exit %d\n%s\n%s", code, out, errs)
	}
	hf := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hf, []byte("localhost slots=2\n"), 0o644)
	out, errs, code = runJob(t, "--launch-agent", agent, "--hostfile", hf, "-n", "4", "--ranks-per-proc", "2", "../../examples/ring", "-laps", "2")
	if code != 0 || !strings.Contains(out, "token is 8 after 2 laps of 4 ranks") {
		t.Fatalf("ring over ssh: exit %d\n%s\n%s", code, out, errs)
	}
	start := time.Now()
	_, errs, code = runJob(t, "--launch-agent", agent, "--host", "localhost:4", "--timeout", "60s", "-n", "3", "./testdata/failprog")
	if code == 0 || code == 124 || !strings.Contains(errs, "rank 1") || !strings.Contains(errs, "on purpose") {
		t.Errorf("failure over ssh: exit %d, %q", code, errs)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("failure over ssh took %v", time.Since(start))
	}
}

// Ranks killed (kill -9) at random moments of a running job: the job ends
// promptly with the killed rank named, and no rank survives.
func TestRunKillRandomRank(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "ring")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/ring").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for round := 0; round < 6; round++ {
		transport := []string{"shm", "tcp"}[round%2]
		dir := t.TempDir()
		const n = 4
		type result struct {
			errs string
			code int
		}
		done := make(chan result, 1)
		go func() {
			_, errs, code := runJob(t, "--timeout", "60s", "-transport", transport, "-n", strconv.Itoa(n), bin, "-pid", dir)
			done <- result{errs, code}
		}()
		pids := make([]int, n)
		deadline := time.Now().Add(20 * time.Second)
		for r := 0; r < n; r++ {
			for pids[r] == 0 {
				if time.Now().After(deadline) {
					t.Fatal("ranks did not start")
				}
				b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("pid.%d", r)))
				pids[r], _ = strconv.Atoi(string(b))
				time.Sleep(5 * time.Millisecond)
			}
		}
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
		victim := rng.Intn(n)
		start := time.Now()
		killPid(pids[victim])
		var res result
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: the job did not end after rank %d was killed", round, victim)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("round %d: the job took %v to end", round, took)
		}
		cause := fmt.Sprintf("rank %d (pid %d) was killed by signal 9", victim, pids[victim])
		if res.code != 128+9 || !strings.Contains(res.errs, cause) {
			t.Errorf("round %d: exit %d, stderr %q", round, res.code, res.errs)
		}
		// The cause comes first: a survivor's report that it lost a
		// peer must not be the first thing a user reads.
		if i := strings.Index(res.errs, "process failed"); i >= 0 && i < strings.Index(res.errs, cause) {
			t.Errorf("round %d (%s): a survivor's report comes before the cause:\n%s", round, transport, res.errs)
		}
		for r, pid := range pids {
			if pidExists(pid) {
				time.Sleep(100 * time.Millisecond)
				if pidExists(pid) {
					killPid(pid)
					t.Errorf("round %d: rank %d survived", round, r)
				}
			}
		}
		// Nothing of the job stays in /dev/shm (or where inboxes live here).
		job, _ := os.ReadFile(filepath.Join(dir, "job"))
		if left, _ := filepath.Glob(filepath.Join(inboxDir(), "mpigo-"+string(job)+"-*")); len(job) > 0 && len(left) > 0 {
			t.Errorf("round %d (%s): the job left %v", round, transport, left)
		}
	}
}

// SIGINT to the launcher reaches every rank; the job ends with 130.
func TestRunForwardsSignals(t *testing.T) {
	needSh(t)
	bin := filepath.Join(t.TempDir(), "mpigo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "-n", "2", "sh", "-c", `trap 'echo "rank $MPIGO_RANK got INT"; kill $!; exit 0' INT; touch `+dir+`/up.$MPIGO_RANK; sleep 30 & wait`)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, e0 := os.Stat(filepath.Join(dir, "up.0"))
		_, e1 := os.Stat(filepath.Join(dir, "up.1"))
		if e0 == nil && e1 == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("ranks did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v\n%s", err, out.String())
	}
	for _, want := range []string{"rank 0 got INT", "rank 1 got INT", "got interrupt, passing it on to 2 running rank(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Eight processes on this machine's cores doing thousands of small
// collectives finish: waiting ranks hand their core to the ranks that have
// work, and no wake-up is lost (a lost one would hang until the timeout).
func TestRunCollectiveStorm(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	n := "500" // MPIGO_TEST_LONG=1 (.ci/run): 2000
	if longTests() {
		n = "2000"
	}
	for _, transport := range []string{"shm", "tcp"} {
		out, errs, code := runJob(t, "--timeout", "120s", "-transport", transport, "-n", "8", "./testdata/collstorm", n)
		if code != 0 || !strings.Contains(out, "collstorm: "+n+" allreduces on 8 ranks: ok") {
			t.Errorf("%s: exit %d, %q %q", transport, code, out, errs)
		}
	}
}

// A rank blocked in Recv for 3 s costs almost no CPU: the shared-memory
// poller sleeps on a futex instead of spinning (the bound is 1.5 s
// of CPU for the whole job; Open MPI spins at 100% here).
func TestRunWaitingCostsNoCPU(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "waitprog")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/waitprog").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	before, ok := childrenCPU()
	if !ok {
		t.Skip("no CPU accounting of child processes on " + runtime.GOOS)
	}
	_, errs, code := runJob(t, "--timeout", "60s", "-n", "2", bin)
	after, _ := childrenCPU()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	used := after - before
	t.Logf("a 3 s wait cost %v of CPU", used)
	if used > 1500*time.Millisecond {
		t.Errorf("the job used %v of CPU while one rank waited 3 s", used)
	}
}

// Processes exchange checksummed messages of every size class (fast box,
// ring, the single-copy rendezvous with MPIGO_SHM_CMA=1, and with
// MPIGO_SHM_CMA=0 the streamed one; the default is either, by the
// processor; all of them rendezvous when the eager limit is tiny; eager
// up to 512 KiB with MPIGO_SHM_EAGER_LIMIT) with every other, over shm and
// tcp.
// longTests reports whether MPIGO_TEST_LONG=1 (.ci/run) asks for the
// stress runs at full length.
func longTests() bool { return os.Getenv("MPIGO_TEST_LONG") == "1" }

func TestRunP2PStress(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	rounds := "15" // MPIGO_TEST_LONG=1 (.ci/run): 60
	if longTests() {
		rounds = "60"
	}
	for _, tc := range []struct{ transport, eager, cma, shmEager string }{{"shm", "", "", ""}, {"shm", "", "1", ""}, {"shm", "16", "1", ""},
		{"shm", "", "0", ""}, {"shm", "16", "0", ""}, {"shm", "", "1", "524288"}, {"tcp", "", "", ""}} {
		t.Setenv("MPIGO_EAGER_LIMIT", tc.eager)
		t.Setenv("MPIGO_SHM_CMA", tc.cma)
		t.Setenv("MPIGO_SHM_EAGER_LIMIT", tc.shmEager)
		if tc.eager == "" {
			os.Unsetenv("MPIGO_EAGER_LIMIT")
		}
		if tc.cma == "" {
			os.Unsetenv("MPIGO_SHM_CMA")
		}
		if tc.shmEager == "" {
			os.Unsetenv("MPIGO_SHM_EAGER_LIMIT")
		}
		out, errs, code := runJob(t, "--timeout", "120s", "-transport", tc.transport, "-n", "4", "./testdata/p2pstress", rounds)
		if code != 0 || !strings.Contains(out, "p2pstress: "+rounds+" rounds on 4 ranks: ok") {
			t.Errorf("%s (eager limit %q, MPIGO_SHM_CMA %q, shm eager limit %q): exit %d, %q %q", tc.transport, tc.eager, tc.cma, tc.shmEager, code, out, errs)
		}
	}
}

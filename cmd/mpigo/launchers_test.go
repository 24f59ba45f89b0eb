package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The same programs, with the same expected output, under every launcher
// mpigo runs under: mpigo run, MPICH's Hydra (mpiexec.hydra, PMI-1),
// Slurm (srun --mpi=pmi2, PMI-2; srun --mpi=pmix, PMIx) and Open MPI
// (mpirun.openmpi: PMIx, and with MPIGO_PMIX=0 its fallback). A test
// whose launcher is missing skips, unless MPIGO_REQUIRE_INTEGRATION=1
// (.ci/run), when it fails.

var (
	progsOnce sync.Once
	progsDir  string
	progsErr  error
)

// testProgs builds the programs the launcher tests run, once.
func testProgs(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	progsOnce.Do(func() {
		progsDir, progsErr = os.MkdirTemp("", "mpigo-launcher-test-")
		if progsErr != nil {
			return
		}
		for name, pkg := range map[string]string{"ring": "../../examples/ring", "coll": "./testdata/collprog", "fail": "./testdata/failprog", "earlydie": "./testdata/earlydie", "earlyreturn": "./testdata/earlyreturn", "hang": "./testdata/hangprog", "mpigo": "."} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(progsDir, name), pkg).CombinedOutput()
			if err != nil {
				progsErr = &buildError{pkg, string(out)}
				return
			}
		}
	})
	if progsErr != nil {
		t.Fatal(progsErr)
	}
	return progsDir
}

type buildError struct{ pkg, out string }

func (e *buildError) Error() string { return "go build " + e.pkg + ": " + e.out }

// removeTestProgs is called by TestMain when the tests are done.
func removeTestProgs() {
	if progsDir != "" {
		os.RemoveAll(progsDir)
	}
	if heteroDir != "" { // hetero_test.go
		os.RemoveAll(heteroDir)
	}
	if abiTmp != "" { // abi_test.go
		os.RemoveAll(abiTmp)
	}
}

// launcher is how a test starts N processes of a program.
type launcher struct {
	name string
	// flakyDeath, if set, says why a rank's silent death is not tested
	// under this launcher.
	flakyDeath string
	// cmd returns the command line for n ranks of prog, or skips.
	cmd func(t *testing.T, n int, prog string, args ...string) *exec.Cmd
}

func needLauncher(t *testing.T, tool, why string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s is not installed (%s), and MPIGO_REQUIRE_INTEGRATION=1", tool, why)
		}
		t.Skipf("%s is not installed (%s); MPIGO_REQUIRE_INTEGRATION=1 makes this a failure", tool, why)
	}
	return p
}

var (
	slurmOnce sync.Once
	slurmErr  string
)

// srunArgs is how every test asks Slurm for n tasks: --overcommit, so that
// 4 tasks start at once on a node with fewer CPUs instead of queueing
// behind each other (the tests oversubscribe on purpose).
func srunArgs(n int) []string {
	return []string{"--mpi=pmi2", "--overcommit", "-n", strconv.Itoa(n)}
}

// needSlurm skips (or fails) unless srun can run a step here of the size
// the tests ask for: 4 tasks, overcommitted, started at once (--immediate:
// a step that would queue is a failure of the probe, not a hang).
func needSlurm(t *testing.T) string {
	t.Helper()
	srun := needLauncher(t, "srun", "apt-get install slurm-wlm munge; .ci/slurm-setup.sh starts a one-node cluster")
	slurmOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, srun, append(srunArgs(4), "--immediate=20", "true")...).CombinedOutput(); err != nil {
			slurmErr = strings.TrimSpace(string(out)) + " (" + err.Error() + ")"
		}
	})
	if slurmErr != "" {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("srun cannot run a step here: %s; .ci/slurm-setup.sh starts Slurm", slurmErr)
		}
		t.Skipf("srun cannot run a step here (%s): run .ci/slurm-setup.sh as root to start a one-node Slurm", slurmErr)
	}
	return srun
}

// srunPMIxArgs asks Slurm for n tasks that talk PMIx to slurmstepd.
func srunPMIxArgs(n int) []string {
	return []string{"--mpi=pmix", "--overcommit", "-n", strconv.Itoa(n)}
}

var (
	pmixOnce sync.Once
	pmixErr  string
)

// needSlurmPMIx is needSlurm for srun --mpi=pmix: Slurm's pmix plugin
// (Debian's slurm-wlm has pmix_v4, with libpmix2) must be there.
func needSlurmPMIx(t *testing.T) string {
	t.Helper()
	srun := needSlurm(t)
	pmixOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, srun, "--mpi=list").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "pmix") {
			pmixErr = "srun --mpi=list names no pmix plugin: " + strings.TrimSpace(string(out))
		}
	})
	if pmixErr != "" {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s (apt-get install slurm-wlm libpmix2), and MPIGO_REQUIRE_INTEGRATION=1", pmixErr)
		}
		t.Skipf("%s (apt-get install slurm-wlm libpmix2); MPIGO_REQUIRE_INTEGRATION=1 makes this a failure", pmixErr)
	}
	return srun
}

func launchers() []launcher {
	n2s := func(n int) string { return string(rune('0' + n)) }
	return []launcher{
		{"mpigo run", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			dir := testProgs(t)
			return exec.Command(filepath.Join(dir, "mpigo"), append([]string{"run", "--timeout", "60s", "-n", n2s(n), prog}, args...)...)
		}},
		{"mpiexec.hydra", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			hydra := needLauncher(t, "mpiexec.hydra", "apt-get install mpich")
			return exec.Command(hydra, append([]string{"-n", n2s(n), prog}, args...)...)
		}},
		{"mpiexec.hydra two nodes", "Hydra's fork launcher with two proxies sometimes leaves the second proxy's ranks running after a rank of the first exits (seen 1 run in 10)", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			// Two "nodes" that are two names of this machine: Hydra's
			// process mapping puts ranks 0-1 on one and 2-3 on the other,
			// so they use shared memory within a node and TCP (to the
			// names Hydra gives) between them.
			hydra := needLauncher(t, "mpiexec.hydra", "apt-get install mpich")
			host, err := os.Hostname()
			if err != nil || isLoopback(host) {
				t.Skip("no host name")
			}
			if _, err := net.LookupHost(host); err != nil {
				t.Skipf("the host name %s does not resolve", host)
			}
			return exec.Command(hydra, append([]string{"-launcher", "fork", "-hosts", host + ",localhost", "-ppn", "2", "-n", n2s(n), prog}, args...)...)
		}},
		{"srun --mpi=pmi2", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			srun := needSlurm(t)
			return exec.Command(srun, append(append(srunArgs(n), prog), args...)...)
		}},
		{"srun --mpi=pmi2 MPIGO_PMI=1", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			// Slurm's pmi2 plugin answers PMI-1 clients too.
			srun := needSlurm(t)
			c := exec.Command(srun, append(append(srunArgs(n), prog), args...)...)
			c.Env = append(os.Environ(), "MPIGO_PMI=1")
			return c
		}},
		{"srun --mpi=pmix", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			srun := needSlurmPMIx(t)
			return exec.Command(srun, append(append(srunPMIxArgs(n), prog), args...)...)
		}},
		{"mpirun.openmpi", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			// Open MPI's daemon is a PMIx server: the ranks use PMIx.
			mpirun := needLauncher(t, "mpirun.openmpi", "apt-get install openmpi-bin")
			c := exec.Command(mpirun, append([]string{"--oversubscribe", "-n", n2s(n), prog}, args...)...)
			c.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1")
			return c
		}},
		{"mpirun.openmpi MPIGO_PMIX=0", "", func(t *testing.T, n int, prog string, args ...string) *exec.Cmd {
			// The fallback: rank 0 serves the store (ompi.go).
			mpirun := needLauncher(t, "mpirun.openmpi", "apt-get install openmpi-bin")
			c := exec.Command(mpirun, append([]string{"--oversubscribe", "-n", n2s(n), prog}, args...)...)
			c.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1", "MPIGO_PMIX=0")
			return c
		}},
	}
}

// runLaunched runs a command with a deadline and returns its output and
// exit status (-1: it had to be killed).
func runLaunched(t *testing.T, c *exec.Cmd, d time.Duration) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// Never outlive the test binary's own -timeout: a launcher killed by
	// the test binary's panic would leave its ranks (or a Slurm step)
	// behind.
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 15*time.Second; left < d {
			d = max(left, time.Second)
		}
	}
	ownGroup(c)
	if err := c.Start(); err != nil {
		t.Fatalf("%v: %v", c.Args, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		stopTree(c, done, 5*time.Second)
		<-done
		t.Errorf("%v did not end within %v (hang?)\nstdout: %s\nstderr: %s", c.Args, d, out.String(), errb.String())
		return out.String(), errb.String(), -1
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

func TestLaunchers(t *testing.T) {
	for _, l := range launchers() {
		t.Run(strings.ReplaceAll(l.name, " ", "_"), func(t *testing.T) {
			dir := testProgs(t)
			for _, tc := range []struct {
				n    int
				prog string
				args []string
				want string
			}{
				{4, "ring", []string{"-laps", "3"}, "token is 12 after 3 laps of 4 ranks\n"},
				{4, "coll", nil, "collprog: 4 ranks: allreduce 10, bcast \"hello from 0\", allgather [0 1 4 9], big allreduce true, alltoall and scan ok\n"},
				{1, "ring", []string{"-laps", "2"}, "token is 2 after 2 laps of 1 ranks\n"},
			} {
				c := l.cmd(t, tc.n, filepath.Join(dir, tc.prog), tc.args...)
				start := time.Now()
				out, errs, code := runLaunched(t, c, 90*time.Second)
				if code != 0 || out != tc.want {
					t.Errorf("%s %d ranks: exit %d, stdout %q, want %q\nstderr: %s", tc.prog, tc.n, code, out, tc.want, errs)
				}
				t.Logf("%s, %d ranks: %v", tc.prog, tc.n, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// A rank that fails makes the job end, promptly, with a failure status
// and the rank's reason on stderr: the others do not hang waiting for it.
func TestLaunchersFailure(t *testing.T) {
	for _, l := range launchers() {
		t.Run(strings.ReplaceAll(l.name, " ", "_"), func(t *testing.T) {
			dir := testProgs(t)
			for _, mode := range []string{"error", "panic", "abort", "die"} {
				if mode == "die" && l.flakyDeath != "" {
					t.Logf("die: not tested: %s", l.flakyDeath)
					continue
				}
				start := time.Now()
				c := l.cmd(t, 3, filepath.Join(dir, "fail"), mode)
				_, errs, code := runLaunched(t, c, 60*time.Second)
				if code == 0 || code == -1 {
					t.Errorf("%s: exit %d", mode, code)
				}
				why := "on purpose"
				switch mode {
				case "abort":
					why = "Abort called with code 5"
				case "die": // rank 1 exits(3) without a word: the others find it gone
					why = ""
				}
				if why != "" && (!strings.Contains(errs, "rank 1") || !strings.Contains(errs, why)) {
					t.Errorf("%s: stderr does not say why: %q", mode, errs)
				}
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("%s: the job took %v to end", mode, d)
				}
				t.Logf("%s: exit %d after %v", mode, code, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// TestLaunchersHang is issue 41's hang that never ended: under mpiexec,
// srun or mpirun each process printed a report of its own ranks that
// claimed "every rank has been blocked", and the job then hung until the
// allocation's wall time. Under every launcher the report must end the
// job promptly, with a failure status, and be printed once for the whole
// job: rank 0's process gathers every process's ranks.
func TestLaunchersHang(t *testing.T) {
	for _, l := range launchers() {
		t.Run(strings.ReplaceAll(l.name, " ", "_"), func(t *testing.T) {
			dir := testProgs(t)
			for _, tc := range []struct {
				n    int
				mode string
				want string
			}{
				{2, "ssendcycle", "diagnosis: rank 0 waits in Ssend to 1 tag 5 at main.go:19 while rank 1 waits in Ssend to 0 tag 5 at main.go:19: each waits for the other"},
				{3, "earlyreturn", "diagnosis: rank 1 returned from its function while rank 2 waits in Recv from it (tag 4)"},
			} {
				start := time.Now()
				c := l.cmd(t, tc.n, filepath.Join(dir, "hang"), tc.mode)
				if c.Env == nil {
					c.Env = os.Environ()
				}
				c.Env = append(c.Env, "MPIGO_HANG_REPORT=1s")
				_, errs, code := runLaunched(t, c, 60*time.Second)
				if code == 0 || code == -1 {
					t.Errorf("%s: exit %d, want a failure", tc.mode, code)
				}
				if n := strings.Count(errs, "hang report: every rank"); n != 1 || !strings.Contains(errs, tc.want) {
					t.Errorf("%s: %d reports on stderr, want one, with %q:\n%s", tc.mode, n, tc.want, errs)
				}
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("%s: the job took %v to end", tc.mode, d)
				}
				t.Logf("%s: exit %d after %v", tc.mode, code, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// A rank that dies without a word while the others use TCP only: a rank
// connected to it notices and asks the launcher to end the job, so that
// the ranks that never talked to it do not wait for it forever (srun
// does not end a step when one task fails, unless --kill-on-bad-exit).
func TestLaunchersSilentDeathTCP(t *testing.T) {
	for _, l := range launchers() {
		t.Run(strings.ReplaceAll(l.name, " ", "_"), func(t *testing.T) {
			if l.flakyDeath != "" {
				t.Skip(l.flakyDeath)
			}
			dir := testProgs(t)
			start := time.Now()
			c := l.cmd(t, 3, filepath.Join(dir, "fail"), "die")
			if c.Env == nil {
				c.Env = os.Environ()
			}
			c.Env = append(c.Env, "MPIGO_TRANSPORT=tcp")
			_, errs, code := runLaunched(t, c, 60*time.Second)
			if code == 0 || code == -1 {
				t.Errorf("exit %d: %s", code, errs)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the job took %v to end", d)
			}
		})
	}
}

// mpigo info, started by each launcher, names it and the rank.
func TestLaunchersInfo(t *testing.T) {
	want := map[string]string{"mpigo run": "launcher:    mpigo", "mpiexec.hydra": "launcher:    PMI-1", "mpiexec.hydra two nodes": "launcher:    PMI-1", "srun --mpi=pmi2": "launcher:    PMI-2", "srun --mpi=pmi2 MPIGO_PMI=1": "launcher:    PMI-1",
		"srun --mpi=pmix": "launcher:    PMIx", "mpirun.openmpi": "launcher:    PMIx", "mpirun.openmpi MPIGO_PMIX=0": "launcher:    Open MPI (mpirun)"}
	for _, l := range launchers() {
		t.Run(strings.ReplaceAll(l.name, " ", "_"), func(t *testing.T) {
			dir := testProgs(t)
			c := l.cmd(t, 2, filepath.Join(dir, "mpigo"), "info")
			out, errs, code := runLaunched(t, c, 60*time.Second)
			if code != 0 || strings.Count(out, want[l.name]) != 2 || !strings.Contains(out, "rank 1 of 2") {
				t.Errorf("exit %d, want two %q and rank 1 of 2:\n%s\n%s", code, want[l.name], out, errs)
			}
		})
	}
}

// The Kubernetes MPI operator's launcher runs `mpigo run --hostfile
// /etc/mpi/hostfile --launch-agent kubexec.sh`: a hostfile of pods and an
// agent called as AGENT HOST COMMAND. A fake agent that runs the command
// here (and records its calls) stands in for kubexec.sh; the two "pods"
// are two names of this machine, so ranks on different "pods" talk over
// TCP.
func TestRunHostfileAgent(t *testing.T) {
	needSh(t)
	dir := testProgs(t)
	tmp := t.TempDir()
	agent := filepath.Join(tmp, "fake-kubexec.sh")
	calls := filepath.Join(tmp, "calls")
	script := "#!/bin/sh\n# fake kubexec: HOST COMMAND\necho \"$1\" >> " + calls + "\nhost=$1; shift\nexec sh -c \"$*\"\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	hostfile := filepath.Join(tmp, "hostfile")
	os.WriteFile(hostfile, []byte("# as the MPI operator writes it (Open MPI style)\nlocalhost slots=2\n127.0.0.1 slots=2\n"), 0o644)
	c := exec.Command(filepath.Join(dir, "mpigo"), "run", "--timeout", "60s", "--hostfile", hostfile, "--launch-agent", agent, "-n", "4", filepath.Join(dir, "coll"))
	out, errs, code := runLaunched(t, c, 90*time.Second)
	if code != 0 || !strings.Contains(out, "collprog: 4 ranks: allreduce 10") {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(calls)
	if got := sortedLines(string(b)); strings.Join(got, " ") != "127.0.0.1 127.0.0.1 localhost localhost" {
		t.Errorf("agent calls %q", got)
	}
	// MPICH-style hostfile, and a failing rank.
	os.WriteFile(hostfile, []byte("localhost:1\n127.0.0.1:2\n"), 0o644)
	c = exec.Command(filepath.Join(dir, "mpigo"), "run", "--timeout", "60s", "--hostfile", hostfile, "--launch-agent", agent, "-n", "3", filepath.Join(dir, "fail"))
	_, errs, code = runLaunched(t, c, 60*time.Second)
	if code == 0 || !strings.Contains(errs, "on purpose") {
		t.Errorf("failure through the agent: exit %d, %s", code, errs)
	}
	// A pod's own name (here: this machine's, which is not loopback), and
	// MPIGO_KVS_HOST naming the launcher for the ranks, as a pod's short
	// host name may not resolve in other pods.
	host, err := os.Hostname()
	if err != nil || isLoopback(host) {
		t.Skip("no host name")
	}
	if _, err := net.LookupHost(host); err != nil {
		t.Skipf("the host name %s does not resolve", host)
	}
	os.WriteFile(hostfile, []byte(host+" slots=2\nlocalhost slots=2\n"), 0o644)
	os.WriteFile(calls, nil, 0o644)
	os.WriteFile(agent, []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\nhost=$1; shift\nexec sh -c \"$*\"\n"), 0o755)
	c = exec.Command(filepath.Join(dir, "mpigo"), "run", "--timeout", "60s", "--hostfile", hostfile, "--launch-agent", agent, "-n", "4", filepath.Join(dir, "ring"), "-laps", "2")
	c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+host)
	out, errs, code = runLaunched(t, c, 60*time.Second)
	if code != 0 || out != "token is 8 after 2 laps of 4 ranks\n" {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	b, _ = os.ReadFile(calls)
	if strings.Count(string(b), "MPIGO_KVS="+host+":") != 4 {
		t.Errorf("the ranks were not told MPIGO_KVS=%s:PORT:\n%s", host, b)
	}
}

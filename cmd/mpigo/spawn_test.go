package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	spawnOnce sync.Once
	spawnProg string
	spawnErr  error
)

// buildSpawnProg builds testdata/spawnprog next to the launcher tests'
// programs, once.
func buildSpawnProg(t *testing.T) (mpigo, prog string) {
	t.Helper()
	dir := testProgs(t)
	spawnOnce.Do(func() {
		spawnProg = filepath.Join(dir, "spawnprog")
		out, err := exec.Command("go", "build", "-o", spawnProg, "./testdata/spawnprog").CombinedOutput()
		if err != nil {
			spawnErr = &buildError{"./testdata/spawnprog", string(out)}
		}
	})
	if spawnErr != nil {
		t.Fatal(spawnErr)
	}
	return filepath.Join(dir, "mpigo"), spawnProg
}

// runSpawnProg runs cmd (bounded) and returns its output, failing the
// test if it fails.
func runSpawnProg(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestSpawnUnderMpigoRun: spawn1/spawnargv/spawnintra/disconnect with
// processes: 2 ranks spawn 4 copies of the program, which get their
// arguments, talk, merge and disconnect.
func TestSpawnUnderMpigoRun(t *testing.T) {
	mpigo, prog := buildSpawnProg(t)
	out := runSpawnProg(t, mpigo, "run", "-n", "2", prog, "parent")
	if !strings.Contains(out, "parent ok") {
		t.Fatalf("output:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestSpawnWaitIsNoHang: parents that wait in MPI for children computing
// longer than the hang threshold are not reported hung (the launcher
// watches the family of jobs, not each job alone).
func TestSpawnWaitIsNoHang(t *testing.T) {
	mpigo, prog := buildSpawnProg(t)
	out := runSpawnProg(t, mpigo, "run", "--hang-report", "1s", "-n", "2", prog, "waitslow")
	if !strings.Contains(out, "waitslow ok") || strings.Contains(out, "hung") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestSpawnExecutorUnderMpigoRun: a client that spawns its workers as
// processes (MPIPoolExecutor's shape) maps tasks over them and shuts down.
func TestSpawnExecutorUnderMpigoRun(t *testing.T) {
	mpigo, prog := buildSpawnProg(t)
	out := runSpawnProg(t, mpigo, "run", "-n", "1", prog, "pool")
	if !strings.Contains(out, "pool ok: 500 tasks") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestNameServerJobsApart: two jobs of mpigo run, started apart, find
// each other through mpigo nameserver (MPIGO_NAMESERVER) and connect.
func TestNameServerJobsApart(t *testing.T) {
	mpigo, prog := buildSpawnProg(t)
	ns := exec.Command(mpigo, "nameserver")
	stdout, err := ns.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Process.Signal(syscall.SIGTERM); ns.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	env, ok := strings.CutPrefix(strings.TrimSpace(line), "MPIGO_NAMESERVER=")
	if err != nil || !ok {
		t.Fatalf("mpigo nameserver printed %q (%v)", line, err)
	}
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i, mode := range []string{"nsserver", "nsclient"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, mpigo, "run", "-n", strconv.Itoa(2+i), prog, mode)
			cmd.Env = append(os.Environ(), "MPIGO_NAMESERVER="+env)
			out, err := cmd.CombinedOutput()
			outs[i] = fmt.Sprintf("%s (%v)", out, err)
		}()
	}
	wg.Wait()
	// The server's 2 ranks see the client's 3 (1+2+3), the client the server's (1+2).
	if !strings.Contains(outs[0], "ranks sum to 6") || !strings.Contains(outs[1], "ranks sum to 3") {
		t.Fatalf("server:\n%s\nclient:\n%s", outs[0], outs[1])
	}
}

// TestSpawnMissingProgram: a clear ErrSpawn at once, and no process left.
func TestSpawnMissingProgram(t *testing.T) {
	mpigo, prog := buildSpawnProg(t)
	out := runSpawnProg(t, mpigo, "run", "-n", "2", prog, "missing")
	if !strings.Contains(out, "/no/such/program") || !strings.Contains(out, "spawn failed") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestNamesUnderMpigoRun: namepub and selfconacc between processes: two
// halves of a job find each other through the launcher's name service.
func TestNamesUnderMpigoRun(t *testing.T) {
	mpigo, prog := buildSpawnProg(t)
	out := runSpawnProg(t, mpigo, "run", "-n", "4", prog, "names")
	if !strings.Contains(out, "names ok") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestSpawnUnderHydraAndSlurm: launchers that cannot spawn say so within
// a second (the program checks the time), never hang.
func TestSpawnUnderHydraAndSlurm(t *testing.T) {
	_, prog := buildSpawnProg(t)
	t.Run("hydra", func(t *testing.T) {
		hydra := needLauncher(t, "mpiexec.hydra", "apt-get install mpich")
		out := runSpawnProg(t, hydra, "-n", "2", prog, "nospawn")
		if !strings.Contains(out, "cannot start processes for mpigo") || !strings.Contains(out, "mpigo run") {
			t.Fatalf("output:\n%s", out)
		}
	})
	t.Run("slurm", func(t *testing.T) {
		srun := needSlurm(t)
		out := runSpawnProg(t, srun, append(srunArgs(2), prog, "nospawn")...)
		if !strings.Contains(out, "PMI-2 (Slurm)") || !strings.Contains(out, "cannot start processes for mpigo") {
			t.Fatalf("output:\n%s", out)
		}
	})
	t.Run("singleton", func(t *testing.T) {
		cmd := exec.Command(prog, "nospawn")
		cmd.Env = os.Environ()
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "RegisterSpawnable") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

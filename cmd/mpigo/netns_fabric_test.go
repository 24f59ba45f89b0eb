//go:build linux && (mpigo_ucx || mpigo_ofi)

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestNetnsFabric runs jobs across two pretend hosts (network namespaces
// on a bridge, netHosts) over the fabric transport this test binary was
// built for (testFabric: go test -tags mpigo_ucx or -tags mpigo_ofi),
// through the fabric library's tcp provider, as a cluster would between
// nodes: the ranks of one host reach each other by shared memory and the
// other host's by the fabric (mpigo run --verbose says so), a megabyte
// Allreduce and a half-megabyte ring pass (rendezvous over the fabric),
// and a rank that fails on one host ends the job on both, promptly.
func TestNetnsFabric(t *testing.T) {
	h, dir := fabricLab(t, "fail", "./testdata/failprog")
	job := func(args ...string) *exec.Cmd {
		return fabricJob(h, dir, h.agent, append([]string{"--fabric", testFabric}, args...))
	}
	out, errs, code := runLaunched(t, job("-n", "4", filepath.Join(dir, "nodeprog")), 120*time.Second)
	want := `nodeprog: 4 ranks, node sizes [2 2 2 2], results ok true, bcast "hello from 0"`
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("nodeprog over %s: exit %d, want %q:\n%s\n%s", testFabric, code, want, out, errs)
	}
	// Rank 0 (first host) reaches rank 1 by shared memory and ranks 2
	// and 3 (second host) by the fabric.
	route := regexp.MustCompile(`rank 0 on node \S+ reaches .*shm 1\b.*` + testFabric + ` 2\b`)
	if m := route.FindString(errs + out); m == "" {
		t.Errorf("no route of rank 0 over shm to rank 1 and %s to rank 2 in the verbose output:\n%s", testFabric, errs)
	} else {
		t.Log(m)
	}
	start := time.Now()
	_, errs, code = runLaunched(t, job("-n", "4", filepath.Join(dir, "fail")), 120*time.Second)
	if code == 0 || !strings.Contains(errs, "on purpose") {
		t.Errorf("failure across hosts over %s: exit %d:\n%s", testFabric, code, errs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("failure across hosts over %s took %v", testFabric, d)
	}
}

// TestNetnsFabricFallback breaks the fabric library on the second of two
// pretend hosts. With the fabric chosen by default, the job still runs
// and answers right: the broken host's ranks warn that they reach the
// other host over tcp, and the first host's ranks reach them so (a
// verbose job says which); with the fabric asked for by name, the job
// fails to start, promptly, naming a rank of the broken host.
func TestNetnsFabricFallback(t *testing.T) {
	h, dir := fabricLab(t)
	agent := filepath.Join(dir, "agent")
	script := "#!/bin/sh\nif [ \"$1\" = " + h.addrs[1] + " ]; then export " + fabricBrokenEnv + "; fi\nexec " + h.agent + " \"$@\"\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	job := func(args ...string) *exec.Cmd {
		c := fabricJob(h, dir, agent, args)
		c.Env = append(c.Env, "MPIGO_FABRIC=") // chosen by default
		return c
	}
	out, errs, code := runLaunched(t, job("-n", "4", filepath.Join(dir, "nodeprog")), 120*time.Second)
	want := `nodeprog: 4 ranks, node sizes [2 2 2 2], results ok true, bcast "hello from 0"`
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("nodeprog with %s broken on one host: exit %d, want %q:\n%s\n%s", fabricLib, code, want, out, errs)
	}
	for _, re := range []string{
		`warning: rank [23] on node \S+ cannot use ` + fabricLib + `: .*reach the other nodes over tcp`,
		`rank [23] is reached over tcp from rank [01] \(its process could not start ` + fabricLib + `\)`,
		`rank 0 on node \S+ reaches .*shm 1\b`,
	} {
		if m := regexp.MustCompile(re).FindString(errs + out); m == "" {
			t.Errorf("no %q in the output:\n%s", re, errs)
		} else {
			t.Log(m)
		}
	}
	if strings.Count(errs, "warning: rank") != 2 {
		t.Errorf("want one warning from each of the broken host's two processes:\n%s", errs)
	}
	start := time.Now()
	_, errs, code = runLaunched(t, job("--fabric", testFabric, "-n", "4", filepath.Join(dir, "nodeprog")), 120*time.Second)
	named := regexp.MustCompile(`rank [23] on node \S+ cannot use ` + fabricLib + `: .*MPIGO_FABRIC=off`)
	if code == 0 || named.FindString(errs) == "" {
		t.Errorf("--fabric %s broken on one host: exit %d, want a failed start naming rank 2 or 3:\n%s", testFabric, code, errs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the failed start took %v", d)
	}
}

// fabricLab makes two pretend hosts and builds, with the fabric's tag,
// mpigo, nodeprog and the extra programs named and packaged in pairs
// (name, package) into a directory it returns.
func fabricLab(t *testing.T, extra ...string) (*netHosts, string) {
	h := newNetHosts(t, 2)
	dir := t.TempDir()
	tags := "-tags=mpigo_" + testFabric
	progs := append([]string{"mpigo", ".", "nodeprog", "./testdata/nodeprog"}, extra...)
	for i := 0; i+1 < len(progs); i += 2 {
		if out, err := exec.Command("go", "build", tags, "-o", filepath.Join(dir, progs[i]), progs[i+1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s %s: %v\n%s", tags, progs[i+1], err, out)
		}
	}
	return h, dir
}

// fabricJob is mpigo run --verbose of args on both hosts, two ranks each,
// through the launch agent agent, with the fabric over its tcp.
func fabricJob(h *netHosts, dir, agent string, args []string) *exec.Cmd {
	c := exec.Command(filepath.Join(dir, "mpigo"), append([]string{"run", "--verbose", "--timeout", "90s",
		"--launch-agent", agent, "--host", h.hostList(2)}, args...)...)
	c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+h.gateway)
	c.Env = append(c.Env, fabricTCPEnv...)
	return c
}

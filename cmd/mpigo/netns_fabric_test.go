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
	h := newNetHosts(t, 2)
	dir := t.TempDir()
	tags := "-tags=mpigo_" + testFabric
	for name, pkg := range map[string]string{"mpigo": ".", "nodeprog": "./testdata/nodeprog", "fail": "./testdata/failprog"} {
		if out, err := exec.Command("go", "build", tags, "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s %s: %v\n%s", tags, pkg, err, out)
		}
	}
	job := func(args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(dir, "mpigo"), append([]string{"run", "--verbose", "--fabric", testFabric, "--timeout", "90s",
			"--launch-agent", h.agent, "--host", h.hostList(2)}, args...)...)
		c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+h.gateway)
		c.Env = append(c.Env, fabricTCPEnv...)
		return c
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
	h := newNetHosts(t, 2)
	dir := t.TempDir()
	tags := "-tags=mpigo_" + testFabric
	for name, pkg := range map[string]string{"mpigo": ".", "nodeprog": "./testdata/nodeprog"} {
		if out, err := exec.Command("go", "build", tags, "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s %s: %v\n%s", tags, pkg, err, out)
		}
	}
	agent := filepath.Join(dir, "agent")
	script := "#!/bin/sh\nif [ \"$1\" = " + h.addrs[1] + " ]; then export " + fabricBrokenEnv + "; fi\nexec " + h.agent + " \"$@\"\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	job := func(args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(dir, "mpigo"), append([]string{"run", "--verbose", "--timeout", "90s",
			"--launch-agent", agent, "--host", h.hostList(2)}, args...)...)
		c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+h.gateway, "MPIGO_FABRIC=")
		c.Env = append(c.Env, fabricTCPEnv...)
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

//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// netHosts is a pretend cluster on this machine: each host is a network
// namespace with its own address on a bridge, and a launch agent that
// starts commands inside the namespace, as ssh starts them on a real host.
type netHosts struct {
	addrs   []string // the hosts' addresses
	gateway string   // the bridge's address: where the launcher listens
	agent   string   // the launch agent script
}

// newNetHosts makes n hosts in network namespaces on one bridge,
// removed when the test ends (netLab: skipped without root and iproute2).
func newNetHosts(t *testing.T, n int) *netHosts {
	t.Helper()
	l := newNetLab(t)
	id := l.id
	subnet := fmt.Sprintf("10.%d.%d", 100+id/250%100, id%250)
	bridge := fmt.Sprintf("mgb%d", id)
	h := &netHosts{gateway: subnet + ".1"}
	l.bridge(bridge, h.gateway)
	for i := 0; i < n; i++ {
		ns, veth, addr := fmt.Sprintf("mgn%d-%d", id, i), fmt.Sprintf("mgv%d-%d", id, i), fmt.Sprintf("%s.%d", subnet, i+2)
		l.namespace(ns)
		l.leg(ns, bridge, veth, "eth0", addr)
		h.addrs = append(h.addrs, addr)
		l.reach(addr, ns)
	}
	h.agent = l.agent()
	return h
}

// hostList is the --host value for k ranks per host.
func (h *netHosts) hostList(k int) string {
	var hs []string
	for _, a := range h.addrs {
		hs = append(hs, fmt.Sprintf("%s:%d", a, k))
	}
	return strings.Join(hs, ",")
}

// Jobs that span real (namespaced) hosts with addresses of their own:
// shared memory inside each host and TCP between them carry the data,
// node-aware collectives see the true nodes, and a rank's failure on one
// host ends the job on all of them.
func TestNetnsMultiNode(t *testing.T) {
	h := newNetHosts(t, 2)
	dir := testProgs(t)
	node := filepath.Join(t.TempDir(), "nodeprog")
	if out, err := exec.Command("go", "build", "-o", node, "./testdata/nodeprog").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	mpigo := filepath.Join(dir, "mpigo")
	job := func(args ...string) *exec.Cmd {
		c := exec.Command(mpigo, append([]string{"run", "--timeout", "60s", "--launch-agent", h.agent, "--host", h.hostList(2)}, args...)...)
		c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+h.gateway)
		return c
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "4", node}, `nodeprog: 4 ranks, node sizes [2 2 2 2], results ok true, bcast "hello from 0"`},
		{[]string{"--transport", "tcp", "-n", "4", node}, `nodeprog: 4 ranks, node sizes [2 2 2 2], results ok true`},
		{[]string{"-n", "4", filepath.Join(dir, "coll")}, "collprog: 4 ranks: allreduce 10"},
		{[]string{"-n", "4", filepath.Join(dir, "ring")}, "token is 40 after 10 laps of 4 ranks"},
	} {
		out, errs, code := runLaunched(t, job(tc.args...), 90*time.Second)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %q:\n%s\n%s", tc.args, code, tc.want, out, errs)
		}
	}
	// A rank that fails ends the job on every host.
	start := time.Now()
	_, errs, code := runLaunched(t, job("-n", "4", filepath.Join(dir, "fail")), 90*time.Second)
	if code == 0 || !strings.Contains(errs, "on purpose") {
		t.Errorf("failure across hosts: exit %d:\n%s", code, errs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("failure across hosts took %v", d)
	}
}

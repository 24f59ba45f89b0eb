//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// netLab makes pretend hosts on this machine for a test: network
// namespaces on bridges, and a launch agent that starts commands inside
// a host's namespace, as ssh starts them on a real host. Everything it
// makes is removed when the test ends. The multi-node (netns_test.go) and
// gateway (gateway_netns_test.go) tests build their networks with it.
type netLab struct {
	t testing.TB
	// id is this test process's own (its pid), for names and subnets
	// that concurrent test runs on one machine do not share; interface
	// names built from it stay within the kernel's 15 bytes.
	id     int
	nss    []string
	links  []string
	agents strings.Builder // the agent's cases: address pattern -> namespace
}

// newNetLab returns a lab for t. It needs root and iproute2: without them
// the test is skipped, or fails under MPIGO_REQUIRE_INTEGRATION=1.
// labSeq counts the labs this test binary has made.
var labSeq atomic.Int32

func newNetLab(t testing.TB) *netLab {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root to make network namespaces"
	} else if _, err := exec.LookPath("ip"); err != nil {
		why = "needs ip (Debian package iproute2)"
	}
	if why != "" {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	// Names and subnets differ between the labs of one test binary too:
	// a namespace's veth outlives its deletion for a moment.
	l := &netLab{t: t, id: (os.Getpid() + 1009*int(labSeq.Add(1)-1)) % 100000}
	t.Cleanup(func() {
		for _, ns := range l.nss {
			l.run("netns", "del", ns)
		}
		for _, b := range l.links {
			l.run("link", "del", b)
		}
	})
	return l
}

func (l *netLab) run(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// ip runs ip with args and fails the test if it fails.
func (l *netLab) ip(args ...string) {
	l.t.Helper()
	if err := l.run(args...); err != nil {
		l.t.Fatal(err)
	}
}

// bridge makes a bridge with the test's own address addr (a /24) on it.
func (l *netLab) bridge(name, addr string) {
	l.t.Helper()
	l.ip("link", "add", name, "type", "bridge")
	l.links = append(l.links, name)
	l.ip("addr", "add", addr+"/24", "dev", name)
	l.ip("link", "set", name, "up")
}

// namespace makes a host: network namespace ns with its loopback up.
func (l *netLab) namespace(ns string) {
	l.t.Helper()
	l.ip("netns", "add", ns)
	l.nss = append(l.nss, ns)
	l.ip("-n", ns, "link", "set", "lo", "up")
}

// leg connects namespace ns to bridge by a veth pair (veth outside, inner
// inside) with address addr (a /24) inside.
func (l *netLab) leg(ns, bridge, veth, inner, addr string) {
	l.t.Helper()
	l.ip("link", "add", veth, "type", "veth", "peer", "name", inner, "netns", ns)
	l.ip("link", "set", veth, "master", bridge, "up")
	l.ip("-n", ns, "addr", "add", addr+"/24", "dev", inner)
	l.ip("-n", ns, "link", "set", inner, "up")
}

// reach makes the launch agent run commands for the hosts that match
// pattern (a sh case pattern: an address, or addresses joined by |) in
// namespace ns.
func (l *netLab) reach(pattern, ns string) {
	fmt.Fprintf(&l.agents, "%s) ns=%s ;;\n", pattern, ns)
}

// agent writes the launch agent script and returns its path: `agent HOST
// CMD...` runs CMD in HOST's namespace.
func (l *netLab) agent() string {
	l.t.Helper()
	path := filepath.Join(l.t.TempDir(), "agent.sh")
	script := "#!/bin/sh\nhost=$1; shift\ncase $host in\n" + l.agents.String() + "*) echo \"agent: no host $host\" >&2; exit 255 ;;\nesac\nexec ip netns exec $ns sh -c \"$*\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		l.t.Fatal(err)
	}
	return path
}

//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// twoSites is a pretend pair of sites on this machine: site A and site B
// are two bridges with hosts (network namespaces) on each, and no route
// between them; a gateway host has a leg in each. The launcher (this
// test's own namespace) has an address on both bridges but forwards
// nothing. The job's key-value store listens on the launcher's site-A
// address, which site B's hosts reach only through their gateway, unless
// storeRoute gives them a host route to it through the launcher's leg in
// B (the launcher's own address, so nothing is forwarded).
type twoSites struct {
	netA, netB string   // "172.x.y" prefixes of the two /24 subnets
	hostsA     []string // addresses of site A's hosts
	hostsB     []string
	gwA, gwB   string // the gateway host's addresses in A and in B
	gwNS       string // the gateway host's namespace
	kvsHost    string // where ranks reach the launcher
	agent      string // the launch agent script
	lab        *netLab
	nsB        []string // site B's namespaces
}

// storeRoute gives site B's hosts a route to the launcher's store that
// does not go through the gateway, until the test ends.
func (s *twoSites) storeRoute(t *testing.T) {
	t.Helper()
	for _, ns := range s.nsB {
		if err := s.lab.run("-n", ns, "route", "add", s.kvsHost+"/32", "via", s.netB+".1"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.lab.run("-n", ns, "route", "del", s.kvsHost+"/32") })
	}
}

func newTwoSites(t testing.TB, nA, nB int) *twoSites {
	t.Helper()
	l := newNetLab(t)
	id := l.id
	s := &twoSites{
		lab:  l,
		netA: fmt.Sprintf("172.%d.%d", 16+id/250%8, id%250),
		netB: fmt.Sprintf("172.%d.%d", 24+id/250%8, id%250),
	}
	bridges := []string{fmt.Sprintf("mgwa%d", id), fmt.Sprintf("mgwb%d", id)}
	for i, b := range bridges {
		l.bridge(b, []string{s.netA, s.netB}[i]+".1")
	}
	s.kvsHost = s.netA + ".1"
	nveth := 0
	// leg puts namespace ns on site i's bridge at addr.
	leg := func(ns string, i int, addr string) {
		t.Helper()
		l.leg(ns, bridges[i], fmt.Sprintf("mgwv%d-%d", id, nveth), fmt.Sprintf("eth%d", i), addr)
		nveth++
	}
	host := func(name string) string {
		ns := fmt.Sprintf("mgw%d-%s", id, name)
		l.namespace(ns)
		return ns
	}
	for i := 0; i < nA+nB; i++ {
		site, net := 0, s.netA
		if i >= nA {
			site, net = 1, s.netB
		}
		addr := fmt.Sprintf("%s.%d", net, 2+i)
		ns := host(strconv.Itoa(i))
		leg(ns, site, addr)
		if site == 0 {
			s.hostsA = append(s.hostsA, addr)
		} else {
			s.hostsB = append(s.hostsB, addr)
			s.nsB = append(s.nsB, ns)
		}
		l.reach(addr, ns)
	}
	s.gwNS = host("gw")
	s.gwA, s.gwB = s.netA+".254", s.netB+".254"
	leg(s.gwNS, 0, s.gwA)
	leg(s.gwNS, 1, s.gwB)
	l.reach(s.gwA+"|"+s.gwB, s.gwNS)
	s.agent = l.agent()
	return s
}

// gatewayFlags are the --gateway flags of the two sites, with the given
// ports on the gateway host (0: any).
func (s *twoSites) gatewayFlags(portA, portB int) []string {
	return []string{"--gateway", fmt.Sprintf("%s.0/24=%s:%d", s.netA, s.gwA, portA), "--gateway", fmt.Sprintf("%s.0/24=%s:%d", s.netB, s.gwB, portB)}
}

func (s *twoSites) job(mpigo string, args ...string) *exec.Cmd {
	hosts := []string{}
	for _, h := range s.hostsA {
		hosts = append(hosts, h+":1")
	}
	for _, h := range s.hostsB {
		hosts = append(hosts, h+":2")
	}
	c := exec.Command(mpigo, append([]string{"run", "--timeout", "90s", "--launch-agent", s.agent, "--host", strings.Join(hosts, ",")}, args...)...)
	c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+s.kvsHost)
	return c
}

// One job over two sites that cannot reach each other: the ranks of
// site A (two hosts, one rank each) and of site B (one host, two ranks)
// reach the launcher's store (in site A) and pass a ring, run
// collectives, exchange 4 MiB messages and a synchronous send through the
// gateways; without gateways the first connection across (to the store,
// or, where the launcher is reachable, to a rank) fails at once with an
// error naming the peer and what was tried; a gateway killed while the
// job runs ends it with a message naming it.
func TestNetnsGateway(t *testing.T) {
	s := newTwoSites(t, 2, 1)
	dir := testProgs(t)
	prog := filepath.Join(t.TempDir(), "gwprog")
	if out, err := exec.Command("go", "build", "-o", prog, "./testdata/gwprog").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	mpigo := filepath.Join(dir, "mpigo")
	// No route between the sites.
	if out, err := exec.Command("ip", "netns", "exec", fmt.Sprintf("mgw%d-0", os.Getpid()%100000), "ip", "route", "get", s.hostsB[0]).CombinedOutput(); err == nil {
		t.Fatalf("site A has a route to site B: %s", out)
	}

	t.Run("through gateways", func(t *testing.T) {
		want := `gwprog: 4 ranks: ring 4, allreduce 10, bcast "hello from 0", allgather [0 1 2 3], 4 MiB ok, ssend waited true`
		for _, extra := range [][]string{nil, {"--transport", "tcp"}} {
			args := append(append(s.gatewayFlags(0, 0), extra...), "-n", "4", prog)
			out, errs, code := runLaunched(t, s.job(mpigo, args...), 120*time.Second)
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("%v: exit %d, want %q:\n%s\n%s", extra, code, want, out, errs)
			}
		}
	})

	// Without gateways, the job fails at once with an error naming what
	// could not be reached.
	noGateway := func(t *testing.T, what string) {
		start := time.Now()
		out, errs, code := runLaunched(t, s.job(mpigo, "-n", "4", prog), 120*time.Second)
		for _, w := range []string{what, "network is unreachable", "no gateway is configured"} {
			if !strings.Contains(errs, w) {
				t.Errorf("stderr lacks %q", w)
			}
		}
		if code == 0 || t.Failed() {
			t.Errorf("exit %d:\n%s\n%s", code, out, errs)
		}
		if d := time.Since(start); d > 45*time.Second {
			t.Errorf("took %v", d)
		}
	}
	t.Run("no gateway, launcher out of reach", func(t *testing.T) {
		noGateway(t, "cannot reach the launcher's key-value store at "+s.kvsHost)
	})
	t.Run("no gateway", func(t *testing.T) {
		s.storeRoute(t)
		noGateway(t, "cannot connect to rank")
	})

	t.Run("gateway killed", func(t *testing.T) {
		const portA, portB = 7001, 7002
		c := s.job(mpigo, append(s.gatewayFlags(portA, portB), "-n", "4", prog, "-loop")...)
		var errb bytes.Buffer
		c.Stderr = &errb
		so, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		ownGroup(c)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		looping := make(chan bool, 1)
		var outb strings.Builder
		go func() {
			sc := bufio.NewScanner(so)
			seen := false
			for sc.Scan() {
				outb.WriteString(sc.Text() + "\n")
				if !seen && strings.Contains(sc.Text(), "gwprog: looping") {
					seen = true
					looping <- true
				}
			}
			close(looping)
			done <- c.Wait()
		}()
		select {
		case ok := <-looping:
			if !ok {
				<-done
				t.Fatalf("the job ended before looping:\n%s\n%s", outb.String(), errb.String())
			}
		case <-time.After(90 * time.Second):
			stopTree(c, done, 5*time.Second)
			t.Fatalf("the job did not start looping:\n%s", errb.String())
		}
		pid := gatewayPid(t, s.gwNS, portA)
		killed := time.Now()
		syscall.Kill(pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			stopTree(c, done, 5*time.Second)
			<-done
			t.Fatalf("the job did not end after its gateway was killed:\n%s", errb.String())
		}
		if d := time.Since(killed); d > 30*time.Second {
			t.Errorf("the job took %v to end", d)
		}
		errs := errb.String()
		name := fmt.Sprintf("mpigo run: gateway %s:%d (network %s.0/24) on host %s exited with status 137 (signal 9: killed) while the job ran", s.gwA, portA, s.netA, s.gwA)
		if c.ProcessState.ExitCode() == 0 || !strings.Contains(errs, name) {
			t.Errorf("exit %d, want a message %q:\n%s", c.ProcessState.ExitCode(), name, errs)
		}
		if strings.Contains(errs, "mpigo run: rank") && strings.Contains(errs, "stopping the other") {
			t.Errorf("a rank is blamed for the gateway's end:\n%s", errs)
		}
	})
}

// gatewayPid finds the gateway listening on port in namespace ns.
func gatewayPid(t *testing.T, ns string, port int) int {
	t.Helper()
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		t.Fatalf("ip netns pids: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(f)
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 3 && args[1] == "gateway" && args[3] == fmt.Sprintf(":%d", port) {
			return pid
		}
	}
	t.Fatalf("no gateway on port %d among %s", port, out)
	return 0
}

// BenchmarkNetnsGateway measures, in the two-site set-up, 8-byte latency
// and 4 MiB bandwidth (mpigo bench latency and bw, one rank per host)
// between two hosts of site A, directly, and between site A and site B,
// through the gateway host; both connections are encrypted. Run it with
//
//	sudo go test -run '^$' -bench NetnsGateway -benchtime 1x ./cmd/mpigo
func BenchmarkNetnsGateway(b *testing.B) {
	s := newTwoSites(b, 2, 1)
	mpigo := filepath.Join(b.TempDir(), "mpigo")
	if out, err := exec.Command("go", "build", "-o", mpigo, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	measure := func(b *testing.B, hosts string, gw bool, test, size string) float64 {
		args := []string{"run", "--timeout", "300s", "--launch-agent", s.agent, "--host", hosts}
		if gw {
			args = append(args, s.gatewayFlags(0, 0)...)
		}
		args = append(args, "-n", "2", mpigo, "bench", test, "-sizes", size, "-reps", "5", "-progress", "off")
		c := exec.Command(mpigo, args...)
		c.Env = append(os.Environ(), "MPIGO_KVS_HOST="+s.kvsHost)
		out, err := c.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == size {
				v, err := strconv.ParseFloat(f[1], 64)
				if err == nil {
					return v
				}
			}
		}
		b.Fatalf("no result for size %s in:\n%s", size, out)
		return 0
	}
	for _, tc := range []struct {
		name  string
		hosts string
		gw    bool
	}{
		{"direct", s.hostsA[0] + ":1," + s.hostsA[1] + ":1", false},
		{"gateway", s.hostsA[0] + ":1," + s.hostsB[0] + ":1", true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				lat := measure(b, tc.hosts, tc.gw, "latency", "8")
				bw := measure(b, tc.hosts, tc.gw, "bw", "4194304")
				b.ReportMetric(lat, "us-latency-8B")
				b.ReportMetric(bw, "MB/s-bw-4MiB")
			}
		})
	}
}

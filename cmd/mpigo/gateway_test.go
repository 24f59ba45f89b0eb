package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseGatewaySpec(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"10.1.0.0/16=gw", "10.1.0.0/16 gw 0 ", ""},
		{"10.1.2.3/16=gw:7000", "10.1.0.0/16 gw 7000 ", ""},
		{"10.1.0.0/16=10.1.0.254:7000/198.51.100.1", "10.1.0.0/16 10.1.0.254 7000 198.51.100.1", ""},
		{"10.1.0.0/16=[fd00::1]:7000/198.51.100.1:7001", "10.1.0.0/16 fd00::1 7000 198.51.100.1:7001", ""},
		{"10.1.0.0/16", "", "want NETWORK=HOST"},
		{"10.1.0.0/16=", "", "want NETWORK=HOST"},
		{"gw:7000", "", "want NETWORK=HOST"},
		{"10.1.0.0=gw", "", "not a network"},
		{"10.1.0.0/16=gw:x", "", "bad port"},
		{"10.1.0.0/16=gw:70000", "", "bad port"},
		{"10.1.0.0/16=a;b", "", "bad gateway host"},
		{"10.1.0.0/16=gw/a=b", "", "bad public address"},
	} {
		g, err := parseGatewaySpec(tc.in)
		got := ""
		if err == nil {
			got = strings.Join([]string{g.prefix.String(), g.host, g.port, g.public}, " ")
		}
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case got != tc.want:
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// mpigo gateway outside a job says what it lacks.
func TestGatewayCmdNeedsJob(t *testing.T) {
	t.Setenv("MPIGO_JOBID", "")
	var out, errb bytes.Buffer
	if code := gatewayCmd(nil, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "mpigo run starts gateways itself") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	t.Setenv("MPIGO_JOBID", "12")
	for _, v := range []string{"MPIGO_SECRET_FD", "MPIGO_SECRET"} {
		t.Setenv(v, "") // restored at the end
		os.Unsetenv(v)
	}
	errb.Reset()
	if code := gatewayCmd(nil, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "no job secret") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// A gateway on this machine starts, the job runs (its ranks share one
// network, so they connect directly) and the gateway is gone afterwards;
// a gateway that cannot listen ends the job before any rank starts, with
// its own error.
func TestGatewayLocal(t *testing.T) {
	dir := testProgs(t)
	mpigo := filepath.Join(dir, "mpigo")
	c := exec.Command(mpigo, "run", "--timeout", "60s", "--gateway", "127.0.0.0/8=127.0.0.1", "-n", "2", filepath.Join(dir, "coll"))
	out, errs, code := runLaunched(t, c, 90*time.Second)
	if code != 0 || !strings.Contains(out, "collprog: 2 ranks") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errs)
	}
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	start := time.Now()
	c = exec.Command(mpigo, "run", "--timeout", "60s", "--gateway", "10.0.0.0/8=127.0.0.1:"+port, "-n", "2", filepath.Join(dir, "coll"))
	out, errs, code = runLaunched(t, c, 90*time.Second)
	want := "gateway 127.0.0.1:" + port + " (network 10.0.0.0/8) on host 127.0.0.1 exited with status 1 before it listened: mpigo gateway: listen tcp :" + port
	if code == 0 || !strings.Contains(errs, want) || strings.Contains(out, "collprog") {
		t.Errorf("exit %d, want %q:\n%s\n%s", code, want, out, errs)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

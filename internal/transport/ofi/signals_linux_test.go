//go:build cgo && mpigo_ofi && linux

package ofi

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMKills: a program linked with libfabric dies of SIGTERM, as a
// Go program does, rather than running a C library's handler that calls
// exit() (libinfinipath's, through the PSM provider), which deadlocks when
// the signal interrupts libfabric's start and left ranks of a stopped job
// running for ever. The child is this test binary sending itself SIGTERM.
func TestSIGTERMKills(t *testing.T) {
	if os.Getenv("MPIGO_TEST_OFI_SIGTERM") == "1" {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(5 * time.Second)
		os.Exit(3) // not killed
	}
	t.Logf("signals taken back from libinfinipath: %#x (0 where libfabric does not link it)", signalsReset())
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGTERMKills$")
	cmd.Env = append(os.Environ(), "MPIGO_TEST_OFI_SIGTERM=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want death by SIGTERM\n%s", err, out)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want death by SIGTERM (a C library's handler ran?)\n%s", ee, out)
	}
}

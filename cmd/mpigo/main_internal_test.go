package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// TestMain lets the test binary act as mpigo when a test launches it as a
// rank (mpigo bench -transport tcp starts its own executable).
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("MPIGO_RANK"); ok && len(os.Args) > 1 && os.Args[1] == "bench" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == reapCmd {
		// The launcher's reaper, when the launcher is this test binary.
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	removeTestProgs()
	os.Exit(code)
}

// Help asked for goes to stdout with status 0; mpiexec's flags get a hint
// naming what mpigo run does instead, in a few lines rather than the whole
// usage; --version and --oversubscribe are understood.
func TestCLIFirstHour(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		out, errs  string
		noErrUsage bool
	}{
		{[]string{"run", "--help"}, 0, "Usage: mpigo run", "", true},
		{[]string{"run", "-h"}, 0, "-oversubscribe", "", true},
		{[]string{"bench", "-h"}, 0, "overlap (%)", "", true},
		{[]string{"--version"}, 0, "mpigo " + mpi.Version, "", true},
		{[]string{"version"}, 0, "MPI 4.1", "", true},
		{[]string{"help"}, 0, "ialltoall", "", true},
		{[]string{"run", "-genvall", "-n", "2", "prog"}, 2, "", "-genvall is a flag of mpiexec/mpirun; with mpigo run: local ranks inherit", true},
		{[]string{"run", "--rankfile", "f", "-n", "2", "prog"}, 2, "", "not supported", true},
		{[]string{"run", "--cpu-bind", "cores", "-n", "2", "prog"}, 2, "", "--bind-to core", true},
		{[]string{"run", "-x", "FOO=1", "-ppn", "2", "--bind-to", "core", "--output-filename", "d", "no-such-program-anywhere"}, 1, "", "not found in PATH", true},
		{[]string{"run", "--bogus", "-n", "2", "prog"}, 2, "", "flag provided but not defined: -bogus", true},
	} {
		var out, errs strings.Builder
		code := run(tc.args, &out, &errs)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errs.String(), tc.errs) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", tc.args, code, out.String(), errs.String())
		}
		if tc.noErrUsage && strings.Contains(errs.String(), "Usage:") {
			t.Errorf("%v: the whole usage on stderr: %q", tc.args, errs.String())
		}
	}
}

package main

import (
	"os"
	"testing"
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

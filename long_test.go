package mpi_test

import (
	"os"
	"testing"
)

// longTests reports whether the long stress runs are wanted: set
// MPIGO_TEST_LONG=1 (.ci/run does). The README's `go test ./...` runs
// them at a size that still finds ordering and corruption bugs quickly
// and keeps the whole suite near two minutes on a two-core machine.
func longTests() bool { return os.Getenv("MPIGO_TEST_LONG") == "1" }

// stressSize is total under MPIGO_TEST_LONG=1, a fifth of it otherwise
// (and under -short).
func stressSize(total int) int {
	if longTests() && !testing.Short() {
		return total
	}
	return total / 5
}

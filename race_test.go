//go:build race

package mpi_test

// raceEnabled reports whether the race detector is on: it allocates on
// its own, so allocation counts mean nothing then.
const raceEnabled = true

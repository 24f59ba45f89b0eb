//go:build !race

package mpi_test

// raceEnabled reports whether the race detector is on; it allocates on its
// own and makes sync.Pool drop items, so allocation counts mean nothing.
const raceEnabled = false

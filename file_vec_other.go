//go:build !linux

package mpi

import "os"

// writeVec reports that this platform writes the pieces of a run one
// call each (see file_vec_linux.go).
func writeVec(fd *os.File, bufs [][]byte, off int64) (bool, error) { return false, nil }

// readVec reports that this platform reads the pieces of a run one call
// each (see file_vec_linux.go).
func readVec(fd *os.File, bufs [][]byte, off int64) (bool, int64, error) { return false, 0, nil }

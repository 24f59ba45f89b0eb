//go:build !linux

package mpi

import "os"

// writeVec reports that this platform writes the pieces of a run through
// one buffer (see file_vec_linux.go).
func writeVec(fd *os.File, bufs [][]byte, off int64) (bool, error) { return false, nil }

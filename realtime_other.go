//go:build !linux

package mpi

// realtime reports whether this process runs under a real-time scheduling
// policy; only Linux is asked.
func realtime() bool { return false }

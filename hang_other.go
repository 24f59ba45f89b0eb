//go:build !unix

package mpi

// onQuit does nothing where there is no SIGQUIT.
func onQuit(report func(), cfg Config) func() { return func() {} }

package mpi

// Version is the version of mpigo.
const Version = "0.1.0"

// The version of the MPI standard whose semantics mpigo follows.
const (
	StandardVersion    = 4
	StandardSubversion = 1
)

// Package bindhook lends the language bindings of this module (abi/capi)
// what package mpi does not export to programs: functions that package
// mpi sets when it is initialised, before any binding can call them.
package bindhook

// RecycleRequest takes back r, a completed *mpi.Request that its binding
// drops and will never touch again (a C handle released by MPI_Wait and
// its kin), so that a later non-blocking call of its rank reuses its
// memory instead of allocating: a C program's window of small messages
// otherwise left 64 bytes of garbage per message, and the garbage
// collector's work cost a fifth of its message rate. A request that is
// not plainly finished (persistent, generalized, with an error, still
// held by a wait) is left alone.
var RecycleRequest func(r any)

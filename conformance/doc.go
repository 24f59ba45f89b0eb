// Package conformance holds black-box conformance tests of mpigo,
// organised like the directories of MPICH's test/mpi suite: pt2pt, coll,
// datatype, comm, group, topo, attr, init, errhan, info and threads. Each
// directory is a test package of its own that uses only the public API
// of github.com/mpigo/mpi and runs every test over every transport of
// the matrix in internal/conformance (goroutine ranks over inproc with
// each protocol path, tcp, shm). The tests are our own code, written
// after what MPICH's tests check.
//
// Run them with go test ./conformance/...; MPIGO_CONFORMANCE=inproc,tcp
// limits the transports.
package conformance

// Command mpigo runs and measures mpigo programs.
//
//	mpigo run -n N PROGRAM     start an MPI job of N processes
//	mpigo bench TEST [flags]   micro-benchmarks in the style of the OSU suite
//	mpigo bench report         plots and an HTML page of several benchmarks
//	mpigo info                 version, transports and tunables
//	mpigo trace FILE           summarise (or draw, -html) a recorded timeline
//	mpigo cc, mpigo c++        compile C/C++ programs for the MPI standard ABI
//	mpigo nameserver           serve MPI's names to jobs started apart
//
// Run "mpigo help" for details.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/mpigo/mpi"
)

const usage = `mpigo: MPI for Go

Usage:
  mpigo run -n N PROGRAM [ARGS...]   start an MPI job of N processes on this
                             machine; "mpigo run -h" for flags
  mpigo bench TEST [flags]   run a micro-benchmark; TEST is one of latency,
                             sendrecv, bw, bibw, allreduce, bcast, barrier, allgather,
                             alltoall, reduce, reduce_scatter, scan,
                             iallreduce, ibcast, iallgather, ialltoall,
                             ibarrier; "mpigo bench -h" for flags
  mpigo bench report         run latency and bandwidth over every transport
                             and write a plot and an HTML page
  mpigo info                 print the version, transports and tunables
  mpigo trace FILE [-html OUT.html]   summarise a timeline recorded with
                             mpigo run --trace FILE; draw it as a web page
  mpigo cc [-show] ARGS...   compile and link a C program for the MPI-5.0
                             standard ABI (libmpi_abi.so.1); docs/abi.md
  mpigo c++ [-show] ARGS...  the same for C++
  mpigo gateway              relay a job's connections between networks
                             (started by mpigo run --gateway)
  mpigo nameserver           serve MPI's names (PublishName, LookupName) to
                             jobs started apart; prints MPIGO_NAMESERVER
  mpigo version              print the version (also --version)
  mpigo help                 print this message
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case reapCmd:
		return reap(args[1:])
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "bench":
		return bench(args[1:], stdout, stderr)
	case "info":
		return info(args[1:], stdout, stderr)
	case "trace":
		return traceCmd(args[1:], stdout, stderr)
	case "cc", "c++":
		return ccCmd(args[0], args[1:], stdout, stderr)
	case "gateway":
		return gatewayCmd(args[1:], os.Stdin, stdout, stderr)
	case "nameserver":
		return nameserverCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version", "-V":
		fmt.Fprintf(stdout, "mpigo %s (MPI %d.%d, %s)\n", mpi.Version, mpi.StandardVersion, mpi.StandardSubversion, runtime.Version())
		return 0
	}
	fmt.Fprintf(stderr, "mpigo: unknown command %q\n\n%s", args[0], usage)
	return 2
}

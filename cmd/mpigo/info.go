package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/coll"
)

func info(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := mpi.DefaultConfig()
	fmt.Fprintf(stdout, "mpigo %s (MPI %d.%d semantics)\n", mpi.Version, mpi.StandardVersion, mpi.StandardSubversion)
	fmt.Fprintf(stdout, "go:          %s %s/%s, GOMAXPROCS=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Fprintf(stdout, "transports:  self (a rank to itself), inproc (goroutine ranks, single copy), tcp (processes)\n")
	fmt.Fprintf(stdout, "launchers:   mpigo run (MPIGO_RANK, MPIGO_SIZE, MPIGO_KVS), singleton\n")
	fmt.Fprintf(stdout, "thread level: multiple (every call is safe from any goroutine)\n")
	fmt.Fprintf(stdout, "tunables:\n")
	fmt.Fprintf(stdout, "  MPIGO_EAGER_LIMIT = %d bytes (largest eager message; larger ones use rendezvous)\n", cfg.EagerLimit)
	fmt.Fprintf(stdout, "  MPIGO_TCP_SOCKBUF = %d bytes (tcp socket buffers; 0: the kernel's autotuned default)\n", cfg.TCPSockBuf)
	fmt.Fprintf(stdout, "  MPIGO_NP          = ranks a program started without a launcher runs as goroutines (default 1)\n")
	fmt.Fprintf(stdout, "collective algorithms (first rule whose size bound holds and that applies; docs/collectives.md):\n")
	for _, e := range coll.Table() {
		fmt.Fprintf(stdout, "  %-25s = %s  (%s; size: %s)\n", coll.EnvName(e.Coll), coll.FormatRules(e.Rules), e.Source, coll.Sizes[e.Coll])
		if e.Err != nil {
			fmt.Fprintf(stdout, "  %-25s   ignored: %v\n", "", e.Err)
		}
	}
	fmt.Fprintf(stdout, "limits:\n")
	fmt.Fprintf(stdout, "  tag upper bound   = %d\n", mpi.TagUB)
	fmt.Fprintf(stdout, "  bsend overhead    = %d bytes\n", mpi.BsendOverhead)
	return 0
}

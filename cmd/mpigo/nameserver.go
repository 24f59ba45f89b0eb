package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mpigo/mpi/internal/boot"
)

// mpigo nameserver (docs/spawn.md): a name service of its own, for jobs
// started apart (two mpigo runs, or jobs under Hydra, Slurm or mpirun,
// whose launchers serve no names) to find each other's ports with
// PublishName and LookupName.

const nameserverUsage = `mpigo nameserver: serve MPI's names to jobs started apart

Usage:
  mpigo nameserver [-listen ADDR] [-o FILE]

It prints MPIGO_NAMESERVER=ADDR/SECRET; give that variable to every job
that should share names (export it, or pass it with mpigo run -x). Only a
process given the secret can publish or look up. It serves until it gets
SIGINT or SIGTERM.
`

func nameserverCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mpigo nameserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, nameserverUsage); fs.PrintDefaults() }
	listen := fs.String("listen", "127.0.0.1:0", "`ADDR` to listen on (port 0: any free port; a host's address or :PORT to serve other machines)")
	out := fs.String("o", "", "also write MPIGO_NAMESERVER's value into `FILE` (mode 0600), for scripts: export MPIGO_NAMESERVER=$(cat FILE)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mpigo nameserver: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	srv, err := boot.ServeNames(*listen, secret)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo nameserver: %v\n", err)
		return 1
	}
	defer srv.Close()
	v := boot.FormatNameServer(srv.Addr(), secret)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(v+"\n"), 0o600); err != nil {
			fmt.Fprintf(stderr, "mpigo nameserver: %v\n", err)
			return 1
		}
		defer os.Remove(*out)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	fmt.Fprintf(stdout, "MPIGO_NAMESERVER=%s\n", v)
	s := <-sigs
	fmt.Fprintf(stderr, "mpigo nameserver: got %v, stopping\n", s)
	return 0
}

// earlydie is an MPI program in which one rank dies during start-up, while
// the others wait for it at the start-up fence: mpigo run's tests check
// that the job then ends, with the rank named, and nothing is left.
//
//	earlydie [MODE [DELAY]]
//
// MODE says what rank 1 does before mpi.Main: exit (os.Exit(3), the
// default), kill (SIGKILL to itself), or hang (sleep for a minute: for
// --timeout and SIGINT during start-up). DELAY (a Go duration) comes
// first. With MODE exitin, rank 1 calls mpi.Main and exits with status 3
// DELAY later, wherever its start-up is then. With MODE "none" every rank starts normally and finishes after
// DELAY; with MODE "env" every rank starts and says whether the job's
// secret is in its environment as the kernel shows it (/proc/self/environ).
// With MODE "late", rank 1 sleeps DELAY before mpi.Main, then runs
// normally (the launcher's start-up progress messages name it).
package main

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/mpigo/mpi"
)

func main() {
	mode, delay := "exit", time.Duration(0)
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if len(os.Args) > 2 {
		delay, _ = time.ParseDuration(os.Args[2])
	}
	if os.Getenv("MPIGO_RANK") == "1" && mode == "late" {
		time.Sleep(delay)
	} else if os.Getenv("MPIGO_RANK") == "1" && mode == "exitin" {
		// Exit after DELAY, at whatever point of start-up Main is.
		go func() {
			time.Sleep(delay)
			os.Exit(3)
		}()
	} else if os.Getenv("MPIGO_RANK") == "1" && mode != "none" && mode != "env" {
		time.Sleep(delay)
		switch mode {
		case "kill":
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		case "hang":
			time.Sleep(time.Minute)
		}
		os.Exit(3)
	}
	mpi.Main(func(world *mpi.Comm) error {
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if mode == "none" {
			time.Sleep(delay)
		}
		if mode == "exitin" && world.Rank() == 1 {
			time.Sleep(time.Minute) // the exit comes first, wherever start-up was
		}
		if mode == "env" {
			b, err := os.ReadFile("/proc/self/environ")
			fmt.Printf("rank %d: environ read %v, has MPIGO_SECRET= %v, has MPIGO_SECRET_FD now %v\n", world.Rank(), err == nil,
				bytes.Contains(b, []byte("MPIGO_SECRET=")), os.Getenv("MPIGO_SECRET_FD") != "")
		}
		return nil
	})
}

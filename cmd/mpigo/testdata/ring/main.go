// ring is the victim of mpigo run's kill tests. Every rank passes a token
// round the ring, every fourth lap with half a megabyte of company so
// that kills also land mid-rendezvous.
//
//	ring LAPS      LAPS laps, then a Barrier, and return: a test that kills
//	               a process at a random moment hits start-up, the running
//	               job or its shutdown (TestChaosKill)
//	ring -pid DIR  first write the pid to DIR/pid.RANK (and the job id to
//	               DIR/job), then pass the token until killed
//	               (TestRunKillRandomRank)
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mpigo/mpi"
)

func main() {
	laps, dir := -1, "" // -1: until killed
	if len(os.Args) == 3 && os.Args[1] == "-pid" {
		dir = os.Args[2]
	} else if n, err := strconv.Atoi(os.Args[len(os.Args)-1]); len(os.Args) == 2 && err == nil && n >= 0 {
		laps = n
	} else {
		fmt.Fprintln(os.Stderr, "usage: ring LAPS | ring -pid DIR")
		os.Exit(2)
	}
	mpi.Main(func(world *mpi.Comm) error {
		if dir != "" {
			os.WriteFile(filepath.Join(dir, "job"), []byte(os.Getenv("MPIGO_JOBID")), 0o644)
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("pid.%d", world.Rank())), []byte(fmt.Sprint(os.Getpid())), 0o644)
		}
		me, n := world.Rank(), world.Size()
		next, prev := (me+1)%n, (me+n-1)%n
		big := make([]int, 64<<10)
		token := []int{0}
		for lap := 0; laps < 0 || lap < laps; lap++ {
			msg := []int{token[0] + 1}
			if lap%4 == 3 {
				big[0] = token[0] + 1
				msg = big
			}
			r, err := mpi.Isend(world, msg, next, 0)
			if err != nil {
				return err
			}
			if token, _, err = mpi.Recv[[]int](world, prev, 0); err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
		}
		return mpi.Barrier(world)
	})
}

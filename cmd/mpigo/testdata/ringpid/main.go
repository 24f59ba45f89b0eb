// ringpid writes its pid to DIR/pid.RANK (and the job id to DIR/job) and
// passes a token round the ring until it is killed, every fourth lap with
// half a megabyte of company so that some kills land mid-rendezvous;
// mpigo run's tests kill ranks of it at random.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mpigo/mpi"
)

func main() {
	dir := os.Args[1]
	mpi.Main(func(world *mpi.Comm) error {
		os.WriteFile(filepath.Join(dir, "job"), []byte(os.Getenv("MPIGO_JOBID")), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("pid.%d", world.Rank())), []byte(fmt.Sprint(os.Getpid())), 0o644)
		me, n := world.Rank(), world.Size()
		token := []int{0}
		big := make([]int, 64<<10)
		for lap := 0; ; lap++ {
			next, prev := (me+1)%n, (me+n-1)%n
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
	})
}

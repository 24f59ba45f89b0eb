package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// A rank that fails takes the job down: ranks blocked waiting for it get
// ErrProcFailed instead of hanging, and Run names the rank that failed.
func TestRankFailureAbortsJob(t *testing.T) {
	boom := errors.New("boom")
	err := mpi.Run(3, func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			return boom
		}
		_, _, err := mpi.Recv[int](world, 1, 0) // never sent
		if !errors.Is(err, mpi.ErrProcFailed) {
			return fmt.Errorf("blocked Recv returned %v, want ErrProcFailed", err)
		}
		return err
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want it to wrap the failing rank's error", err)
	}
	if !strings.Contains(err.Error(), "rank 1: boom") {
		t.Errorf("Run's error does not name rank 1: %v", err)
	}
	var re *mpi.RankError
	if !errors.As(err, &re) {
		t.Errorf("Run's error is not a *RankError: %T", err)
	}
}

func TestRankPanicAbortsJob(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			panic("rank 0 gives up")
		}
		return mpi.Barrier(world)
	})
	if err == nil || !strings.Contains(err.Error(), "rank 0: panic: rank 0 gives up") {
		t.Fatalf("got %v", err)
	}
}

// ErrorsAreFatal aborts the job: under Run (which never exits the
// process) every rank's calls fail and Run returns the error that caused
// it, naming it; under a launcher the process exits (cmd/mpigo tests).
func TestErrorsAreFatal(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		world.SetErrHandler(mpi.ErrorsAreFatal)
		if world.Rank() == 0 {
			return mpi.Send(world, 1, 9, 0) // no rank 9
		}
		_, _, err := mpi.Recv[int](world, 0, 0)
		if !errors.Is(err, mpi.ErrProcFailed) {
			return fmt.Errorf("rank 1's Recv: %v, want ErrProcFailed", err)
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "dest 9") || !errors.Is(err, mpi.ErrRank) {
		t.Fatalf("Run returned %v", err)
	}
}

// A custom error handler sees the error; the call still returns it.
func TestCustomErrHandler(t *testing.T) {
	err := mpi.Run(1, func(world *mpi.Comm) error {
		var seen error
		world.SetErrHandler(mpi.NewErrHandler(func(c *mpi.Comm, err error) { seen = err }))
		err := mpi.Send(world, 1, 4, 0)
		if seen == nil || seen != err || !errors.Is(err, mpi.ErrRank) {
			return fmt.Errorf("handler saw %v, call returned %v", seen, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRunArgs(t *testing.T) {
	if err := mpi.Run(0, func(*mpi.Comm) error { return nil }); !errors.Is(err, mpi.ErrArg) {
		t.Fatalf("Run(0): %v", err)
	}
}

// 64 goroutine ranks on a small machine: waiting must park, not spin.
func TestManyRanksAllreduce(t *testing.T) {
	err := mpi.Run(64, func(world *mpi.Comm) error {
		for i := 0; i < 20; i++ {
			s, err := mpi.Allreduce(world, world.Rank()+i, mpi.Sum[int]())
			if err != nil {
				return err
			}
			if want := 64*63/2 + 64*i; s != want {
				return fmt.Errorf("round %d: %d, want %d", i, s, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

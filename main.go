package mpi

// Main, the entry point of a program, and Abort.

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mpigo/mpi/internal/boot"
)

// Main is the entry point of an MPI program. It finds out how the process
// was started, runs f on every rank this process hosts, and exits: with
// status 0 if every rank returned nil, and otherwise with status 1 after
// printing which rank failed and why.
//
// Under a launcher (`mpigo run`, MPICH's mpiexec (Hydra, PMI-1), Slurm's
// srun --mpi=pmix or --mpi=pmi2, Open MPI's mpirun (PMIx);
// docs/launchers.md) the process hosts the
// ranks the launcher gave it and talks to the other processes through
// shared memory or TCP. A program started without a launcher runs as a
// single rank (a singleton job of size 1), or as MPIGO_NP goroutine ranks
// if that variable is set.
func Main(f func(world *Comm) error) {
	info, err := boot.Detect(lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo: %v\n", err)
		os.Exit(1)
	}
	if info.Launcher != boot.LauncherSingleton {
		err := runLaunched(info, DefaultConfig(), f)
		if err != nil {
			err = primaryErrors(err)
			if h, ok := err.(*hangError); !ok || h.report != "" {
				// (A process that only learnt that the job hung says
				// nothing: rank 0's process printed the report.)
				fmt.Fprintf(stderr, "mpigo: %s\n", strings.TrimSuffix(err.Error(), "\n"))
			}
			code := 1
			if onlyPeerFailures(err) {
				code = ExitPeerFailed
			}
			// Under a PMI launcher, ask it to end the whole job, also when
			// this rank only saw another fail: srun by default lets the
			// other tasks run on, and a rank that has no connection to the
			// failed one would not learn that it is gone (a rank that died
			// without a word asks nothing). The pause lets the launcher
			// forward the message above first (Hydra drops what it has
			// not forwarded when it aborts).
			if a, ok := info.KV.(boot.Aborter); ok {
				time.Sleep(100 * time.Millisecond)
				a.Abort(code, fmt.Sprintf("rank %d failed", info.Rank))
			}
			os.Exit(code)
		}
		if err := info.KV.Close(); err != nil {
			fmt.Fprintf(stderr, "mpigo: rank %d: leaving the job: %v\n", info.Rank, err)
		}
		os.Exit(0)
	}
	n, np, err := singletonRanks()
	if err != nil {
		fmt.Fprintf(stderr, "mpigo: %v\n", err)
		os.Exit(2)
	}
	if err := Run(n, f); err != nil {
		if code, ok := ExitCode(err); ok {
			fmt.Fprintf(stderr, "mpigo: job aborted:\n%v\n", primaryErrors(err))
			os.Exit(exitStatus(code))
		}
		// A hang report ends with its newline already.
		fmt.Fprintf(stderr, "mpigo: job failed:\n%s\n", strings.TrimSuffix(primaryErrors(err).Error(), "\n"))
		if !np && errors.Is(err, ErrRank) {
			prog, gorun := os.Args[0], strings.Contains(os.Args[0], "go-build")
			if gorun {
				prog = "go run ."
			}
			fmt.Fprintf(stderr, "mpigo: hint: this program ran as a single rank, because no launcher started it and MPIGO_NP is not set; "+
				"start it with `mpigo run -n 4 PROGRAM` for processes, or `MPIGO_NP=4 %s` for goroutine ranks\n", prog)
		}
		os.Exit(1)
	}
	os.Exit(0)
}

// Abort ends the whole job (MPI_Abort): every rank's pending and later
// calls fail. Under a launcher the process exits with code (the launcher
// then stops the other processes). Under Run, which never exits the
// process, the calling goroutine stops as if its function had returned,
// and Run returns an *Error of class ErrOther saying that the rank called
// Abort with code; ExitCode reads the code from it. Abort does not return
// to its caller. A nil communicator does nothing.
func Abort(c *Comm, code int) {
	if c == nil || c.p == nil {
		return
	}
	if h := profiler.Load(); h != nil {
		// Abort does not return: report its end before it acts.
		var err error
		h.exit(h.enter("Abort", c, Undefined, Undefined), &err)
	}
	if code == 0 {
		code = 1
	}
	j := c.p.job
	e := c.errorf("Abort", ErrOther, loc{}, "")
	e.(*Error).Cause = abortCode(code)
	j.abort(c.p.Rank, code, fmt.Errorf("Abort called with code %d on %s", code, c.Name()))
	if j.Local {
		c.p.aborted.Store(&e)
		runtime.Goexit()
	}
}

// exitStatus is the process exit status for Abort's code. A status keeps
// only the code's low 8 bits, so a code like 256, or a class of
// MPI_Add_error_class (16384 and up) raised under MPI_ERRORS_ARE_FATAL,
// would read as success: such codes exit with 1.
func exitStatus(code int) int {
	if code != 0 && code&0xff == 0 {
		return 1
	}
	return code
}

// ExitStatus is the process exit status a job aborted with code (Abort,
// ExitCode) exits with: code itself when its low 8 bits, all an exit
// status keeps, are not all zero, and 1 otherwise, so that no abort reads
// as success.
func ExitStatus(code int) int { return exitStatus(code) }

// abortCode is the Cause of the error of a rank that called Abort.
type abortCode int

func (a abortCode) Error() string { return fmt.Sprintf("Abort called with code %d", int(a)) }

// ExitCode returns the code a rank passed to Abort if err (such as Run's
// error) says a rank called Abort, and false otherwise.
func ExitCode(err error) (int, bool) {
	var a abortCode
	if errors.As(err, &a) {
		return int(a), true
	}
	return 0, false
}

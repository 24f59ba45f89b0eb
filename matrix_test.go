package mpi_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
	shmtr "github.com/mpigo/mpi/internal/transport/shm"
)

// transportCase is one transport configuration of the matrix
// (conformance.Matrix, which the conformance tests under conformance/
// share: a new transport is tested by adding one line there).
type transportCase struct {
	name string
	cfg  mpi.Config
}

// transports returns the matrix's configurations that this platform runs:
// all but the shared-memory ones where it has no shared memory (Windows).
func transports() []transportCase {
	shmOK, _ := shmtr.Available()
	var cases []transportCase
	for _, tr := range conformance.Matrix() {
		if tr.Config.Transport == "shm" && !shmOK {
			continue
		}
		cases = append(cases, transportCase{tr.Name, tr.Config})
	}
	return cases
}

// matrixLimit is how long one job of matrix may take: far more than any
// needs, even under the race detector on a busy machine.
const matrixLimit = 3 * time.Minute

// matrix runs f on n ranks over every transport configuration, as subtests.
// A job that has not ended after matrixLimit fails its subtest with every
// goroutine's stack, instead of hanging the package until go test's
// -timeout, which names only the test.
func matrix(t *testing.T, n int, f func(world *mpi.Comm) error) {
	t.Helper()
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- mpi.RunConfig(n, tc.cfg, f) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(matrixLimit):
				buf := make([]byte, 1<<22)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("the job has not ended after %v (hung?); every goroutine's stack:\n%s", matrixLimit, buf)
			}
		})
	}
}

// check turns a failed condition into an error naming the rank.
func check(c *mpi.Comm, ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("rank %d: %s", c.Rank(), fmt.Sprintf(format, args...))
}

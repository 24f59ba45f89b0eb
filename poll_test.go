package mpi_test

import (
	"fmt"
	"runtime"
	"time"
)

// pollUntil calls test until it reports completion or an error, as a
// program that overlaps work with communication polls a request. It
// gives up after a minute, so that a request that never completes fails
// the test with a message naming what instead of hanging it.
func pollUntil(what string, test func() (bool, error)) error {
	deadline := time.Now().Add(time.Minute)
	for {
		done, err := test()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still not complete after a minute of Test calls", what)
		}
		runtime.Gosched()
	}
}

package mpi

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mpigo/mpi/internal/engine"
)

// TestPostAndWait checks the loop the neighbourhood collectives and the
// mixed v and w forms share: every receive is started before the first
// send, a nil request is skipped, a failed start stops the starting and
// is the error returned, and the requests started complete (a real
// message from this rank to itself).
func TestPostAndWait(t *testing.T) {
	err := Run(1, func(c *Comm) error {
		var calls []string
		got := make([]byte, 4)
		err := postAndWait(3, func(i int) (*Request, error) {
			calls = append(calls, fmt.Sprint("r", i))
			switch i {
			case 1:
				return nil, nil
			case 2:
				return c.irecv(nil, nil, got, 4, Byte, 0, 7)
			}
			return c.nullRequest("test", Status{}), nil
		}, 2, func(k int) (*Request, error) {
			calls = append(calls, fmt.Sprint("s", k))
			if k == 1 {
				return c.isend(nil, "test", []byte("abcd"), 4, Byte, 0, 7, engine.Standard)
			}
			return nil, nil
		})
		if err != nil || !slices.Equal(calls, []string{"r0", "r1", "r2", "s0", "s1"}) || string(got) != "abcd" {
			return fmt.Errorf("calls %v, received %q, error %v; want r0 r1 r2 s0 s1, \"abcd\", nil", calls, got, err)
		}
		boom := errors.New("boom")
		calls = nil
		err = postAndWait(3, func(i int) (*Request, error) {
			calls = append(calls, fmt.Sprint("r", i))
			if i == 1 {
				return nil, boom
			}
			return c.nullRequest("test", Status{}), nil
		}, 2, func(k int) (*Request, error) {
			calls = append(calls, fmt.Sprint("s", k))
			return c.nullRequest("test", Status{}), nil
		})
		if err != boom || !slices.Equal(calls, []string{"r0", "r1"}) {
			return fmt.Errorf("a failed start: calls %v, error %v; want r0 r1, boom", calls, err)
		}
		calls = nil
		err = postAndWait(1, func(i int) (*Request, error) {
			calls = append(calls, fmt.Sprint("r", i))
			return c.nullRequest("test", Status{}), nil
		}, 3, func(k int) (*Request, error) {
			calls = append(calls, fmt.Sprint("s", k))
			if k == 0 {
				return nil, boom
			}
			return c.nullRequest("test", Status{}), nil
		})
		if err != boom || !slices.Equal(calls, []string{"r0", "s0"}) {
			return fmt.Errorf("a failed send: calls %v, error %v; want r0 s0, boom", calls, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

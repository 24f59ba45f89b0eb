package mpi_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// Cancel of a send whose receiver has not matched it succeeds, whatever
// the send's kind and size (eager or rendezvous), and a send the receiver
// has matched completes normally: exactly one of the two. Small
// non-blocking and buffered sends used to be impossible to cancel.
func TestCancelSendKinds(t *testing.T) {
	type kind struct {
		name  string
		start func(c *mpi.Comm, buf []byte) (*mpi.Request, error)
	}
	kinds := []kind{
		{"isend", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) { return c.Isend(buf, len(buf), mpi.Byte, 1, 1) }},
		{"irsend", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) { return c.Irsend(buf, len(buf), mpi.Byte, 1, 1) }},
		{"issend", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) { return c.Issend(buf, len(buf), mpi.Byte, 1, 1) }},
		{"typed-isend", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) { return mpi.Isend(c, buf, 1, 1) }},
		{"ibsend", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) {
			if err := c.BufferAttach(make([]byte, len(buf)+mpi.BsendOverhead)); err != nil {
				return nil, err
			}
			return c.Ibsend(buf, len(buf), mpi.Byte, 1, 1)
		}},
		{"send-init", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) {
			r, err := c.SendInit(buf, len(buf), mpi.Byte, 1, 1)
			if err != nil {
				return nil, err
			}
			return r, r.Start()
		}},
		{"bsend-init", func(c *mpi.Comm, buf []byte) (*mpi.Request, error) {
			if err := c.BufferAttach(make([]byte, len(buf)+mpi.BsendOverhead)); err != nil {
				return nil, err
			}
			r, err := c.BsendInit(buf, len(buf), mpi.Byte, 1, 1)
			if err != nil {
				return nil, err
			}
			return r, r.Start()
		}},
	}
	for _, k := range kinds {
		for _, size := range []int{8, 64 << 10, 1 << 20} {
			for _, matched := range []bool{false, true} {
				name := fmt.Sprintf("%s/%d/unmatched", k.name, size)
				if matched {
					name = fmt.Sprintf("%s/%d/matched", k.name, size)
				}
				if k.name == "typed-isend" && size > 8 {
					continue
				}
				t.Run(name, func(t *testing.T) {
					matrix(t, 2, func(world *mpi.Comm) error {
						return cancelCase(world, k.start, size, matched, k.name == "typed-isend")
					})
				})
			}
		}
	}
}

// cancelCase runs one row of TestCancelSendKinds: rank 0 starts a send of
// size bytes to rank 1 with tag 1 and cancels it; if matched, rank 1 has
// posted its receive first.
func cancelCase(world *mpi.Comm, start func(*mpi.Comm, []byte) (*mpi.Request, error), size int, matched, typed bool) error {
	msg := bytes.Repeat([]byte{0xa5}, size)
	if world.Rank() == 1 {
		var rr *mpi.Request
		got := make([]byte, size)
		if matched {
			var err error
			if typed {
				rr, err = mpi.IrecvInto(world, got, 0, 1)
			} else {
				rr, err = world.Irecv(got, size, mpi.Byte, 0, 1)
			}
			if err != nil {
				return err
			}
		}
		if err := mpi.Send(world, 0, 0, 3); err != nil { // ready
			return err
		}
		if _, _, err := mpi.Recv[int](world, 0, 2); err != nil { // rank 0 knows
			return err
		}
		if matched {
			if _, err := rr.Wait(); err != nil {
				return err
			}
			return check(world, bytes.Equal(got, msg), "matched message damaged")
		}
		ok, _, err := world.Iprobe(0, 1)
		if err != nil {
			return err
		}
		return check(world, !ok, "the cancelled message is still there")
	}
	if _, _, err := mpi.Recv[int](world, 1, 3); err != nil {
		return err
	}
	r, err := start(world, msg)
	if err != nil {
		return err
	}
	if err := r.Cancel(); err != nil {
		return err
	}
	st, err := r.Wait()
	if err != nil {
		return err
	}
	if st.Cancelled() == matched {
		return fmt.Errorf("rank 0: cancelled %v, want %v", st.Cancelled(), !matched)
	}
	if err := r.Cancel(); err != nil { // waited for: nothing to do
		return err
	}
	// A buffered send gives its room in the attached buffer back once
	// cancelled (BufferDetach waits for that) or delivered.
	world.BufferDetach()
	if err := mpi.Send(world, 0, 1, 2); err != nil {
		return err
	}
	return nil
}

// Package part_test holds the conformance tests of partitioned
// communication (MPI-4.0 chapter 4), modelled on the part/ directory of
// MPICH's test suite.
package part_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// TestPartitionedGoroutines: 16 send partitions readied by 8 goroutines in
// random order, received as 4 partitions (the two sides may divide the
// message differently), three runs of one pair of requests, checked
// element by element.
func TestPartitionedGoroutines(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		const sparts, rparts, per = 16, 4, 1000 // 16000 float64s: 128 KB
		buf := make([]float64, sparts*per)
		if c.Rank() == 0 {
			req, err := mpi.PsendInit(c, buf, sparts, 1, 5)
			if err != nil {
				return err
			}
			for round := range 3 {
				if err := req.Start(); err != nil {
					return err
				}
				order := rand.Perm(sparts)
				var wg sync.WaitGroup
				errs := make(chan error, sparts)
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := g; k < sparts; k += 8 {
							i := order[k]
							for j := range per {
								buf[i*per+j] = float64(round*1e6 + i*per + j)
							}
							errs <- req.Pready(i)
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						return err
					}
				}
				if _, err := req.Wait(); err != nil {
					return err
				}
			}
			return req.Free()
		}
		req, err := c.PrecvInit(mpi.AsBytes(buf), rparts, sparts*per/rparts, mpi.Float64, 0, 5, nil)
		if err != nil {
			return err
		}
		for round := range 3 {
			clear(buf)
			if err := req.Start(); err != nil {
				return err
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			for i, v := range buf {
				if v != float64(round*1e6+i) {
					return fmt.Errorf("round %d: element %d is %v", round, i, v)
				}
			}
			for j := range rparts {
				if ok, err := req.Parrived(j); !ok || err != nil {
					return fmt.Errorf("Parrived(%d) after Wait: %v %v", j, ok, err)
				}
			}
		}
		return req.Free()
	})
}

// TestPartitionedArrival: the receiver sees the first partition arrive
// while the sender has not readied the second yet.
func TestPartitionedArrival(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		buf := make([]int32, 8)
		if c.Rank() == 0 {
			req, err := mpi.PsendInit(c, buf, 2, 1, 0)
			if err != nil {
				return err
			}
			if err := req.Start(); err != nil {
				return err
			}
			for i := range buf {
				buf[i] = int32(i + 1)
			}
			if err := req.Pready(0); err != nil {
				return err
			}
			// Partition 1 leaves only once the receiver has seen 0.
			if _, _, err := mpi.Recv[int](c, 1, 9); err != nil {
				return err
			}
			if err := req.PreadyRange(1, 1); err != nil {
				return err
			}
			_, err = req.Wait()
			return err
		}
		req, err := mpi.PrecvInit(c, buf, 2, 0, 0)
		if err != nil {
			return err
		}
		if err := req.Start(); err != nil {
			return err
		}
		deadline := time.Now().Add(time.Minute)
		for {
			ok, err := req.Parrived(0)
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				return errors.New("partition 0 never arrived")
			}
			time.Sleep(100 * time.Microsecond)
		}
		if ok, _ := req.Parrived(1); ok {
			return errors.New("partition 1 arrived before it was readied")
		}
		if buf[0] != 1 || buf[3] != 4 {
			return fmt.Errorf("partition 0 is %v", buf[:4])
		}
		if err := mpi.Send(c, 1, 0, 9); err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if buf[7] != 8 {
			return fmt.Errorf("got %v", buf)
		}
		return nil
	})
}

// TestPartitionedBadInput: a partition out of range, readied twice, a
// Pready on an inactive request, Free of an active one and a wildcard
// receive are clear errors, and the request still completes.
// TestPartitionedEmpty: empty partitions (a zero-length buffer) arrive
// with the message, not at the receiver's Start: Parrived says false
// until the sender has readied them and the receive has completed
// (mpi4py's partitioned tests with empty buffers).
func TestPartitionedEmpty(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		var buf []int32
		if c.Rank() == 0 {
			req, err := mpi.PsendInit(c, buf, 3, 1, 0)
			if err != nil {
				return err
			}
			if _, _, err := mpi.Recv[int](c, 1, 9); err != nil { // the receiver has started and looked
				return err
			}
			if err := req.Start(); err != nil {
				return err
			}
			if err := req.PreadyRange(0, 2); err != nil {
				return err
			}
			_, err = req.Wait()
			return err
		}
		req, err := mpi.PrecvInit(c, buf, 3, 0, 0)
		if err != nil {
			return err
		}
		if err := req.Start(); err != nil {
			return err
		}
		for i := range 3 {
			if ok, err := req.Parrived(i); ok || err != nil {
				return fmt.Errorf("empty partition %d arrived before the sender started: %v %v", i, ok, err)
			}
		}
		if err := mpi.Send(c, 1, 0, 9); err != nil {
			return err
		}
		deadline := time.Now().Add(time.Minute)
		for i := range 3 {
			for {
				ok, err := req.Parrived(i)
				if err != nil {
					return err
				}
				if ok {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("empty partition %d never arrived", i)
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		_, err = req.Wait()
		return err
	})
}

func TestPartitionedBadInput(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		var errs conformance.Errs
		buf := make([]float64, 4)
		if c.Rank() == 0 {
			req, err := mpi.PsendInit(c, buf, 4, 1, 3)
			if err != nil {
				return err
			}
			err = req.Pready(0)
			errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Pready before Start: %v", err)
			if err := req.Start(); err != nil {
				return err
			}
			err = req.Pready(4)
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "Pready(4) of 4: %v", err)
			err = req.Pready(-1)
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "Pready(-1): %v", err)
			err = req.PreadyRange(2, 1)
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "PreadyRange(2, 1): %v", err)
			errs.Addf(c, req.PreadyList([]int{0, 2}) == nil, "PreadyList")
			err = req.Pready(2)
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "Pready(2) twice: %v", err)
			_, err = req.Parrived(0)
			errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Parrived on a send: %v", err)
			err = req.Free()
			errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Free of an active request: %v", err)
			errs.Addf(c, req.PreadyRange(1, 1) == nil && req.Pready(3) == nil, "the other partitions")
			_, err = req.Wait()
			errs.Addf(c, err == nil, "Wait: %v", err)
			err = req.Pready(0)
			errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Pready after Wait: %v", err)
			errs.Addf(c, req.Free() == nil, "Free")
		} else {
			_, err := mpi.PrecvInit(c, buf, 4, mpi.AnySource, 3)
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "AnySource: %v", err)
			_, err = mpi.PrecvInit(c, buf, 3, 0, 3)
			errs.Addf(c, errors.Is(err, mpi.ErrCount), "4 elements in 3 partitions: %v", err)
			req, err := mpi.PrecvInit(c, buf, 2, 0, 3)
			if err != nil {
				return err
			}
			_, err = req.Parrived(0)
			errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Parrived before Start: %v", err)
			err = req.Pready(0)
			errs.Addf(c, errors.Is(err, mpi.ErrRequest), "Pready on a receive: %v", err)
			if err := req.Start(); err != nil {
				return err
			}
			_, err = req.Parrived(2)
			errs.Addf(c, errors.Is(err, mpi.ErrArg), "Parrived(2) of 2: %v", err)
			_, err = req.Wait()
			errs.Addf(c, err == nil, "Wait: %v", err)
			errs.Addf(c, req.Free() == nil, "Free")
		}
		return errs.Err()
	})
}

// TestPartitionedTruncate: a send larger than the receive is ErrTruncate
// at the receiver, not a hang (of either side) or a write past the
// buffer.
func TestPartitionedTruncate(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			buf := make([]byte, 64)
			req, err := c.PsendInit(buf, 2, 32, mpi.Byte, 1, 0, nil)
			if err != nil {
				return err
			}
			if err := req.Start(); err != nil {
				return err
			}
			if err := req.PreadyRange(0, 1); err != nil {
				return err
			}
			_, err = req.Wait()
			return err
		}
		buf := make([]byte, 48)
		for i := range buf {
			buf[i] = 7
		}
		req, err := c.PrecvInit(buf[:16], 1, 16, mpi.Byte, 0, 0, nil)
		if err != nil {
			return err
		}
		if err := req.Start(); err != nil {
			return err
		}
		_, err = req.Wait()
		if !errors.Is(err, mpi.ErrTruncate) {
			return fmt.Errorf("a 64-byte send into 16 bytes: %v", err)
		}
		if buf[16] != 7 || buf[47] != 7 {
			return errors.New("the receive wrote past its buffer")
		}
		return nil
	})
}

package main

import (
	"sync"

	"github.com/mpigo/mpi"
)

// benchParts is how many goroutines fill a message of the partitioned
// test, each its own partition.
const benchParts = 4

// partitioned measures issue 43's partitioned send: rank 0's message of
// SIZE bytes (rounded up to a multiple of benchParts) is filled by
// benchParts goroutines, each writing its quarter and readying it with
// Pready as soon as it is written (PsendInit once per repetition, Start
// and Wait per iteration; rank 1 receives with PrecvInit). In the same
// repetition the plain form runs the same goroutines, joins them and then
// sends the whole buffer with one Send (rank 1: Recv). It returns the
// partitioned time per message (us, the slower rank's average, as the
// collectives), and leaves the plain form's in extraVals. Ranks past 1
// only take part in the timing's agreement.
func (b *benchConfig) partitioned(c *mpi.Comm, size int) (float64, error) {
	n := (max(size, benchParts) + benchParts - 1) / benchParts * benchParts
	buf := make([]byte, n)
	me := c.Rank()
	const tag = 43
	var req *mpi.Request
	var err error
	switch me {
	case 0:
		req, err = mpi.PsendInit(c, buf, benchParts, 1, tag)
	case 1:
		req, err = mpi.PrecvInit(c, buf, benchParts, 0, tag)
	}
	if err != nil {
		return 0, err
	}
	// fill runs the goroutines that write the parts; ready (nil for the
	// plain form) is called by each with its part once written.
	var errs [benchParts]error
	fill := func(ready func(p int) error) error {
		var wg sync.WaitGroup
		for p := range benchParts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := buf[p*n/benchParts : (p+1)*n/benchParts]
				for i := range q {
					q[i] = byte(p + i)
				}
				errs[p] = nil
				if ready != nil {
					errs[p] = ready(p)
				}
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
		return nil
	}
	part := func() error {
		if req == nil {
			return nil
		}
		if err := req.Start(); err != nil {
			return err
		}
		if me == 0 {
			if err := fill(req.Pready); err != nil {
				return err
			}
		}
		_, err := req.Wait()
		return err
	}
	plain := func() error {
		switch me {
		case 0:
			if err := fill(nil); err != nil {
				return err
			}
			return c.Send(buf, n, mpi.Byte, 1, tag)
		case 1:
			_, err := c.Recv(buf, n, mpi.Byte, 0, tag)
			return err
		}
		return nil
	}
	joined, err := b.collective(c, size, plain)
	if err != nil {
		return 0, err
	}
	v, err := b.collective(c, size, part)
	if req != nil {
		if ferr := req.Free(); err == nil {
			err = ferr
		}
	}
	if err == nil && me == 0 {
		b.extraVals = []float64{joined}
	}
	return v, err
}

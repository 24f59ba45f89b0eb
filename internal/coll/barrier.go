package coll

import "fmt"

// Barrier returns on each rank only after every rank of c has entered it.
//
// Algorithm: dissemination. In round k = 0, 1, ... each rank sends a
// zero-byte message to rank r+2^k and receives one from rank r-2^k (mod p).
// After lg p rounds every rank has heard, directly or transitively, from
// all others. Cost: lg p rounds; each rank sends lg p zero-byte messages.
// Works for any p. Uses tag only.
func Barrier(c Comm, tag int) error {
	return wrap("barrier", barrier(c, tag))
}

func barrier(c Comm, tag int) error {
	p, r, err := setup(c)
	if err != nil {
		return err
	}
	for k := 1; k < p; k <<= 1 {
		dst, src := (r+k)%p, (r-k+p)%p
		q, err := c.Isend(nil, dst, tag)
		if err != nil {
			return fmt.Errorf("send to %d: %w", dst, err)
		}
		if _, err := c.Recv(nil, src, tag); err != nil {
			return fmt.Errorf("recv from %d: %w", src, err)
		}
		if _, err := q.Wait(); err != nil {
			return fmt.Errorf("send to %d: %w", dst, err)
		}
	}
	return nil
}

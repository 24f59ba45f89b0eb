package mpi_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// TestBcastLargeEveryTransport broadcasts buffers long enough for the
// pipelined broadcast (chosen over shared memory, shm and shm-ring; the
// other transports keep the binomial tree) from the first and the last
// rank, with lengths that are and are not multiples of the segment,
// through the typed and the low-level API, and checks every byte on
// every rank.
func TestBcastLargeEveryTransport(t *testing.T) {
	const seg = 128 << 10 // coll.DefaultSegment
	for _, tc := range []struct{ p, n int }{{3, 7*seg + 13}, {4, 4 * seg}} {
		p, n := tc.p, tc.n
		t.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(t *testing.T) {
			matrix(t, p, func(c *mpi.Comm) error {
				for _, root := range []int{0, p - 1} {
					want := make([]byte, n)
					for i := range want {
						want[i] = byte(i*7 + root)
					}
					buf := make([]byte, n)
					if c.Rank() == root {
						copy(buf, want)
					}
					if err := mpi.BcastInto(c, buf, root); err != nil {
						return err
					}
					if err := check(c, bytes.Equal(buf, want), "typed bcast of %d bytes from %d: wrong data", n, root); err != nil {
						return err
					}
					clear(buf)
					if c.Rank() == root {
						copy(buf, want)
					}
					if err := c.Bcast(buf, n, mpi.Byte, root); err != nil {
						return err
					}
					if err := check(c, bytes.Equal(buf, want), "low-level bcast of %d bytes from %d: wrong data", n, root); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

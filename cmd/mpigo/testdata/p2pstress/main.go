// Command p2pstress sends messages of random sizes (from a few bytes, for
// the shared-memory fast box, to a few megabytes, for the single-copy
// path) from every rank to every other, each carrying its sequence number
// and a checksum, and checks that all arrive intact and in order.
package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/mpigo/mpi"
)

func main() {
	rounds := 300
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	mpi.Main(func(c *mpi.Comm) error {
		me, n := c.Rank(), c.Size()
		rng := rand.New(rand.NewPCG(uint64(me), 9))
		next := make([]int, n) // the round expected next from each rank
		for r := 0; r < rounds; r++ {
			var sends []*mpi.Request
			for to := 0; to < n; to++ {
				if to == me {
					continue
				}
				var size int
				switch x := rng.IntN(100); {
				case x < 50:
					size = 12 + rng.IntN(24)
				case x < 90:
					size = 12 + rng.IntN(64<<10)
				default:
					size = 12 + rng.IntN(3<<20)
				}
				b := make([]byte, size)
				for i := 12; i < size; i++ {
					b[i] = byte(rng.Uint32())
				}
				binary.LittleEndian.PutUint32(b[0:], uint32(me))
				binary.LittleEndian.PutUint32(b[4:], uint32(r))
				binary.LittleEndian.PutUint32(b[8:], crc32.ChecksumIEEE(b[12:]))
				req, err := mpi.Isend(c, b, to, 5)
				if err != nil {
					return err
				}
				sends = append(sends, req)
			}
			for k := 0; k < n-1; k++ {
				b, st, err := mpi.Recv[[]byte](c, mpi.AnySource, 5)
				if err != nil {
					return err
				}
				from, seq := binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:])
				if int(from) != st.Source || int(seq) != r || int(seq) != next[st.Source] || binary.LittleEndian.Uint32(b[8:]) != crc32.ChecksumIEEE(b[12:]) {
					return fmt.Errorf("rank %d: bad message from %d (says rank %d round %d, want round %d, %d bytes)", me, st.Source, from, seq, next[st.Source], len(b))
				}
				next[st.Source]++
			}
			for _, s := range sends {
				if _, err := s.Wait(); err != nil {
					return err
				}
			}
			// Without it the program could deadlock, legitimately: with
			// rendezvous sends, a rank a round ahead could have its next
			// message taken by an AnySource receive that a slower peer's
			// message needed, and every rank then waits for a send.
			if err := mpi.Barrier(c); err != nil {
				return err
			}
		}
		if me == 0 {
			fmt.Printf("p2pstress: %d rounds on %d ranks: ok\n", rounds, n)
		}
		return nil
	})
}

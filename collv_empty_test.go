package mpi_test

import (
	"testing"

	"github.com/mpigo/mpi"
)

// TestVEmptyBlockAnywhere: a block of zero elements may have any
// displacement, past the end of the buffer too (MPI puts no bound on
// it); the v-collectives refused it on the root only, which left the
// other ranks waiting (mpi4py's test_cco_nb_vec under 2 ranks).
func TestVEmptyBlockAnywhere(t *testing.T) {
	err := mpi.Run(3, func(c *mpi.Comm) error {
		r, n := c.Rank(), c.Size()
		// Rank 1 contributes nothing; its block's displacement is far
		// past the 2-byte receive buffer.
		counts := []int{1, 0, 1}
		displs := []int{0, 1000, 1}
		send := []byte{byte(10 + r)}[:counts[r]]
		recv := make([]byte, 2)
		if err := c.Gatherv(send, counts[r], mpi.Byte, recv, counts, displs, mpi.Byte, 0); err != nil {
			return err
		}
		if r == 0 && (recv[0] != 10 || recv[1] != 12) {
			t.Errorf("Gatherv: %v", recv)
		}
		recv = make([]byte, 2)
		if err := c.Allgatherv(send, counts[r], mpi.Byte, recv, counts, displs, mpi.Byte); err != nil {
			return err
		}
		if recv[0] != 10 || recv[1] != 12 {
			t.Errorf("rank %d: Allgatherv: %v", r, recv)
		}
		// Alltoallv and Alltoallw: nothing to or from rank 1.
		sc, sd, rc, rd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		for i := range n {
			if i != 1 && r != 1 {
				sc[i], rc[i] = 1, 1
			}
			sd[i], rd[i] = i, i
			if sc[i] == 0 {
				sd[i] = 5000
			}
			if rc[i] == 0 {
				rd[i] = 7000
			}
		}
		sb, rb := []byte{byte(r), byte(r), byte(r)}, make([]byte, 3)
		if err := c.Alltoallv(sb, sc, sd, mpi.Byte, rb, rc, rd, mpi.Byte); err != nil {
			return err
		}
		types := []*mpi.Datatype{mpi.Byte, mpi.Byte, mpi.Byte}
		rw := make([]byte, 3)
		if err := c.Alltoallw(sb, sc, sd, types, rw, rc, rd, types); err != nil {
			return err
		}
		for i := range n {
			if rc[i] == 1 && (rb[i] != byte(i) || rw[i] != byte(i)) {
				t.Errorf("rank %d: from %d: Alltoallv %d, Alltoallw %d", r, i, rb[i], rw[i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package mpi_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/cnum"
)

// int128Sum is a test kernel of cnum.Integer16: inout += in on 128-bit
// little-endian integers (the ABI library's is C's __int128).
func int128Sum(inout, in []byte) {
	le := binary.LittleEndian
	for i := 0; i+16 <= len(inout); i += 16 {
		lo, c := bits.Add64(le.Uint64(inout[i:]), le.Uint64(in[i:]), 0)
		hi, _ := bits.Add64(le.Uint64(inout[i+8:]), le.Uint64(in[i+8:]), c)
		le.PutUint64(inout[i:], lo)
		le.PutUint64(inout[i+8:], hi)
	}
}

// int128 is the 16 bytes of hi*2^64 + lo.
func int128(hi, lo uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return b
}

// The numbers Go cannot compute on (mpi.Int128, mpi.CLongDouble, ...)
// take their kernels from internal/cnum, where the ABI library registers
// C's. Without one, a reduction or accumulate on them is ErrOp; with one,
// concurrent accumulates and fetch-and-ops from every rank apply it
// atomically, over every transport (where the target's memory is reached
// only by message, the target's server applies it), on a derived
// datatype of them too (MPICH's rma/fetch_and_op_long_double,
// rma/acc_pairtype; before, accumulates refused such data as not of one
// predefined datatype).
func TestCnumKernels(t *testing.T) {
	err := mpi.Run(2, func(c *mpi.Comm) error {
		in, out := int128(0, 1), make([]byte, 16)
		if err := c.Allreduce(in, out, 1, mpi.Int128, mpi.OpSum); !errors.Is(err, mpi.ErrOp) {
			return fmt.Errorf("rank %d: Allreduce on Int128 without a kernel: %v, want ErrOp", c.Rank(), err)
		}
		w, err := mpi.NewWindow[byte](c, 16)
		if err != nil {
			return err
		}
		if err := w.LockAll(); err != nil {
			return err
		}
		if err := w.AccumulateBuf(in, 1, mpi.Int128, 1-c.Rank(), 0, 1, mpi.Int128, mpi.OpSum); !errors.Is(err, mpi.ErrOp) {
			return fmt.Errorf("rank %d: AccumulateBuf on Int128 without a kernel: %v, want ErrOp", c.Rank(), err)
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		return w.Free()
	})
	if err != nil {
		t.Fatal(err)
	}

	cnum.Register(cnum.Integer16, cnum.Kernels{"sum": int128Sum})
	defer cnum.Register(cnum.Integer16, nil)
	const rounds = 40
	pair := mustType(t)(mpi.NewVector(2, 1, 2, mpi.Int128)) // elements 0 and 2 of 3
	matrix(t, 4, func(c *mpi.Comm) error {
		me, n := c.Rank(), c.Size()
		w, err := mpi.NewWindow[byte](c, 4*16) // disp unit 1
		if err != nil {
			return err
		}
		loc := w.Local()
		if me == 0 {
			copy(loc, int128(0, ^uint64(0)-2)) // 2^64-3: sums carry into the high word
			copy(loc[32:], int128(7, 0))
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if err := w.LockAll(); err != nil {
			return err
		}
		ones := append(int128(0, 1), append(make([]byte, 16), int128(0, 2)...)...)
		old := make([]byte, 16)
		for range rounds {
			if err := w.AccumulateBuf(ones, 1, pair, 0, 0, 1, pair, mpi.OpSum); err != nil {
				return err
			}
			if err := w.FetchAndOpBuf(int128(0, 1), old, mpi.Int128, 0, 48, mpi.OpSum); err != nil {
				return err
			}
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if me == 0 {
			total := uint64(n * rounds)
			for _, want := range []struct {
				at     int
				hi, lo uint64
			}{{0, 1, total - 3}, {16, 0, 0}, {32, 7, 2 * total}, {48, 0, total}} {
				le := binary.LittleEndian
				if hi, lo := le.Uint64(loc[want.at+8:]), le.Uint64(loc[want.at:]); hi != want.hi || lo != want.lo {
					return check(c, false, "bytes %d: %#x:%#x, want %#x:%#x (a lost or torn update)", want.at, hi, lo, want.hi, want.lo)
				}
			}
		}
		sum := make([]byte, 16)
		if err := c.Allreduce(int128(uint64(me), 0), sum, 1, mpi.Int128, mpi.OpSum); err != nil {
			return err
		}
		if got := binary.LittleEndian.Uint64(sum[8:]); got != uint64(n*(n-1)/2) {
			return check(c, false, "Allreduce high word %d", got)
		}
		return w.Free()
	})
}

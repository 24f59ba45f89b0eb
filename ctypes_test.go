package mpi_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi"
)

// CLongDouble is 16 bytes aligned to 16: a struct of a char and a long
// double spans 32 bytes as in C; its data moves unchanged between ranks
// and through collectives; a reduction on it is ErrOp, and a receive as
// another type is ErrType.
func TestCLongDouble(t *testing.T) {
	if s := mpi.CLongDouble.Size(); s != 16 {
		t.Fatalf("size %d", s)
	}
	st, err := mpi.NewStruct([]int{1, 1}, []int{0, 16}, []*mpi.Datatype{mpi.Int8, mpi.CLongDouble})
	if err != nil {
		t.Fatal(err)
	}
	if lb, ext := st.Extent(); lb != 0 || ext != 32 {
		t.Errorf("struct {char; long double} extent %d (lb %d), want 32 as C pads it", ext, lb)
	}
	err = mpi.Run(2, func(c *mpi.Comm) error {
		r := c.Rank()
		buf := make([]byte, 3*16)
		for i := range buf {
			buf[i] = byte(i*7 + r)
		}
		got := make([]byte, len(buf))
		if _, err := c.Sendrecv(buf, 3, mpi.CLongDouble, 1-r, 0, got, 3, mpi.CLongDouble, 1-r, 0); err != nil {
			return err
		}
		for i := range got {
			if got[i] != byte(i*7+1-r) {
				return fmt.Errorf("rank %d: byte %d is %d", r, i, got[i])
			}
		}
		all := make([]byte, 2*16)
		if err := c.Allgather(buf[:16], 1, mpi.CLongDouble, all, 1, mpi.CLongDouble); err != nil {
			return err
		}
		if !bytes.Equal(all[16:], append([]byte{}, func() []byte {
			b := make([]byte, 16)
			for i := range b {
				b[i] = byte(i*7 + 1)
			}
			return b
		}()...)) {
			return fmt.Errorf("rank %d: Allgather %v", r, all)
		}
		if err := c.Allreduce(buf[:16], got[:16], 1, mpi.CLongDouble, mpi.OpSum); !errors.Is(err, mpi.ErrOp) {
			return fmt.Errorf("rank %d: Allreduce of long doubles in Go: %v, want ErrOp", r, err)
		}
		if r == 0 {
			return c.Send(buf[:16], 1, mpi.CLongDouble, 1, 5)
		}
		f := make([]byte, 16)
		if _, err := c.Recv(f, 2, mpi.Float64, 0, 5); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("a long double received as two float64: %v, want ErrType", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A user operation on a struct type with trailing padding gets whole
// extents of memory, aligned to 16 bytes, as a C function that assigns
// structs (padding included) needs: {float64; int32} spans 16 bytes, not
// the 12 of its data.
func TestUserOpWholeExtents(t *testing.T) {
	st, err := mpi.NewStruct([]int{1, 1}, []int{0, 8}, []*mpi.Datatype{mpi.Float64, mpi.Int32})
	if err == nil {
		err = st.Commit()
	}
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		bad error
	)
	op := mpi.NewReduceOp(func(in, inout []byte, count int, dt *mpi.Datatype) {
		mu.Lock()
		if len(in) < 16*count || len(inout) < 16*count {
			bad = fmt.Errorf("%d elements in %d and %d bytes", count, len(in), len(inout))
		}
		if p := uintptr(unsafe.Pointer(&inout[0])); p%16 != 0 {
			bad = fmt.Errorf("inout at %#x, not aligned to 16", p)
		}
		mu.Unlock()
		for i := range count {
			a := (*float64)(unsafe.Pointer(&in[16*i]))
			b := (*float64)(unsafe.Pointer(&inout[16*i]))
			*b += *a
		}
	}, true)
	err = mpi.Run(3, func(c *mpi.Comm) error {
		in := make([]byte, 3*16)
		for i := range 3 {
			*(*float64)(unsafe.Pointer(&in[16*i])) = float64(c.Rank() + i)
		}
		out := make([]byte, len(in))
		if err := c.Allreduce(in, out, 3, st, op); err != nil {
			return err
		}
		for i := range 3 {
			if got := *(*float64)(unsafe.Pointer(&out[16*i])); got != float64(3+3*i) {
				return fmt.Errorf("rank %d: element %d sums to %g", c.Rank(), i, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if bad != nil {
		t.Fatal(bad)
	}
}

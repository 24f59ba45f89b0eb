package mpi_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/mpigo/mpi"
)

type bottomVars struct {
	a float64
	b *[300]int32
	s *struct{ X, Y float64 }
}

func newBottomVars() *bottomVars {
	return &bottomVars{b: new([300]int32), s: new(struct{ X, Y float64 })}
}

// datatype returns a struct datatype of absolute addresses over three
// separate Go values: a, all of *b, and s.Y.
func (v *bottomVars) datatype() (*mpi.Datatype, error) {
	dt, err := mpi.NewStruct([]int{1, len(v.b), 1},
		[]int{mpi.GetAddress(&v.a), mpi.GetAddress(v.b), mpi.GetAddress(&v.s.Y)},
		[]*mpi.Datatype{mpi.Float64, mpi.Int32, mpi.Float64})
	if err != nil {
		return nil, err
	}
	return dt, dt.Commit()
}

// Bottom sends fields of separate variables in one message, over every
// transport and protocol, blocking and non-blocking, and Pack/Unpack read
// and write them.
func TestBottom(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		v := newBottomVars()
		dt, err := v.datatype()
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			v.a = 2.5
			for i := range v.b {
				v.b[i] = int32(i * 3)
			}
			v.s.X, v.s.Y = -1, 7.25
			if err := c.Send(mpi.Bottom, 1, dt, 1, 1); err != nil {
				return err
			}
			r, err := c.Isend(mpi.Bottom, 1, dt, 1, 2)
			if err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
			// Pack reads the same bytes.
			size, _ := mpi.PackSize(1, dt)
			packed := make([]byte, size)
			if _, err := mpi.Pack(mpi.Bottom, 1, dt, packed, 0); err != nil {
				return err
			}
			if err := c.Send(packed, size, mpi.Packed, 1, 3); err != nil {
				return err
			}
			runtime.KeepAlive(v)
			return nil
		}
		check := func(what string) error {
			for i := range v.b {
				if v.b[i] != int32(i*3) {
					return fmt.Errorf("%s: b[%d] = %d", what, i, v.b[i])
				}
			}
			if v.a != 2.5 || v.s.Y != 7.25 || v.s.X != 0 {
				return fmt.Errorf("%s: a %v, s %+v", what, v.a, *v.s)
			}
			*v.b, v.a, v.s.Y = [300]int32{}, 0, 0
			return nil
		}
		st, err := c.Recv(mpi.Bottom, 1, dt, 0, 1)
		if err != nil {
			return err
		}
		if st.GetCount(dt) != 1 || st.GetElements(dt) != 302 {
			return fmt.Errorf("status: count %d, elements %d", st.GetCount(dt), st.GetElements(dt))
		}
		if err := check("Recv"); err != nil {
			return err
		}
		r, err := c.Irecv(mpi.Bottom, 1, dt, 0, 2)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := check("Irecv"); err != nil {
			return err
		}
		packed, _, err := mpi.Recv[[]byte](c, 0, 3)
		if err != nil {
			return err
		}
		if _, err := mpi.Unpack(packed, 0, mpi.Bottom, 1, dt); err != nil {
			return err
		}
		if err := check("Unpack"); err != nil {
			return err
		}
		runtime.KeepAlive(v)
		return nil
	})
}

// Bottom touches only memory of live values that GetAddress saw.
func TestBottomRefusesUnknownMemory(t *testing.T) {
	err := mpi.Run(1, func(c *mpi.Comm) error {
		// An address GetAddress never gave.
		bad, _ := mpi.NewHindexed([]int{1}, []int{4096}, mpi.Int32)
		_ = bad.Commit()
		if err := c.Send(mpi.Bottom, 1, bad, 0, 0); !errors.Is(err, mpi.ErrBuffer) {
			return fmt.Errorf("Send from an unknown address: %v", err)
		}
		// Past the end of a known value: the address of an element covers
		// that element only.
		arr := new([4]int32)
		three, _ := mpi.NewHindexed([]int{3}, []int{mpi.GetAddress(&arr[0])}, mpi.Int32)
		_ = three.Commit()
		if _, err := mpi.Pack(mpi.Bottom, 1, three, make([]byte, 12), 0); !errors.Is(err, mpi.ErrBuffer) {
			return fmt.Errorf("Pack past a known element: %v", err)
		}
		// The address of the whole array covers all of it.
		all, _ := mpi.NewHindexed([]int{3}, []int{mpi.GetAddress(arr)}, mpi.Int32)
		_ = all.Commit()
		arr[0], arr[1], arr[2] = 1, 2, 3
		out := make([]int32, 3)
		if _, err := mpi.Pack(mpi.Bottom, 1, all, mpi.AsBytes(out), 0); err != nil || fmt.Sprint(out) != "[1 2 3]" {
			return fmt.Errorf("Pack of a known array: %v %v", out, err)
		}
		// Adjacent known values join.
		pair := new(struct{ A, B int64 })
		_, _ = mpi.GetAddress(&pair.A), mpi.GetAddress(&pair.B)
		both, _ := mpi.NewHindexed([]int{2}, []int{mpi.GetAddress(&pair.A)}, mpi.Int64)
		_ = both.Commit()
		pair.A, pair.B = 5, 6
		two := make([]int64, 2)
		if _, err := mpi.Pack(mpi.Bottom, 1, both, mpi.AsBytes(two), 0); err != nil || two[0] != 5 || two[1] != 6 {
			return fmt.Errorf("Pack across two known fields: %v %v", two, err)
		}
		// Collectives and external32 refuse Bottom.
		if err := c.Bcast(mpi.Bottom, 1, all, 0); err == nil {
			return fmt.Errorf("Bcast took Bottom")
		}
		if _, err := mpi.PackExternal(mpi.Bottom, 1, all, make([]byte, 12), 0); !errors.Is(err, mpi.ErrBuffer) {
			return fmt.Errorf("PackExternal took Bottom: %v", err)
		}
		runtime.KeepAlive(arr)
		runtime.KeepAlive(pair)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A value that has been collected is no longer reachable through its old
// address.
func TestBottomAfterCollection(t *testing.T) {
	addr := func() int {
		p := new([64]int64)
		p[0] = 42
		return mpi.GetAddress(p)
	}()
	dt, _ := mpi.NewHindexed([]int{64}, []int{addr}, mpi.Int64)
	_ = dt.Commit()
	for range 3 {
		runtime.GC()
	}
	// Either the value is gone (ErrBuffer) or, if the collector kept it,
	// Pack reads it intact: never anything else.
	out := make([]int64, 64)
	if _, err := mpi.Pack(mpi.Bottom, 1, dt, mpi.AsBytes(out), 0); err != nil && !errors.Is(err, mpi.ErrBuffer) {
		t.Fatalf("Pack after collection: %v", err)
	} else if err == nil && out[0] != 42 {
		t.Fatalf("Pack after collection read %v", out[0])
	}
}

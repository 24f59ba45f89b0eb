package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// Two struct types of the same size and layout class: the typed
// collectives must tell them apart.
type tcPoint struct{ X, Y int32 }
type tcPair struct {
	A float32
	B int32
}

// mismatchCase is one typed collective called with different types (or
// lengths) on different ranks. run makes the call on one rank and returns
// its error and, when there is none, whether the result is right. fails
// tells which ranks must report the mismatch; the others may report it
// too, or return correct data. Every rank must return.
type mismatchCase struct {
	name  string
	n     int
	class error // ErrType, ErrCount or ErrOp
	types []string
	fails func(rank int) bool
	run   func(c *mpi.Comm) (error, bool)
}

// meetOnly names the cases that run only where goroutine ranks meet in
// memory (the inproc transports). Over the others, a predefined
// operation on one rank and a function of the caller's own on another
// exchange the same messages (recursive doubling, one type): each rank
// combines with its own operation, and nothing tells them apart.
var meetOnly = map[string]bool{"Allreduce/sum-as-function": true}

func all(int) bool { return true }

func ranks(rs ...int) func(int) bool {
	return func(r int) bool {
		for _, x := range rs {
			if r == x {
				return true
			}
		}
		return false
	}
}

func mismatchCases() []mismatchCase {
	sum := func(a, b tcPoint) tcPoint { return tcPoint{a.X + b.X, a.Y + b.Y} }
	sumP := func(a, b tcPair) tcPair { return tcPair{a.A + b.A, a.B + b.B} }
	return []mismatchCase{
		{"Allreduce/int-float64", 3, mpi.ErrType, []string{"int", "float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				r, err := mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
				return err, r == 3
			}
			r, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
			return err, r == 3
		}},
		{"Allreduce/int-float64/4ranks", 4, mpi.ErrType, []string{"int", "float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
				return err, r == 4
			}
			r, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
			return err, r == 4
		}},
		{"Allreduce/struct-closure", 3, mpi.ErrType, []string{"tcPoint", "tcPair"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 2 {
				r, err := mpi.Allreduce(c, tcPair{1, 1}, mpi.NewOp(sumP, false))
				return err, r == tcPair{3, 3}
			}
			r, err := mpi.Allreduce(c, tcPoint{1, 1}, mpi.NewOp(sum, false))
			return err, r == tcPoint{3, 3}
		}},
		// A plain value with a predefined operation goes by the vector
		// road (goroutine ranks meet in memory), a string with a function
		// by the road of combined values: the two roads still compare
		// signatures.
		{"Allreduce/float64-as-string", 2, mpi.ErrType, []string{"string", "float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				_, err := mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
				return err, false
			}
			_, err := mpi.Allreduce(c, "x", mpi.NewOp(func(a, b string) string { return a + b }, false))
			return err, false
		}},
		// One type, but a predefined operation on one rank and a function
		// of its own on the other: two roads too.
		{"Allreduce/sum-as-function", 2, mpi.ErrOp, []string{"predefined operation", "function of their own"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				_, err := mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
				return err, false
			}
			_, err := mpi.Allreduce(c, 1.0, mpi.NewOp(func(a, b float64) float64 { return a + b }, true))
			return err, false
		}},
		{"Reduce/float64-as-string", 3, mpi.ErrType, []string{"string", "float64"}, ranks(0), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.Reduce(c, "x", mpi.NewOp(func(a, b string) string { return a + b }, false), 0)
				return err, true
			}
			_, err := mpi.ReduceSlice(c, []float64{1}, mpi.Sum[float64](), 0)
			return err, c.Rank() != 0
		}},
		{"Reduce/int-float64", 3, mpi.ErrType, []string{"int", "float64"}, ranks(0), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				r, err := mpi.Reduce(c, 1.0, mpi.Sum[float64](), 0)
				return err, r == 0
			}
			r, err := mpi.Reduce(c, 1, mpi.Sum[int](), 0)
			return err, r == map[bool]int{true: 3, false: 0}[c.Rank() == 0]
		}},
		{"Bcast/float64-as-int", 3, mpi.ErrType, []string{"int", "float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Bcast(c, 2.5, 0)
				return err, r == 2.5
			}
			_, err := mpi.Bcast(c, 0, 0)
			return err, false
		}},
		{"Bcast/float64-as-string", 3, mpi.ErrType, []string{"string", "float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Bcast(c, 2.5, 0)
				return err, r == 2.5
			}
			_, err := mpi.Bcast(c, "x", 0)
			return err, false
		}},
		{"Bcast/string-as-float64", 3, mpi.ErrType, []string{"string", "float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Bcast(c, "abc", 0)
				return err, r == "abc"
			}
			_, err := mpi.Bcast(c, 1.5, 0)
			return err, false
		}},
		{"Bcast/struct", 4, mpi.ErrType, []string{"tcPoint", "tcPair"}, ranks(1, 2, 3), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Bcast(c, tcPoint{1, 2}, 0)
				return err, r == tcPoint{1, 2}
			}
			_, err := mpi.Bcast(c, tcPair{}, 0)
			return err, false
		}},
		{"Gather/float64-as-string", 3, mpi.ErrType, []string{"string", "float64"}, ranks(0), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				r, err := mpi.Gather(c, "x", 0)
				return err, r == nil
			}
			r, err := mpi.Gather(c, 1.5, 0)
			return err, c.Rank() != 0 && r == nil
		}},
		{"Gather/string-at-root", 3, mpi.ErrType, []string{"string", "float64"}, ranks(0), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Gather(c, "x", 0)
				return err, r == nil
			}
			r, err := mpi.Gather(c, 1.5, 0)
			return err, r == nil
		}},
		{"Scatter/float64-as-string", 3, mpi.ErrType, []string{"string", "float64"}, ranks(1), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.Scatter(c, []string(nil), 0)
				return err, false
			}
			r, err := mpi.Scatter(c, []float64{1, 2, 3}, 0)
			return err, r == float64(c.Rank()+1)
		}},
		{"Scatter/string-at-root", 3, mpi.ErrType, []string{"string", "float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				r, err := mpi.Scatter(c, []string{"a", "b", "c"}, 0)
				return err, r == "a"
			}
			_, err := mpi.Scatter(c, []float64(nil), 0)
			return err, false
		}},
		{"Gather/struct", 3, mpi.ErrType, []string{"tcPoint", "tcPair"}, ranks(0), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				r, err := mpi.Gather(c, tcPair{1, 2}, 0)
				return err, r == nil
			}
			r, err := mpi.Gather(c, tcPoint{1, 2}, 0)
			return err, c.Rank() != 0 && r == nil
		}},
		{"Allgather/int-float64", 3, mpi.ErrType, []string{"int", "float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.Allgather(c, 1.0)
				return err, false
			}
			_, err := mpi.Allgather(c, 1)
			return err, false
		}},
		{"Scatter/struct", 3, mpi.ErrType, []string{"tcPoint", "tcPair"}, ranks(2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 2 {
				_, err := mpi.Scatter[tcPair](c, nil, 0)
				return err, false
			}
			r, err := mpi.Scatter(c, []tcPoint{{0, 0}, {1, 1}, {2, 2}}, 0)
			return err, r == tcPoint{int32(c.Rank()), int32(c.Rank())}
		}},
		{"Alltoall/int-float64", 3, mpi.ErrType, []string{"int", "float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				_, err := mpi.Alltoall(c, []float64{1, 2, 3})
				return err, false
			}
			_, err := mpi.Alltoall(c, []int{1, 2, 3})
			return err, false
		}},
		{"Scan/int-float64", 3, mpi.ErrType, []string{"int", "float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.Scan(c, 1.0, mpi.Sum[float64]())
				return err, false
			}
			r, err := mpi.Scan(c, 1, mpi.Sum[int]())
			return err, c.Rank() == 0 && r == 1
		}},
		{"AllreduceSlice/int-float64", 3, mpi.ErrType, []string{"[]int", "[]float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.AllreduceSlice(c, []float64{1, 2}, mpi.Sum[float64]())
				return err, false
			}
			_, err := mpi.AllreduceSlice(c, []int{1, 2}, mpi.Sum[int]())
			return err, false
		}},
		{"AllreduceSlice/length", 2, mpi.ErrCount, []string{"3 elements", "4"}, all, func(c *mpi.Comm) (error, bool) {
			_, err := mpi.AllreduceSlice(c, make([]float64, 3+c.Rank()), mpi.Sum[float64]())
			return err, false
		}},
		{"AllreduceSlice/length/3ranks", 3, mpi.ErrCount, []string{"elements"}, all, func(c *mpi.Comm) (error, bool) {
			n := 4
			if c.Rank() == 2 {
				n = 3
			}
			_, err := mpi.AllreduceSlice(c, make([]int64, n), mpi.Max[int64]())
			return err, false
		}},
		{"AllreduceSlice/closure-length", 3, mpi.ErrCount, []string{"elements"}, all, func(c *mpi.Comm) (error, bool) {
			_, err := mpi.AllreduceSlice(c, make([]string, 2+c.Rank()%2), mpi.NewOp(func(a, b string) string { return a + b }, true))
			return err, false
		}},
		{"AllreduceSliceInto/int32-uint32", 4, mpi.ErrType, []string{"[]int32", "[]uint32"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 3 {
				v := []uint32{1}
				return mpi.AllreduceSliceInto(c, v, v, mpi.Sum[uint32]()), false
			}
			v := []int32{1}
			return mpi.AllreduceSliceInto(c, v, v, mpi.Sum[int32]()), false
		}},
		{"ReduceSlice/int-float64", 3, mpi.ErrType, []string{"[]int", "[]float64"}, ranks(0), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 2 {
				r, err := mpi.ReduceSlice(c, []float64{1}, mpi.Sum[float64](), 0)
				return err, r == nil
			}
			r, err := mpi.ReduceSlice(c, []int{1}, mpi.Sum[int](), 0)
			return err, c.Rank() != 0 && r == nil
		}},
		{"ScanSlice/int-float64", 3, mpi.ErrType, []string{"[]int", "[]float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.ScanSlice(c, []float64{1}, mpi.Sum[float64]())
				return err, false
			}
			r, err := mpi.ScanSlice(c, []int{1}, mpi.Sum[int]())
			return err, c.Rank() == 0 && len(r) == 1 && r[0] == 1
		}},
		{"BcastInto/float64-as-int64", 3, mpi.ErrType, []string{"[]int64", "[]float64"}, ranks(1, 2), func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 0 {
				return mpi.BcastInto(c, []float64{1, 2}, 0), true
			}
			return mpi.BcastInto(c, make([]int64, 2), 0), false
		}},
		{"AllgatherInto/struct", 3, mpi.ErrType, []string{"tcPoint", "tcPair"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				return mpi.AllgatherInto(c, []tcPair{{}}, make([]tcPair, 3)), false
			}
			return mpi.AllgatherInto(c, []tcPoint{{}}, make([]tcPoint, 3)), false
		}},
		{"AlltoallInto/int-float64", 3, mpi.ErrType, []string{"[]int", "[]float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				return mpi.AlltoallInto(c, make([]float64, 3), make([]float64, 3)), false
			}
			return mpi.AlltoallInto(c, make([]int, 3), make([]int, 3)), false
		}},
		{"ReduceScatterBlock/int-float64", 3, mpi.ErrType, []string{"[]int", "[]float64"}, all, func(c *mpi.Comm) (error, bool) {
			if c.Rank() == 1 {
				_, err := mpi.ReduceScatterBlock(c, make([]float64, 3), mpi.Sum[float64]())
				return err, false
			}
			_, err := mpi.ReduceScatterBlock(c, make([]int, 3), mpi.Sum[int]())
			return err, false
		}},
	}
}

// TestTypeMismatchCollectives calls every typed collective with a type
// (or, for the Slice forms, a length) that differs on one rank, over every
// transport: the ranks that depend on the odd rank's data must return an
// *mpi.Error of the right class naming both types; the others return it
// too or correct data; and no rank hangs.
func TestTypeMismatchCollectives(t *testing.T) {
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			for _, mc := range mismatchCases() {
				if meetOnly[mc.name] && !strings.HasPrefix(tc.name, "inproc") {
					continue
				}
				t.Run(mc.name, func(t *testing.T) {
					runMismatch(t, tc.cfg, mc)
				})
			}
		})
	}
}

func runMismatch(t *testing.T, cfg mpi.Config, mc mismatchCase) {
	t.Helper()
	errs := make([]error, mc.n)
	good := make([]bool, mc.n)
	var mu sync.Mutex
	done := make(chan error, 1)
	go func() {
		done <- mpi.RunConfig(mc.n, cfg, func(c *mpi.Comm) error {
			err, ok := mc.run(c)
			// The communicator must still work after the mismatch.
			if berr := mpi.Barrier(c); berr != nil {
				return fmt.Errorf("barrier after the mismatch: %v", berr)
			}
			mu.Lock()
			errs[c.Rank()], good[c.Rank()] = err, ok
			mu.Unlock()
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a rank hangs")
	}
	both := false
	for r, err := range errs {
		if err == nil {
			if mc.fails(r) {
				t.Errorf("rank %d: no error", r)
			} else if !good[r] {
				t.Errorf("rank %d: no error, but a wrong result", r)
			}
			continue
		}
		var me *mpi.Error
		if !errors.As(err, &me) || !errors.Is(err, mc.class) {
			t.Errorf("rank %d: %v, want an *mpi.Error of class %v", r, err, mc.class)
			continue
		}
		msg := err.Error()
		n := 0
		for _, s := range mc.types {
			if strings.Contains(msg, s) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("rank %d: %v names none of %q", r, err, mc.types)
		}
		if n == len(mc.types) {
			both = true
		}
		if testing.Verbose() {
			t.Logf("rank %d: %v", r, err)
		}
	}
	if !both {
		t.Errorf("no rank's error names all of %q", mc.types)
	}
}

// TestTypeMismatchP2PNames: a typed receive of another type names both
// Go types, whichever receive call it is.
func TestTypeMismatchP2PNames(t *testing.T) {
	named := func(err error, want ...string) error {
		if !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("%v, want ErrType", err)
		}
		for _, s := range want {
			if !strings.Contains(err.Error(), s) {
				return fmt.Errorf("%v does not name %s", err, s)
			}
		}
		return nil
	}
	matrix(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			for tag, v := range []any{3.5, []int32{1, 2}, tcPoint{1, 2}, []int32{3}, 2.5} {
				var err error
				switch v := v.(type) {
				case float64:
					err = mpi.Send(c, v, 1, tag)
				case []int32:
					err = mpi.Send(c, v, 1, tag)
				case tcPoint:
					err = mpi.Send(c, v, 1, tag)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
		if _, _, err := mpi.Recv[int64](c, 0, 0); named(err, "float64", "int64") != nil {
			return named(err, "float64", "int64")
		}
		if _, err := mpi.RecvInto(c, make([]float32, 2), 0, 1); named(err, "[]int32", "[]float32") != nil {
			return named(err, "[]int32", "[]float32")
		}
		p, err := mpi.Irecv[tcPair](c, 0, 2)
		if err != nil {
			return err
		}
		if _, _, err := p.Wait(); named(err, "tcPoint", "tcPair") != nil {
			return named(err, "tcPoint", "tcPair")
		}
		r, err := mpi.IrecvInto(c, make([]uint32, 1), 0, 3)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); named(err, "[]int32", "[]uint32") != nil {
			return named(err, "[]int32", "[]uint32")
		}
		m, _, err := mpi.Mprobe(c, 0, 4)
		if err != nil {
			return err
		}
		if _, _, err := mpi.Mrecv[complex128](m); named(err, "float64", "complex128") != nil {
			return named(err, "float64", "complex128")
		}
		return nil
	})
}

type tcHidden struct {
	Name  string
	count int
}

type tcUnregistered struct{ X int }

// TestTypeMismatchCodec: an encoded type whose unexported fields would be
// dropped is refused at Send, naming the type and the field; a value in an
// interface whose type is not registered is refused with a hint.
func TestTypeMismatchCodec(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 1 {
			return nil
		}
		err := mpi.Send(c, tcHidden{"a", 1}, 1, 0)
		if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "tcHidden") || !strings.Contains(err.Error(), "field count") {
			return fmt.Errorf("Send of a struct with an unexported field: %v", err)
		}
		if _, err := mpi.Bcast(c, []tcHidden{{"a", 1}}, 0); !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "field count") {
			return fmt.Errorf("Bcast of a struct with an unexported field: %v", err)
		}
		var v any = tcUnregistered{1}
		err = mpi.Send(c, v, 1, 0)
		if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "gob.Register(mpi_test.tcUnregistered{})") {
			return fmt.Errorf("Send[any] of an unregistered type: %v", err)
		}
		return nil
	})
}

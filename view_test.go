package mpi_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mpigo/mpi"
)

// grid returns a rows x cols row-major matrix whose element (i, j) is
// base + 10*i + j.
func grid(rows, cols int, base float64) []float64 {
	u := make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			u[i*cols+j] = base + float64(10*i+j)
		}
	}
	return u
}

// TestViews moves columns and blocks of row-major matrices between ranks
// over every transport: view to view of another shape, view to plain
// slice and back, Sendrecv of halos, non-blocking forms and Bcast, and
// checks that only the selected elements change.
func TestViews(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		const rows, cols = 4, 5
		me, other := world.Rank(), 1-world.Rank()
		check := func(what string, got, want []float64) error {
			if !slices.Equal(got, want) {
				return fmt.Errorf("rank %d: %s: got %v, want %v", me, what, got, want)
			}
			return nil
		}

		// A column into a column of another matrix, and into a row.
		u := grid(rows, cols, float64(100*me))
		if me == 0 {
			if err := mpi.SendView(world, mpi.Strided(u[cols-1:], rows, 1, cols), 1, 1); err != nil {
				return err
			}
			if err := mpi.SendView(world, mpi.Strided(u[2:], rows, 1, cols), 1, 2); err != nil {
				return err
			}
		} else {
			want := slices.Clone(u)
			st, err := mpi.RecvView(world, mpi.Strided(u, rows, 1, cols), 0, 1)
			if err != nil {
				return err
			}
			if st.Count() != rows {
				return fmt.Errorf("Count %d, want %d", st.Count(), rows)
			}
			for i := range rows {
				want[i*cols] = float64(10*i + cols - 1)
			}
			if err := check("column into column", u, want); err != nil {
				return err
			}
			row, _, err := mpi.Recv[[]float64](world, 0, 2) // a view's message is a []float64
			if err != nil {
				return err
			}
			if err := check("column as a slice", row, []float64{2, 12, 22, 32}); err != nil {
				return err
			}
		}

		// A plain slice into a 2x3 block, then the block back as a slice.
		v := grid(rows, cols, 0)
		block := mpi.Subarray(v, []int{rows, cols}, []int{2, 3}, []int{1, 2})
		if block.Len() != 6 {
			return fmt.Errorf("block.Len() = %d", block.Len())
		}
		if me == 0 {
			if err := mpi.Send(world, []float64{-1, -2, -3, -4, -5, -6}, 1, 3); err != nil {
				return err
			}
		} else {
			want := slices.Clone(v)
			if _, err := mpi.RecvView(world, block, 0, 3); err != nil {
				return err
			}
			copy(want[1*cols+2:], []float64{-1, -2, -3})
			copy(want[2*cols+2:], []float64{-4, -5, -6})
			if err := check("slice into block", v, want); err != nil {
				return err
			}
		}

		// Halo exchange: each rank sends its own edge column and receives
		// the other's into its ghost column, both at once.
		h := grid(rows, cols, float64(100*me))
		edge, ghost := 1, 0 // rank 0: sends column 1, receives into column 0
		if me == 1 {
			edge, ghost = cols-2, cols-1
		}
		want := slices.Clone(h)
		for i := range rows {
			want[i*cols+ghost] = float64(100*other + 10*i + (map[int]int{0: 1, 1: cols - 2})[other])
		}
		st, err := mpi.SendrecvView(world, mpi.Strided(h[edge:], rows, 1, cols), other, 7, mpi.Strided(h[ghost:], rows, 1, cols), other, 7)
		if err != nil {
			return err
		}
		if st.Source != other || st.Count() != rows {
			return fmt.Errorf("SendrecvView status %+v", st)
		}
		if err := check("halo", h, want); err != nil {
			return err
		}

		// Non-blocking forms, and Bcast of a block into a column.
		w := grid(rows, cols, float64(100*me))
		if me == 0 {
			r, err := mpi.IsendView(world, mpi.Subarray(w, []int{rows, cols}, []int{2, 2}, []int{0, 0}), 1, 9)
			if err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
		} else {
			want := slices.Clone(w)
			r, err := mpi.IrecvView(world, mpi.Strided(w[4:], 4, 1, cols), 0, 9)
			if err != nil {
				return err
			}
			st, err := r.Wait()
			if err != nil {
				return err
			}
			if st.Count() != 4 {
				return fmt.Errorf("IrecvView Count %d", st.Count())
			}
			for i, x := range []float64{0, 1, 10, 11} {
				want[i*cols+4] = x
			}
			if err := check("Isend block, Irecv column", w, want); err != nil {
				return err
			}
		}
		b := grid(rows, cols, float64(100*me))
		var view mpi.View[float64]
		if me == 0 {
			view = mpi.Subarray(b, []int{rows, cols}, []int{2, 2}, []int{2, 3}) // 23 24 33 34
		} else {
			view = mpi.Strided(b, 4, 1, cols) // column 0
		}
		if err := mpi.BcastView(world, view, 0); err != nil {
			return err
		}
		if me == 1 {
			col := []float64{b[0], b[cols], b[2*cols], b[3*cols]}
			if err := check("BcastView", col, []float64{23, 24, 33, 34}); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestViewErrors checks what a view that cannot be made, or a message
// that does not fit one, gives: an error of the right class, at the call
// that uses the view, and no element written.
func TestViewErrors(t *testing.T) {
	u := make([]float64, 12)
	for _, tc := range []struct {
		name  string
		view  mpi.View[float64]
		class error
	}{
		{"column past the end", mpi.Strided(u[3:], 4, 1, 4), mpi.ErrBuffer},
		{"negative count", mpi.Strided(u, -1, 1, 4), mpi.ErrArg},
		{"block outside the array", mpi.Subarray(u, []int{3, 4}, []int{2, 2}, []int{2, 3}), mpi.ErrArg},
		{"array larger than the slice", mpi.Subarray(u, []int{4, 4}, []int{1, 1}, []int{0, 0}), mpi.ErrBuffer},
		{"datatype of other elements", mpi.ViewOf(u, mpi.Int32), mpi.ErrType},
		{"nil datatype", mpi.ViewOf(u, nil), mpi.ErrType},
	} {
		if tc.view.Err() == nil || !errors.Is(tc.view.Err(), tc.class) {
			t.Errorf("%s: error %v, want class %v", tc.name, tc.view.Err(), tc.class)
		}
		err := mpi.Run(1, func(world *mpi.Comm) error {
			if err := mpi.SendView(world, tc.view, 0, 0); !errors.Is(err, tc.class) {
				return fmt.Errorf("SendView: %v", err)
			}
			if _, err := mpi.RecvView(world, tc.view, 0, 0); !errors.Is(err, tc.class) {
				return fmt.Errorf("RecvView: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	err := mpi.Run(1, func(world *mpi.Comm) error {
		var zero mpi.View[float64] // made by none of the constructors
		if err := mpi.SendView(world, zero, 0, 0); !errors.Is(err, mpi.ErrArg) {
			return fmt.Errorf("SendView of the zero View: %v", err)
		}
		if _, err := mpi.RecvView(world, zero, 0, 0); !errors.Is(err, mpi.ErrArg) {
			return fmt.Errorf("RecvView of the zero View: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if s := mpi.Strided[string](nil, 1, 1, 1); !errors.Is(s.Err(), mpi.ErrType) {
		t.Errorf("a view of strings: %v, want ErrType", s.Err())
	}

	err = mpi.Run(2, func(world *mpi.Comm) error {
		v := make([]float64, 8)
		if world.Rank() == 0 {
			if err := mpi.Send(world, []float64{1, 2, 3}, 1, 0); err != nil {
				return err
			}
			return mpi.Send(world, []int32{1, 2}, 1, 1)
		}
		_, err := mpi.RecvView(world, mpi.Strided(v, 2, 1, 4), 0, 0)
		if !errors.Is(err, mpi.ErrTruncate) {
			return fmt.Errorf("3 elements into a view of 2: %v, want ErrTruncate", err)
		}
		if _, err := mpi.RecvView(world, mpi.Strided(v, 2, 1, 4), 0, 1); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("int32s into a view of float64: %v, want ErrType", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestViewOf checks a view of any derived datatype over the elements, one
// that needs no Commit.
func TestViewOf(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		dt, err := mpi.NewIndexed([]int{1, 2}, []int{0, 4}, mpi.Float64) // elements 0, 4, 5
		if err != nil {
			return err
		}
		u := []float64{1, 2, 3, 4, 5, 6}
		if world.Rank() == 0 {
			return mpi.SendView(world, mpi.ViewOf(u, dt), 1, 0)
		}
		got, _, err := mpi.Recv[[]float64](world, 0, 0)
		if err != nil {
			return err
		}
		if !slices.Equal(got, []float64{1, 5, 6}) {
			return fmt.Errorf("got %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A halo exchange on a grid split by columns: each rank sends its
// rightmost owned column to its right neighbour's left ghost column.
func ExampleStrided() {
	mpi.Run(2, func(world *mpi.Comm) error {
		const rows, cols = 3, 4 // a row-major block with a ghost column on each side
		u := make([]float64, rows*cols)
		for i := range rows {
			for j := 1; j < cols-1; j++ {
				u[i*cols+j] = float64(10*world.Rank() + i)
			}
		}
		right := mpi.Strided(u[cols-2:], rows, 1, cols) // last owned column
		ghost := mpi.Strided(u[0:], rows, 1, cols)      // left ghost column
		if world.Rank() == 0 {
			return mpi.SendView(world, right, 1, 0)
		}
		if _, err := mpi.RecvView(world, ghost, 0, 0); err != nil {
			return err
		}
		for i := range rows {
			fmt.Println(u[i*cols : (i+1)*cols])
		}
		return nil
	})
	// Output:
	// [0 10 10 0]
	// [1 11 11 0]
	// [2 12 12 0]
}

// TestViewCollectives gathers a column of every rank's matrix, scatters
// one back into another column and allgathers a block, over every
// transport.
func TestViewCollectives(t *testing.T) {
	matrix(t, 3, func(world *mpi.Comm) error {
		const rows, cols = 2, 3
		me, n := world.Rank(), world.Size()
		u := grid(rows, cols, float64(100*me)) // column 1: 100me+1, 100me+11
		var all []float64
		if me == 0 {
			all = make([]float64, rows*n)
		}
		if err := mpi.GatherView(world, mpi.Strided(u[1:], rows, 1, cols), all, 0); err != nil {
			return err
		}
		if me == 0 && !slices.Equal(all, []float64{1, 11, 101, 111, 201, 211}) {
			return fmt.Errorf("GatherView: %v", all)
		}
		if me == 0 {
			for i := range all {
				all[i] = -all[i]
			}
		}
		if err := mpi.ScatterView(world, all, mpi.Strided(u[2:], rows, 1, cols), 0); err != nil {
			return err
		}
		if u[2] != -float64(100*me+1) || u[cols+2] != -float64(100*me+11) {
			return fmt.Errorf("rank %d: ScatterView: %v", me, u)
		}
		got := make([]float64, 2*n)
		if err := mpi.AllgatherView(world, mpi.Subarray(u, []int{rows, cols}, []int{1, 2}, []int{1, 0}), got); err != nil {
			return err
		}
		if !slices.Equal(got, []float64{10, 11, 110, 111, 210, 211}) {
			return fmt.Errorf("rank %d: AllgatherView: %v", me, got)
		}
		return nil
	})
}

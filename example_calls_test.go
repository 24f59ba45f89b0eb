package mpi_test

import (
	"errors"
	"fmt"

	"github.com/mpigo/mpi"
)

// A library defines its own error class and codes; they classify with
// errors.Is and ErrorClass, and ErrorString gives their text.
func ExampleAddErrorClass() {
	errSolver := mpi.AddErrorClass("solver failed")
	errDiverged, _ := mpi.AddErrorCode(errSolver, "iteration diverged")
	_ = mpi.AddErrorString(errDiverged, "iteration diverged (residual grew)")

	err := fmt.Errorf("step 12: %w", errDiverged)
	fmt.Println(errors.Is(err, errSolver), mpi.ErrorClass(err) == errSolver)
	fmt.Println(mpi.ErrorString(mpi.ErrorClass(err)))
	fmt.Println(mpi.ErrorString(err))
	// Output:
	// true true
	// solver failed
	// step 12: iteration diverged (residual grew)
}

// ErrorString and ErrorClass on the errors mpi calls return.
func ExampleErrorString() {
	_ = mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			err := mpi.Send(world, 1.5, 7, 0) // there is no rank 7
			fmt.Println(mpi.ErrorClass(err) == mpi.ErrRank)
			fmt.Println(mpi.ErrorString(mpi.ErrorClass(err)))
			fmt.Println(mpi.ErrorString(nil))
		}
		return nil
	})
	// Output:
	// true
	// invalid rank
	// no error
}

// TypeMatchSize finds the predefined datatype of a kind of number by its
// size in bytes.
func ExampleTypeMatchSize() {
	for _, q := range []struct {
		class mpi.TypeClass
		size  int
	}{{mpi.TypeClassInteger, 2}, {mpi.TypeClassReal, 8}, {mpi.TypeClassComplex, 8}, {mpi.TypeClassReal, 2}} {
		dt, err := mpi.TypeMatchSize(q.class, q.size)
		fmt.Println(dt, err != nil)
	}
	// Output:
	// Int16 false
	// Float64 false
	// Complex64 false
	// <nil> true
}

// Envelope and Contents decode how a datatype was built.
func ExampleDatatype_Envelope() {
	column, _ := mpi.NewVector(4, 1, 8, mpi.Float64)
	block, _ := mpi.NewResized(column, 0, 8)

	combiner, nints, naddrs, ntypes := block.Envelope()
	fmt.Println(combiner, nints, naddrs, ntypes)
	_, addrs, types, _ := block.Contents()
	fmt.Println(addrs, types[0])

	combiner, _, _, _ = types[0].Envelope()
	ints, _, types, _ := types[0].Contents()
	fmt.Println(combiner, ints, types[0])

	combiner, _, _, _ = mpi.Float64.Envelope()
	fmt.Println(combiner)
	// Output:
	// Resized 0 2 1
	// [0 8] Vector(Float64)
	// Vector [4 1 8] Float64
	// Named
}

// Fields of separate variables travel in one message: a datatype of their
// absolute addresses, with Bottom as the buffer (MPI_BOTTOM).
func ExampleBottom() {
	_ = mpi.Run(2, func(world *mpi.Comm) error {
		var total float64
		var hist [4]int32
		dt, _ := mpi.NewStruct([]int{1, len(hist)},
			[]int{mpi.GetAddress(&total), mpi.GetAddress(&hist)},
			[]*mpi.Datatype{mpi.Float64, mpi.Int32})
		_ = dt.Commit()
		if world.Rank() == 0 {
			total, hist = 9.5, [4]int32{1, 2, 3, 4}
			return world.Send(mpi.Bottom, 1, dt, 1, 0)
		}
		st, err := world.Recv(mpi.Bottom, 1, dt, 0, 0)
		fmt.Println(total, hist, st.GetElements(dt), err)
		return err
	})
	// Output:
	// 9.5 [1 2 3 4] 5 <nil>
}

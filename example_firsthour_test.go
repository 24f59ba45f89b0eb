package mpi_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/mpigo/mpi"
)

// Run starts n ranks as goroutines of this process and returns when all
// of them have returned: the way to use MPI from tests and one-node tools.
func ExampleRun() {
	err := mpi.Run(3, func(world *mpi.Comm) error {
		names, err := mpi.Gather(world, fmt.Sprintf("rank %d of %d", world.Rank(), world.Size()), 0)
		if world.Rank() == 0 {
			fmt.Println(names)
		}
		return err
	})
	fmt.Println("Run returned", err)
	// Output:
	// [rank 0 of 3 rank 1 of 3 rank 2 of 3]
	// Run returned <nil>
}

// Main is a program's entry point: under `mpigo run -n 4 ./prog` (or
// mpiexec, srun, mpirun) it runs the ranks the launcher gave this process;
// started plainly it runs one rank, or MPIGO_NP goroutine ranks. It exits
// the process with a status that tells the launcher how the job went, so
// it is the last call of main.
func ExampleMain() {
	mpi.Main(func(world *mpi.Comm) error {
		fmt.Println("hello from rank", world.Rank(), "of", world.Size())
		return nil
	})
}

// NewOp makes any Go function a reduction; a closure may carry state.
// Here each rank contributes an interval and the op merges them.
func ExampleNewOp() {
	type span struct{ Lo, Hi int }
	merge := mpi.NewOp(func(a, b span) span {
		return span{min(a.Lo, b.Lo), max(a.Hi, b.Hi)}
	}, true)
	mpi.Run(4, func(world *mpi.Comm) error {
		r := world.Rank()
		all, err := mpi.Allreduce(world, span{10 * r, 10*r + 5}, merge)
		if r == 0 {
			fmt.Printf("%+v %v\n", all, err)
		}
		return err
	})
	// Output: {Lo:0 Hi:35} <nil>
}

// Sendrecv sends and receives in one call, so a ring shift cannot
// deadlock. Only the received type is named; the sent one is inferred.
func ExampleSendrecv() {
	mpi.Run(3, func(world *mpi.Comm) error {
		me, n := world.Rank(), world.Size()
		right, left := (me+1)%n, (me+n-1)%n
		got, st, err := mpi.Sendrecv[string](world, fmt.Sprint("hello from ", me), right, 0, left, 0)
		if me == 0 {
			fmt.Printf("%q from rank %d, %v\n", got, st.Source, err)
		}
		return err
	})
	// Output: "hello from 2" from rank 2, <nil>
}

// SendrecvInto receives into a buffer the caller keeps: a halo exchange in
// a loop allocates no result slice.
func ExampleSendrecvInto() {
	mpi.Run(2, func(world *mpi.Comm) error {
		me := world.Rank()
		other := 1 - me
		edge := []float64{float64(me) + 0.5, float64(me) + 0.25}
		halo := make([]float64, 2)
		for step := 0; step < 3; step++ {
			if _, err := mpi.SendrecvInto(world, edge, other, step, halo, other, step); err != nil {
				return err
			}
		}
		if me == 0 {
			fmt.Println(halo)
		}
		return nil
	})
	// Output: [1.5 1.25]
}

// Barrier returns on a rank once every rank has called it.
func ExampleBarrier() {
	mpi.Run(4, func(world *mpi.Comm) error {
		if world.Rank() == 3 {
			fmt.Println("rank 3 arrives")
		}
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println("all have arrived")
		}
		return nil
	})
	// Output:
	// rank 3 arrives
	// all have arrived
}

// Scatter hands the i-th value of the root's slice to rank i.
func ExampleScatter() {
	mpi.Run(3, func(world *mpi.Comm) error {
		var work []string
		if world.Rank() == 0 {
			work = []string{"a.dat", "b.dat", "c.dat"}
		}
		mine, err := mpi.Scatter(world, work, 0)
		if err != nil {
			return err
		}
		got, err := mpi.Gather(world, fmt.Sprintf("%d:%s", world.Rank(), mine), 0)
		if world.Rank() == 0 {
			fmt.Println(got)
		}
		return err
	})
	// Output: [0:a.dat 1:b.dat 2:c.dat]
}

// Alltoall sends the j-th value of every rank's slice to rank j: a
// transpose of the values across ranks.
func ExampleAlltoall() {
	mpi.Run(3, func(world *mpi.Comm) error {
		me := world.Rank()
		out := []int{10*me + 0, 10*me + 1, 10*me + 2}
		in, err := mpi.Alltoall(world, out)
		if err != nil {
			return err
		}
		rows, err := mpi.Gather(world, in, 0)
		if me == 0 {
			fmt.Println(rows)
		}
		return err
	})
	// Output: [[0 10 20] [1 11 21] [2 12 22]]
}

// Reduce combines one value from every rank on the root; the other ranks
// get the zero value.
func ExampleReduce() {
	mpi.Run(4, func(world *mpi.Comm) error {
		biggest, err := mpi.Reduce(world, world.Rank()*world.Rank(), mpi.Max[int](), 0)
		if world.Rank() == 0 {
			fmt.Println(biggest, err)
		}
		return err
	})
	// Output: 9 <nil>
}

// Allgather gives every rank every rank's value, in rank order.
func ExampleAllgather() {
	mpi.Run(3, func(world *mpi.Comm) error {
		all, err := mpi.Allgather(world, 1.5*float64(world.Rank()))
		if world.Rank() == 2 {
			fmt.Println(all, err)
		}
		return err
	})
	// Output: [0 1.5 3] <nil>
}

// Isend returns at once; WaitAll waits for a set of requests (sends,
// receives, or a mix).
func ExampleIsend() {
	mpi.Run(3, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			a, err := mpi.Irecv[string](world, 1, 0)
			if err != nil {
				return err
			}
			b, err := mpi.Irecv[string](world, 2, 0)
			if err != nil {
				return err
			}
			if err := mpi.WaitAll(a, b); err != nil {
				return err
			}
			va, _, _ := a.Wait()
			vb, _, _ := b.Wait()
			fmt.Println(va, vb)
			return nil
		}
		r, err := mpi.Isend(world, fmt.Sprint("from ", world.Rank()), 0, 0)
		if err != nil {
			return err
		}
		return mpi.WaitAll(r)
	})
	// Output: from 1 from 2
}

// Probe tells the size of a message before it is received, so the
// receiver can allocate exactly.
func ExampleProbe() {
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			return mpi.Send(world, []int32{4, 8, 15, 16, 23, 42}, 1, 9)
		}
		st, err := mpi.Probe(world, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return err
		}
		fmt.Println("tag", st.Tag, "from", st.Source, "bytes", st.Bytes())
		buf := make([]int32, st.Bytes()/4)
		_, err = mpi.RecvInto(world, buf, st.Source, st.Tag)
		fmt.Println(buf, err)
		return err
	})
	// Output:
	// tag 9 from 0 bytes 24
	// [4 8 15 16 23 42] <nil>
}

// CartShift names the neighbours of a rank along one dimension of a
// Cartesian grid: ProcNull past a non-periodic edge, so the same exchange
// code works at the boundary.
func ExampleComm_CartShift() {
	mpi.Run(4, func(world *mpi.Comm) error {
		grid, err := world.CartCreate([]int{4}, []bool{false}, false)
		if err != nil {
			return err
		}
		src, dst, err := grid.CartShift(0, 1)
		if err != nil {
			return err
		}
		got, err := mpi.Gather(world, [2]int{src, dst}, 0)
		if world.Rank() == 0 {
			fmt.Println(got, "ProcNull is", mpi.ProcNull)
		}
		return err
	})
	// Output: [[-2 1] [0 2] [1 3] [2 -2]] ProcNull is -2
}

// DimsCreate picks a balanced grid for a number of ranks; fixed entries
// (non-zero) are kept.
func ExampleDimsCreate() {
	d, err := mpi.DimsCreate(12, []int{0, 0})
	fmt.Println(d, err)
	d, err = mpi.DimsCreate(12, []int{0, 3, 0})
	fmt.Println(d, err)
	// Output:
	// [4 3] <nil>
	// [2 3 2] <nil>
}

// Abort stops every rank of the job. Under Run the job's ranks are
// stopped and Run returns the reason; under a launcher the processes exit
// with the code.
func ExampleAbort() {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			if _, err := os.Stat("/no/such/input"); err != nil {
				mpi.Abort(world, 3)
			}
		}
		_, _, err := mpi.Recv[int](world, 1, 0) // never satisfied: Abort ends it
		return err
	})
	var e *mpi.Error
	code, _ := mpi.ExitCode(err)
	fmt.Println(errors.As(err, &e), errors.Is(err, mpi.ErrOther), code)
	// Output: true true 3
}

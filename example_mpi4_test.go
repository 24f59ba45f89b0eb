package mpi_test

import (
	"errors"
	"fmt"
	"sync"

	"github.com/mpigo/mpi"
)

// An iterative solver sets up its Allreduce once and starts it in every
// iteration: the arguments are checked, the ranks agree and the algorithm
// is chosen at AllreduceInit; each Start then runs the collective again
// on the current contents of the input.
func ExampleAllreduceInit() {
	mpi.Run(4, func(c *mpi.Comm) error {
		local, global := []float64{0}, []float64{0}
		req, err := mpi.AllreduceInit(c, local, global, mpi.Sum[float64]())
		if err != nil {
			return err
		}
		defer req.Free()
		for iter := 1; iter <= 3; iter++ {
			local[0] = float64(iter * (c.Rank() + 1)) // this rank's residual
			if err := req.Start(); err != nil {
				return err
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			if c.Rank() == 0 {
				fmt.Println("iteration", iter, "sum", global[0])
			}
		}
		return nil
	})
	// Output:
	// iteration 1 sum 10
	// iteration 2 sum 20
	// iteration 3 sum 30
}

// Four goroutines fill one quarter each of a message and hand it over with
// Pready as soon as it is done; the receiver sees the message whole once
// every partition has arrived.
func ExamplePsendInit() {
	mpi.Run(2, func(c *mpi.Comm) error {
		const parts, per = 4, 3
		buf := make([]int32, parts*per)
		if c.Rank() == 0 {
			req, err := mpi.PsendInit(c, buf, parts, 1, 0)
			if err != nil {
				return err
			}
			defer req.Free()
			if err := req.Start(); err != nil {
				return err
			}
			var wg sync.WaitGroup
			for p := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range per {
						buf[p*per+i] = int32(10*p + i)
					}
					req.Pready(p) // this quarter leaves now
				}()
			}
			wg.Wait()
			_, err = req.Wait()
			return err
		}
		req, err := mpi.PrecvInit(c, buf, parts, 0, 0)
		if err != nil {
			return err
		}
		defer req.Free()
		if err := req.Start(); err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		fmt.Println(buf)
		return nil
	})
	// Output: [0 1 2 10 11 12 20 21 22 30 31 32]
}

// A library that defines its own error class and code gives them back
// when it is done: the codes first, then the class.
func ExampleRemoveErrorClass() {
	class := mpi.AddErrorClass("solver error")
	code, _ := mpi.AddErrorCode(class, "solver diverged")
	fmt.Println(errors.Is(mpi.RemoveErrorClass(class), mpi.ErrArg)) // it still has a code
	fmt.Println(mpi.RemoveErrorCode(code), mpi.RemoveErrorClass(class))
	fmt.Println(mpi.ErrorClass(code) == mpi.ErrOther)
	fmt.Println(errors.Is(mpi.RemoveErrorClass(mpi.ErrTag), mpi.ErrArg)) // predefined
	// Output:
	// true
	// <nil> <nil>
	// true
	// true
}

func ExampleRemoveErrorString() {
	class := mpi.AddErrorClass("temporary text")
	fmt.Printf("%q\n", mpi.ErrorString(class))
	fmt.Println(mpi.RemoveErrorString(class))
	fmt.Printf("%q\n", mpi.ErrorString(class))
	// Output:
	// "temporary text"
	// <nil>
	// ""
}

func ExampleRemoveErrorCode() {
	class := mpi.AddErrorClass("io layer")
	code, _ := mpi.AddErrorCode(class, "checkpoint lost")
	fmt.Println(mpi.RemoveErrorCode(code))
	fmt.Println(errors.Is(mpi.RemoveErrorCode(code), mpi.ErrArg)) // already removed
	// Output:
	// <nil>
	// true
}

func ExampleTypeGetValueIndex() {
	pair, _ := mpi.TypeGetValueIndex(mpi.Float64, mpi.Int)
	fmt.Println(pair == mpi.Float64Loc)
	pair, _ = mpi.TypeGetValueIndex(mpi.Float32, mpi.Int32) // C's MPI_FLOAT_INT
	fmt.Println(pair == mpi.CFloatInt)
	pair, _ = mpi.TypeGetValueIndex(mpi.Complex128, mpi.Int)
	fmt.Println(pair == nil) // no such pair: MPI_DATATYPE_NULL
	// Output:
	// true
	// true
	// true
}

// WaitAllStatus reports each request's own error in its status.
func ExampleStatus_Err() {
	mpi.Run(2, func(w *mpi.Comm) error {
		if w.Rank() == 0 {
			mpi.Send(w, []int{1, 2}, 1, 0)
			return mpi.Send(w, []int{3}, 1, 1)
		}
		short, fits := make([]int, 1), make([]int, 1)
		r0, _ := mpi.IrecvInto(w, short, 0, 0)
		r1, _ := mpi.IrecvInto(w, fits, 0, 1)
		sts, _ := mpi.WaitAllStatus(r0, r1)
		fmt.Println(errors.Is(sts[0].Err(), mpi.ErrTruncate), sts[1].Err())
		return nil
	})
	// Output: true <nil>
}

// A hardware-guided split names the level in its info: mpigo knows the
// node, "mpi_shared_memory"; other levels give nil on every rank.
func ExampleComm_SplitType_hwGuided() {
	cfg := mpi.DefaultConfig()
	cfg.RanksPerNode = 2 // 4 ranks on 2 pretend nodes
	mpi.RunConfig(4, cfg, func(w *mpi.Comm) error {
		hw := mpi.NewInfo()
		hw.Set("mpi_hw_resource_type", mpi.HWResourceShared)
		node, err := w.SplitType(mpi.SplitTypeHWGuided, 0, hw)
		if err != nil {
			return err
		}
		defer node.Free()
		hw.Set("mpi_hw_resource_type", "no such level")
		none, _ := w.SplitType(mpi.SplitTypeHWGuided, 0, hw)
		if w.Rank() == 0 {
			fmt.Println(node.Size(), none == nil)
		}
		return nil
	})
	// Output: 2 true
}

// With an automatic buffer (MPI-4.1's MPI_BUFFER_AUTOMATIC), buffered
// sends of any number and size need no buffer sized in advance: each gets
// room of its own until it has left.
func ExampleComm_AttachBufferAutomatic() {
	mpi.Run(2, func(c *mpi.Comm) error {
		if err := c.AttachBufferAutomatic(); err != nil {
			return err
		}
		peer := 1 - c.Rank()
		for i := range 3 {
			// Bsend returns at once, whether or not the peer receives yet.
			if err := mpi.Bsend(c, make([]float64, 1000*(i+1)), peer, i); err != nil {
				return err
			}
		}
		for i := range 3 {
			v, _, err := mpi.Recv[[]float64](c, peer, i)
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				fmt.Println("message", i, "holds", len(v), "values")
			}
		}
		buf, err := c.DetachBuffer()
		if c.Rank() == 0 {
			fmt.Println("detached:", buf == nil, err)
		}
		return err
	})
	// Output:
	// message 0 holds 1000 values
	// message 1 holds 2000 values
	// message 2 holds 3000 values
	// detached: true <nil>
}

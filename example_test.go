package mpi_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mpigo/mpi"
)

// Two goroutine ranks exchange a slice: plain data travels as raw memory.
func ExampleSend() {
	mpi.Run(2, func(world *mpi.Comm) error {
		switch world.Rank() {
		case 0:
			return mpi.Send(world, []float64{1.5, 2.5, 3.5}, 1, 0)
		case 1:
			v, st, err := mpi.Recv[[]float64](world, 0, 0)
			fmt.Println(v, "from rank", st.Source, "count", st.Count(), err)
		}
		return nil
	})
	// Output: [1.5 2.5 3.5] from rank 0 count 3 <nil>
}

// Values that are not plain data are encoded automatically.
func ExampleRecv() {
	type job struct {
		Name  string
		Files []string
	}
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			return mpi.Send(world, job{"render", []string{"a.png", "b.png"}}, 1, 7)
		}
		j, _, err := mpi.Recv[job](world, 0, 7)
		fmt.Printf("%+v %v\n", j, err)
		return nil
	})
	// Output: {Name:render Files:[a.png b.png]} <nil>
}

// RecvInto reuses the caller's memory, so a loop allocates nothing.
func ExampleRecvInto() {
	mpi.Run(2, func(world *mpi.Comm) error {
		buf := make([]int32, 4)
		for i := 0; i < 3; i++ {
			if world.Rank() == 0 {
				mpi.Send(world, []int32{int32(i), int32(i * i)}, 1, 0)
			} else {
				st, err := mpi.RecvInto(world, buf, 0, 0)
				fmt.Println(buf[:st.Count()], err)
			}
		}
		return nil
	})
	// Output:
	// [0 0] <nil>
	// [1 1] <nil>
	// [2 4] <nil>
}

// Allreduce with a predefined op, and with a Go function whose result
// grows at each step (string concatenation, applied in rank order).
func ExampleAllreduce() {
	mpi.Run(4, func(world *mpi.Comm) error {
		sum, _ := mpi.Allreduce(world, world.Rank()+1, mpi.Sum[int]())
		concat := mpi.NewOp(func(a, b string) string { return a + b }, false)
		s, _ := mpi.Allreduce(world, fmt.Sprint(world.Rank()), concat)
		if world.Rank() == 0 {
			fmt.Println(sum, s)
		}
		return nil
	})
	// Output: 10 0123
}

// Elementwise reductions over slices run as tight loops.
func ExampleAllreduceSlice() {
	mpi.Run(3, func(world *mpi.Comm) error {
		r := float64(world.Rank())
		v, _ := mpi.AllreduceSlice(world, []float64{r, 10 * r}, mpi.Max[float64]())
		if world.Rank() == 0 {
			fmt.Println(v)
		}
		return nil
	})
	// Output: [2 20]
}

// Gather collects one value per rank at the root; sizes may differ.
func ExampleGather() {
	mpi.Run(3, func(world *mpi.Comm) error {
		words, _ := mpi.Gather(world, strings.Repeat("ab", world.Rank()), 0)
		if world.Rank() == 0 {
			fmt.Printf("%q\n", words)
		}
		return nil
	})
	// Output: ["" "ab" "abab"]
}

// Bcast sends the root's value to every rank.
func ExampleBcast() {
	mpi.Run(3, func(world *mpi.Comm) error {
		cfg := map[string]int{}
		if world.Rank() == 0 {
			cfg = map[string]int{"steps": 100}
		}
		cfg, _ = mpi.Bcast(world, cfg, 0)
		if world.Rank() == 2 {
			fmt.Println(cfg["steps"])
		}
		return nil
	})
	// Output: 100
}

// Isend and Irecv overlap communication; WaitAll waits for both kinds.
func ExampleIrecv() {
	mpi.Run(2, func(world *mpi.Comm) error {
		peer := 1 - world.Rank()
		p, _ := mpi.Irecv[string](world, peer, 0)
		r, _ := mpi.Isend(world, fmt.Sprint("hello from ", world.Rank()), peer, 0)
		if err := mpi.WaitAll(p, r); err != nil {
			return err
		}
		msg, _, _ := p.Wait()
		if world.Rank() == 1 {
			fmt.Println(msg)
		}
		return nil
	})
	// Output: hello from 0
}

// Mprobe lets goroutines that share a communicator receive messages of
// unknown size safely: the probed message is theirs alone.
func ExampleMprobe() {
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			return mpi.Send(world, []int{1, 2, 3, 4, 5}, 1, 3)
		}
		m, st, _ := mpi.Mprobe(world, mpi.AnySource, mpi.AnyTag)
		fmt.Println("incoming bytes:", st.Bytes())
		v, _, err := mpi.Mrecv[[]int](m)
		fmt.Println(v, err)
		return nil
	})
	// Output:
	// incoming bytes: 40
	// [1 2 3 4 5] <nil>
}

// Errors classify with errors.Is and say where they happened.
func ExampleErrTruncate() {
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			return mpi.Send(world, []byte("a long message"), 1, 5)
		}
		_, err := mpi.RecvInto(world, make([]byte, 4), 0, 5)
		fmt.Println(errors.Is(err, mpi.ErrTruncate))
		fmt.Println(err)
		return nil
	})
	// Output:
	// true
	// mpi: RecvInto on rank 1 of WORLD (source 0, tag 5): message truncated: 14-byte message from rank 0 (tag 5) does not fit the 4-byte buffer
}

// Split makes one communicator per color.
func ExampleComm_Split() {
	mpi.Run(4, func(world *mpi.Comm) error {
		row, _ := world.Split(world.Rank()/2, world.Rank())
		sum, _ := mpi.Allreduce(row, world.Rank(), mpi.Sum[int]())
		if row.Rank() == 0 {
			fmt.Printf("row %d: sum %d\n", world.Rank()/2, sum)
		}
		return nil
	})
	// Unordered output:
	// row 0: sum 1
	// row 1: sum 5
}

// The low-level layer takes a buffer, a count and a datatype, as in C.
func ExampleComm_Send() {
	mpi.Run(2, func(world *mpi.Comm) error {
		buf := make([]float64, 3)
		if world.Rank() == 0 {
			buf[0], buf[1], buf[2] = 1, 2, 3
			return world.Send(mpi.AsBytes(buf), 3, mpi.Float64, 1, 0)
		}
		st, err := world.Recv(mpi.AsBytes(buf), 3, mpi.Float64, 0, 0)
		fmt.Println(buf, st.CountOf(mpi.Float64), err)
		return nil
	})
	// Output: [1 2 3] 3 <nil>
}

// Persistent requests set up a communication once and start it many times.
func ExampleComm_SendInit() {
	mpi.Run(2, func(world *mpi.Comm) error {
		v := make([]int64, 1)
		var r *mpi.Request
		if world.Rank() == 0 {
			r, _ = world.SendInit(mpi.AsBytes(v), 1, mpi.Int64, 1, 0)
		} else {
			r, _ = world.RecvInit(mpi.AsBytes(v), 1, mpi.Int64, 0, 0)
		}
		for i := int64(1); i <= 3; i++ {
			if world.Rank() == 0 {
				v[0] = i * 100
			}
			r.Start()
			r.Wait()
			if world.Rank() == 1 {
				fmt.Println(v[0])
			}
		}
		return r.Free()
	})
	// Output:
	// 100
	// 200
	// 300
}

package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// allocsPerMessage runs body on rank 0 under testing.AllocsPerRun while
// rank 1 runs peer as many times, and returns the allocations per run of
// the whole process (both ranks count).
func allocsPerMessage(t *testing.T, body, peer func(world *mpi.Comm) error) float64 {
	t.Helper()
	const runs = 200
	var got float64
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			for range runs + 1 { // AllocsPerRun warms up once
				if err := peer(world); err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		got = testing.AllocsPerRun(runs, func() {
			if e := body(world); e != nil && err == nil {
				err = e
			}
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

type plainRec struct {
	A, B float64
	N    int32
	On   bool
}

// TestTypedZeroAllocs: the typed path for plain data allocates nothing per
// message: Send of a slice, RecvInto, Send and Recv of a plain struct,
// BcastInto, AllreduceSliceInto, and the exchanges Sendrecv of a plain
// struct, SendrecvInto and Comm.Sendrecv, with small and large messages.
func TestTypedZeroAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts (not meaningful under the race detector)")
	}
	sum := mpi.Sum[float64]()            // made once, as a hot loop would
	for _, n := range []int{1, 200000} { // 8 B; 1.6 MB (rendezvous)
		xs, ys := make([]float64, n), make([]float64, n)   // rank 0's
		xs1, ys1 := make([]float64, n), make([]float64, n) // rank 1's
		tests := []struct {
			name       string
			body, peer func(world *mpi.Comm) error
		}{
			{"Send+RecvInto", func(w *mpi.Comm) error {
				if err := mpi.Send(w, xs, 1, 0); err != nil {
					return err
				}
				_, err := mpi.RecvInto(w, xs, 1, 0)
				return err
			}, func(w *mpi.Comm) error {
				if _, err := mpi.RecvInto(w, ys1, 0, 0); err != nil {
					return err
				}
				return mpi.Send(w, ys1, 0, 0)
			}},
			{"struct", func(w *mpi.Comm) error {
				if err := mpi.Send(w, plainRec{A: 1, N: 2}, 1, 0); err != nil {
					return err
				}
				v, _, err := mpi.Recv[plainRec](w, 1, 0)
				if err == nil && v.N != 3 {
					err = fmt.Errorf("got %+v", v)
				}
				return err
			}, func(w *mpi.Comm) error {
				v, _, err := mpi.Recv[plainRec](w, 0, 0)
				if err != nil {
					return err
				}
				v.N++
				return mpi.Send(w, v, 0, 0)
			}},
			// Roots alternate, so that no rank runs ahead and piles up
			// unexpected messages (those need buffers).
			{"BcastInto", func(w *mpi.Comm) error {
				if err := mpi.BcastInto(w, xs, 0); err != nil {
					return err
				}
				return mpi.BcastInto(w, xs, 1)
			}, func(w *mpi.Comm) error {
				if err := mpi.BcastInto(w, ys1, 0); err != nil {
					return err
				}
				return mpi.BcastInto(w, ys1, 1)
			}},
			{"AllreduceSliceInto", func(w *mpi.Comm) error { return mpi.AllreduceSliceInto(w, xs, ys, sum) },
				func(w *mpi.Comm) error { return mpi.AllreduceSliceInto(w, xs1, ys1, sum) }},
			// A halo exchange: both ranks send and receive at once.
			{"SendrecvInto", func(w *mpi.Comm) error {
				_, err := mpi.SendrecvInto(w, xs, 1, 0, ys, 1, 0)
				return err
			}, func(w *mpi.Comm) error {
				_, err := mpi.SendrecvInto(w, xs1, 0, 0, ys1, 0, 0)
				return err
			}},
			{"Sendrecv", func(w *mpi.Comm) error {
				v, _, err := mpi.Sendrecv[plainRec](w, plainRec{A: 1, N: 2}, 1, 0, 1, 0)
				if err == nil && v.N != 3 {
					err = fmt.Errorf("got %+v", v)
				}
				return err
			}, func(w *mpi.Comm) error {
				_, _, err := mpi.Sendrecv[plainRec](w, plainRec{A: 2, N: 3}, 0, 0, 0, 0)
				return err
			}},
			{"Comm.Sendrecv", func(w *mpi.Comm) error {
				_, err := w.Sendrecv(mpi.AsBytes(xs), 8*n, mpi.Byte, 1, 0, mpi.AsBytes(ys), 8*n, mpi.Byte, 1, 0)
				return err
			}, func(w *mpi.Comm) error {
				_, err := w.Sendrecv(mpi.AsBytes(xs1), n, mpi.Float64, 0, 0, mpi.AsBytes(ys1), n, mpi.Float64, 0, 0)
				return err
			}},
		}
		for _, tc := range tests {
			if n > 1 && (tc.name == "struct" || tc.name == "Sendrecv") {
				continue
			}
			t.Run(fmt.Sprint(tc.name, "/", n*8), func(t *testing.T) {
				if a := allocsPerMessage(t, tc.body, tc.peer); a != 0 {
					t.Errorf("%v allocations per round", a)
				}
				// AllocsPerRun rounds down: a Request carved from a block
				// of 128 (erFreeList) shows in the bytes only, 64 a
				// request.
				if b := bytesPerMessage(t, tc.body, tc.peer); b >= 16 {
					t.Errorf("%.0f bytes allocated per round", b)
				}
			})
		}
	}
}

func TestBcastInto(t *testing.T) {
	matrix(t, 3, func(world *mpi.Comm) error {
		buf := make([]int32, 5)
		if world.Rank() == 2 {
			copy(buf, []int32{1, 2, 3, 4, 5})
		}
		if err := mpi.BcastInto(world, buf, 2); err != nil {
			return err
		}
		if fmt.Sprint(buf) != "[1 2 3 4 5]" {
			return fmt.Errorf("rank %d: %v", world.Rank(), buf)
		}
		if err := mpi.BcastInto(world, []string{"x"}, 0); err == nil {
			return fmt.Errorf("BcastInto of strings accepted")
		}
		return nil
	})
}

// A hot loop reuses its buffer: BcastInto allocates nothing.
func ExampleBcastInto() {
	mpi.Run(3, func(world *mpi.Comm) error {
		params := make([]float64, 3)
		if world.Rank() == 0 {
			copy(params, []float64{0.1, 0.2, 0.3})
		}
		if err := mpi.BcastInto(world, params, 0); err != nil {
			return err
		}
		if world.Rank() == 2 {
			fmt.Println(params)
		}
		return nil
	})
	// Output: [0.1 0.2 0.3]
}

package mpi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// TestPersistentZeroAllocs: a Start and Wait of a persistent collective
// of fixed-size data allocates nothing (the typed AllreduceInit, the
// low-level one, BcastInit and BarrierInit, and the collectives where
// every rank sends to and receives from every other, typed and
// low-level: Allgather, Alltoall, ReduceScatterBlock), 8 bytes (by
// publications between the goroutine ranks, where they publish), 1 KiB
// (meeting in memory) and 256 KiB (by messages), the last two on the
// road over the blocking algorithm. (Where one rank only sends, a Scan's
// rank 0 or a Reduce's leaves, it may run ahead of the other, whose
// unexpected messages then need buffers, persistent or not.)
func TestPersistentZeroAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts (not meaningful under the race detector)")
	}
	for _, n := range []int{1, 1 << 7, 1 << 15} {
		for _, which := range []string{"AllreduceInit", "Comm.AllreduceInit", "BcastInit", "BarrierInit",
			"AllgatherInit", "AlltoallInit", "ReduceScatterBlockInit", "Comm.AllgatherInit", "Comm.AlltoallInit"} {
			t.Run(fmt.Sprint(which, "/", 8*n), func(t *testing.T) {
				var reqs [2][]*mpi.Request // each rank's, made on its first run
				body := func(c *mpi.Comm) error {
					rs := &reqs[c.Rank()]
					if *rs == nil {
						v, out := make([]float64, n), make([]float64, n)
						v2, out2 := make([]float64, 2*n), make([]float64, 2*n)
						var r0, r1 *mpi.Request
						var err error
						switch which {
						case "AllgatherInit":
							r0, err = mpi.AllgatherInit(c, v, out2)
						case "AlltoallInit":
							r0, err = mpi.AlltoallInit(c, v2, out2)
						case "ReduceScatterBlockInit":
							r0, err = mpi.ReduceScatterBlockInit(c, v2, out, mpi.Sum[float64]())
						case "Comm.AllgatherInit":
							r0, err = c.AllgatherInit(mpi.AsBytes(v), n, mpi.Float64, mpi.AsBytes(out2), n, mpi.Float64, nil)
						case "Comm.AlltoallInit":
							r0, err = c.AlltoallInit(mpi.AsBytes(v2), n, mpi.Float64, mpi.AsBytes(out2), n, mpi.Float64, nil)
						case "AllreduceInit":
							r0, err = mpi.AllreduceInit(c, v, out, mpi.Sum[float64]())
						case "Comm.AllreduceInit":
							r0, err = c.AllreduceInit(mpi.AsBytes(v), mpi.AsBytes(out), n, mpi.Float64, mpi.OpSum, nil)
						case "BarrierInit":
							r0, err = mpi.BarrierInit(c)
						default:
							// Roots alternate, so that no rank runs ahead
							// and piles up unexpected messages (those
							// need buffers).
							if r0, err = mpi.BcastInit(c, v, 0); err == nil {
								r1, err = mpi.BcastInit(c, v, 1)
							}
						}
						if err != nil {
							return err
						}
						*rs = []*mpi.Request{r0}
						if r1 != nil {
							*rs = append(*rs, r1)
						}
					}
					for _, r := range *rs {
						if err := r.Start(); err != nil {
							return err
						}
						if _, err := r.Wait(); err != nil {
							return err
						}
					}
					return nil
				}
				if got := allocsPerMessage(t, body, body); got != 0 {
					t.Errorf("%v allocations per Start and Wait", got)
				}
			})
		}
	}
}

// TestPersistentCheckMode: check mode (which compares each rank's
// collective calls with its neighbour's) does not take persistent
// collectives started in different orders on different ranks, which MPI
// allows, for mismatched collectives: only the ordered calls (Init) are
// compared.
func TestPersistentCheckMode(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.Check = true
	err := mpi.RunConfig(3, cfg, func(c *mpi.Comm) error {
		a, sum := []int64{1}, []int64{0}
		b := []int64{0}
		ra, err := mpi.AllreduceInit(c, a, sum, mpi.Sum[int64]())
		if err != nil {
			return err
		}
		rb, err := mpi.BcastInit(c, b, 0)
		if err != nil {
			return err
		}
		for range 3 {
			if c.Rank() == 1 {
				err = mpi.StartAll(rb, ra)
			} else {
				err = mpi.StartAll(ra, rb)
			}
			if err != nil {
				return err
			}
			if err := mpi.WaitAll(ra, rb); err != nil {
				return err
			}
			if sum[0] != 3 {
				return fmt.Errorf("sum %d", sum[0])
			}
		}
		return mpi.Barrier(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPersistentInitCheckMode: in check mode, an Init on one rank where
// another makes the plain collective is reported as mismatched
// collectives, like any two different collective calls.
func TestPersistentInitCheckMode(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.Check = true
	err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		v, out := []int64{1}, []int64{0}
		if c.Rank() == 0 {
			_, err := mpi.AllreduceInit(c, v, out, mpi.Sum[int64]())
			return err
		}
		return mpi.AllreduceSliceInto(c, v, out, mpi.Sum[int64]())
	})
	if err == nil || !strings.Contains(err.Error(), "AllreduceInit") || !strings.Contains(err.Error(), "mismatched collectives") {
		t.Fatalf("got %v, want a check report of AllreduceInit against Allreduce", err)
	}
}

// BenchmarkPartitioned: a 4 MiB message whose quarters 4 goroutines fill
// and hand over with Pready, against one plain Send after the goroutines
// have joined (issue 43's partitioned benchmark), on 2 goroutine ranks.

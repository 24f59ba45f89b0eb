package mpi

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// shmConfig is the configuration of goroutine ranks that reach each
// other as processes of one node do: over the shm transport, with shared
// segments.
func shmConfig() Config {
	cfg := DefaultConfig()
	cfg.Transport = "shm"
	return cfg
}

// onShmRoad reports an error unless every request of rs goes by
// publications in shared memory.
func onShmRoad(c *Comm, rs ...*Request) error {
	for _, r := range rs {
		if _, ok := r.x.pub.(*shmColl); !ok {
			return fmt.Errorf("rank %d: %s does not go by publications in shared memory (%T)", c.Rank(), r.opName(), r.x.pub)
		}
	}
	return nil
}

// TestPersistentShmPublications: the persistent collectives that go by
// publications, between ranks that are processes of one node: round
// after round, started in another order on every rank, with a blocking
// collective in between, completed by each way of waiting and testing
// (Wait, WaitAll, WaitAny, Test and TestAll in loops, WaitSome), on
// ranks that wait at once and on a rank that comes late; every result
// right every round, and every request freed.
func TestPersistentShmPublications(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		for _, late := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dranks/late%v", n, late), func(t *testing.T) {
				err := runConfigWithin(t, n, shmConfig(), 2*time.Minute, func(c *Comm) error {
					q, err := newPubReqs(c)
					if err != nil {
						return err
					}
					if err := onShmRoad(c, q.all...); err != nil {
						return err
					}
					for i := range 36 {
						var before func()
						if late && c.Rank() == n-1 && i%3 == 0 {
							// Past the others' watch: they park.
							before = func() { time.Sleep(200 * time.Microsecond) }
						}
						if err := q.round(c, i, before); err != nil {
							return err
						}
					}
					for _, r := range q.all {
						if err := r.Free(); err != nil {
							return err
						}
						if r.x.pub.(*shmColl).mem != nil {
							return fmt.Errorf("rank %d: %s kept its block after Free", c.Rank(), r.opName())
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// shmCross is one case of TestPersistentShmCrossCheck over elements of E:
// n elements drawn by gen, the persistent request init makes and the
// plain call that must give the same bits.
func shmCross[E comparable](n int, gen func(*rand.Rand) E, init func(c *Comm, in, out []E) (*Request, error), plain func(c *Comm, in, out []E) error) func(c *Comm) error {
	return func(c *Comm) error {
		rng := rand.New(rand.NewPCG(uint64(c.Rank()), 7))
		in, out, want := make([]E, n), make([]E, n), make([]E, n)
		r, err := init(c, in, out)
		if err != nil {
			return err
		}
		if err := onShmRoad(c, r); err != nil {
			return err
		}
		for i := range 300 {
			for j := range in {
				in[j] = gen(rng)
			}
			if err := r.Start(); err != nil {
				return err
			}
			if i%7 == 3 && c.Rank() == 1 {
				time.Sleep(100 * time.Microsecond) // the others watch, or park
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
			if err := plain(c, in, want); err != nil {
				return err
			}
			if !slices.Equal(out, want) {
				return fmt.Errorf("rank %d Start %d: %v, the plain call gives %v", c.Rank(), i, out[:min(4, n)], want[:min(4, n)])
			}
			// Every rank has the same bits.
			first, err := Bcast(c, slices.Clone(out), 0)
			if err != nil {
				return err
			}
			if !slices.Equal(first, out) {
				return fmt.Errorf("rank %d Start %d: another result than rank 0's", c.Rank(), i)
			}
		}
		return r.Free()
	}
}

// TestPersistentShmCrossCheck: over many Starts with random data, the
// persistent Allreduce by publications in shared memory gives the bits
// of the plain Allreduce, on every rank, for several types and
// operations: predefined ones (typed and low-level) and a commutative
// operation of the program's (low-level), up to the road's size bound.
// (Data of sums and products are whole numbers, so that the order of
// combination, which may differ between the two, cannot change a bit.)
func TestPersistentShmCrossCheck(t *testing.T) {
	// (a+1)(b+1)-1 in int64: commutative and associative, wrapping.
	userOp := NewReduceOp(func(in, inout []byte, count int, dt *Datatype) {
		a, b := unsafe.Slice((*int64)(unsafe.Pointer(&in[0])), count), unsafe.Slice((*int64)(unsafe.Pointer(&inout[0])), count)
		for i := range b {
			b[i] = a[i]*b[i] + a[i] + b[i]
		}
	}, true)
	whole := func(rng *rand.Rand) float64 { return float64(rng.IntN(2001) - 1000) }
	cases := []struct {
		name string
		f    func(c *Comm) error
	}{
		{"typed float64 sum", shmCross(3, whole, func(c *Comm, in, out []float64) (*Request, error) { return AllreduceInit(c, in, out, Sum[float64]()) },
			func(c *Comm, in, out []float64) error { return AllreduceSliceInto(c, in, out, Sum[float64]()) })},
		{"typed float64 max", shmCross(1, (*rand.Rand).NormFloat64, func(c *Comm, in, out []float64) (*Request, error) { return AllreduceInit(c, in, out, Max[float64]()) },
			func(c *Comm, in, out []float64) error { return AllreduceSliceInto(c, in, out, Max[float64]()) })},
		{"typed int32 bxor", shmCross(5, (*rand.Rand).Int32, func(c *Comm, in, out []int32) (*Request, error) { return AllreduceInit(c, in, out, Bxor[int32]()) },
			func(c *Comm, in, out []int32) error { return AllreduceSliceInto(c, in, out, Bxor[int32]()) })},
		{"low float64 prod 2 KiB", shmCross(256, whole, func(c *Comm, in, out []float64) (*Request, error) {
			return c.AllreduceInit(AsBytes(in), AsBytes(out), len(in), Float64, OpProd, nil)
		}, func(c *Comm, in, out []float64) error {
			return c.Allreduce(AsBytes(in), AsBytes(out), len(in), Float64, OpProd)
		})},
		{"low user op at the size bound", shmCross(shmPubMax/8, (*rand.Rand).Int64, func(c *Comm, in, out []int64) (*Request, error) {
			return c.AllreduceInit(AsBytes(in), AsBytes(out), len(in), Int64, userOp, nil)
		}, func(c *Comm, in, out []int64) error {
			return c.Allreduce(AsBytes(in), AsBytes(out), len(in), Int64, userOp)
		})},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if err := runConfigWithin(t, 3, shmConfig(), 2*time.Minute, tt.f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPersistentShmErrors: starting an active request and freeing one
// are ErrRequest, and the request still works after; a rank that gives a
// persistent collectives in another order than the other fails them
// on both ranks with ErrOther; above the road's bound, a request goes
// over messages.
func TestPersistentShmErrors(t *testing.T) {
	err := runConfigWithin(t, 2, shmConfig(), time.Minute, func(c *Comm) error {
		out := []int64{0}
		r, err := AllreduceInit(c, []int64{2}, out, Sum[int64]())
		if err != nil {
			return err
		}
		if err := onShmRoad(c, r); err != nil {
			return err
		}
		if err := r.Start(); err != nil {
			return err
		}
		if err := r.Start(); !errors.Is(err, ErrRequest) {
			return fmt.Errorf("rank %d: Start of an active request: %v, want ErrRequest", c.Rank(), err)
		}
		if err := r.Free(); !errors.Is(err, ErrRequest) {
			return fmt.Errorf("rank %d: Free of an active request: %v, want ErrRequest", c.Rank(), err)
		}
		if _, err := r.Wait(); err != nil || out[0] != 4 {
			return fmt.Errorf("rank %d: Wait: %v, %d", c.Rank(), err, out[0])
		}
		if err := r.Free(); err != nil {
			return err
		}
		// Init calls in different orders on the two ranks: each fails.
		a := func() (*Request, error) { return AllreduceInit(c, []int64{1}, []int64{0}, Sum[int64]()) }
		b := func() (*Request, error) { return BcastInit(c, []int64{1}, 0) }
		if c.Rank() == 1 {
			a, b = b, a
		}
		for _, f := range []func() (*Request, error){a, b} {
			if _, err := f(); !errors.Is(err, ErrOther) {
				return fmt.Errorf("rank %d: Init in another order than rank %d's: %v, want ErrOther", c.Rank(), 1-c.Rank(), err)
			}
		}
		// Above the road's bound: over messages, still right.
		big := make([]byte, shmPubMax+8)
		r, err = c.AllreduceInit(InPlace, big, len(big), Byte, OpBor, nil)
		if err != nil {
			return err
		}
		if r.x.pub != nil {
			return fmt.Errorf("rank %d: %d bytes by publications", c.Rank(), len(big))
		}
		return r.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPersistentShmProcFailed: under fault tolerance, a rank that dies
// while the others wait for a Start of their persistent Allreduce ends
// their wait with ErrProcFailed, whether they wait or test.
func TestPersistentShmProcFailed(t *testing.T) {
	for _, test := range []bool{false, true} {
		t.Run(fmt.Sprintf("test%v", test), func(t *testing.T) {
			cfg := shmConfig()
			cfg.FT = true
			cfg.HangReport = 500 * time.Millisecond
			err := runConfigWithin(t, 3, cfg, time.Minute, func(c *Comm) error {
				out := []int64{0}
				r, err := AllreduceInit(c, []int64{1}, out, Sum[int64]())
				if err != nil {
					return err
				}
				if err := onShmRoad(c, r); err != nil {
					return err
				}
				if c.Rank() == 2 {
					time.Sleep(20 * time.Millisecond)
					return errShmDied
				}
				if err := r.Start(); err != nil {
					return err
				}
				if test {
					for {
						var done bool
						done, _, err = r.Test()
						if done || err != nil {
							break
						}
						time.Sleep(time.Millisecond)
					}
				} else {
					_, err = r.Wait()
				}
				if !errors.Is(err, ErrProcFailed) {
					return fmt.Errorf("rank %d: Wait or Test with rank 2 dead: %v, want ErrProcFailed", c.Rank(), err)
				}
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), errShmDied.Error()) || strings.Contains(err.Error(), "rank 0") || strings.Contains(err.Error(), "rank 1") {
				t.Fatalf("job: %v; want only rank 2's failure", err)
			}
		})
	}
}

var errShmDied = errors.New("simulated death")

// TestPersistentShmHang: a rank that frees its persistent collective and
// leaves while another waits for a Start of it: the hang report explains
// the wait, and the job ends.
func TestPersistentShmHang(t *testing.T) {
	cfg := shmConfig()
	cfg.HangReport = 300 * time.Millisecond
	err := persistentLeaverJob(t, cfg, func(c *Comm, r *Request) error { return onShmRoad(c, r) })
	if err == nil || !strings.Contains(err.Error(), "hang") || !strings.Contains(err.Error(), "rank 1: waits in Request.Wait") {
		t.Fatalf("got %v, want a hang report naming the wait", err)
	}
}

// BenchmarkPersistentShm times the 2-rank Allreduce over shared memory,
// plain against the persistent form by publications (Start and Wait).
func BenchmarkPersistentShm(b *testing.B) {
	for _, size := range []int{8, 1 << 10, shmPubMax} {
		for _, form := range []string{"plain", "persistent"} {
			b.Run(fmt.Sprintf("%d/%s", size, form), func(b *testing.B) {
				b.ReportAllocs()
				err := RunConfig(2, shmConfig(), func(c *Comm) error {
					return allreduceBenchRank(b, c, size, form == "persistent", func(c *Comm, r *Request) error { return onShmRoad(c, r) })
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

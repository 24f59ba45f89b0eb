package mpi

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// runWithin runs f on n goroutine ranks (inproc) and fails the test if the
// job does not end within d: a meet that lost a rank would otherwise hang.
func runWithin(t *testing.T, n int, d time.Duration, f func(c *Comm) error) error {
	t.Helper()
	return runConfigWithin(t, n, DefaultConfig(), d, f)
}

// runConfigWithin is runWithin with cfg.
func runConfigWithin(t *testing.T, n int, cfg Config, d time.Duration, f func(c *Comm) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- RunConfig(n, cfg, f) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("the job of %d ranks did not end within %v", n, d)
		return nil
	}
}

// The ranks of Run meet in memory for a vector allreduce of any length
// (one rank combining for all, or a check before the message algorithm),
// in place or not, with the results of the message algorithms; and the
// choice really was the meet.
func TestAllreduceInProcess(t *testing.T) {
	lengths := []int{1, 3, 511, 4095, 4096, 4097, 9001} // meetAll = 4096 float64s
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n, "ranks"), func(t *testing.T) {
			err := runWithin(t, n, time.Minute, func(c *Comm) error {
				for _, l := range lengths {
					v := make([]float64, l)
					for i := range v {
						v[i] = float64(c.Rank()*1000 + i)
					}
					out := make([]float64, l)
					if err := AllreduceSliceInto(c, v, out, Sum[float64]()); err != nil {
						return err
					}
					if ch := c.arChoice.Load(); n > 1 && (ch == nil || !ch.inProcess) {
						return fmt.Errorf("%d elements: the ranks did not meet in memory (choice %+v)", l, ch)
					}
					in := make([]int32, l) // in place, another type
					for i := range in {
						in[i] = int32(c.Rank()*7 + i%5)
					}
					if err := AllreduceSliceInto(c, in, in, Max[int32]()); err != nil {
						return err
					}
					for i := range out {
						if want := float64(1000*n*(n-1)/2 + n*i); out[i] != want {
							return fmt.Errorf("rank %d, %d elements: sum[%d] = %v, want %v", c.Rank(), l, i, out[i], want)
						}
						if want := int32((n-1)*7 + i%5); in[i] != want {
							return fmt.Errorf("rank %d, %d elements: max[%d] = %v, want %v", c.Rank(), l, i, in[i], want)
						}
					}
				}
				// The low-level form meets too.
				sb, rb := []int32{int32(c.Rank() + 1), 2}, make([]int32, 2)
				if err := c.Allreduce(AsBytes(sb), AsBytes(rb), 2, Int32, OpSum); err != nil {
					return err
				}
				if want := int32(n * (n + 1) / 2); rb[0] != want || rb[1] != int32(2*n) {
					return fmt.Errorf("rank %d: low-level sum %v, want [%d %d]", c.Rank(), rb, want, 2*n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Disjoint communicators (a Split, whose parts may share a context id)
// meet apart, at the same time, many times over.
func TestAllreduceInProcessSplit(t *testing.T) {
	err := runWithin(t, 6, time.Minute, func(world *Comm) error {
		half, err := world.Split(world.Rank()%2, world.Rank())
		if err != nil {
			return err
		}
		want := 0
		for r := world.Rank() % 2; r < 6; r += 2 {
			want += r
		}
		for round := range 200 {
			v := []int64{int64(world.Rank()), int64(round)}
			if err := AllreduceSliceInto(half, v, v, Sum[int64]()); err != nil {
				return err
			}
			if v[0] != int64(want) || v[1] != int64(3*round) {
				return fmt.Errorf("rank %d round %d: got %v, want [%d %d]", world.Rank(), round, v, want, 3*round)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Ranks that pass different lengths learn it, all of them, whichever
// road their own length would take, and the meet serves the next call.
func TestAllreduceInProcessMismatch(t *testing.T) {
	err := runWithin(t, 3, time.Minute, func(c *Comm) error {
		n := 4000 // 32000 bytes: one rank combines
		if c.Rank() == 2 {
			n = 4100 // 32800 bytes: messages after the meeting
		}
		err := AllreduceSliceInto(c, make([]float64, n), make([]float64, n), Sum[float64]())
		if !errors.Is(err, ErrCount) {
			return fmt.Errorf("rank %d: got %v, want ErrCount", c.Rank(), err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Op != "AllreduceSliceInto" {
			return fmt.Errorf("rank %d: %v is not the call's *Error", c.Rank(), err)
		}
		v := []float64{1}
		if err := AllreduceSliceInto(c, v, v, Sum[float64]()); err != nil || v[0] != 3 {
			return fmt.Errorf("rank %d: the next allreduce gave %v, %v", c.Rank(), v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A rank that fails while the others wait in the meet ends their waits:
// they report the failure (ErrProcFailed) instead of hanging.
func TestAllreduceInProcessFailure(t *testing.T) {
	boom := errors.New("boom")
	errs := make([]error, 3)
	err := runWithin(t, 3, time.Minute, func(c *Comm) error {
		if c.Rank() == 2 {
			time.Sleep(20 * time.Millisecond) // let the others wait first
			return boom
		}
		v := []float64{1}
		errs[c.Rank()] = AllreduceSliceInto(c, v, v, Sum[float64]())
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want rank 2's error", err)
	}
	for r := range 2 {
		if !errors.Is(errs[r], ErrProcFailed) {
			t.Errorf("rank %d: got %v, want ErrProcFailed", r, errs[r])
		}
	}
}

// A non-blocking allreduce in flight while blocking ones meet on the same
// communicator keeps to messages: both give the right sums.
func TestAllreduceInProcessWithNonblocking(t *testing.T) {
	err := runWithin(t, 3, time.Minute, func(c *Comm) error {
		for round := range 50 {
			v := []float64{float64(c.Rank()), 1}
			f, err := IallreduceSlice(c, v, Sum[float64]())
			if err != nil {
				return err
			}
			x, err := Allreduce(c, c.Rank()+round, Sum[int]())
			if err != nil {
				return err
			}
			got, err := f.Wait()
			if err != nil {
				return err
			}
			if x != 3+3*round || got[0] != 3 || got[1] != 3 {
				return fmt.Errorf("rank %d round %d: blocking %d, non-blocking %v", c.Rank(), round, x, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Barrier meets too; a rank in Barrier and one in an allreduce that meet
// both get an error, not a result nobody computed.
func TestBarrierInProcess(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		var count atomic.Int64
		err := runWithin(t, n, time.Minute, func(c *Comm) error {
			for round := range 100 {
				count.Add(1)
				if err := Barrier(c); err != nil {
					return err
				}
				// Nobody passes the barrier before all have come to it.
				if got := count.Load(); got < int64(n*(round+1)) {
					return fmt.Errorf("rank %d round %d: passed with %d arrivals", c.Rank(), round, got)
				}
				if err := Barrier(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%d ranks: %v", n, err)
		}
	}
	err := runWithin(t, 2, time.Minute, func(c *Comm) error {
		var err error
		if c.Rank() == 0 {
			err = Barrier(c)
		} else {
			v := []float64{1}
			err = AllreduceSliceInto(c, v, v, Sum[float64]())
		}
		if err == nil || !strings.Contains(err.Error(), "mismatched collectives") {
			return fmt.Errorf("rank %d: got %v, want mismatched collectives", c.Rank(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A freed communicator's meeting point leaves the job once every member
// has freed it: a job that makes and frees communicators in a loop keeps
// the meeting points of the live ones only. A Split's parts, which may
// share a context, keep theirs while any member holds them.
func TestMeetFreed(t *testing.T) {
	var meets atomic.Int64
	err := runWithin(t, 4, time.Minute, func(c *Comm) error {
		count := func() int {
			j := c.p.job
			j.meets.mu.Lock()
			defer j.meets.mu.Unlock()
			return len(j.meets.m)
		}
		if _, err := Allreduce(c, 1, Sum[int]()); err != nil {
			return err
		}
		if err := Barrier(c); err != nil {
			return err
		}
		before := count() // the world's meet
		for i := 0; i < 50; i++ {
			d, err := c.Dup()
			if err != nil {
				return err
			}
			s, err := c.Split(c.Rank()%2, 0)
			if err != nil {
				return err
			}
			if _, err := Allreduce(d, i, Sum[int]()); err != nil {
				return err
			}
			got, err := Allreduce(s, 1, Sum[int]())
			if err != nil {
				return err
			}
			if got != 2 {
				return fmt.Errorf("allreduce over a part of the split: %d, want 2", got)
			}
			if err := d.Free(); err != nil {
				return err
			}
			if err := s.Free(); err != nil {
				return err
			}
		}
		if err := Barrier(c); err != nil { // every rank has freed them all
			return err
		}
		if n := count(); n != before {
			return fmt.Errorf("after 50 Dup and Split freed, the job keeps %d meeting points, want %d", n, before)
		}
		meets.Store(int64(before))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if meets.Load() != 1 {
		t.Errorf("the world alone: %d meeting points, want 1", meets.Load())
	}
}

// A rank waiting in a meeting is let go either by its slot, while it
// watches, or by its wait, once it parked; one compare-and-swap on each
// side decides. Every way gives the right result: parked (Spin off: a
// rank does not watch, though the last may still come before it swaps
// its slot to parked), watching (by default, when every rank has a
// processor: some meetings must then end by the slot), and a watch so
// short that the last rank often comes while the other is parking (every
// wait watching 1 us).
func TestMeetHandOver(t *testing.T) {
	// Processors for every rank, so that 3 ranks watch too (and publish
	// their short vectors) even on a machine of 2.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	const rounds = 3000
	tests := []struct {
		name string
		spin time.Duration
		want string // "parked": some waits parked; "slot": some ended by the slot; "": either
	}{
		{"parked", -1, "parked"},
		{"watching", 0, "slot"},
		{"racing", time.Microsecond, ""},
	}
	for _, tt := range tests {
		for _, n := range []int{2, 3} {
			t.Run(fmt.Sprint(tt.name, "/", n, "ranks"), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Spin = tt.spin
				var bySlot, parked atomic.Int64
				err := runConfigWithin(t, n, cfg, time.Minute, func(c *Comm) error {
					out := make([]int64, 2)
					for i := 0; i < rounds; i++ {
						v := []int64{int64(c.Rank() + i), 1}
						if err := AllreduceSliceInto(c, v, out, Sum[int64]()); err != nil {
							return err
						}
						if want := int64(n*(n-1)/2 + n*i); out[0] != want || out[1] != int64(n) {
							return fmt.Errorf("round %d: got %v, want [%d %d]", i, out, want, n)
						}
						if i%3 == 0 {
							if err := Barrier(c); err != nil {
								return err
							}
						}
					}
					s := &c.meet().slots[c.Rank()]
					bySlot.Add(int64(s.bySlot))
					parked.Add(int64(s.parked))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				slot, park := bySlot.Load(), parked.Load()
				t.Logf("waits ended by the slot: %d, parked: %d", slot, park)
				switch {
				case tt.want == "parked" && park == 0:
					t.Errorf("no wait parked with Spin off (%d ended by the slot)", slot)
				case tt.want == "slot" && slot == 0 && spinRanks(n):
					t.Errorf("no meeting ended by the slot while the ranks watched (%d parked)", park)
				}
			})
		}
	}
}

// While the ranks watch (each has a processor), an allreduce longer than
// meetShare is combined in shares, every rank one range of the elements
// into every output: sums, maxima and in-place calls of several element
// sizes and of lengths that leave a short last share, for 2 to 4 ranks
// (GOMAXPROCS raised to match, so that they watch), give what messages
// would; and the shares were taken. Ranks that park (Spin off) keep to
// one rank combining or to messages.
func TestAllreduceInShares(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	lengths := []int{513, 4097, 9001, 100003} // float64s: 4104 bytes and up
	for _, spin := range []time.Duration{0, -1} {
		for _, n := range []int{2, 3, 4} {
			t.Run(fmt.Sprintf("%dranks/spin%v", n, spin), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Spin = spin
				var shared atomic.Int64
				err := RunConfig(n, cfg, func(c *Comm) error {
					r := c.Rank()
					for _, l := range lengths {
						v := make([]float64, l)
						for i := range v {
							v[i] = float64(r*1000 + i)
						}
						out := make([]float64, l)
						if err := AllreduceSliceInto(c, v, out, Sum[float64]()); err != nil {
							return err
						}
						in := make([]int32, l) // in place
						for i := range in {
							in[i] = int32(r*7 + i%5)
						}
						if err := AllreduceSliceInto(c, in, in, Max[int32]()); err != nil {
							return err
						}
						z := make([]complex128, l/2)
						for i := range z {
							z[i] = complex(float64(r), float64(i))
						}
						if err := AllreduceSliceInto(c, z, z, Sum[complex128]()); err != nil {
							return err
						}
						for i := range out {
							if want := float64(1000*n*(n-1)/2 + n*i); out[i] != want {
								return fmt.Errorf("rank %d, %d elements: sum[%d] = %v, want %v", r, l, i, out[i], want)
							}
							if want := int32((n-1)*7 + i%5); in[i] != want {
								return fmt.Errorf("rank %d, %d elements: max[%d] = %v, want %v", r, l, i, in[i], want)
							}
						}
						for i := range z {
							if want := complex(float64(n*(n-1)/2), float64(n*i)); z[i] != want {
								return fmt.Errorf("rank %d, %d elements: complex sum[%d] = %v, want %v", r, l, i, z[i], want)
							}
						}
					}
					shared.Add(int64(c.meet().slots[r].shared))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				want := 0 // calls of more than meetShare bytes, on every rank
				for _, l := range lengths {
					for _, b := range []int{8 * l, 4 * l, 16 * (l / 2)} {
						if b > meetShare {
							want += n
						}
					}
				}
				got := shared.Load()
				switch {
				case spin == 0 && spinRanks(n) && got != int64(want):
					t.Errorf("%d of %d allreduces combined in shares while the ranks watched", got, want)
				case spin < 0 && got != 0:
					t.Errorf("%d allreduces combined in shares with Spin off", got)
				}
			})
		}
	}
}

// Reduce meets in memory too, whatever the root, the length (one rank
// combining, shares, or messages after the meeting) and the way the
// ranks wait; ranks that disagree on the root, or a rank in Reduce while
// another is in Allreduce, all get an error naming the mismatch (ErrRoot
// for the roots) instead of a result nobody computed.
func TestReduceInProcess(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	for _, spin := range []time.Duration{0, -1} {
		for _, n := range []int{2, 3} {
			t.Run(fmt.Sprintf("%dranks/spin%v", n, spin), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Spin = spin
				err := RunConfig(n, cfg, func(c *Comm) error {
					for _, l := range []int{1, 511, 4097, 9001} {
						v := make([]float64, l)
						for i := range v {
							v[i] = float64(c.Rank()*1000 + i)
						}
						for root := range n {
							out := make([]float64, l)
							if err := ReduceSliceInto(c, v, out, Sum[float64](), root); err != nil {
								return err
							}
							for i := range out {
								want := float64(1000*n*(n-1)/2 + n*i)
								if c.Rank() != root {
									want = 0 // untouched
								}
								if out[i] != want {
									return fmt.Errorf("rank %d, root %d, %d elements: out[%d] = %v, want %v", c.Rank(), root, l, i, out[i], want)
								}
							}
						}
					}
					// Roots that differ, and a Reduce against an Allreduce.
					v := []float64{1}
					err := ReduceSliceInto(c, v, []float64{0}, Sum[float64](), c.Rank()%2)
					if !errors.Is(err, ErrRoot) || !strings.Contains(err.Error(), "different roots") {
						return fmt.Errorf("rank %d, roots differ: got %v, want ErrRoot", c.Rank(), err)
					}
					if c.Rank() == 0 {
						err = AllreduceSliceInto(c, v, []float64{0}, Sum[float64]())
					} else {
						err = ReduceSliceInto(c, v, []float64{0}, Sum[float64](), 0)
					}
					if err == nil || !strings.Contains(err.Error(), "mismatched collectives") {
						return fmt.Errorf("rank %d, Reduce against Allreduce: got %v", c.Rank(), err)
					}
					// The meeting serves the next call.
					out := []float64{0}
					if err := ReduceSliceInto(c, []float64{2}, out, Sum[float64](), 0); err != nil {
						return err
					}
					if c.Rank() == 0 && out[0] != float64(2*n) {
						return fmt.Errorf("after the mismatches: %v, want %d", out[0], 2*n)
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

// Ranks with a short vector publish it and read the others'
// (coll_meet_pub.go); a rank with anything else meets with a last
// rank. Whichever way each goes, a mismatch is reported to every rank,
// watching (Spin on) or parked (Spin off), and the communicator serves
// the calls after it: the meetings' counts stay in step.
func TestMeetPublicationMismatch(t *testing.T) {
	// Processors for every rank, so that 3 ranks publish (Spins) even on
	// a machine of 2: they then watch in turns and often park.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	short := func(c *Comm, n int) error {
		v := make([]float64, n)
		return AllreduceSliceInto(c, v, v, Sum[float64]())
	}
	tests := []struct {
		name  string
		odd   func(c *Comm) error // the last rank's call
		want  error               // every rank's error class; nil: any error
		inOdd string              // in the last rank's error
	}{
		{"short-long", func(c *Comm) error { return short(c, 1000) }, ErrCount, ""},
		{"short-short", func(c *Comm) error { return short(c, 3) }, ErrCount, ""},
		{"short-barrier", func(c *Comm) error { return c.Barrier() }, nil, "another collective"},
		{"short-reduce", func(c *Comm) error {
			v := []float64{1, 2}
			return ReduceSliceInto(c, v, make([]float64, 2), Sum[float64](), 0)
		}, nil, "mismatched collectives"},
		{"short-int32", func(c *Comm) error {
			v := make([]int32, 4) // 16 bytes, as two float64s
			return AllreduceSliceInto(c, v, v, Sum[int32]())
		}, ErrType, ""},
	}
	for _, spin := range []time.Duration{0, -1} {
		for _, n := range []int{2, 3} {
			for _, tt := range tests {
				t.Run(fmt.Sprintf("%s/%dranks/spin%v", tt.name, n, spin), func(t *testing.T) {
					cfg := DefaultConfig()
					cfg.Spin = spin
					err := runConfigWithin(t, n, cfg, time.Minute, func(c *Comm) error {
						for round := range 20 {
							var err error
							if c.Rank() == n-1 {
								err = tt.odd(c)
							} else {
								err = short(c, 2)
							}
							if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
								return fmt.Errorf("rank %d round %d: got %v, want %v", c.Rank(), round, err, tt.want)
							}
							if c.Rank() == n-1 && !strings.Contains(err.Error(), tt.inOdd) {
								return fmt.Errorf("rank %d round %d: %v does not say %q", c.Rank(), round, err, tt.inOdd)
							}
							v := []float64{float64(c.Rank()), 1}
							if err := AllreduceSliceInto(c, v, v, Sum[float64]()); err != nil || v[0] != float64(n*(n-1)/2) || v[1] != float64(n) {
								return fmt.Errorf("rank %d round %d: the next allreduce gave %v, %v", c.Rank(), round, v, err)
							}
							if err := c.Barrier(); err != nil {
								return fmt.Errorf("rank %d round %d: the next barrier: %v", c.Rank(), round, err)
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
}

// TestMeetSlotLines: a publication fills two cache lines, and each part of
// a slot that other ranks read or write starts a line of its own, so that
// a rank's writes to one part never cost a reader of another a miss.
func TestMeetSlotLines(t *testing.T) {
	var s meetSlot
	if n := unsafe.Sizeof(meetPub{}); n != 128 {
		t.Errorf("a publication is %d bytes, want 128", n)
	}
	if n := unsafe.Sizeof(s); n%64 != 0 {
		t.Errorf("a slot is %d bytes, not whole cache lines", n)
	}
	for name, off := range map[string]uintptr{"pub": unsafe.Offsetof(s.pub), "pstate": unsafe.Offsetof(s.pstate), "src": unsafe.Offsetof(s.src), "state": unsafe.Offsetof(s.state)} {
		if off%64 != 0 {
			t.Errorf("%s at byte %d of the slot, not at the start of a cache line", name, off)
		}
	}
	if off := unsafe.Offsetof(meetPub{}.data); off != 32 {
		t.Errorf("a publication's data at byte %d, want 32: 8-byte aligned, its first 32 bytes on the line of the rest", off)
	}
}

// TestAllgatherInProcess: AllgatherInto among goroutine ranks that watch
// gives every rank every block, of lengths up to meetInline bytes (by
// publication) and beyond (published lengths, then messages), round
// after round, and so does Allgather of a plain value, short and long,
// and of an encoded one, and Comm.Allgather (which publishes that it
// goes by messages); each call is a meeting of the publications (the count of
// meetings moves by one per call), and with ranks that park (Spin -1),
// or more ranks than a meeting publishes for, it is the message algorithm
// alone.
func TestAllgatherInProcess(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	lengths := []int{1, 2, 12, meetInline / 8, meetInline/8 + 1, 1000}
	for _, spin := range []time.Duration{0, -1} {
		for _, n := range []int{2, 3, meetPubMax + 1} {
			t.Run(fmt.Sprintf("%dranks/spin%v", n, spin), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Spin = spin
				// meetings checks that a call since before counted one
				// meeting of the publications, where they publish.
				meetings := func(c *Comm, before uint64, spin time.Duration, what string) error {
					want := uint64(0)
					if spin == 0 && n <= meetPubMax && c.p.job.Prog.Spins() {
						want = 1
					}
					if got := c.meet().slots[c.Rank()].count - before; got != want {
						return fmt.Errorf("rank %d, %s: %d meetings, want %d", c.Rank(), what, got, want)
					}
					return nil
				}
				err := runConfigWithin(t, n, cfg, time.Minute, func(c *Comm) error {
					me := c.Rank()
					m := c.meet()
					for round := range 30 {
						for _, l := range lengths {
							v := make([]float64, l)
							for i := range v {
								v[i] = float64(me*100000 + round*1000 + i)
							}
							out := make([]float64, n*l)
							before := m.slots[me].count
							if err := AllgatherInto(c, v, out); err != nil {
								return fmt.Errorf("rank %d, %d elements: %v", me, l, err)
							}
							for r := range n {
								for i := range l {
									if want := float64(r*100000 + round*1000 + i); out[r*l+i] != want {
										return fmt.Errorf("rank %d, %d elements, round %d: out[%d] = %v, want %v", me, l, round, r*l+i, out[r*l+i], want)
									}
								}
							}
							if err := meetings(c, before, spin, fmt.Sprint(l, " elements")); err != nil {
								return err
							}
						}
						before := m.slots[me].count
						xs, err := Allgather(c, me*10+round)
						if err != nil || len(xs) != n || xs[n-1] != (n-1)*10+round {
							return fmt.Errorf("rank %d: Allgather of an int gave %v, %v", me, xs, err)
						}
						if err := meetings(c, before, spin, "an int"); err != nil {
							return err
						}
						before = m.slots[me].count
						var big [20]float64 // 160 bytes: by messages
						big[19] = float64(me)
						bs, err := Allgather(c, big)
						if err != nil || len(bs) != n || bs[n-1][19] != float64(n-1) {
							return fmt.Errorf("rank %d: Allgather of [20]float64 gave %v, %v", me, bs, err)
						}
						if err := meetings(c, before, spin, "a [20]float64"); err != nil {
							return err
						}
						before = m.slots[me].count
						lo := make([]int32, n)
						if err := c.Allgather(AsBytes([]int32{int32(me)}), 1, Int32, AsBytes(lo), 1, Int32); err != nil || lo[n-1] != int32(n-1) {
							return fmt.Errorf("rank %d: Comm.Allgather gave %v, %v", me, lo, err)
						}
						if err := meetings(c, before, spin, "Comm.Allgather"); err != nil {
							return err
						}
						before = m.slots[me].count
						ss, err := Allgather(c, fmt.Sprint(me))
						if err != nil || len(ss) != n || ss[n-1] != fmt.Sprint(n-1) {
							return fmt.Errorf("rank %d: Allgather of a string gave %q, %v", me, ss, err)
						}
						if err := meetings(c, before, spin, "a string"); err != nil {
							return err
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

// TestAllgatherPublicationMismatch: ranks that disagree about an
// AllgatherInto or an Allgather (the last rank passes another length,
// short or long, another type, a value for a slice, calls the low-level
// Comm.Allgather, or is in another collective) all get an error, of the
// class given, at once, and the communicator works on: an allgather, an
// allreduce and a barrier after each round.
func TestAllgatherPublicationMismatch(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	gather := func(c *Comm, l int) error {
		return AllgatherInto(c, make([]float64, l), make([]float64, l*c.Size()))
	}
	value := func(c *Comm) error { _, err := Allgather(c, 1.5); return err }
	tests := []struct {
		name  string
		base  int                 // the other ranks' length
		odd   func(c *Comm) error // the last rank's call
		want  error               // every rank's error class; nil: any error
		inOdd string              // in the last rank's error
		other func(c *Comm) error // the other ranks' call, if not AllgatherInto of base elements
	}{
		{"short-long", 2, func(c *Comm) error { return gather(c, 1000) }, ErrCount, "", nil},
		{"short-short", 2, func(c *Comm) error { return gather(c, 3) }, ErrCount, "", nil},
		{"long-long", 1000, func(c *Comm) error { return gather(c, 1001) }, ErrCount, "", nil},
		{"short-int64", 2, func(c *Comm) error {
			return AllgatherInto(c, make([]int64, 2), make([]int64, 2*c.Size()))
		}, ErrType, "", nil},
		{"long-int64", 1000, func(c *Comm) error {
			return AllgatherInto(c, make([]int64, 1000), make([]int64, 1000*c.Size()))
		}, ErrType, "", nil},
		{"short-allreduce", 2, func(c *Comm) error {
			v := make([]float64, 2)
			return AllreduceSliceInto(c, v, v, Sum[float64]())
		}, nil, "mismatched collectives", nil},
		{"short-long-allreduce", 2, func(c *Comm) error {
			v := make([]float64, 1000)
			return AllreduceSliceInto(c, v, v, Sum[float64]())
		}, nil, "mismatched collectives", nil},
		{"short-barrier", 2, func(c *Comm) error { return c.Barrier() }, nil, "another collective", nil},
		{"short-lowlevel", 2, func(c *Comm) error {
			return c.Allgather(AsBytes(make([]float64, 2)), 2, Float64, AsBytes(make([]float64, 2*c.Size())), 2, Float64)
		}, ErrType, "", nil},
		{"long-lowlevel", 1000, func(c *Comm) error {
			return c.Allgather(AsBytes(make([]float64, 1000)), 1000, Float64, AsBytes(make([]float64, 1000*c.Size())), 1000, Float64)
		}, ErrType, "", nil},
		{"value-int32", 0, func(c *Comm) error { _, err := Allgather(c, int32(1)); return err }, ErrType, "", value},
		{"value-string", 0, func(c *Comm) error { _, err := Allgather(c, "1.5"); return err }, ErrType, "", value},
		{"value-long", 0, func(c *Comm) error { _, err := Allgather(c, [20]float64{}); return err }, ErrType, "", value},
		{"value-slice", 0, func(c *Comm) error { return gather(c, 1) }, nil, "", value}, // before publications: a hang report
	}
	for _, n := range []int{2, 3} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%dranks", tt.name, n), func(t *testing.T) {
				err := runConfigWithin(t, n, DefaultConfig(), time.Minute, func(c *Comm) error {
					me := c.Rank()
					for round := range 20 {
						var err error
						switch {
						case me == n-1:
							err = tt.odd(c)
						case tt.other != nil:
							err = tt.other(c)
						default:
							err = gather(c, tt.base)
						}
						if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
							return fmt.Errorf("rank %d round %d: got %v, want %v", me, round, err, tt.want)
						}
						if me == n-1 && !strings.Contains(err.Error(), tt.inOdd) {
							return fmt.Errorf("rank %d round %d: %v does not say %q", me, round, err, tt.inOdd)
						}
						out := make([]int32, n)
						if err := AllgatherInto(c, []int32{int32(me)}, out); err != nil || out[n-1] != int32(n-1) {
							return fmt.Errorf("rank %d round %d: the next allgather gave %v, %v", me, round, out, err)
						}
						v := []float64{float64(me), 1}
						if err := AllreduceSliceInto(c, v, v, Sum[float64]()); err != nil || v[0] != float64(n*(n-1)/2) || v[1] != float64(n) {
							return fmt.Errorf("rank %d round %d: the next allreduce gave %v, %v", me, round, v, err)
						}
						if err := c.Barrier(); err != nil {
							return fmt.Errorf("rank %d round %d: the next barrier: %v", me, round, err)
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

// A persistent collective of goroutine ranks meets in memory at a meeting
// point of its own, which interleaves with the communicator's blocking
// collectives and with other persistent ones started in another order,
// and which leaves the job when every rank has freed the request.
func TestPersistentMeetsAndLeaves(t *testing.T) {
	err := runWithin(t, 4, time.Minute, func(c *Comm) error {
		count := func() int {
			j := c.p.job
			j.meets.mu.Lock()
			defer j.meets.mu.Unlock()
			return len(j.meets.m)
		}
		if err := Barrier(c); err != nil {
			return err
		}
		before := count()
		for i := 0; i < 20; i++ {
			a, b := []int64{int64(c.Rank())}, []int64{int64(i)}
			outA, outB := make([]int64, 1), make([]int64, 1)
			ra, err := AllreduceInit(c, a, outA, Sum[int64]())
			if err != nil {
				return err
			}
			rb, err := AllreduceInit(c, b, outB, Max[int64]())
			if err != nil {
				return err
			}
			reqs := []*Request{ra, rb}
			if c.Rank()%2 == 1 {
				reqs = []*Request{rb, ra} // MPI lets Starts come in any order
			}
			for range 3 {
				for _, r := range reqs {
					if err := r.Start(); err != nil {
						return err
					}
				}
				// A blocking collective of the communicator in between.
				if _, err := Allreduce(c, 1, Sum[int]()); err != nil {
					return err
				}
				for _, r := range reqs {
					if _, err := r.Wait(); err != nil {
						return err
					}
				}
				if outA[0] != 6 || outB[0] != int64(i) {
					return fmt.Errorf("rank %d: persistent results %d, %d; want 6, %d", c.Rank(), outA[0], outB[0], i)
				}
			}
			if n := count(); n < before+2 {
				return fmt.Errorf("rank %d: %d meeting points with two persistent requests in use, %d before: they do not meet in memory", c.Rank(), n, before)
			}
			if err := ra.Free(); err != nil {
				return err
			}
			if err := rb.Free(); err != nil {
				return err
			}
		}
		if err := Barrier(c); err != nil {
			return err
		}
		if n := count(); n > before {
			return fmt.Errorf("rank %d: %d meeting points after freeing every persistent request, %d before", c.Rank(), n, before)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

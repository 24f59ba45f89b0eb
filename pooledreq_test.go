package mpi_test

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// TestNonblockingBytesPerMessage: a non-blocking send and receive allocate
// only the Request the caller holds; its engine request is recycled once
// Wait has handed the result over (docs/performance.md: 480 bytes per
// request before).
func TestNonblockingBytesPerMessage(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts (not meaningful under the race detector)")
	}
	buf, got := []float64{1}, []float64{0}
	raw, rawGot := make([]byte, 8), make([]byte, 8)
	// The receive is posted before the message leaves (the go-ahead is a
	// blocking send, which allocates nothing), so that the count does not
	// depend on the unexpected queue's buffer pool.
	goAhead := make([]byte, 1)
	ready := func(w *mpi.Comm) error { return w.Send(goAhead, 1, mpi.Byte, 0, 2) }
	wait := func(w *mpi.Comm) error { _, err := w.Recv(goAhead, 1, mpi.Byte, 1, 2); return err }
	tests := []struct {
		name       string
		body, peer func(world *mpi.Comm) error
	}{
		{"typed Isend / IrecvInto",
			func(w *mpi.Comm) error {
				if err := wait(w); err != nil {
					return err
				}
				r, err := mpi.Isend(w, buf, 1, 1)
				if err != nil {
					return err
				}
				_, err = r.Wait()
				return err
			},
			func(w *mpi.Comm) error {
				r, err := mpi.IrecvInto(w, got, 0, 1)
				if err != nil {
					return err
				}
				if err := ready(w); err != nil {
					return err
				}
				_, err = r.Wait()
				return err
			}},
		{"raw Isend / Irecv",
			func(w *mpi.Comm) error {
				if err := wait(w); err != nil {
					return err
				}
				r, err := w.Isend(raw, 8, mpi.Byte, 1, 1)
				if err != nil {
					return err
				}
				_, err = r.Wait()
				return err
			},
			func(w *mpi.Comm) error {
				r, err := w.Irecv(rawGot, 8, mpi.Byte, 0, 1)
				if err != nil {
					return err
				}
				if err := ready(w); err != nil {
					return err
				}
				_, err = r.Wait()
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One Request per side and message, carved from blocks of
			// 128 (erFreeList): 1/64 allocation per message; 0.5 leaves
			// room for a stray allocation of the runtime, not for one
			// allocation per request.
			if n := allocsPerMessage(t, tt.body, tt.peer); n > 0.5 {
				t.Errorf("%.2f allocations per message, want about 1/64 (Requests come in blocks of 128)", n)
			}
			// Two 64-byte Requests (reqsize_internal_test.go), 128
			// bytes; with the engine request inside, each was 480, then
			// 256 alone (in blocks that spilled into the allocator's
			// next size class: 557 bytes per message), then 136. A
			// Requests set allocates none (requests_test.go).
			if b := bytesPerMessage(t, tt.body, tt.peer); b > 340 {
				t.Errorf("%.0f bytes allocated per message, want about 128", b)
			}
		})
	}
}

// bytesPerMessage is allocsPerMessage for the bytes allocated: the
// fewest of three batches of runs, so that what the job allocates once
// (a mailbox on its first use, a goroutine's stack growing) is not
// spread over the runs of one batch.
func bytesPerMessage(t *testing.T, body, peer func(world *mpi.Comm) error) float64 {
	t.Helper()
	// A collection empties the sync.Pools, whose refills would be
	// counted: none while counting.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const runs, batches = 1000, 3
	got := math.Inf(1)
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			for range 1 + batches*runs {
				if err := peer(world); err != nil {
					return err
				}
			}
			return nil
		}
		if err := body(world); err != nil { // warm up
			return err
		}
		for range batches {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				if err := body(world); err != nil {
					return err
				}
			}
			runtime.ReadMemStats(&after)
			got = min(got, float64(after.TotalAlloc-before.TotalAlloc)/runs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPooledRequestReuse: requests whose engine requests are recycled
// behave as before. Waiting again returns the same status; a receive
// cancelled from another goroutine while its owner waits is the only one
// cancelled, while other receives and sends recycle engine requests
// around it; WaitAny and Test on other goroutines see consistent results.
func TestPooledRequestReuse(t *testing.T) {
	const rounds = 200
	matrix(t, 2, func(world *mpi.Comm) error {
		peer := 1 - world.Rank()
		for i := range rounds {
			// A receive nobody sends to, waited for on one goroutine and
			// cancelled from another.
			lonely, err := mpi.IrecvInto(world, make([]float64, 1), peer, 9)
			if err != nil {
				return err
			}
			var wg sync.WaitGroup
			var st mpi.Status
			var werr error
			wg.Add(1)
			go func() { defer wg.Done(); st, werr = lonely.Wait() }()
			// Traffic that recycles engine requests meanwhile.
			out := []float64{float64(i)}
			in := []float64{-1}
			rr, err := mpi.IrecvInto(world, in, peer, 1)
			if err != nil {
				return err
			}
			sr, err := mpi.Isend(world, out, peer, 1)
			if err != nil {
				return err
			}
			if i%2 == 0 {
				if _, _, err := mpi.WaitAny(rr, sr); err != nil {
					return err
				}
			}
			if err := mpi.WaitAll(rr, sr); err != nil {
				return err
			}
			if err := lonely.Cancel(); err != nil {
				return err
			}
			wg.Wait()
			if werr != nil {
				return werr
			}
			if !st.Cancelled() {
				return fmt.Errorf("rank %d round %d: the cancelled receive completed uncancelled", world.Rank(), i)
			}
			if in[0] != float64(i) {
				return fmt.Errorf("rank %d round %d: received %v, want %d", world.Rank(), i, in[0], i)
			}
			// Waiting again returns the same result.
			st2, err := rr.Wait()
			if err != nil || st2.Source != peer || st2.Tag != 1 || st2.Bytes() != 8 {
				return fmt.Errorf("rank %d round %d: second Wait: %+v, %v", world.Rank(), i, st2, err)
			}
			if ok, st3, err := lonely.Test(); !ok || err != nil || !st3.Cancelled() {
				return fmt.Errorf("rank %d round %d: Test after Wait: %v %+v %v", world.Rank(), i, ok, st3, err)
			}
		}
		return nil
	})
}

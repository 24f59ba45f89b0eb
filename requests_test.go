package mpi_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// TestRequestsSet: operations posted in a Requests set deliver the right
// data and statuses, window after window of different sizes (across the
// set's chunks of slots), with receives from a named source and from
// AnySource, ProcNull on both sides, and the set reused after every
// WaitAll.
func TestRequestsSet(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		me, peer := world.Rank(), 1-world.Rank()
		var rs mpi.Requests
		bufs := make([][]float64, 300)
		for i := range bufs {
			bufs[i] = make([]float64, 3)
		}
		for round, n := range []int{1, 7, 64, 129, 300, 2, 64} {
			// Rank 0 sends n messages and receives n answers; the
			// receives are posted first, the last one from AnySource.
			for i := range n {
				src := peer
				if i == n-1 {
					src = mpi.AnySource
				}
				if err := mpi.PostIrecvInto(&rs, world, bufs[i], src, 100+i); err != nil {
					return err
				}
			}
			if err := mpi.PostIrecvInto(&rs, world, bufs[0][:1], mpi.ProcNull, 5); err != nil {
				return err
			}
			for i := range n {
				v := []float64{float64(me), float64(round), float64(i)}
				if err := mpi.PostIsend(&rs, world, v, peer, 100+i); err != nil {
					return err
				}
			}
			if err := mpi.PostIsend(&rs, world, []float64{1}, mpi.ProcNull, 5); err != nil {
				return err
			}
			if err := check(world, rs.Len() == 2*n+2, "round %d: Len %d before WaitAll, want %d", round, rs.Len(), 2*n+2); err != nil {
				return err
			}
			if err := rs.WaitAll(); err != nil {
				return err
			}
			for i := range n {
				want := []float64{float64(peer), float64(round), float64(i)}
				if err := check(world, fmt.Sprint(bufs[i]) == fmt.Sprint(want), "round %d message %d: got %v, want %v", round, i, bufs[i], want); err != nil {
					return err
				}
				st := rs.Status(i)
				if err := check(world, st.Source == peer && st.Tag == 100+i && st.Count() == 3,
					"round %d receive %d: status source %d tag %d count %d, want %d %d 3", round, i, st.Source, st.Tag, st.Count(), peer, 100+i); err != nil {
					return err
				}
			}
			if st := rs.Status(n); st.Source != mpi.ProcNull || st.Count() != 0 {
				return check(world, false, "round %d: ProcNull receive's status %+v", round, st)
			}
			if err := check(world, rs.Len() == 2*n+2, "round %d: Len %d after WaitAll, want %d", round, rs.Len(), 2*n+2); err != nil {
				return err
			}
			// Completed: WaitAll and TestAll again change nothing.
			if err := rs.WaitAll(); err != nil {
				return err
			}
			if ok, err := rs.TestAll(); !ok || err != nil {
				return check(world, false, "round %d: TestAll after WaitAll: %v, %v", round, ok, err)
			}
		}
		return nil
	})
}

// TestRequestsSetErrors: a bad argument fails the post and leaves the set
// as it was; a type mismatch between the ranks is ErrType from WaitAll,
// naming the request's index, and the set is usable afterwards; Status is
// empty before completion and out of range.
func TestRequestsSetErrors(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		me, peer := world.Rank(), 1-world.Rank()
		var rs mpi.Requests
		if err := mpi.PostIsend(&rs, world, 1.5, 7, 0); !errors.Is(err, mpi.ErrRank) {
			return check(world, false, "PostIsend to rank 7 of 2: %v, want ErrRank", err)
		}
		if err := mpi.PostIrecvInto(&rs, world, []float64{0}, peer, -3); !errors.Is(err, mpi.ErrTag) {
			return check(world, false, "PostIrecvInto with tag -3: %v, want ErrTag", err)
		}
		if err := check(world, rs.Len() == 0, "Len %d after failed posts, want 0", rs.Len()); err != nil {
			return err
		}
		got := []float64{0}
		if me == 0 {
			if err := mpi.PostIsend(&rs, world, []int32{1}, peer, 1); err != nil {
				return err
			}
			if err := mpi.PostIsend(&rs, world, []float64{2}, peer, 2); err != nil {
				return err
			}
		} else {
			if err := mpi.PostIrecvInto(&rs, world, got, peer, 2); err != nil {
				return err
			}
			if err := mpi.PostIrecvInto(&rs, world, []float64{0}, peer, 1); err != nil {
				return err
			}
			if st := rs.Status(0); st.Source != mpi.AnySource {
				return check(world, false, "Status before WaitAll: %+v, want the empty status", st)
			}
		}
		err := rs.WaitAll()
		if me == 0 {
			if err != nil {
				return err
			}
		} else {
			if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "request 1") {
				return check(world, false, "WaitAll with a mismatched message: %v, want ErrType for request 1", err)
			}
			if got[0] != 2 {
				return check(world, false, "the matching message: got %v, want 2", got[0])
			}
		}
		if st := rs.Status(-1); st.Source != mpi.AnySource {
			return check(world, false, "Status(-1): %+v, want the empty status", st)
		}
		// Completed: WaitAll and TestAll give the same result again.
		if again := rs.WaitAll(); (again == nil) != (err == nil) || (me == 1 && !errors.Is(again, mpi.ErrType)) {
			return check(world, false, "WaitAll again: %v, first %v", again, err)
		}
		if ok, again := rs.TestAll(); !ok || (again == nil) != (err == nil) {
			return check(world, false, "TestAll again: %v %v, first %v", ok, again, err)
		}
		// A post that fails still empties a completed set.
		if err := mpi.PostIsend(&rs, world, 1, 9, 0); !errors.Is(err, mpi.ErrRank) {
			return check(world, false, "PostIsend to rank 9 of 2: %v, want ErrRank", err)
		}
		if err := check(world, rs.Len() == 0, "Len %d after a failed post on a completed set, want 0", rs.Len()); err != nil {
			return err
		}
		// The set goes on working.
		if err := mpi.PostIsend(&rs, world, []float64{float64(me)}, peer, 3); err != nil {
			return err
		}
		if err := mpi.PostIrecvInto(&rs, world, got, peer, 3); err != nil {
			return err
		}
		if err := rs.WaitAll(); err != nil {
			return err
		}
		return check(world, got[0] == float64(peer) && rs.Len() == 2, "after the error: got %v, Len %d", got[0], rs.Len())
	})
}

// TestRequestsSetTestAll: TestAll reports false while a receive waits for
// its message, and true with its status once it arrived.
func TestRequestsSetTestAll(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		peer := 1 - world.Rank()
		if world.Rank() == 1 {
			if _, err := world.Recv(nil, 0, mpi.Byte, peer, 9); err != nil { // go-ahead
				return err
			}
			return mpi.Send(world, []int64{42}, peer, 1)
		}
		var rs mpi.Requests
		got := []int64{0}
		if err := mpi.PostIrecvInto(&rs, world, got, peer, 1); err != nil {
			return err
		}
		if ok, err := rs.TestAll(); ok || err != nil {
			return check(world, false, "TestAll before the message was sent: %v, %v", ok, err)
		}
		if err := world.Send(nil, 0, mpi.Byte, peer, 9); err != nil {
			return err
		}
		for {
			ok, err := rs.TestAll()
			if err != nil {
				return err
			}
			if ok {
				break
			}
		}
		st := rs.Status(0)
		return check(world, got[0] == 42 && st.Source == peer && st.Tag == 1, "got %v, status %+v", got, st)
	})
}

// TestRequestsSetAllocatesNothing: once a set has its slots, a window of
// sends and receives posted in it allocates nothing per message, typed or
// low-level, where Isend and IrecvInto allocate the Request the caller
// holds (TestNonblockingBytesPerMessage).
func TestRequestsSetAllocatesNothing(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts (not meaningful under the race detector)")
	}
	const win = 64
	out, rawOut := []float64{1}, make([]byte, 8)
	in, rawIn := make([][]float64, win), make([][]byte, win)
	for i := range in {
		in[i], rawIn[i] = []float64{0}, make([]byte, 8)
	}
	tests := []struct {
		name       string
		send, recv func(rs *mpi.Requests, w *mpi.Comm, i int) error
	}{
		{"typed",
			func(rs *mpi.Requests, w *mpi.Comm, i int) error { return mpi.PostIsend(rs, w, out, 1, 1) },
			func(rs *mpi.Requests, w *mpi.Comm, i int) error { return mpi.PostIrecvInto(rs, w, in[i], 0, 1) }},
		{"low-level",
			func(rs *mpi.Requests, w *mpi.Comm, i int) error { return w.PostIsend(rs, rawOut, 8, mpi.Byte, 1, 1) },
			func(rs *mpi.Requests, w *mpi.Comm, i int) error { return w.PostIrecv(rs, rawIn[i], 8, mpi.Byte, 0, 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var send, recv mpi.Requests
			// The receives are posted before the messages leave (the
			// go-ahead is a blocking send, which allocates nothing), so
			// that the count does not depend on the unexpected queue's
			// buffers.
			goAhead := make([]byte, 1)
			body := func(w *mpi.Comm) error {
				if _, err := w.Recv(goAhead, 1, mpi.Byte, 1, 2); err != nil {
					return err
				}
				for i := range win {
					if err := tt.send(&send, w, i); err != nil {
						return err
					}
				}
				return send.WaitAll()
			}
			peer := func(w *mpi.Comm) error {
				for i := range win {
					if err := tt.recv(&recv, w, i); err != nil {
						return err
					}
				}
				if err := w.Send(goAhead, 1, mpi.Byte, 0, 2); err != nil {
					return err
				}
				return recv.WaitAll()
			}
			// Both ranks count: goroutine ranks share the process's
			// statistics.
			if b := bytesPerMessage(t, body, peer) / win; b > 4 {
				t.Errorf("%.1f bytes allocated per message in a set, want 0", b)
			}
		})
	}
}

// TestRequestsSetLowLevel: the low-level posts (Comm.PostIsend,
// Comm.PostIrecv) share a set with typed ones, with a contiguous and a
// strided datatype, and report counts in the datatype's elements.
func TestRequestsSetLowLevel(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		me, peer := world.Rank(), 1-world.Rank()
		every2, err := committed(mpi.NewVector(3, 1, 2, mpi.Int32)) // elements 0, 2, 4
		if err != nil {
			return err
		}
		var rs mpi.Requests
		for round := range 3 {
			raw := []byte{byte(me), byte(round), 7, 8}
			rawIn := make([]byte, 4)
			strided := make([]byte, 4*5)
			for i := range 5 {
				binary.LittleEndian.PutUint32(strided[4*i:], uint32(10*me+i))
			}
			stridedIn := make([]byte, 4*5)
			typedIn := []int32{0}
			if err := world.PostIrecv(&rs, rawIn, 4, mpi.Byte, peer, 1); err != nil {
				return err
			}
			if err := world.PostIrecv(&rs, stridedIn, 1, every2, peer, 2); err != nil {
				return err
			}
			if err := mpi.PostIrecvInto(&rs, world, typedIn, peer, 3); err != nil {
				return err
			}
			if err := world.PostIsend(&rs, raw, 4, mpi.Byte, peer, 1); err != nil {
				return err
			}
			if err := world.PostIsend(&rs, strided, 1, every2, peer, 2); err != nil {
				return err
			}
			if err := mpi.PostIsend(&rs, world, []int32{int32(round)}, peer, 3); err != nil {
				return err
			}
			if err := rs.WaitAll(); err != nil {
				return err
			}
			if err := check(world, fmt.Sprint(rawIn) == fmt.Sprint([]byte{byte(peer), byte(round), 7, 8}), "round %d: raw got %v", round, rawIn); err != nil {
				return err
			}
			for i := range 5 {
				want := uint32(0)
				if i%2 == 0 {
					want = uint32(10*peer + i)
				}
				if got := binary.LittleEndian.Uint32(stridedIn[4*i:]); got != want {
					return check(world, false, "round %d: strided element %d is %d, want %d", round, i, got, want)
				}
			}
			if err := check(world, typedIn[0] == int32(round), "round %d: typed got %d", round, typedIn[0]); err != nil {
				return err
			}
			if st := rs.Status(1); st.CountOf(every2) != 1 || st.CountOf(mpi.Int32) != 3 || st.Tag != 2 {
				return check(world, false, "round %d: strided status: count %d of the vector, %d of Int32, tag %d", round, st.CountOf(every2), st.CountOf(mpi.Int32), st.Tag)
			}
		}
		return nil
	})
}

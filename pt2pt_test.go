package mpi_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// Conformance tests for point-to-point communication, modelled on the
// MPICH test suite's test/mpi/pt2pt directory.

type point struct {
	X, Y float64
	ID   int32
	Flag bool
}

type record struct {
	Name  string
	Tags  []string
	Score map[string]int
	Next  *record
}

// sendrecv1: values of many types round-trip unchanged.
func TestSendRecvTypes(t *testing.T) {
	big := make([]float64, 300_000)
	for i := range big {
		big[i] = float64(i) * 0.5
	}
	values := []any{
		42, int8(-3), uint64(1 << 60), 3.25, float32(1.5), complex(1, 2), true,
		[4]int16{1, -2, 3, -4},
		point{1, 2, 3, true},
		[]point{{1, 2, 3, false}, {4, 5, 6, true}},
		[]float64{}, []float64{1}, big,
		"", "hello, world", strings.Repeat("x", 100_000),
		[]string{"a", "", "ccc"},
		map[string]int{"one": 1, "two": 2},
		record{Name: "r", Tags: []string{"t"}, Score: map[string]int{"a": 1}, Next: &record{Name: "next"}},
	}
	matrix(t, 2, func(world *mpi.Comm) error {
		for i, v := range values {
			if err := roundTrip(world, i, v); err != nil {
				return err
			}
		}
		return nil
	})
}

func roundTrip(world *mpi.Comm, tag int, v any) error {
	switch x := v.(type) {
	case int:
		return rt(world, tag, x)
	case int8:
		return rt(world, tag, x)
	case uint64:
		return rt(world, tag, x)
	case float64:
		return rt(world, tag, x)
	case float32:
		return rt(world, tag, x)
	case complex128:
		return rt(world, tag, x)
	case bool:
		return rt(world, tag, x)
	case [4]int16:
		return rt(world, tag, x)
	case point:
		return rt(world, tag, x)
	case []point:
		return rt(world, tag, x)
	case []float64:
		return rt(world, tag, x)
	case string:
		return rt(world, tag, x)
	case []string:
		return rt(world, tag, x)
	case map[string]int:
		return rt(world, tag, x)
	case record:
		return rt(world, tag, x)
	}
	return fmt.Errorf("no case for %T", v)
}

func rt[T any](world *mpi.Comm, tag int, v T) error {
	if world.Rank() == 0 {
		if err := mpi.Send(world, v, 1, tag); err != nil {
			return err
		}
		back, _, err := mpi.Recv[T](world, 1, tag)
		if err != nil {
			return err
		}
		if !equal(back, v) {
			return fmt.Errorf("%T: sent %v, got back %v", v, short(v), short(back))
		}
		return nil
	}
	got, st, err := mpi.Recv[T](world, 0, tag)
	if err != nil {
		return err
	}
	if st.Source != 0 || st.Tag != tag {
		return fmt.Errorf("%T: status %+v", v, st)
	}
	return mpi.Send(world, got, 0, tag)
}

func equal(a, b any) bool {
	// Empty and nil slices and maps are the same message.
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() == reflect.Slice && va.Len() == 0 && vb.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

// sendself, isendself: a rank sends to itself below and above the eager limit.
func TestSendSelf(t *testing.T) {
	matrix(t, 1, func(world *mpi.Comm) error {
		for _, n := range []int{0, 1, 100, 20_000, 1 << 20} {
			buf := pattern(n, 7)
			r, err := mpi.Isend(world, buf, 0, n%1000)
			if err != nil {
				return err
			}
			got, st, err := mpi.Recv[[]byte](world, 0, n%1000)
			if err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
			if !bytes.Equal(got, buf) || st.Bytes() != n {
				return fmt.Errorf("self send of %d bytes: got %d bytes", n, len(got))
			}
			// Receive posted first, then a blocking send.
			p, err := mpi.Irecv[[]byte](world, 0, 5)
			if err != nil {
				return err
			}
			if err := mpi.Send(world, buf, 0, 5); err != nil {
				return err
			}
			got, _, err = p.Wait()
			if err != nil || !bytes.Equal(got, buf) {
				return fmt.Errorf("self irecv of %d bytes: %v", n, err)
			}
		}
		return nil
	})
}

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed)
	}
	return b
}

// anyall: AnySource and AnyTag receives report the real source and tag.
func TestAnySourceAnyTag(t *testing.T) {
	matrix(t, 5, func(world *mpi.Comm) error {
		if world.Rank() != 0 {
			return mpi.Send(world, world.Rank()*10, 0, world.Rank()+100)
		}
		seen := map[int]bool{}
		for i := 1; i < world.Size(); i++ {
			v, st, err := mpi.Recv[int](world, mpi.AnySource, mpi.AnyTag)
			if err != nil {
				return err
			}
			if v != st.Source*10 || st.Tag != st.Source+100 || seen[st.Source] {
				return fmt.Errorf("got %d with status %+v", v, st)
			}
			seen[st.Source] = true
		}
		return nil
	})
}

// Messages from one sender on one communicator are received in the order
// they were sent, whatever their sizes (eager and rendezvous mixed).
func TestNonOvertaking(t *testing.T) {
	const n = 300
	sizes := []int{8, 30_000, 0, 100, 70_000, 16}
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			var reqs []mpi.Waiter
			for i := 0; i < n; i++ {
				buf := make([]int64, sizes[i%len(sizes)]/8+1)
				buf[0] = int64(i)
				r, err := mpi.Isend(world, buf, 1, 3)
				if err != nil {
					return err
				}
				reqs = append(reqs, r)
			}
			return mpi.WaitAll(reqs...)
		}
		for i := 0; i < n; i++ {
			tag := 3
			if i%2 == 0 {
				tag = mpi.AnyTag
			}
			v, _, err := mpi.Recv[[]int64](world, 0, tag)
			if err != nil {
				return err
			}
			if v[0] != int64(i) || len(v) != sizes[i%len(sizes)]/8+1 {
				return fmt.Errorf("message %d arrived as %d (len %d)", i, v[0], len(v))
			}
		}
		return nil
	})
}

// Receives may pick messages out of order by tag.
func TestTagSelection(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			var reqs []mpi.Waiter
			for tag := 1; tag <= 5; tag++ {
				r, err := mpi.Isend(world, pattern(tag*10_000, tag), 1, tag)
				if err != nil {
					return err
				}
				reqs = append(reqs, r)
			}
			return mpi.WaitAll(reqs...)
		}
		for tag := 5; tag >= 1; tag-- {
			v, st, err := mpi.Recv[[]byte](world, 0, tag)
			if err != nil {
				return err
			}
			if st.Tag != tag || !bytes.Equal(v, pattern(tag*10_000, tag)) {
				return fmt.Errorf("tag %d: got tag %d, %d bytes", tag, st.Tag, len(v))
			}
		}
		return nil
	})
}

// probe-unexp: Probe reports the size, then Recv gets the message.
func TestProbe(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			for i, n := range []int{0, 5, 50_000} {
				if err := mpi.Send(world, make([]int32, n), 1, i); err != nil {
					return err
				}
			}
			return mpi.Barrier(world)
		}
		for i, n := range []int{0, 5, 50_000} {
			st, err := mpi.Probe(world, mpi.AnySource, i)
			if err != nil {
				return err
			}
			if st.Source != 0 || st.Tag != i || st.Bytes() != 4*n {
				return fmt.Errorf("probe %d: %+v bytes %d", i, st, st.Bytes())
			}
			buf := make([]int32, st.Bytes()/4)
			st, err = mpi.RecvInto(world, buf, st.Source, st.Tag)
			if err != nil {
				return err
			}
			if st.Count() != n {
				return fmt.Errorf("count %d, want %d", st.Count(), n)
			}
		}
		ok, _, err := world.Iprobe(mpi.AnySource, mpi.AnyTag)
		if err != nil || ok {
			return fmt.Errorf("Iprobe found a message that is not there (%v)", err)
		}
		return mpi.Barrier(world)
	})
}

// mprobe: goroutines of one rank share the incoming stream safely with
// Mprobe/Mrecv; every message is received exactly once.
func TestMprobeConcurrent(t *testing.T) {
	const perSender, workers = 200, 4
	matrix(t, 3, func(world *mpi.Comm) error {
		if world.Rank() != 0 {
			for i := 0; i < perSender; i++ {
				v := make([]byte, (i*97)%3000+1)
				v[0] = byte(i)
				if err := mpi.Send(world, v, 0, 1); err != nil {
					return err
				}
			}
			return nil
		}
		var mu sync.Mutex
		seen := map[[2]int]bool{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		total := perSender * (world.Size() - 1)
		count := 0
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					if count == total {
						mu.Unlock()
						return
					}
					count++
					mu.Unlock()
					m, st, err := mpi.Mprobe(world, mpi.AnySource, 1)
					if err != nil {
						errs <- err
						return
					}
					v, st2, err := mpi.Mrecv[[]byte](m)
					if err != nil {
						errs <- err
						return
					}
					if len(v) != st.Bytes() || st2.Source != st.Source {
						errs <- fmt.Errorf("mrecv got %d bytes from %d, probe said %d from %d", len(v), st2.Source, st.Bytes(), st.Source)
						return
					}
					mu.Lock()
					key := [2]int{st.Source, len(v)*256 + int(v[0])}
					if seen[key] {
						errs <- fmt.Errorf("message %v received twice", key)
					}
					seen[key] = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			return err
		}
		return check(world, len(seen) == total, "received %d distinct messages, want %d", len(seen), total)
	})
}

// truncmsg: a message longer than the buffer fills it, fails with
// ErrTruncate, writes nothing beyond, and leaves the engine consistent.
func TestTruncate(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		for _, n := range []int{100, 100_000} {
			if world.Rank() == 0 {
				if err := mpi.Send(world, pattern(n, 1), 1, 9); err != nil {
					return err
				}
				if err := mpi.Send(world, pattern(10, 2), 1, 9); err != nil {
					return err
				}
				continue
			}
			backing := bytes.Repeat([]byte{0xEE}, 80)
			buf := backing[:60]
			st, err := mpi.RecvInto(world, buf, 0, 9)
			if !errors.Is(err, mpi.ErrTruncate) {
				return fmt.Errorf("%d bytes into 60: err %v, want ErrTruncate", n, err)
			}
			if !strings.Contains(err.Error(), "tag 9") || !strings.Contains(err.Error(), "rank 1") {
				return fmt.Errorf("error message does not say where: %v", err)
			}
			if !bytes.Equal(buf, pattern(n, 1)[:60]) || st.Bytes() != 60 {
				return fmt.Errorf("truncated receive holds the wrong bytes (count %d)", st.Bytes())
			}
			if !bytes.Equal(backing[60:], bytes.Repeat([]byte{0xEE}, 20)) {
				return fmt.Errorf("receive wrote past the end of the buffer")
			}
			got, _, err := mpi.Recv[[]byte](world, 0, 9)
			if err != nil || !bytes.Equal(got, pattern(10, 2)) {
				return fmt.Errorf("next message after truncation: %v", err)
			}
		}
		return nil
	})
}

// A typed receive of a message sent as another type fails with ErrType.
func TestTypeMismatch(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			if err := mpi.Send(world, 3.5, 1, 1); err != nil {
				return err
			}
			if err := mpi.Send(world, "text", 1, 2); err != nil {
				return err
			}
			if err := mpi.Send(world, []int32{1, 2, 3}, 1, 3); err != nil {
				return err
			}
			return mpi.Send(world, map[string]int{"a": 1}, 1, 4)
		}
		if _, _, err := mpi.Recv[int64](world, 0, 1); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("float64 as int64: %v", err)
		}
		if _, _, err := mpi.Recv[int](world, 0, 2); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("string as int: %v", err)
		}
		if _, _, err := mpi.Recv[[]float32](world, 0, 3); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("[]int32 as []float32: %v", err)
		}
		if _, _, err := mpi.Recv[map[string]string](world, 0, 4); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("map[string]int as map[string]string: %v", err)
		}
		return nil
	})
}

// Raw bytes (low-level, untyped) and predefined datatypes interoperate with
// the typed layer.
func TestLowLevelInterop(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			v := []float64{1.5, 2.5, 3.5}
			if err := world.Send(mpi.AsBytes(v), 3, mpi.Float64, 1, 1); err != nil {
				return err
			}
			return mpi.Send(world, []float64{4, 5}, 1, 2)
		}
		got, st, err := mpi.Recv[[]float64](world, 0, 1)
		if err != nil || !reflect.DeepEqual(got, []float64{1.5, 2.5, 3.5}) || st.Count() != 3 {
			return fmt.Errorf("typed receive of low-level send: %v %v", got, err)
		}
		buf := make([]float64, 4)
		st, err = world.Recv(mpi.AsBytes(buf), 4, mpi.Float64, 0, 2)
		if err != nil || st.CountOf(mpi.Float64) != 2 || buf[1] != 5 {
			return fmt.Errorf("low-level receive of typed send: %v %v", buf, err)
		}
		return nil
	})
}

// ProcNull: sends and receives complete at once and move nothing.
func TestProcNull(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if err := mpi.Send(world, 1, mpi.ProcNull, 0); err != nil {
			return err
		}
		v, st, err := mpi.Recv[int](world, mpi.ProcNull, 5)
		if err != nil || v != 0 || st.Source != mpi.ProcNull || st.Tag != mpi.AnyTag || st.Count() != 0 {
			return fmt.Errorf("Recv from ProcNull: %v %+v %v", v, st, err)
		}
		r, err := world.Isend(nil, 0, mpi.Byte, mpi.ProcNull, 0)
		if err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		p, err := mpi.Irecv[[]int](world, mpi.ProcNull, 0)
		if err != nil {
			return err
		}
		if _, st, err := p.Wait(); err != nil || st.Source != mpi.ProcNull {
			return fmt.Errorf("Irecv from ProcNull: %+v %v", st, err)
		}
		st, err = world.Sendrecv(nil, 0, mpi.Byte, mpi.ProcNull, 0, nil, 0, mpi.Byte, mpi.ProcNull, 0)
		return check(world, err == nil && st.Source == mpi.ProcNull, "Sendrecv with ProcNull: %+v %v", st, err)
	})
}

// rcancel: a receive that has not matched can be cancelled.
func TestCancelRecv(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			p, err := mpi.Irecv[int](world, 0, 77)
			if err != nil {
				return err
			}
			if err := p.Request().Cancel(); err != nil {
				return err
			}
			_, st, err := p.Wait()
			if err != nil || !st.Cancelled() {
				return fmt.Errorf("cancelled receive: %+v %v", st, err)
			}
		}
		// The message sent afterwards goes to the next receive, not the cancelled one.
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if world.Rank() == 0 {
			return mpi.Send(world, 5, 1, 77)
		}
		v, _, err := mpi.Recv[int](world, 0, 77)
		return check(world, err == nil && v == 5, "after cancel: %v %v", v, err)
	})
}

// scancel: a send whose receiver has not matched it can be cancelled, and
// the receiver never sees it.
func TestCancelSend(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			// Synchronous (any size) and large standard sends wait for the peer.
			r1, err := world.Issend(pattern(10, 1), 10, mpi.Byte, 1, 5)
			if err != nil {
				return err
			}
			r2, err := world.Isend(pattern(100_000, 1), 100_000, mpi.Byte, 1, 6)
			if err != nil {
				return err
			}
			for _, r := range []*mpi.Request{r1, r2} {
				if err := r.Cancel(); err != nil {
					return err
				}
				st, err := r.Wait()
				if err != nil || !st.Cancelled() {
					return fmt.Errorf("cancelled send: %+v %v", st, err)
				}
			}
		}
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if world.Rank() == 1 {
			ok, _, err := world.Iprobe(0, mpi.AnyTag)
			return check(world, err == nil && !ok, "a cancelled message arrived")
		}
		return nil
	})
}

// A synchronous send does not complete before the receive matches.
func TestSsendWaitsForMatch(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			r, err := mpi.Issend(world, 42, 1, 1)
			if err != nil {
				return err
			}
			done, _, err := r.Test()
			if err != nil || done {
				return fmt.Errorf("Issend completed before the receiver matched it")
			}
			if err := mpi.Send(world, 0, 1, 2); err != nil { // go ahead
				return err
			}
			_, err = r.Wait()
			return err
		}
		if _, _, err := mpi.Recv[int](world, 0, 2); err != nil {
			return err
		}
		v, _, err := mpi.Recv[int](world, 0, 1)
		return check(world, err == nil && v == 42, "got %d, %v", v, err)
	})
}

// Persistent requests: started many times, inactive in between.
func TestPersistent(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		buf := make([]int64, 5000)
		var r *mpi.Request
		var err error
		if world.Rank() == 0 {
			r, err = world.SendInit(mpi.AsBytes(buf), len(buf), mpi.Int64, 1, 3)
		} else {
			r, err = world.RecvInit(mpi.AsBytes(buf), len(buf), mpi.Int64, 0, 3)
		}
		if err != nil {
			return err
		}
		if st, err := r.Wait(); err != nil || st.Source != mpi.AnySource { // inactive: returns at once
			return fmt.Errorf("Wait on inactive request: %+v %v", st, err)
		}
		for it := 0; it < 20; it++ {
			if world.Rank() == 0 {
				for i := range buf {
					buf[i] = int64(it*10000 + i)
				}
			}
			if err := mpi.StartAll(r); err != nil {
				return err
			}
			if err := r.Start(); err == nil || !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("starting an active request: %v", err)
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
			if world.Rank() == 1 && (buf[0] != int64(it*10000) || buf[4999] != int64(it*10000+4999)) {
				return fmt.Errorf("iteration %d: got %d", it, buf[0])
			}
		}
		return r.Free()
	})
}

// bsend1-5: buffered sends complete locally from the attached buffer.
func TestBsend(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		// Messages larger than the eager limit stay in the attached buffer
		// until the receiver takes them, so the buffer can fill up.
		const n, size = 20, 100_000
		if world.Rank() == 0 {
			if err := mpi.Bsend(world, 1, 1, 0); !errors.Is(err, mpi.ErrBuffer) {
				return fmt.Errorf("Bsend without a buffer: %v", err)
			}
			if err := world.BufferAttach(make([]byte, n*(size+mpi.BsendOverhead))); err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				if err := world.Bsend(pattern(size, i), size, mpi.Byte, 1, i); err != nil {
					return err
				}
			}
			if err := world.Bsend(pattern(size, 0), size, mpi.Byte, 1, 0); !errors.Is(err, mpi.ErrBuffer) {
				return fmt.Errorf("Bsend into a full buffer: %v", err)
			}
			if err := mpi.Send(world, 0, 1, 99); err != nil { // go ahead
				return err
			}
			if _, err := world.BufferDetach(); err != nil { // waits for all 20
				return err
			}
			return nil
		}
		if _, _, err := mpi.Recv[int](world, 0, 99); err != nil {
			return err
		}
		for i := n - 1; i >= 0; i-- {
			v, _, err := mpi.Recv[[]byte](world, 0, i)
			if err != nil || !bytes.Equal(v, pattern(size, i)) {
				return fmt.Errorf("bsend message %d: %v", i, err)
			}
		}
		return nil
	})
}

// waitany-null, waitsome: WaitAny and WaitSome over many receives.
func TestWaitAnySome(t *testing.T) {
	const n = 50
	matrix(t, 3, func(world *mpi.Comm) error {
		if world.Rank() != 0 {
			for i := 0; i < n; i++ {
				if err := mpi.Send(world, []int{world.Rank(), i}, 0, i); err != nil {
					return err
				}
			}
			return nil
		}
		bufs := make([][]int, 2*n)
		reqs := make([]mpi.Waiter, 2*n)
		for i := range reqs {
			bufs[i] = make([]int, 2)
			var err error
			if reqs[i], err = mpi.IrecvInto(world, bufs[i], 1+i%2, i/2); err != nil {
				return err
			}
		}
		got := 0
		for got < n {
			idx, st, err := mpi.WaitAny(reqs...)
			if err != nil {
				return err
			}
			if idx == mpi.Undefined || bufs[idx][0] != st.Source || bufs[idx][1] != st.Tag {
				return fmt.Errorf("WaitAny: index %d status %+v", idx, st)
			}
			got++
		}
		for got < 2*n {
			idx, _, err := mpi.WaitSome(reqs...)
			if err != nil {
				return err
			}
			got += len(idx)
		}
		if idx, _, err := mpi.WaitAny(reqs...); idx != mpi.Undefined || err != nil {
			return fmt.Errorf("WaitAny with no active request: %d %v", idx, err)
		}
		idx, ok, _, err := mpi.TestAny(nil)
		return check(world, idx == mpi.Undefined && ok && err == nil, "TestAny(nil)")
	})
}

// sendrecv2, sendrecv-replace: exchange round a ring.
func TestSendrecvReplace(t *testing.T) {
	matrix(t, 4, func(world *mpi.Comm) error {
		me, n := world.Rank(), world.Size()
		buf := make([]int32, 10_000)
		for i := range buf {
			buf[i] = int32(me)
		}
		st, err := world.SendrecvReplace(mpi.AsBytes(buf), len(buf), mpi.Int32, (me+1)%n, 1, (me+n-1)%n, 1)
		if err != nil {
			return err
		}
		want := int32((me + n - 1) % n)
		if buf[0] != want || buf[len(buf)-1] != want || st.Source != int(want) {
			return fmt.Errorf("got %d from %d, want %d", buf[0], st.Source, want)
		}
		v, _, err := mpi.Sendrecv[string, string](world, fmt.Sprint("from ", me), (me+1)%n, 2, (me+n-1)%n, 2)
		return check(world, err == nil && v == fmt.Sprint("from ", want), "typed Sendrecv got %q %v", v, err)
	})
}

// Many outstanding requests at once (sendflood).
func TestManyOutstanding(t *testing.T) {
	const n = 2000
	matrix(t, 2, func(world *mpi.Comm) error {
		peer := 1 - world.Rank()
		var reqs []mpi.Waiter
		recvs := make([]*mpi.Pending[int], n)
		for i := 0; i < n; i++ {
			p, err := mpi.Irecv[int](world, peer, i)
			if err != nil {
				return err
			}
			recvs[i] = p
			r, err := mpi.Isend(world, i, peer, n-1-i)
			if err != nil {
				return err
			}
			reqs = append(reqs, r, p)
		}
		if err := mpi.WaitAll(reqs...); err != nil {
			return err
		}
		for i, p := range recvs {
			v, _, err := p.Wait()
			if err != nil || v != n-1-i {
				return fmt.Errorf("receive %d got %d (%v)", i, v, err)
			}
		}
		return nil
	})
}

// Argument errors classify with errors.Is and say where they happened.
func TestArgumentErrors(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"dest too big", mpi.Send(world, 1, 2, 0), mpi.ErrRank},
			{"dest negative", mpi.Send(world, 1, -5, 0), mpi.ErrRank},
			{"source too big", func() error { _, _, err := mpi.Recv[int](world, 7, 0); return err }(), mpi.ErrRank},
			{"negative tag", mpi.Send(world, 1, 0, -1), mpi.ErrTag},
			{"huge tag", mpi.Send(world, 1, 0, mpi.TagUB+1), mpi.ErrTag},
			{"AnyTag on send", mpi.Send(world, 1, 0, mpi.AnyTag), mpi.ErrTag},
			{"nil comm", mpi.Send[int](nil, 1, 0, 0), mpi.ErrComm},
			{"negative count", world.Send(nil, -1, mpi.Byte, 0, 0), mpi.ErrCount},
			{"short buffer", world.Send(make([]byte, 7), 1, mpi.Float64, 0, 0), mpi.ErrBuffer},
			{"nil datatype", world.Send(nil, 0, nil, 0, 0), mpi.ErrType},
			{"bad root", func() error { _, err := mpi.Bcast(world, 1, 2); return err }(), mpi.ErrRoot},
			{"zero op", func() error { _, err := mpi.Allreduce(world, 1, mpi.Op[int]{}); return err }(), mpi.ErrOp},
			{"unencodable", mpi.Send(world, make(chan int), 0, 0), mpi.ErrType},
			{"scatter count", func() error { _, err := mpi.Scatter(world, []int{1}, world.Rank()); return err }(), mpi.ErrCount},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				return fmt.Errorf("%s: got %v, want %v", tt.name, tt.err, tt.want)
			}
			if !strings.Contains(tt.err.Error(), "mpi: ") {
				return fmt.Errorf("%s: message %q", tt.name, tt.err)
			}
		}
		if err := mpi.Send(world, 1, 5, 3); !strings.Contains(err.Error(), "dest 5") || !strings.Contains(err.Error(), "tag 3") || !strings.Contains(err.Error(), "WORLD") {
			return fmt.Errorf("message lacks context: %v", err)
		}
		r, err := mpi.Isend(world, 1, world.Rank(), 0)
		if err != nil {
			return err
		}
		if _, _, err := mpi.Recv[int](world, world.Rank(), 0); err != nil {
			return err
		}
		r.Wait()
		if err := r.Free(); err != nil {
			return err
		}
		if _, err := r.Wait(); !errors.Is(err, mpi.ErrRequest) {
			return fmt.Errorf("Wait on freed request: %v", err)
		}
		m, _, err := mpi.Mprobe(world, mpi.ProcNull, 0)
		if err != nil {
			return err
		}
		mpi.Mrecv[int](m)
		if _, _, err := mpi.Mrecv[int](m); !errors.Is(err, mpi.ErrRequest) {
			return fmt.Errorf("Mrecv twice: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Large messages far past the rendezvous threshold.
func TestLargeMessage(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		const n = 8 << 20
		if world.Rank() == 0 {
			return mpi.Send(world, pattern(n, 3), 1, 0)
		}
		buf := make([]byte, n)
		st, err := mpi.RecvInto(world, buf, 0, 0)
		return check(world, err == nil && st.Bytes() == n && bytes.Equal(buf, pattern(n, 3)), "8 MiB message: %v", err)
	})
}

// TestSendrecvSendFails: when Sendrecv's send fails (here: a destination
// out of range), the call returns the send's error and its receive, posted
// first, is withdrawn: the message the peer sends later is not written
// into Sendrecv's buffer, and a receive posted after it gets it.
func TestSendrecvSendFails(t *testing.T) {
	calls := []struct {
		name string
		f    func(c *mpi.Comm, in []float64) error
	}{
		{"Comm.Sendrecv", func(c *mpi.Comm, in []float64) error {
			_, err := c.Sendrecv(mpi.AsBytes([]float64{1}), 1, mpi.Float64, 7, 0, mpi.AsBytes(in), 1, mpi.Float64, 1, 5)
			return err
		}},
		{"SendrecvInto", func(c *mpi.Comm, in []float64) error {
			_, err := mpi.SendrecvInto(c, []float64{1}, 7, 0, in, 1, 5)
			return err
		}},
		{"Sendrecv", func(c *mpi.Comm, in []float64) error {
			_, _, err := mpi.Sendrecv[float64](c, 1.0, 7, 0, 1, 5)
			return err
		}},
	}
	for _, call := range calls {
		t.Run(call.name, func(t *testing.T) {
			matrix(t, 2, func(world *mpi.Comm) error {
				if world.Rank() == 1 {
					if err := mpi.Barrier(world); err != nil {
						return err
					}
					return mpi.Send(world, []float64{42}, 0, 5)
				}
				in := []float64{-1}
				if err := call.f(world, in); !errors.Is(err, mpi.ErrRank) {
					return fmt.Errorf("send to rank 7 of 2: %v, want ErrRank", err)
				}
				if err := mpi.Barrier(world); err != nil {
					return err
				}
				got := []float64{0}
				if _, err := mpi.RecvInto(world, got, 1, 5); err != nil {
					return err
				}
				if got[0] != 42 || in[0] != -1 {
					return fmt.Errorf("the receive after got %v and Sendrecv's buffer holds %v, want 42 and -1", got[0], in[0])
				}
				return nil
			})
		})
	}
}

// A float64 and a []float64 are different types for the typed layer, as
// the docs say, even when the slice has one element: each received as the
// other fails with ErrType naming both. The low-level layer matches by MPI
// type signature, where one Float64 is a one-element slice, so it still
// interoperates with both forms, both ways; and RecvInto, a receive into a
// buffer, takes either.
func TestScalarIsNotSlice(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		one := []float64{1.5}
		if world.Rank() == 0 {
			sends := []func(tag int) error{
				func(tag int) error { return mpi.Send(world, one, 1, tag) },                         // 0: as float64
				func(tag int) error { return mpi.Send(world, 2.5, 1, tag) },                         // 1: as []float64
				func(tag int) error { return mpi.Send(world, one, 1, tag) },                         // 2: low-level
				func(tag int) error { return mpi.Send(world, 2.5, 1, tag) },                         // 3: low-level
				func(tag int) error { return world.Send(mpi.AsBytes(one), 1, mpi.Float64, 1, tag) }, // 4: as float64
				func(tag int) error { return world.Send(mpi.AsBytes(one), 1, mpi.Float64, 1, tag) }, // 5: as []float64
				func(tag int) error { return mpi.Send(world, 2.5, 1, tag) },                         // 6: RecvInto
				func(tag int) error { return mpi.Send(world, one, 1, tag) },                         // 7: as float64, Irecv
				func(tag int) error { return mpi.Send(world, 2.5, 1, tag) },                         // 8: as []float64, Mrecv
				func(tag int) error { return mpi.Send(world, []float64{3.5, 4.5}, 1, tag) },         // 9: as []float64
			}
			for tag, send := range sends {
				if err := send(tag); err != nil {
					return err
				}
			}
			return nil
		}
		mismatch := func(err error, sent, recv string) error {
			if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "sent as "+sent+", received as "+recv) {
				return fmt.Errorf("%s received as %s: %v, want ErrType naming both", sent, recv, err)
			}
			return nil
		}
		_, _, err := mpi.Recv[float64](world, 0, 0)
		if err := mismatch(err, "[]float64", "float64"); err != nil {
			return err
		}
		_, _, err = mpi.Recv[[]float64](world, 0, 1)
		if err := mismatch(err, "float64", "[]float64"); err != nil {
			return err
		}
		buf := make([]float64, 2)
		if st, err := world.Recv(mpi.AsBytes(buf), 2, mpi.Float64, 0, 2); err != nil || st.CountOf(mpi.Float64) != 1 || buf[0] != 1.5 {
			return fmt.Errorf("low-level receive of a typed []float64{1.5}: %v %v", buf, err)
		}
		if st, err := world.Recv(mpi.AsBytes(buf), 2, mpi.Float64, 0, 3); err != nil || st.CountOf(mpi.Float64) != 1 || buf[0] != 2.5 {
			return fmt.Errorf("low-level receive of a typed float64: %v %v", buf, err)
		}
		if v, _, err := mpi.Recv[float64](world, 0, 4); err != nil || v != 1.5 {
			return fmt.Errorf("typed float64 receive of a low-level Float64: %v %v", v, err)
		}
		if v, _, err := mpi.Recv[[]float64](world, 0, 5); err != nil || !reflect.DeepEqual(v, one) {
			return fmt.Errorf("typed []float64 receive of a low-level Float64: %v %v", v, err)
		}
		if st, err := mpi.RecvInto(world, buf, 0, 6); err != nil || st.Count() != 1 || buf[0] != 2.5 {
			return fmt.Errorf("RecvInto of a typed float64: %v %v", buf, err)
		}
		p, err := mpi.Irecv[float64](world, 0, 7)
		if err != nil {
			return err
		}
		_, _, err = p.Wait()
		if err := mismatch(err, "[]float64", "float64"); err != nil {
			return err
		}
		m, _, err := mpi.Mprobe(world, 0, 8)
		if err != nil {
			return err
		}
		_, _, err = mpi.Mrecv[[]float64](m)
		if err := mismatch(err, "float64", "[]float64"); err != nil {
			return err
		}
		// After the refusals, matching forms still arrive.
		if v, _, err := mpi.Recv[[]float64](world, 0, 9); err != nil || !reflect.DeepEqual(v, []float64{3.5, 4.5}) {
			return fmt.Errorf("[]float64: %v %v", v, err)
		}
		return nil
	})
}

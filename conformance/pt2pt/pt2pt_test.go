package pt2pt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Messages between one pair of ranks are not overtaken (MPI-3.1 3.5),
// whatever their sizes and protocols, and wildcards match in order.
func TestNonOvertaking(t *testing.T) {
	sizes := []int{0, 1, 64, 4096, 70000, 1 << 18}
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			for i, n := range sizes {
				b := make([]byte, n)
				for j := range b {
					b[j] = byte(i + j)
				}
				if err := c.Send(b, n, mpi.Byte, 1, 5); err != nil {
					return err
				}
			}
			return nil
		}
		for i, n := range sizes {
			b := make([]byte, 1<<18)
			st, err := c.Recv(b, len(b), mpi.Byte, mpi.AnySource, mpi.AnyTag)
			if err != nil {
				return err
			}
			if st.Source != 0 || st.Tag != 5 || st.Bytes() != n {
				return fmt.Errorf("message %d: status %+v bytes %d, want %d", i, st, st.Bytes(), n)
			}
			for j := 0; j < n; j++ {
				if b[j] != byte(i+j) {
					return fmt.Errorf("message %d: byte %d is %d", i, j, b[j])
				}
			}
		}
		return nil
	})
}

// Every send mode, blocking and not, reaches a matching receive; tags
// select messages.
func TestSendModes(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			b := mpi.AsBytes([]int32{1, 2, 3})
			if err := c.BufferAttach(make([]byte, 1<<16)); err != nil {
				return err
			}
			defer c.BufferDetach()
			if err := c.Bsend(b, 3, mpi.Int32, 1, 2); err != nil {
				return err
			}
			r2, err := c.Isend(b, 3, mpi.Int32, 1, 4)
			if err != nil {
				return err
			}
			r1, err := c.Issend(b, 3, mpi.Int32, 1, 3)
			if err != nil {
				return err
			}
			// The receiver takes tag 1 last: a synchronous send
			// returns only once it has.
			if err := c.Ssend(b, 3, mpi.Int32, 1, 1); err != nil {
				return err
			}
			if err := mpi.WaitAll(r1, r2); err != nil {
				return err
			}
			// A ready send once the receiver says its receive is posted.
			if _, _, err := mpi.Recv[int](c, 1, 99); err != nil {
				return err
			}
			return c.Rsend(b, 3, mpi.Int32, 1, 5)
		}
		r5, err := c.Irecv(make([]byte, 12), 3, mpi.Int32, 0, 5)
		if err != nil {
			return err
		}
		for _, tag := range []int{4, 3, 2, 1} { // out of order by tag
			got := make([]int32, 3)
			st, err := c.Recv(mpi.AsBytes(got), 3, mpi.Int32, 0, tag)
			if err != nil {
				return err
			}
			if st.Tag != tag || st.Count() != 3 || got[2] != 3 {
				return fmt.Errorf("tag %d: %v %+v", tag, got, st)
			}
		}
		if err := mpi.Send(c, 1, 0, 99); err != nil {
			return err
		}
		_, err = r5.Wait()
		return err
	})
}

// Probe, Iprobe, Mprobe and Mrecv report the next message's envelope
// and size; a matched message is no longer visible to Probe.
func TestProbe(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			// Non-blocking: the receiver probes the second message
			// before it receives the first (with rendezvous, a
			// blocking send would wait for that receive).
			r1, err := mpi.Isend(c, []float64{1, 2, 3, 4}, 1, 7)
			if err != nil {
				return err
			}
			r2, err := mpi.Isend(c, "tail", 1, 8)
			if err != nil {
				return err
			}
			return mpi.WaitAll(r1, r2)
		}
		st, err := c.Probe(0, 7)
		if err != nil || st.Tag != 7 || st.Bytes() != 32 {
			return fmt.Errorf("probe: %+v %d %v", st, st.Bytes(), err)
		}
		m, st, err := mpi.Mprobe(c, 0, mpi.AnyTag)
		if err != nil || st.Tag != 7 {
			return fmt.Errorf("mprobe: %+v %v", st, err)
		}
		// The message is matched: the next probe sees the second one.
		st2, err := c.Probe(0, mpi.AnyTag)
		if err != nil || st2.Tag != 8 {
			return fmt.Errorf("probe after mprobe: %+v %v", st2, err)
		}
		v, _, err := mpi.Mrecv[[]float64](m)
		if err != nil || len(v) != 4 || v[3] != 4 {
			return fmt.Errorf("mrecv: %v %v", v, err)
		}
		s, _, err := mpi.Recv[string](c, 0, 8)
		if err != nil || s != "tail" {
			return fmt.Errorf("recv: %q %v", s, err)
		}
		ok, _, err := c.Iprobe(0, mpi.AnyTag)
		if err != nil || ok {
			return fmt.Errorf("iprobe with nothing pending: %v %v", ok, err)
		}
		return nil
	})
}

// A message longer than the receive buffer fills it and fails with
// ErrTruncate; a receive of another type fails with ErrType naming both.
func TestTruncateAndType(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			if err := c.Send(make([]byte, 100), 100, mpi.Byte, 1, 1); err != nil {
				return err
			}
			return mpi.Send(c, []float64{1.5}, 1, 2)
		}
		_, err := c.Recv(make([]byte, 10), 10, mpi.Byte, 0, 1)
		if !errors.Is(err, mpi.ErrTruncate) {
			return fmt.Errorf("short buffer: %v, want ErrTruncate", err)
		}
		_, _, err = mpi.Recv[[]int32](c, 0, 2)
		if !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("int32 for float64: %v, want ErrType", err)
		}
		return nil
	})
}

// Regression (issue 14): Wait and Test on an inactive persistent request
// give the empty status: source AnySource, tag AnyTag, count 0, not the
// previous operation's.
func TestInactivePersistentEmptyStatus(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		buf := make([]byte, 8)
		var r *mpi.Request
		var err error
		if c.Rank() == 0 {
			r, err = c.SendInit(buf, 8, mpi.Byte, peer, 3)
		} else {
			r, err = c.RecvInit(buf, 8, mpi.Byte, peer, 3)
		}
		if err != nil {
			return err
		}
		want := mpi.EmptyStatus()
		check := func(when string) error {
			st, err := r.Wait()
			if err != nil || st.Source != mpi.AnySource || st.Tag != mpi.AnyTag || st.Count() != 0 || st.Cancelled() {
				return fmt.Errorf("wait %s: %+v count %d, %v; want %+v", when, st, st.Count(), err, want)
			}
			done, st, err := r.Test()
			if err != nil || !done || st.Source != mpi.AnySource || st.Tag != mpi.AnyTag || st.Count() != 0 {
				return fmt.Errorf("test %s: %v %+v, %v", when, done, st, err)
			}
			return nil
		}
		if err := check("before Start"); err != nil {
			return err
		}
		for range 2 {
			if err := r.Start(); err != nil {
				return err
			}
			st, err := r.Wait()
			if err != nil {
				return err
			}
			if c.Rank() == 1 && (st.Source != 0 || st.Tag != 3 || st.Count() != 8) {
				return fmt.Errorf("active receive: %+v", st)
			}
			if err := check("after completion"); err != nil {
				return err
			}
		}
		return r.Free()
	})
}

// Sendrecv exchanges around a ring without deadlock; ProcNull is a
// no-op partner whose receive completes at once with its status.
func TestSendrecvRingAndProcNull(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		r, n := c.Rank(), c.Size()
		got, st, err := mpi.Sendrecv[int](c, r, (r+1)%n, 0, (r+n-1)%n, 0)
		if err != nil || got != (r+n-1)%n || st.Source != (r+n-1)%n {
			return fmt.Errorf("ring: %d %+v %v", got, st, err)
		}
		st, err = c.Recv(make([]byte, 4), 4, mpi.Byte, mpi.ProcNull, 0)
		if err != nil || st.Source != mpi.ProcNull || st.Tag != mpi.AnyTag || st.Count() != 0 {
			return fmt.Errorf("ProcNull receive: %+v %v", st, err)
		}
		return c.Send(nil, 0, mpi.Byte, mpi.ProcNull, 0)
	})
}

// Cancel of a receive that nothing matches succeeds and reports it.
func TestCancelRecv(t *testing.T) {
	conformance.Run(t, 1, func(c *mpi.Comm) error {
		r, err := c.Irecv(make([]byte, 4), 4, mpi.Byte, 0, 42)
		if err != nil {
			return err
		}
		if err := r.Cancel(); err != nil {
			return err
		}
		st, err := r.Wait()
		if err != nil || !st.Cancelled() {
			return fmt.Errorf("cancelled receive: %+v %v", st, err)
		}
		return nil
	})
}

// Large messages arrive whole by whichever road the pair of ranks has
// (a single copy, or CTS and Data), into a buffer of the message's size,
// into a shorter one (the first bytes, then ErrTruncate), and into a
// derived datatype (which no single copy serves); the pair still works
// after each.
func TestLargeReceives(t *testing.T) {
	const whole, short, spread = 1<<20 + 3, 300 << 10, 256 << 10
	fill := func(n, seed int) []byte {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(seed + j*7 + j>>9)
		}
		return b
	}
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			for tag, n := range []int{whole, 1 << 20, spread, whole} {
				if err := c.Send(fill(n, tag), n, mpi.Byte, 1, tag); err != nil {
					return fmt.Errorf("send %d: %w", tag, err)
				}
			}
			return nil
		}
		b := make([]byte, whole)
		if _, err := c.Recv(b, whole, mpi.Byte, 0, 0); err != nil {
			return err
		}
		if string(b) != string(fill(whole, 0)) {
			return errors.New("a message of 1 MiB and 3 bytes arrived altered")
		}
		b = make([]byte, short)
		if _, err := c.Recv(b, short, mpi.Byte, 0, 1); !errors.Is(err, mpi.ErrTruncate) {
			return fmt.Errorf("1 MiB into %d bytes: %v, want ErrTruncate", short, err)
		}
		if string(b) != string(fill(1<<20, 1)[:short]) {
			return errors.New("the first bytes of a truncated message arrived altered")
		}
		vec, err := mpi.NewVector(spread/4, 4, 8, mpi.Byte)
		if err != nil {
			return err
		}
		if err := vec.Commit(); err != nil {
			return err
		}
		b = make([]byte, 2*spread)
		if _, err := c.Recv(b, 1, vec, 0, 2); err != nil {
			return fmt.Errorf("into a vector: %w", err)
		}
		want := fill(spread, 2)
		for k := 0; k < spread; k++ {
			if b[(k/4)*8+k%4] != want[k] {
				return fmt.Errorf("byte %d of a message received into a vector arrived altered", k)
			}
		}
		b = make([]byte, whole)
		if _, err := c.Recv(b, whole, mpi.Byte, 0, 3); err != nil {
			return err
		}
		if string(b) != string(fill(whole, 3)) {
			return errors.New("the last message arrived altered")
		}
		return nil
	})
}

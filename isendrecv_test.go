package mpi_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// TestIsendrecv: the non-blocking exchanges of MPI-4.0 around a ring over
// every transport: Isendrecv, IsendrecvReplace (small and rendezvous
// sizes) and the typed IsendrecvInto, with the receive's status; a bad
// destination is an error at the call; ProcNull partners complete.
func TestIsendrecv(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		p, r := c.Size(), c.Rank()
		next, prev := (r+1)%p, (r+p-1)%p
		for _, n := range []int{4, 40000} {
			out, in := make([]int32, n), make([]int32, n)
			for i := range out {
				out[i] = int32(100*r + i)
			}
			req, err := c.Isendrecv(mpi.AsBytes(out), n, mpi.Int32, next, 1, mpi.AsBytes(in), n, mpi.Int32, prev, 1)
			if err != nil {
				return err
			}
			st, err := req.Wait()
			if err != nil || st.Source != prev || st.Tag != 1 || st.Count() != n || in[n-1] != int32(100*prev+n-1) {
				return fmt.Errorf("Isendrecv %d: %v, status %+v, last %d", n, err, st, in[n-1])
			}
			req, err = c.IsendrecvReplace(mpi.AsBytes(out), n, mpi.Int32, next, 2, prev, 2)
			if err != nil {
				return err
			}
			st, err = req.Wait()
			if err != nil || st.Source != prev || out[0] != int32(100*prev) {
				return fmt.Errorf("IsendrecvReplace %d: %v, %+v, first %d", n, err, st, out[0])
			}
		}
		buf := make([]float64, 2)
		req, err := mpi.IsendrecvInto(c, []float64{float64(r), 1}, next, 3, buf, prev, 3)
		if err != nil {
			return err
		}
		if st, err := req.Wait(); err != nil || buf[0] != float64(prev) || st.Count() != 2 {
			return fmt.Errorf("IsendrecvInto: %v %v %+v", err, buf, st)
		}
		if _, err := c.Isendrecv(nil, 0, mpi.Byte, p, 0, nil, 0, mpi.Byte, prev, 0); !errors.Is(err, mpi.ErrRank) {
			return fmt.Errorf("Isendrecv to rank %d: %v, want ErrRank", p, err)
		}
		req, err = c.IsendrecvReplace(nil, 0, mpi.Byte, mpi.ProcNull, 0, mpi.ProcNull, 0)
		if err != nil {
			return err
		}
		if st, err := req.Wait(); err != nil || st.Source != mpi.ProcNull {
			return fmt.Errorf("IsendrecvReplace with ProcNull: %v %+v", err, st)
		}
		return nil
	})
}

// TestRequestList: a []*mpi.Request goes straight to the Wait and Test
// family as a RequestList, nil entries being null requests.
func TestRequestList(t *testing.T) {
	err := mpi.Run(2, func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		bufs := make([][]int32, 4)
		reqs := make([]*mpi.Request, 5) // reqs[4] stays nil
		for i := range 4 {
			bufs[i] = []int32{0}
			var err error
			if i%2 == c.Rank() {
				reqs[i], err = c.Isend(mpi.AsBytes([]int32{int32(i)}), 1, mpi.Int32, peer, i)
			} else {
				reqs[i], err = c.Irecv(mpi.AsBytes(bufs[i]), 1, mpi.Int32, peer, i)
			}
			if err != nil {
				return err
			}
		}
		l := mpi.RequestList(reqs)
		i, _, err := l.WaitAny()
		if err != nil || i < 0 || i > 3 {
			return fmt.Errorf("WaitAny: %d %v", i, err)
		}
		sts, err := l.WaitAllStatus()
		if err != nil || len(sts) != 5 || sts[4] != mpi.EmptyStatus() {
			return fmt.Errorf("WaitAllStatus: %v %v", sts, err)
		}
		for i := range 4 {
			if i%2 != c.Rank() && bufs[i][0] != int32(i) {
				return fmt.Errorf("message %d: %d", i, bufs[i][0])
			}
		}
		if ok, _, err := l.TestAll(); !ok || err != nil {
			return fmt.Errorf("TestAll after WaitAll: %v %v", ok, err)
		}
		if idx, _, err := l.WaitSome(); idx != nil || err != nil {
			return fmt.Errorf("WaitSome with none active: %v %v", idx, err)
		}
		return l.WaitAll()
	})
	if err != nil {
		t.Fatal(err)
	}
}

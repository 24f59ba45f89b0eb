package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// wantErr checks that err is an *mpi.Error of class class naming call op,
// the world rank rank (mpi.NoRank: none) and, when not empty, the
// communicator comm and the peer.
func wantErr(err error, class error, op string, rank int, comm, peer string) error {
	var e *mpi.Error
	if !errors.As(err, &e) || !errors.Is(err, class) {
		return fmt.Errorf("got %v (%T), want an *mpi.Error of class %v", err, err, class)
	}
	if e.Op != op || e.Rank != rank || comm != "" && e.Comm != comm || peer != "" && e.Peer != peer {
		return fmt.Errorf("got %q (op %q, rank %d, comm %q, peer %q), want op %q, rank %d, comm %q, peer %q", err, e.Op, e.Rank, e.Comm, e.Peer, op, rank, comm, peer)
	}
	msg := err.Error()
	if rank == mpi.NoRank && (strings.Contains(msg, "on rank") || !strings.Contains(msg, "communicator")) {
		return fmt.Errorf("%q names a rank or no communicator", msg)
	}
	if rank >= 0 && !strings.Contains(msg, fmt.Sprintf("on rank %d", rank)) {
		return fmt.Errorf("%q does not name rank %d", msg, rank)
	}
	return nil
}

// TestErrorsNameRank: errors of requests (Wait, Free, WaitAll, TestSome),
// of Mrecv, and of calls without a communicator are *mpi.Errors that name
// the caller's real rank, or say there is none, instead of "rank 0".
func TestErrorsNameRank(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		r := c.Rank()
		peer := 1 - r
		// A truncated receive, waited for with Wait and with WaitAll.
		for _, how := range []string{"Wait", "WaitAll", "WaitAllStatus", "TestSome"} {
			sreq, err := c.Isend(make([]byte, 16), 16, mpi.Byte, peer, 5)
			if err != nil {
				return err
			}
			req, err := c.Irecv(make([]byte, 8), 8, mpi.Byte, peer, 5)
			if err != nil {
				return err
			}
			op := "Irecv"
			switch how {
			case "Wait":
				_, err = req.Wait()
			case "WaitAll":
				op = how
				err = mpi.WaitAll(nil, req)
			case "WaitAllStatus":
				op = "WaitAll"
				_, err = mpi.WaitAllStatus(nil, req)
			case "TestSome":
				op = how
				for err == nil {
					var idx []int
					if idx, _, err = mpi.TestSome(nil, req); len(idx) > 0 {
						break
					}
				}
			}
			if err := wantErr(err, mpi.ErrTruncate, op, r, "WORLD", fmt.Sprintf("source %d", peer)); err != nil {
				return fmt.Errorf("rank %d: truncated receive, %s: %v", r, how, err)
			}
			if how == "WaitAll" && !strings.Contains(err.Error(), "request 1") {
				return fmt.Errorf("rank %d: WaitAll error %q does not name the request's index", r, err)
			}
			if _, err := sreq.Wait(); err != nil {
				return err
			}
		}
		// Freeing a request twice, and waiting for a freed one.
		rreq, err := c.Irecv(make([]byte, 1), 1, mpi.Byte, peer, 6)
		if err != nil {
			return err
		}
		req, err := c.Isend([]byte{1}, 1, mpi.Byte, peer, 6)
		if err != nil {
			return err
		}
		if err := mpi.WaitAll(req, rreq); err != nil {
			return err
		}
		if err := req.Free(); err != nil {
			return err
		}
		if err := wantErr(req.Free(), mpi.ErrRequest, "Free", r, "WORLD", fmt.Sprintf("dest %d", peer)); err != nil {
			return fmt.Errorf("rank %d: Free twice: %v", r, err)
		}
		if _, err := req.Wait(); wantErr(err, mpi.ErrRequest, "Wait", r, "WORLD", "") != nil {
			return fmt.Errorf("rank %d: Wait after Free: %v", r, wantErr(err, mpi.ErrRequest, "Wait", r, "WORLD", ""))
		}
		// Receiving a matched message twice.
		sreq, err := mpi.Isend(c, 42, peer, 7)
		if err != nil {
			return err
		}
		m, _, err := c.Mprobe(peer, 7)
		if err != nil {
			return err
		}
		if v, _, err := mpi.Mrecv[int](m); err != nil || v != 42 {
			return fmt.Errorf("rank %d: Mrecv: %v, %v", r, v, err)
		}
		if _, err := sreq.Wait(); err != nil {
			return err
		}
		if _, _, err := mpi.Mrecv[int](m); wantErr(err, mpi.ErrRequest, "Mrecv", r, "WORLD", fmt.Sprintf("source %d", peer)) != nil {
			return fmt.Errorf("rank %d: Mrecv twice: %v", r, wantErr(err, mpi.ErrRequest, "Mrecv", r, "WORLD", fmt.Sprintf("source %d", peer)))
		}
		// Calls without a communicator name no rank.
		if err := wantErr(mpi.ReduceLocal(make([]byte, 8), make([]byte, 4), 1, mpi.Int64, mpi.OpSum), mpi.ErrBuffer, "ReduceLocal", mpi.NoRank, "", ""); err != nil {
			return fmt.Errorf("rank %d: ReduceLocal: %v", r, err)
		}
		dt, err := mpi.NewContiguous(2, mpi.Int32)
		if err != nil {
			return err
		}
		if err := dt.Free(); err != nil {
			return err
		}
		if err := wantErr(dt.Free(), mpi.ErrType, "TypeFree", mpi.NoRank, "", ""); err != nil {
			return fmt.Errorf("rank %d: TypeFree twice: %v", r, err)
		}
		var nilComm *mpi.Comm
		if err := wantErr(nilComm.Send([]byte{1}, 1, mpi.Byte, 0, 0), mpi.ErrComm, "Send", mpi.NoRank, "", ""); err != nil {
			return fmt.Errorf("rank %d: Send on a nil communicator: %v", r, err)
		}
		if err := wantErr(mpi.Send(nilComm, 1, 0, 0), mpi.ErrComm, "Send", mpi.NoRank, "", ""); err != nil {
			return fmt.Errorf("rank %d: typed Send on a nil communicator: %v", r, err)
		}
		return mpi.Barrier(c)
	})
}

// TestNullRequests: nil requests (and typed nils in WaitAll) are MPI's
// MPI_REQUEST_NULL in every Wait and Test call: complete at once, with an
// empty status and no error.
func TestNullRequests(t *testing.T) {
	matrix(t, 2, func(c *mpi.Comm) error {
		var nr *mpi.Request
		var np *mpi.Pending[int]
		var nf *mpi.Future[int]
		if st, err := nr.Wait(); err != nil || st.Source != mpi.AnySource || st.Tag != mpi.AnyTag {
			return fmt.Errorf("Wait(nil): %+v, %v", st, err)
		}
		if ok, _, err := nr.Test(); !ok || err != nil {
			return fmt.Errorf("Test(nil): %v, %v", ok, err)
		}
		if err := mpi.WaitAll(nil, nil); err != nil {
			return fmt.Errorf("WaitAll(nil, nil): %v", err)
		}
		if err := mpi.WaitAll(nr, np, nf); err != nil {
			return fmt.Errorf("WaitAll(typed nils): %v", err)
		}
		if _, _, err := np.Wait(); err != nil {
			return fmt.Errorf("(*Pending)(nil).Wait: %v", err)
		}
		if _, err := nf.Wait(); err != nil {
			return fmt.Errorf("(*Future)(nil).Wait: %v", err)
		}
		reqs := []mpi.Waiter{(*mpi.Request)(nil), nil} // a typed nil and a nil Waiter
		if _, err := mpi.WaitAllStatus(reqs...); err != nil {
			return fmt.Errorf("WaitAllStatus: %v", err)
		}
		if ok, _, err := mpi.TestAll(reqs...); !ok || err != nil {
			return fmt.Errorf("TestAll: %v, %v", ok, err)
		}
		if i, _, err := mpi.WaitAny(reqs...); i != mpi.Undefined || err != nil {
			return fmt.Errorf("WaitAny: %v, %v", i, err)
		}
		if i, ok, _, err := mpi.TestAny(reqs...); i != mpi.Undefined || !ok || err != nil {
			return fmt.Errorf("TestAny: %v, %v, %v", i, ok, err)
		}
		if idx, _, err := mpi.WaitSome(reqs...); len(idx) != 0 || err != nil {
			return fmt.Errorf("WaitSome: %v, %v", idx, err)
		}
		if idx, _, err := mpi.TestSome(reqs...); len(idx) != 0 || err != nil {
			return fmt.Errorf("TestSome: %v, %v", idx, err)
		}
		// Null requests mixed with real ones.
		peer := 1 - c.Rank()
		p, err := mpi.Irecv[int](c, peer, 3)
		if err != nil {
			return err
		}
		s, err := mpi.Isend(c, c.Rank(), peer, 3)
		if err != nil {
			return err
		}
		if err := mpi.WaitAll(nil, p, nr, s, np); err != nil {
			return fmt.Errorf("WaitAll with nils: %v", err)
		}
		v, _, err := p.Wait()
		return check(c, err == nil && v == peer, "received %v, %v", v, err)
	})
}

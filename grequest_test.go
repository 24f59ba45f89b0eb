package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// gLog records the calls of a generalized request's functions, in order.
type gLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *gLog) add(s string) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (l *gLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.calls, " ")
}

// newG starts a generalized request whose query reports source 3, tag 4
// and 5 Int64 elements (and the cancellation, if cancel was called before
// the operation completed), logging every call.
func newG(c *mpi.Comm, l *gLog) (*mpi.Request, error) {
	var mu sync.Mutex
	cancelled := false
	return c.GrequestStart(
		func(st *mpi.Status) error {
			l.add("query")
			st.Source, st.Tag = 3, 4
			mu.Lock()
			st.SetCancelled(cancelled)
			mu.Unlock()
			return st.SetElements(mpi.Int64, 5)
		},
		func() error { l.add("free"); return nil },
		func(complete bool) error {
			l.add(fmt.Sprintf("cancel(%v)", complete))
			if !complete {
				mu.Lock()
				cancelled = true
				mu.Unlock()
			}
			return nil
		})
}

// isG checks the status newG's query reports.
func isG(st mpi.Status, err error, cancelled bool) error {
	if err != nil {
		return err
	}
	if st.Source != 3 || st.Tag != 4 || st.Count() != 5 || st.Bytes() != 40 || st.GetCount(mpi.Int64) != 5 || st.Cancelled() != cancelled {
		return fmt.Errorf("status %+v (count %d, cancelled %v)", st, st.Count(), st.Cancelled())
	}
	return nil
}

func isG0(st mpi.Status, err error) error { return isG(st, err, false) }

// completeLater completes r from another goroutine after a moment.
func completeLater(r *mpi.Request) {
	go func() {
		time.Sleep(2 * time.Millisecond)
		r.GrequestComplete()
	}()
}

// Generalized requests (MPI_Grequest_start/complete) and
// MPI_Request_get_status, with every completion call.
func TestGrequest(t *testing.T) {
	cases := []struct {
		name string
		f    func(c *mpi.Comm) error
	}{
		{"wait", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			completeLater(r)
			if err := isG0(r.Wait()); err != nil {
				return err
			}
			if got := l.String(); got != "query free" {
				return fmt.Errorf("calls %q, want query then free", got)
			}
			if err := isG0(r.Wait()); err != nil { // the same result again, no more calls
				return err
			}
			if err := r.Free(); err != nil {
				return err
			}
			if got := l.String(); got != "query free" {
				return fmt.Errorf("calls %q after a second Wait and Free", got)
			}
			return nil
		}},
		{"test", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			if ok, _, err := r.Test(); ok || err != nil {
				return fmt.Errorf("Test before GrequestComplete: %v %v", ok, err)
			}
			if err := r.GrequestComplete(); err != nil {
				return err
			}
			ok, st, err := r.Test()
			if !ok {
				return fmt.Errorf("Test after GrequestComplete: not done")
			}
			if err := isG(st, err, false); err != nil {
				return err
			}
			if got := l.String(); got != "query free" {
				return fmt.Errorf("calls %q", got)
			}
			return nil
		}},
		{"get-status", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			if ok, _, err := r.GetStatus(); ok || err != nil {
				return fmt.Errorf("GetStatus before GrequestComplete: %v %v", ok, err)
			}
			r.GrequestComplete()
			for range 2 {
				ok, st, err := r.GetStatus()
				if !ok {
					return fmt.Errorf("GetStatus after GrequestComplete: not done")
				}
				if err := isG(st, err, false); err != nil {
					return err
				}
			}
			if got := l.String(); got != "query" {
				return fmt.Errorf("GetStatus made calls %q, want only query", got)
			}
			// Still active: WaitAny returns it.
			idx, st, err := mpi.WaitAny(nil, r)
			if idx != 1 {
				return fmt.Errorf("WaitAny after GetStatus: index %d", idx)
			}
			if err := isG(st, err, false); err != nil {
				return err
			}
			if got := l.String(); got != "query free" {
				return fmt.Errorf("calls %q", got)
			}
			return nil
		}},
		{"cancel-before-complete", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			if err := r.Cancel(); err != nil {
				return err
			}
			completeLater(r)
			st, err := r.Wait()
			if err := isG(st, err, true); err != nil {
				return err
			}
			if got := l.String(); got != "cancel(false) query free" {
				return fmt.Errorf("calls %q", got)
			}
			return nil
		}},
		{"cancel-after-complete", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			r.GrequestComplete()
			if err := r.Cancel(); err != nil {
				return err
			}
			if err := isG0(r.Wait()); err != nil {
				return err
			}
			if err := r.Cancel(); err != nil { // inactive: nothing called
				return err
			}
			if got := l.String(); got != "cancel(true) query free" {
				return fmt.Errorf("calls %q", got)
			}
			return nil
		}},
		{"free-before-complete", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			if err := r.Free(); err != nil {
				return err
			}
			if got := l.String(); got != "" {
				return fmt.Errorf("Free before completion called %q", got)
			}
			if err := r.GrequestComplete(); err != nil {
				return err
			}
			if got := l.String(); got != "free" {
				return fmt.Errorf("calls %q, want free from GrequestComplete", got)
			}
			if _, err := r.Wait(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("Wait on a freed request: %v", err)
			}
			return nil
		}},
		{"free-after-complete", func(c *mpi.Comm) error {
			var l gLog
			r, err := newG(c, &l)
			if err != nil {
				return err
			}
			r.GrequestComplete()
			if err := r.Free(); err != nil {
				return err
			}
			if got := l.String(); got != "free" {
				return fmt.Errorf("calls %q, want free from Free", got)
			}
			return nil
		}},
		{"with-other-requests", func(c *mpi.Comm) error {
			// Generalized requests beside a receive in WaitAll, WaitSome,
			// TestAll and WaitAny.
			peer := 1 - c.Rank()
			var l1, l2 gLog
			g1, err := newG(c, &l1)
			if err != nil {
				return err
			}
			g2, err := newG(c, &l2)
			if err != nil {
				return err
			}
			rr, err := mpi.IrecvInto(c, make([]int, 1), peer, 1)
			if err != nil {
				return err
			}
			if err := mpi.Send(c, 7, peer, 1); err != nil {
				return err
			}
			reqs := []mpi.Waiter{g1, rr, g2}
			if ok, _, err := mpi.TestAll(reqs...); ok || err != nil {
				return fmt.Errorf("TestAll with incomplete generalized requests: %v %v", ok, err)
			}
			completeLater(g2)
			idx, st, err := mpi.WaitAny(g1, g2)
			if idx != 1 {
				return fmt.Errorf("WaitAny: index %d, want 1", idx)
			}
			if err := isG(st, err, false); err != nil {
				return err
			}
			completeLater(g1)
			got := map[int]bool{}
			for len(got) < 2 {
				idx, sts, err := mpi.WaitSome(reqs...)
				if err != nil {
					return err
				}
				if len(idx) == 0 {
					return fmt.Errorf("WaitSome returned nothing with %d requests left", 2-len(got))
				}
				for i, k := range idx {
					got[k] = true
					if k == 0 {
						if err := isG(sts[i], nil, false); err != nil {
							return err
						}
					}
				}
			}
			if !got[0] || !got[1] || got[2] {
				return fmt.Errorf("WaitSome returned %v", got)
			}
			ok, sts, err := mpi.TestAll(reqs...)
			if !ok || err != nil || len(sts) != 3 {
				return fmt.Errorf("TestAll over completed requests: %v %v", ok, err)
			}
			if l1.String() != "query free" || l2.String() != "query free" {
				return fmt.Errorf("calls %q, %q", l1.String(), l2.String())
			}
			return nil
		}},
		{"waitall", func(c *mpi.Comm) error {
			var ls [4]gLog
			var reqs []mpi.Waiter
			for i := range ls {
				r, err := newG(c, &ls[i])
				if err != nil {
					return err
				}
				completeLater(r)
				reqs = append(reqs, r)
			}
			if err := mpi.WaitAll(reqs...); err != nil {
				return err
			}
			for i := range ls {
				if got := ls[i].String(); got != "query free" {
					return fmt.Errorf("request %d: calls %q", i, got)
				}
			}
			return nil
		}},
		{"errors", func(c *mpi.Comm) error {
			boom := errors.New("query failed")
			bad := errors.New("free failed")
			r, err := c.GrequestStart(func(*mpi.Status) error { return boom }, func() error { return bad }, nil)
			if err != nil {
				return err
			}
			if err := r.Cancel(); err != nil { // nil cancel: nothing to do
				return err
			}
			r.GrequestComplete()
			_, err = r.Wait()
			var me *mpi.Error
			if !errors.Is(err, boom) || !errors.Is(err, bad) || !errors.As(err, &me) || me.Op != "GrequestStart" {
				return fmt.Errorf("Wait: %v, want the query's and free's errors as *mpi.Error", err)
			}
			if err := r.GrequestComplete(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("second GrequestComplete: %v", err)
			}
			other, err := mpi.Isend(c, 1, mpi.ProcNull, 0)
			if err != nil {
				return err
			}
			if err := other.GrequestComplete(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("GrequestComplete on an Isend: %v", err)
			}
			var nilReq *mpi.Request
			if err := nilReq.GrequestComplete(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("GrequestComplete on nil: %v", err)
			}
			if _, _, err := nilReq.GetStatus(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("GetStatus on nil: %v", err)
			}
			// All functions nil: the empty status.
			r, err = c.GrequestStart(nil, nil, nil)
			if err != nil {
				return err
			}
			r.GrequestComplete()
			st, err := r.Wait()
			return isEmpty("Wait on a generalized request without query", st, err)
		}},
		{"set-elements", func(c *mpi.Comm) error {
			var st mpi.Status
			if err := st.SetElements(nil, 1); !errors.Is(err, mpi.ErrType) {
				return fmt.Errorf("nil datatype: %v", err)
			}
			if err := st.SetElements(mpi.Int32, -1); !errors.Is(err, mpi.ErrCount) {
				return fmt.Errorf("negative count: %v", err)
			}
			pair, err := mpi.NewContiguous(2, mpi.Int32)
			if err != nil {
				return err
			}
			pair.Commit()
			if err := st.SetElements(pair, 3); !errors.Is(err, mpi.ErrCount) {
				return fmt.Errorf("3 elements of a pair: %v", err)
			}
			if err := st.SetElements(pair, 6); err != nil {
				return err
			}
			if st.GetElements(pair) != 6 || st.GetCount(pair) != 3 || st.Count() != 3 || st.Bytes() != 24 {
				return fmt.Errorf("after SetElements(pair, 6): elements %d count %d bytes %d", st.GetElements(pair), st.GetCount(pair), st.Bytes())
			}
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matrix(t, 2, func(world *mpi.Comm) error {
				if err := tc.f(world); err != nil {
					return fmt.Errorf("rank %d: %w", world.Rank(), err)
				}
				return nil
			})
		})
	}
}

// MPI_Request_get_status on point-to-point requests: it reports
// completion without completing the request.
func TestRequestGetStatus(t *testing.T) {
	cases := []struct {
		name string
		f    func(c *mpi.Comm) error
	}{
		{"irecv", func(c *mpi.Comm) error {
			peer := 1 - c.Rank()
			buf := make([]int64, 3)
			r, err := mpi.IrecvInto(c, buf, peer, 8)
			if err != nil {
				return err
			}
			if ok, _, err := r.GetStatus(); ok || err != nil {
				return fmt.Errorf("GetStatus before the message: %v %v", ok, err)
			}
			if err := mpi.Barrier(c); err != nil {
				return err
			}
			if err := mpi.Send(c, []int64{1, 2, 3}, peer, 8); err != nil {
				return err
			}
			var st mpi.Status
			for {
				ok, s, err := r.GetStatus()
				if err != nil {
					return err
				}
				if ok {
					st = s
					break
				}
			}
			if st.Source != peer || st.Tag != 8 || st.Count() != 3 {
				return fmt.Errorf("GetStatus: %+v", st)
			}
			// Not completed by GetStatus: WaitAny still returns it, with
			// the same status.
			idx, st2, err := mpi.WaitAny(r)
			if err != nil || idx != 0 || st2 != st {
				return fmt.Errorf("WaitAny after GetStatus: %d %+v %v", idx, st2, err)
			}
			if buf[2] != 3 {
				return fmt.Errorf("received %v", buf)
			}
			return nil
		}},
		{"persistent", func(c *mpi.Comm) error {
			peer := 1 - c.Rank()
			buf := []int64{0}
			r, err := c.RecvInit(mpi.AsBytes(buf), 1, mpi.Int64, peer, 9)
			if err != nil {
				return err
			}
			ok, st, err := r.GetStatus()
			if !ok {
				return fmt.Errorf("GetStatus on an inactive request: not done")
			}
			if err := isEmpty("GetStatus on an inactive request", st, err); err != nil {
				return err
			}
			if err := r.Start(); err != nil {
				return err
			}
			if err := mpi.Send(c, int64(5), peer, 9); err != nil {
				return err
			}
			for {
				ok, st, err = r.GetStatus()
				if err != nil {
					return err
				}
				if ok {
					break
				}
			}
			if st.Source != peer || st.Tag != 9 {
				return fmt.Errorf("GetStatus: %+v", st)
			}
			if err := r.Start(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("Start after GetStatus (still active): %v", err)
			}
			st2, err := r.Wait()
			if err != nil || st2 != st {
				return fmt.Errorf("Wait after GetStatus: %+v %v", st2, err)
			}
			ok, st, err = r.GetStatus()
			if !ok {
				return fmt.Errorf("GetStatus after Wait: not done")
			}
			if err := isEmpty("GetStatus after Wait", st, err); err != nil {
				return err
			}
			return r.Free()
		}},
		{"freed", func(c *mpi.Comm) error {
			r, err := mpi.Isend(c, 1, mpi.ProcNull, 0)
			if err != nil {
				return err
			}
			r.Free()
			if _, _, err := r.GetStatus(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("GetStatus on a freed request: %v", err)
			}
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matrix(t, 2, func(world *mpi.Comm) error {
				if err := tc.f(world); err != nil {
					return fmt.Errorf("rank %d: %w", world.Rank(), err)
				}
				return nil
			})
		})
	}
}

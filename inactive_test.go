package mpi_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// isEmpty checks that st is MPI's empty status (MPI-3.1 3.7.3): source
// AnySource, tag AnyTag, no bytes, not cancelled.
func isEmpty(what string, st mpi.Status, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if st.Source != mpi.AnySource || st.Tag != mpi.AnyTag || st.Bytes() != 0 || st.Count() != 0 || st.Cancelled() {
		return fmt.Errorf("%s: status %+v (count %d, cancelled %v), want the empty status", what, st, st.Count(), st.Cancelled())
	}
	return nil
}

// persistentPair makes a persistent send on rank 0 and the matching
// persistent receive on rank 1, of one int64 with tag 5.
func persistentPair(world *mpi.Comm, buf []int64) (*mpi.Request, error) {
	if world.Rank() == 0 {
		return world.SendInit(mpi.AsBytes(buf), 1, mpi.Int64, 1, 5)
	}
	return world.RecvInit(mpi.AsBytes(buf), 1, mpi.Int64, 0, 5)
}

// runOnce starts r, waits for it and checks the receive's status.
func runOnce(world *mpi.Comm, r *mpi.Request) error {
	if err := r.Start(); err != nil {
		return err
	}
	st, err := r.Wait()
	if err != nil {
		return err
	}
	if world.Rank() == 1 && (st.Source != 0 || st.Tag != 5 || st.Count() != 1) {
		return fmt.Errorf("receive status %+v", st)
	}
	return nil
}

// Wait, Test and the multiple-completion calls on inactive requests
// (persistent ones never started, or completed and not restarted): they
// return at once with the empty status, and WaitAny and friends ignore
// them (MPI-3.1 3.7.3, 3.7.5).
func TestInactiveRequests(t *testing.T) {
	cases := []struct {
		name string
		f    func(world *mpi.Comm, r *mpi.Request) error
	}{
		{"wait-never-started", func(world *mpi.Comm, r *mpi.Request) error {
			st, err := r.Wait()
			return isEmpty("Wait", st, err)
		}},
		{"test-never-started", func(world *mpi.Comm, r *mpi.Request) error {
			ok, st, err := r.Test()
			if !ok {
				return fmt.Errorf("Test on an inactive request reports not done")
			}
			return isEmpty("Test", st, err)
		}},
		{"wait-after-wait", func(world *mpi.Comm, r *mpi.Request) error {
			if err := runOnce(world, r); err != nil {
				return err
			}
			st, err := r.Wait()
			return isEmpty("second Wait", st, err)
		}},
		{"wait-after-test", func(world *mpi.Comm, r *mpi.Request) error {
			if err := r.Start(); err != nil {
				return err
			}
			if err := pollUntil("started persistent request", func() (bool, error) {
				ok, _, err := r.Test()
				return ok, err
			}); err != nil {
				return err
			}
			ok, st, err := r.Test()
			if !ok {
				return fmt.Errorf("Test after completion reports not done")
			}
			if err := isEmpty("Test after Test", st, err); err != nil {
				return err
			}
			st, err = r.Wait()
			return isEmpty("Wait after Test", st, err)
		}},
		{"restart-after-wait", func(world *mpi.Comm, r *mpi.Request) error {
			for range 3 {
				if err := runOnce(world, r); err != nil {
					return err
				}
			}
			return nil
		}},
		{"waitany-all-inactive", func(world *mpi.Comm, r *mpi.Request) error {
			if err := runOnce(world, r); err != nil {
				return err
			}
			idx, st, err := mpi.WaitAny(r, nil)
			if idx != mpi.Undefined {
				return fmt.Errorf("WaitAny over inactive requests: index %d", idx)
			}
			if err := isEmpty("WaitAny", st, err); err != nil {
				return err
			}
			idx, ok, st, err := mpi.TestAny(nil, r)
			if idx != mpi.Undefined || !ok {
				return fmt.Errorf("TestAny over inactive requests: index %d, %v", idx, ok)
			}
			return isEmpty("TestAny", st, err)
		}},
		{"waitany-skips-inactive", func(world *mpi.Comm, r *mpi.Request) error {
			// An inactive request before an active one: WaitAny returns
			// the active one, not the inactive one's stale result.
			if err := runOnce(world, r); err != nil {
				return err
			}
			peer := 1 - world.Rank()
			var act *mpi.Request
			var err error
			if world.Rank() == 0 {
				act, err = mpi.Isend(world, int64(7), peer, 6)
			} else {
				act, err = mpi.IrecvInto(world, make([]int64, 1), peer, 6)
			}
			if err != nil {
				return err
			}
			idx, st, err := mpi.WaitAny(r, act)
			if err != nil || idx != 1 {
				return fmt.Errorf("WaitAny: index %d, %v; want 1", idx, err)
			}
			if world.Rank() == 1 && (st.Source != 0 || st.Tag != 6) {
				return fmt.Errorf("WaitAny: status %+v", st)
			}
			return nil
		}},
		{"waitsome-testsome-inactive", func(world *mpi.Comm, r *mpi.Request) error {
			idx, sts, err := mpi.WaitSome(r, nil)
			if err != nil || len(idx) != 0 || len(sts) != 0 {
				return fmt.Errorf("WaitSome over inactive requests: %v %v %v", idx, sts, err)
			}
			idx, sts, err = mpi.TestSome(nil, r)
			if err != nil || len(idx) != 0 || len(sts) != 0 {
				return fmt.Errorf("TestSome over inactive requests: %v %v %v", idx, sts, err)
			}
			return nil
		}},
		{"testall-waitall-inactive", func(world *mpi.Comm, r *mpi.Request) error {
			if err := runOnce(world, r); err != nil {
				return err
			}
			ok, sts, err := mpi.TestAll(r, nil)
			if !ok || len(sts) != 2 {
				return fmt.Errorf("TestAll over inactive requests: %v %v", ok, sts)
			}
			for i, st := range sts {
				if err := isEmpty(fmt.Sprintf("TestAll status %d", i), st, err); err != nil {
					return err
				}
			}
			sts, err = mpi.WaitAllStatus(nil, r)
			for i, st := range sts {
				if err := isEmpty(fmt.Sprintf("WaitAllStatus status %d", i), st, err); err != nil {
					return err
				}
			}
			return mpi.WaitAll(r)
		}},
		{"procnull-started-is-active", func(world *mpi.Comm, r *mpi.Request) error {
			// A persistent request with ProcNull is active once started:
			// WaitAny returns it with the ProcNull status, once.
			pn, err := world.RecvInit(make([]byte, 8), 8, mpi.Byte, mpi.ProcNull, 1)
			if err != nil {
				return err
			}
			if err := pn.Start(); err != nil {
				return err
			}
			if err := pn.Start(); !errors.Is(err, mpi.ErrRequest) {
				return fmt.Errorf("starting an active ProcNull request: %v", err)
			}
			idx, st, err := mpi.WaitAny(r, pn)
			if err != nil || idx != 1 || st.Source != mpi.ProcNull || st.Tag != mpi.AnyTag {
				return fmt.Errorf("WaitAny over a started ProcNull request: %d %+v %v", idx, st, err)
			}
			idx, st, err = mpi.WaitAny(r, pn)
			if idx != mpi.Undefined {
				return fmt.Errorf("WaitAny after the ProcNull request completed: %d", idx)
			}
			return isEmpty("WaitAny", st, err)
		}},
		{"isend-procnull-waitany", func(world *mpi.Comm, r *mpi.Request) error {
			// A non-blocking send to ProcNull is complete at once but
			// active until waited for.
			pn, err := mpi.Isend(world, 1, mpi.ProcNull, 1)
			if err != nil {
				return err
			}
			idx, _, err := mpi.WaitAny(r, pn)
			if err != nil || idx != 1 {
				return fmt.Errorf("WaitAny over an Isend to ProcNull: %d %v", idx, err)
			}
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matrix(t, 2, func(world *mpi.Comm) error {
				buf := []int64{42}
				r, err := persistentPair(world, buf)
				if err != nil {
					return err
				}
				if err := tc.f(world, r); err != nil {
					return fmt.Errorf("rank %d: %w", world.Rank(), err)
				}
				return r.Free()
			})
		})
	}
}

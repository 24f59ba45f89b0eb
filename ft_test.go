package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// ftConfigs are the transports the fault-tolerance tests run over.
func ftConfigs() []transportCase {
	var l []transportCase
	for _, t := range []string{"inproc", "shm", "tcp"} {
		cfg := mpi.DefaultConfig()
		cfg.FT = true
		// Ranks recovering from a failure are not hung: a report would
		// fail the job.
		cfg.HangReport = 500 * time.Millisecond
		if t != "inproc" {
			cfg.Transport = t
		}
		l = append(l, transportCase{t, cfg})
	}
	return l
}

// errDied is what a rank that "dies" in these tests returns.
var errDied = errors.New("simulated failure")

// ftRun runs f under fault tolerance with a deadline: a test that hangs
// fails instead.
func ftRun(t *testing.T, cfg mpi.Config, n int, f func(c *mpi.Comm) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- mpi.RunConfig(n, cfg, f) }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("the job did not end within 60s")
		return nil
	}
}

// onlyDied checks that the job's error names exactly the ranks in dead,
// each with the simulated failure.
func onlyDied(t *testing.T, err error, dead ...int) {
	t.Helper()
	var names []string
	for _, r := range dead {
		names = append(names, fmt.Sprintf("rank %d: %v", r, errDied))
	}
	if len(dead) == 0 {
		if err != nil {
			t.Fatalf("job failed: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("job succeeded; want the failures of ranks %v", dead)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(dead) {
		t.Fatalf("job error has %d lines, want %d (ranks %v):\n%v", len(lines), len(dead), dead, err)
	}
	for i, l := range lines {
		if l != names[i] {
			t.Fatalf("job error line %d = %q, want %q", i, l, names[i])
		}
	}
}

func TestFTProcFailed(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			err := ftRun(t, tc.cfg, 3, func(c *mpi.Comm) error {
				switch c.Rank() {
				case 2:
					return errDied
				case 0:
					_, _, err := mpi.Recv[int](c, 2, 0)
					if !errors.Is(err, mpi.ErrProcFailed) {
						return fmt.Errorf("Recv from the dead rank: %v, want ErrProcFailed", err)
					}
					if !strings.Contains(err.Error(), "rank 2") {
						return fmt.Errorf("error does not name rank 2: %v", err)
					}
					// The survivors still talk.
					if err := mpi.Send(c, 7, 1, 1); err != nil {
						return err
					}
				case 1:
					v, _, err := mpi.Recv[int](c, 0, 1)
					if err != nil || v != 7 {
						return fmt.Errorf("Recv from a live rank: %v, %v", v, err)
					}
				}
				return nil
			})
			onlyDied(t, err, 2)
		})
	}
}

func TestFTRevokePending(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			var posted atomic.Int32
			err := ftRun(t, tc.cfg, 4, func(c *mpi.Comm) error {
				if c.Rank() == 3 {
					for posted.Load() < 3 {
						time.Sleep(time.Millisecond)
					}
					time.Sleep(20 * time.Millisecond)
					return c.Revoke()
				}
				// Each of 0..2 waits for a message nobody sends: only the
				// revocation ends it.
				req, err := mpi.Irecv[[]byte](c, (c.Rank()+1)%3, 5)
				if err != nil {
					return err
				}
				posted.Add(1)
				_, _, err = req.Wait()
				if !errors.Is(err, mpi.ErrRevoked) {
					return fmt.Errorf("pending Irecv: %v, want ErrRevoked", err)
				}
				if !c.IsRevoked() {
					return errors.New("IsRevoked is false after ErrRevoked")
				}
				// Later operations fail too, point-to-point and collective.
				if err := mpi.Send(c, 1, (c.Rank()+1)%3, 6); !errors.Is(err, mpi.ErrRevoked) {
					return fmt.Errorf("Send after revoke: %v, want ErrRevoked", err)
				}
				if _, err := mpi.Allreduce(c, 1, mpi.Sum[int]()); !errors.Is(err, mpi.ErrRevoked) {
					return fmt.Errorf("Allreduce after revoke: %v, want ErrRevoked", err)
				}
				return nil
			})
			onlyDied(t, err)
		})
	}
}

func TestFTShrink(t *testing.T) {
	const n = 6
	for _, tc := range ftConfigs() {
		for k := 1; k <= 3; k++ {
			t.Run(fmt.Sprintf("%s/%d-failed", tc.name, k), func(t *testing.T) {
				dead := func(r int) bool { return r%2 == 1 && r/2 < k } // 1, 3, 5
				var deadList []int
				for r := 0; r < n; r++ {
					if dead(r) {
						deadList = append(deadList, r)
					}
				}
				err := ftRun(t, tc.cfg, n, func(c *mpi.Comm) error {
					if dead(c.Rank()) {
						return errDied
					}
					// Everyone learns of the failures through a collective
					// that fails somewhere, then revokes and shrinks.
					// (Some ranks may finish it before the failure shows.)
					if _, err := mpi.Allreduce(c, 1, mpi.Sum[int]()); err != nil && !errors.Is(err, mpi.ErrProcFailed) && !errors.Is(err, mpi.ErrRevoked) {
						return fmt.Errorf("Allreduce: %v", err)
					}
					c.Revoke()
					s, err := c.Shrink()
					if err != nil {
						return fmt.Errorf("Shrink: %v", err)
					}
					if s.Size() != n-k {
						return fmt.Errorf("shrunk size %d, want %d", s.Size(), n-k)
					}
					sum, err := mpi.Allreduce(s, c.Rank(), mpi.Sum[int]())
					if err != nil {
						return fmt.Errorf("Allreduce on the shrunk communicator: %v", err)
					}
					want := 0
					for r := 0; r < n; r++ {
						if !dead(r) {
							want += r
						}
					}
					if sum != want {
						return fmt.Errorf("sum over survivors %d, want %d", sum, want)
					}
					g, err := c.GetFailed()
					if err != nil {
						return err
					}
					if g.Size() != k {
						return fmt.Errorf("GetFailed has %d ranks, want %d", g.Size(), k)
					}
					return nil
				})
				onlyDied(t, err, deadList...)
			})
		}
	}
}

func TestFTAgreeCoordinatorFails(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			err := ftRun(t, tc.cfg, 4, func(c *mpi.Comm) error {
				if c.Rank() == 0 {
					// The first coordinator: the others propose to it, then
					// it dies before it answers.
					time.Sleep(30 * time.Millisecond)
					return errDied
				}
				flag := 0b111
				if c.Rank() == 2 {
					flag = 0b101
				}
				v, err := c.Agree(flag)
				if v != 0b101 {
					return fmt.Errorf("Agree = %#b, want 0b101 (err %v)", v, err)
				}
				if !errors.Is(err, mpi.ErrProcFailed) {
					return fmt.Errorf("Agree with an unacknowledged failure: %v, want ErrProcFailed", err)
				}
				if n, err := c.AckFailed(1 << 20); err != nil || n != 1 {
					return fmt.Errorf("AckFailed = %d, %v; want 1", n, err)
				}
				v, err = c.Agree(c.Rank())
				if err != nil || v != 1&2&3 {
					return fmt.Errorf("second Agree = %d, %v; want %d", v, err, 1&2&3)
				}
				return nil
			})
			onlyDied(t, err, 0)
		})
	}
}

func TestFTAnySourcePending(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			err := ftRun(t, tc.cfg, 3, func(c *mpi.Comm) error {
				switch c.Rank() {
				case 1:
					time.Sleep(20 * time.Millisecond)
					return errDied
				case 2:
					// Sends only once rank 0 has acknowledged the failure.
					if _, _, err := mpi.Recv[int](c, 0, 9); err != nil {
						return err
					}
					return mpi.Send(c, 42, 0, 1)
				}
				req, err := mpi.Irecv[int](c, mpi.AnySource, 1)
				if err != nil {
					return err
				}
				if _, _, err := req.Wait(); !errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("pending AnySource receive: %v, want ErrProcFailedPending", err)
				}
				// Until the failure is acknowledged, new ones fail as well;
				// a blocking one with ErrProcFailed (issue 43.5): it has
				// no request left to continue, unlike the pending Irecv.
				if _, _, err := mpi.Recv[int](c, mpi.AnySource, 1); !errors.Is(err, mpi.ErrProcFailed) || errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("blocking AnySource receive before AckFailed: %v, want ErrProcFailed", err)
				}
				if _, err := c.Recv(nil, 0, mpi.Byte, mpi.AnySource, 1); !errors.Is(err, mpi.ErrProcFailed) || errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("blocking low-level AnySource receive before AckFailed: %v, want ErrProcFailed", err)
				}
				if _, _, err := mpi.Sendrecv[int](c, 0, mpi.ProcNull, 0, mpi.AnySource, 1); !errors.Is(err, mpi.ErrProcFailed) || errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("blocking AnySource Sendrecv before AckFailed: %v, want ErrProcFailed", err)
				}
				g, _ := c.GetFailed()
				if g.Size() != 1 {
					return fmt.Errorf("GetFailed has %d ranks, want 1", g.Size())
				}
				if _, err := c.AckFailed(1); err != nil {
					return err
				}
				if err := mpi.Send(c, 0, 2, 9); err != nil {
					return err
				}
				v, st, err := mpi.Recv[int](c, mpi.AnySource, 1)
				if err != nil || v != 42 || st.Source != 2 {
					return fmt.Errorf("AnySource receive after AckFailed: %v from %d, %v", v, st.Source, err)
				}
				return nil
			})
			onlyDied(t, err, 1)
		})
	}
}

func TestFTCollectiveFailure(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			var failedOps atomic.Int32
			err := ftRun(t, tc.cfg, 5, func(c *mpi.Comm) error {
				if c.Rank() == 2 {
					return errDied
				}
				// The collective cannot complete everywhere: some ranks see
				// the failure; the rest must not hang once they revoke.
				for i := 0; i < 3; i++ {
					if _, err := mpi.Bcast(c, i, 0); err != nil {
						if !errors.Is(err, mpi.ErrProcFailed) && !errors.Is(err, mpi.ErrRevoked) {
							return fmt.Errorf("Bcast: %v", err)
						}
						failedOps.Add(1)
						c.Revoke()
						break
					}
				}
				_, err := mpi.Allreduce(c, 1, mpi.Sum[int]())
				if err == nil {
					return errors.New("Allreduce with a failed member succeeded")
				}
				c.Revoke()
				s, err := c.Shrink()
				if err != nil {
					return err
				}
				sum, err := mpi.Allreduce(s, 1, mpi.Sum[int]())
				if err != nil || sum != 4 {
					return fmt.Errorf("Allreduce after Shrink = %d, %v; want 4", sum, err)
				}
				return nil
			})
			onlyDied(t, err, 2)
			if failedOps.Load() == 0 {
				t.Fatalf("no Bcast saw the failure")
			}
		})
	}
}

func TestFTOff(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.FT = false
	err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
		if err := c.Revoke(); err == nil || !strings.Contains(err.Error(), "--ft") {
			return fmt.Errorf("Revoke without fault tolerance: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Abort during an agreement ends the job: nobody waits in Agree for ever.
func TestFTAbortDuringAgree(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.FT = true
	err := ftRun(t, cfg, 3, func(c *mpi.Comm) error {
		if c.Rank() == 0 {
			time.Sleep(20 * time.Millisecond)
			mpi.Abort(c, 3)
		}
		_, err := c.Agree(1)
		if err == nil {
			return errors.New("Agree succeeded in an aborted job")
		}
		return err
	})
	if code, ok := mpi.ExitCode(err); !ok || code != 3 {
		t.Fatalf("job error %v, want Abort's code 3", err)
	}
}

// TestFTIagree runs non-blocking agreements: two in flight at once on one
// communicator (waited for in the other order), point-to-point traffic
// while they run, and a member that fails without joining them: the
// survivors get the AND of their own flags, with ErrProcFailed until they
// acknowledge the failure, and the value beside the error.
func TestFTIagree(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			err := ftRun(t, tc.cfg, 4, func(c *mpi.Comm) error {
				r := c.Rank()
				if r == 3 {
					return errDied
				}
				a, err := c.Iagree(^(1 << r)) // clears bit r
				if err != nil {
					return err
				}
				b, err := c.Iagree(0b1000 | 1<<r)
				if err != nil {
					return err
				}
				// The agreements run while the ranks talk.
				if err := mpi.Send(c, r, (r+1)%3, 7); err != nil {
					return err
				}
				if v, _, err := mpi.Recv[int](c, (r+2)%3, 7); err != nil || v != (r+2)%3 {
					return fmt.Errorf("Recv during Iagree: %v, %v", v, err)
				}
				vb, err := b.Wait()
				if !errors.Is(err, mpi.ErrProcFailed) || vb != 0b1000 {
					return fmt.Errorf("second Iagree: %#b, %v; want 0b1000 and ErrProcFailed (rank 3 failed, not acknowledged)", vb, err)
				}
				va, err := a.Wait()
				if !errors.Is(err, mpi.ErrProcFailed) || va != ^0b111 {
					return fmt.Errorf("first Iagree: %#x, %v; want %#x and ErrProcFailed", va, err, ^0b111)
				}
				if _, err := c.AckFailed(1); err != nil {
					return err
				}
				f, err := c.Iagree(1 << r)
				if err != nil {
					return err
				}
				if v, err := f.Wait(); err != nil || v != 0 {
					return fmt.Errorf("Iagree after AckFailed: %#b, %v; want 0 and no error", v, err)
				}
				return nil
			})
			onlyDied(t, err, 3)
		})
	}
}

// TestFTAnySourceStaysPending checks ULFM's rule for non-blocking
// receives from AnySource: a failure makes Wait and Test report
// ErrProcFailedPending, but the receive stays pending, and once the
// failure is acknowledged it completes with a live rank's message. Every
// form: Irecv, Comm.Irecv, IrecvInto and a started Comm.RecvInit (the
// last two kept the error as their result before stop 41, and the
// persistent one was inactive afterwards).
func TestFTAnySourceStaysPending(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			err := ftRun(t, tc.cfg, 3, func(c *mpi.Comm) error {
				switch c.Rank() {
				case 1:
					return errDied
				case 2:
					// Sends only once rank 0 has acknowledged the failure.
					if _, _, err := mpi.Recv[int](c, 0, 9); err != nil {
						return err
					}
					if err := mpi.Send(c, 42, 0, 1); err != nil {
						return err
					}
					if err := mpi.Send(c, []int64{44}, 0, 3); err != nil {
						return err
					}
					for _, b := range []byte{45, 46} {
						if err := c.Send([]byte{b}, 1, mpi.Byte, 0, 4); err != nil {
							return err
						}
					}
					return c.Send([]byte{7}, 1, mpi.Byte, 0, 2)
				}
				typed, err := mpi.Irecv[int](c, mpi.AnySource, 1)
				if err != nil {
					return err
				}
				buf := make([]byte, 1)
				raw, err := c.Irecv(buf, 1, mpi.Byte, mpi.AnySource, 2)
				if err != nil {
					return err
				}
				into := make([]int64, 1)
				intoReq, err := mpi.IrecvInto(c, into, mpi.AnySource, 3)
				if err != nil {
					return err
				}
				pbuf := make([]byte, 1)
				persistent, err := c.RecvInit(pbuf, 1, mpi.Byte, mpi.AnySource, 4)
				if err != nil {
					return err
				}
				if err := persistent.Start(); err != nil {
					return err
				}
				if _, _, err := typed.Wait(); !errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("typed Irecv: %v, want ErrProcFailedPending", err)
				}
				if _, err := intoReq.Wait(); !errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("IrecvInto: %v, want ErrProcFailedPending", err)
				}
				if _, err := persistent.Wait(); !errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("RecvInit: %v, want ErrProcFailedPending", err)
				}
				if _, err := raw.Wait(); !errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("Irecv: %v, want ErrProcFailedPending", err)
				}
				// Not acknowledged yet: still pending, and says so again.
				if done, _, err := raw.Test(); done || !errors.Is(err, mpi.ErrProcFailedPending) {
					return fmt.Errorf("Test before AckFailed: done %v, %v; want false, ErrProcFailedPending", done, err)
				}
				if _, err := c.AckFailed(1); err != nil {
					return err
				}
				if err := mpi.Send(c, 0, 2, 9); err != nil {
					return err
				}
				v, st, err := typed.Wait()
				if err != nil || v != 42 || st.Source != 2 {
					return fmt.Errorf("typed Irecv after AckFailed: %v from %d, %v; want 42 from 2", v, st.Source, err)
				}
				st, err = intoReq.Wait()
				if err != nil || into[0] != 44 || st.Source != 2 || st.Count() != 1 {
					return fmt.Errorf("IrecvInto after AckFailed: %d from %d (%d elements), %v; want 44 from 2", into[0], st.Source, st.Count(), err)
				}
				for _, want := range []byte{45, 46} {
					st, err := persistent.Wait()
					if err != nil || pbuf[0] != want || st.Source != 2 {
						return fmt.Errorf("RecvInit after AckFailed: %d from %d, %v; want %d from 2", pbuf[0], st.Source, err, want)
					}
					if want == 45 {
						if err := persistent.Start(); err != nil { // it can be started again
							return err
						}
					}
				}
				if err := persistent.Free(); err != nil {
					return err
				}
				st, err = raw.Wait()
				if err != nil || buf[0] != 7 || st.Source != 2 {
					return fmt.Errorf("Irecv after AckFailed: %v from %d, %v; want 7 from 2", buf[0], st.Source, err)
				}
				return nil
			})
			onlyDied(t, err, 1)
		})
	}
}

// TestFTAnySourceProbeUnacked: once a failure is known and not yet
// acknowledged, every probe and receive from AnySource reports it
// (ErrProcFailedPending) instead of waiting for a message the failed rank
// might have sent: Probe and Mprobe waited until the hang report, and a
// loop of Iprobe or Improbe spun for ever.
func TestFTAnySourceProbeUnacked(t *testing.T) {
	for _, tc := range ftConfigs() {
		for _, call := range []string{"Probe", "Mprobe", "Recv", "Irecv", "Iprobe-loop", "Improbe-loop"} {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				start := time.Now()
				err := ftRun(t, tc.cfg, 3, func(c *mpi.Comm) error {
					switch c.Rank() {
					case 1:
						return errDied
					case 2:
						_, _, err := mpi.Recv[int](c, 0, 9)
						return err
					}
					if err := awaitFailure(c); err != nil {
						return err
					}
					var err error
					switch call {
					case "Probe":
						_, err = mpi.Probe(c, mpi.AnySource, 5)
					case "Mprobe":
						_, _, err = mpi.Mprobe(c, mpi.AnySource, 5)
					case "Recv":
						_, _, err = mpi.Recv[int](c, mpi.AnySource, 5)
					case "Irecv":
						var p *mpi.Pending[int]
						if p, err = mpi.Irecv[int](c, mpi.AnySource, 5); err == nil {
							_, _, err = p.Wait()
						}
					case "Iprobe-loop":
						for time.Since(start) < 5*time.Second {
							var ok bool
							ok, _, err = c.Iprobe(mpi.AnySource, 5)
							if ok || err != nil {
								break
							}
						}
					case "Improbe-loop":
						for time.Since(start) < 5*time.Second {
							var ok bool
							ok, _, _, err = c.Improbe(mpi.AnySource, 5)
							if ok || err != nil {
								break
							}
						}
					}
					if !errors.Is(err, mpi.ErrProcFailedPending) && !errors.Is(err, mpi.ErrProcFailed) {
						return fmt.Errorf("%s: %v after %v, want ErrProcFailedPending", call, err, time.Since(start))
					}
					c.AckFailed(1)
					return mpi.Send(c, 0, 2, 9)
				})
				onlyDied(t, err, 1)
			})
		}
	}
}

// TestFTFailureEndsPolling: calls that poll or wait for any of several
// requests report a known failure instead of looking for ever: Iprobe and
// Improbe from a failed source (ErrProcFailed); WaitAny, TestAny and
// WaitSome on a receive from AnySource that a failure interrupted
// (ErrProcFailedPending, with the request's index), which once the
// failure is acknowledged goes on and receives a live rank's message.
// Before, a loop of Iprobe or TestAny spun for ever and WaitAny posted the
// receive again and again without returning.
func TestFTFailureEndsPolling(t *testing.T) {
	for _, tc := range ftConfigs() {
		for _, call := range []string{"Iprobe", "Improbe", "WaitAny", "TestAny", "WaitSome"} {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				start := time.Now()
				err := ftRun(t, tc.cfg, 3, func(c *mpi.Comm) error {
					switch c.Rank() {
					case 1:
						return errDied
					case 2:
						if _, _, err := mpi.Recv[int](c, 0, 9); err != nil {
							return err
						}
						return mpi.Send(c, []int64{42}, 0, 5)
					}
					if err := awaitFailure(c); err != nil {
						return err
					}
					buf := make([]int64, 1)
					var r *mpi.Request
					var err error
					if call == "WaitAny" || call == "TestAny" || call == "WaitSome" {
						if r, err = mpi.IrecvInto(c, buf, mpi.AnySource, 5); err != nil {
							return err
						}
					}
					idx, want := -1, mpi.ErrProcFailedPending
					switch call {
					case "Iprobe":
						want = mpi.ErrProcFailed
						for ok := false; !ok && err == nil && time.Since(start) < 5*time.Second; {
							ok, _, err = c.Iprobe(1, 5)
						}
					case "Improbe":
						want = mpi.ErrProcFailed
						for ok := false; !ok && err == nil && time.Since(start) < 5*time.Second; {
							ok, _, _, err = c.Improbe(1, 5)
						}
					case "WaitAny":
						idx, _, err = mpi.WaitAny(nil, r)
					case "TestAny":
						for ok := false; !ok && err == nil && time.Since(start) < 5*time.Second; {
							idx, ok, _, err = mpi.TestAny(nil, r)
						}
					case "WaitSome":
						var is []int
						is, _, err = mpi.WaitSome(nil, r)
						if len(is) == 1 {
							idx = is[0]
						}
					}
					if !errors.Is(err, want) {
						return fmt.Errorf("%s: %v after %v, want %v", call, err, time.Since(start), want)
					}
					if r != nil && idx != 1 {
						return fmt.Errorf("%s: index %d, want 1", call, idx)
					}
					if _, err := c.AckFailed(1); err != nil {
						return err
					}
					if err := mpi.Send(c, 0, 2, 9); err != nil {
						return err
					}
					if r == nil {
						_, _, err := mpi.Recv[[]int64](c, 2, 5)
						return err
					}
					idx, st, err := mpi.WaitAny(nil, r)
					if err != nil || idx != 1 || buf[0] != 42 || st.Source != 2 {
						return fmt.Errorf("WaitAny after AckFailed: index %d, %d from %d, %v; want 1, 42 from 2", idx, buf[0], st.Source, err)
					}
					return nil
				})
				onlyDied(t, err, 1)
			})
		}
	}
}

// awaitFailure returns once c's rank knows that a rank of c failed.
func awaitFailure(c *mpi.Comm) error {
	for {
		g, err := c.GetFailed()
		if err != nil || g.Size() > 0 {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFTRevokeWakesProbe: a Probe blocked on a communicator that another
// rank revokes returns ErrRevoked, and so does a later one.
func TestFTRevokeWakesProbe(t *testing.T) {
	for _, tc := range ftConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			err := ftRun(t, tc.cfg, 2, func(c *mpi.Comm) error {
				if c.Rank() == 1 {
					time.Sleep(20 * time.Millisecond)
					return c.Revoke()
				}
				if _, err := c.Probe(1, 5); !errors.Is(err, mpi.ErrRevoked) {
					return fmt.Errorf("Probe during the revocation: %v, want ErrRevoked", err)
				}
				if _, err := c.Probe(mpi.AnySource, mpi.AnyTag); !errors.Is(err, mpi.ErrRevoked) {
					return fmt.Errorf("Probe after the revocation: %v, want ErrRevoked", err)
				}
				return nil
			})
			onlyDied(t, err)
		})
	}
}

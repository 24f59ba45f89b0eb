package mpi

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestFTRevokeBeforeMade revokes a communicator made by Shrink while one
// member has not made it yet: the members' agreement has decided, rank 0
// made the new communicator and revoked it, and only then does rank 2 make
// it (held in Shrink until its controller has handled the revoke notice).
// Rank 2 must find the communicator revoked: its Allreduce fails with
// ErrRevoked instead of waiting for members that gave up on it. This is
// the interleaving behind the hang of TestRunFT/agree (a notice that came
// before the communicator existed was dropped).
func TestFTRevokeBeforeMade(t *testing.T) {
	for _, tr := range []string{"inproc", "shm"} {
		t.Run(tr, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.FT = true
			if tr != "inproc" {
				cfg.Transport = tr
			}
			var late atomic.Pointer[proc] // rank 2 of this job
			held := make(chan error, 1)
			ftHookShrink = func(p *proc) {
				if p != late.Load() {
					return
				}
				deadline := time.Now().Add(30 * time.Second)
				for p.ft.notices.Load() == 0 {
					if time.Now().After(deadline) {
						held <- errors.New("rank 2 never got the revoke notice")
						return
					}
					time.Sleep(time.Millisecond)
				}
				held <- nil
			}
			defer func() { ftHookShrink = nil }()
			done := make(chan error, 1)
			go func() {
				done <- RunConfig(3, cfg, func(c *Comm) error {
					if c.Rank() == 2 {
						late.Store(c.p)
					}
					if err := Barrier(c); err != nil {
						return err
					}
					s, err := c.Shrink()
					if err != nil {
						return err
					}
					if c.Rank() == 2 {
						if err := <-held; err != nil {
							return err
						}
					}
					if c.Rank() == 0 {
						if err := s.Revoke(); err != nil {
							return err
						}
					}
					if _, err := Allreduce(s, 1, Sum[int]()); !errors.Is(err, ErrRevoked) {
						return fmt.Errorf("Allreduce on the revoked communicator: %v, want ErrRevoked", err)
					}
					if !s.IsRevoked() {
						return errors.New("IsRevoked is false after ErrRevoked")
					}
					return nil
				})
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(90 * time.Second):
				t.Fatal("the job did not end within 90s: a rank missed the revocation")
			}
		})
	}
}

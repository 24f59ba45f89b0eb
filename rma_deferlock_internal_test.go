package mpi

import (
	"fmt"
	"testing"
	"time"
)

// A shared lock towards a target served by messages is taken at the
// epoch's first operation, not by Lock: Lock returns while another rank
// holds the target's exclusive lock, and the Get after it still waits for
// that lock, so it reads what the exclusive holder wrote last. An epoch
// with no operation sends the target nothing (LockAll, UnlockAll).
func TestSharedLockDeferred(t *testing.T) {
	err := Run(3, func(c *Comm) error {
		w, err := NewWindow[int64](c, 1)
		if err != nil {
			return err
		}
		me := c.Rank()
		for r := range w.reach {
			if r != me {
				w.reach[r] = nil // served by messages, as across nodes
			}
		}
		const holder, target, reader = 0, 1, 2
		if err := Barrier(c); err != nil {
			return err
		}
		switch me {
		case holder:
			if err := w.Lock(target, true); err != nil {
				return err
			}
			if err := w.Put([]int64{7}, target, 0); err != nil {
				return err
			}
			if err := Barrier(c); err != nil {
				return err
			}
			// The reader's Lock returns while this rank holds the lock.
			r, err := Irecv[int64](c, reader, 1)
			if err != nil {
				return err
			}
			var lockErr error
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				done, _, _, err := r.Test()
				if err != nil {
					return err
				}
				if done {
					break
				}
				if time.Now().After(deadline) {
					lockErr = fmt.Errorf("the reader's shared Lock waited for this rank's exclusive lock")
					break
				}
			}
			time.Sleep(50 * time.Millisecond) // the reader's Get is on its way by now
			if err := w.Put([]int64{9}, target, 0); err != nil {
				return err
			}
			if err := w.Unlock(target); err != nil {
				return err
			}
			if lockErr != nil {
				return lockErr
			}
		case reader:
			if err := Barrier(c); err != nil {
				return err
			}
			if err := w.Lock(target, false); err != nil {
				return err
			}
			if err := Send(c, int64(1), holder, 1); err != nil {
				return err
			}
			got := []int64{0}
			if err := w.Get(got, target, 0); err != nil {
				return err
			}
			if err := w.Unlock(target); err != nil {
				return err
			}
			if got[0] != 9 {
				return fmt.Errorf("the Get under the deferred shared lock read %d, want 9: it did not wait for the exclusive lock", got[0])
			}
		default:
			if err := Barrier(c); err != nil {
				return err
			}
		}
		if err := Barrier(c); err != nil {
			return err
		}
		// Epochs with no operation towards a target send it nothing: its
		// server sees no request.
		before := w.served.Load()
		for i := 0; i < 100; i++ {
			if err := w.LockAll(); err != nil {
				return err
			}
			if err := w.UnlockAll(); err != nil {
				return err
			}
			if err := w.Lock((me+1)%3, false); err != nil {
				return err
			}
			if err := w.Unlock((me + 1) % 3); err != nil {
				return err
			}
		}
		if err := Barrier(c); err != nil {
			return err
		}
		if n := w.served.Load() - before; n != 0 {
			return fmt.Errorf("rank %d's server saw %d requests for epochs with no operation", me, n)
		}
		return w.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

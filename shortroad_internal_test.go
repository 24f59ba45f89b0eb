package mpi

import (
	"fmt"
	"testing"
)

// A small standard or ready non-blocking send leaves before Isend returns
// and its request holds no engine request (Comm.isendNow), on goroutine
// ranks and over shared memory (both through the eager-send capability);
// synchronous, large and non-contiguous sends take the general way. The
// messages all arrive, in order, and a short-road send can still be
// cancelled (TestCancelSendKinds checks the outcomes on every transport).
func TestIsendShortRoad(t *testing.T) {
	for _, tr := range []string{"inproc", "shm"} {
		t.Run(tr, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Transport = tr
			vec, err := NewVector(2, 1, 2, Byte)
			if err != nil {
				t.Fatal(err)
			}
			if err := vec.Commit(); err != nil {
				t.Fatal(err)
			}
			big := make([]byte, 4<<20)
			err = RunConfig(2, cfg, func(c *Comm) error {
				if c.Rank() == 1 {
					for i := range 6 {
						got := make([]byte, len(big))
						st, err := c.Recv(got, len(got), Byte, 0, 1)
						if err != nil {
							return err
						}
						if i < 5 && (st.Bytes() == 0 || got[0] != byte(i+1)) {
							return fmt.Errorf("message %d: got %d bytes starting with %d", i, st.Bytes(), got[0])
						}
					}
					return nil
				}
				type send struct {
					name  string
					short bool
					start func() (*Request, error)
				}
				sends := []send{
					{"typed Isend", true, func() (*Request, error) { return Isend(c, []byte{1}, 1, 1) }},
					{"Isend", true, func() (*Request, error) { return c.Isend([]byte{2}, 1, Byte, 1, 1) }},
					{"Irsend", true, func() (*Request, error) { return c.Irsend([]byte{3}, 1, Byte, 1, 1) }},
					{"Issend", false, func() (*Request, error) { return c.Issend([]byte{4}, 1, Byte, 1, 1) }},
					{"vector Isend", false, func() (*Request, error) { return c.Isend([]byte{5, 0, 5}, 1, vec, 1, 1) }},
					{"4 MiB Isend", false, func() (*Request, error) { return c.Isend(big, len(big), Byte, 1, 1) }},
				}
				for _, s := range sends {
					r, err := s.start()
					if err != nil {
						return fmt.Errorf("%s: %w", s.name, err)
					}
					r.mu.Lock()
					short := r.er == nil && r.sentID() != 0 && r.is(fFinished)
					r.mu.Unlock()
					if short != s.short {
						return fmt.Errorf("%s: short road %v, want %v", s.name, short, s.short)
					}
					if _, err := r.Wait(); err != nil {
						return fmt.Errorf("%s: %w", s.name, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

package mpi

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// When the transport reports a rank gone (engine.FailAll), a probe blocked
// on it, a probe for AnySource blocked at that moment, and receives from
// it posted later all fail with ErrProcFailed instead of waiting forever.
func TestLostPeerFailsProbesAndLaterReceives(t *testing.T) {
	err := Run(2, func(w *Comm) error {
		if w.Rank() == 1 {
			return nil // rank 1 sends nothing; rank 0 pretends it died
		}
		type result struct {
			what string
			err  error
		}
		res := make(chan result, 3)
		go func() { _, err := w.Probe(1, 5); res <- result{"Probe(1)", err} }()
		go func() { _, err := w.Probe(AnySource, 5); res <- result{"Probe(AnySource)", err} }()
		go func() { _, _, err := w.Mprobe(1, 6); res <- result{"Mprobe(1)", err} }()
		time.Sleep(20 * time.Millisecond) // let them block
		w.p.Eng.FailAll(1, fmt.Errorf("%w: rank 1 is gone (test)", ErrProcFailed))
		for i := 0; i < 3; i++ {
			select {
			case r := <-res:
				if !errors.Is(r.err, ErrProcFailed) {
					return fmt.Errorf("%s: %v, want ErrProcFailed", r.what, r.err)
				}
			case <-time.After(10 * time.Second):
				return fmt.Errorf("a blocked probe was not failed")
			}
		}
		if _, _, err := Recv[int](w, 1, 7); !errors.Is(err, ErrProcFailed) {
			return fmt.Errorf("Recv from the lost rank: %v, want ErrProcFailed", err)
		}
		if _, err := w.Probe(1, 8); !errors.Is(err, ErrProcFailed) {
			return fmt.Errorf("Probe of the lost rank: %v, want ErrProcFailed", err)
		}
		// Rank 0 itself still works.
		if err := Send(w, 3, 0, 9); err != nil {
			return err
		}
		if v, _, err := Recv[int](w, 0, 9); err != nil || v != 3 {
			return fmt.Errorf("self message: %v %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

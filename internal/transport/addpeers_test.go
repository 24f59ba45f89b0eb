package transport

import (
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

type countT struct{ n *int }

func (c countT) Send(f wire.Frame) error { *c.n++; return nil }

// Peers of other jobs come after the world ranks, keep their numbers as
// more are added, and are reached by Send; beyond them there is no route.
func TestRouterAddPeers(t *testing.T) {
	var world, a, b int
	r := NewRouter(2, func(int) Transport { return countT{&world} })
	if first := r.AddPeers([]Transport{countT{&a}, countT{&a}}); first != 2 {
		t.Fatalf("first added peer %d, want 2", first)
	}
	if first := r.AddPeers([]Transport{countT{&b}}); first != 4 {
		t.Fatalf("second batch starts at %d, want 4", first)
	}
	if r.Peers() != 5 {
		t.Fatalf("Peers() = %d, want 5", r.Peers())
	}
	for _, to := range []int{0, 1, 2, 3, 4} {
		if err := r.Send(wire.Frame{To: to}); err != nil {
			t.Fatalf("send to %d: %v", to, err)
		}
	}
	if world != 2 || a != 2 || b != 1 {
		t.Fatalf("frames: world %d, a %d, b %d", world, a, b)
	}
	if err := r.Send(wire.Frame{To: 5}); err == nil {
		t.Fatal("a send beyond the peers found a route")
	}
	if r.For(4) == nil || r.For(5) != nil || r.DirectRead(4) {
		t.Fatal("For/DirectRead of added peers")
	}
}

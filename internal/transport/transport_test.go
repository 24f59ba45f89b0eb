package transport_test

import (
	"strings"
	"testing"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/inproc"
	"github.com/mpigo/mpi/internal/transport/self"
	"github.com/mpigo/mpi/internal/wire"
)

// Three endpoints on one fabric: frames arrive at the right handler, in
// order, synchronously; self loops back; the router picks per peer.
func TestRouterInprocSelf(t *testing.T) {
	const n = 3
	fab := inproc.NewFabric(n)
	got := make([][]wire.Frame, n)
	routers := make([]*transport.Router, n)
	for r := 0; r < n; r++ {
		h := func(f wire.Frame) {
			f.Payload = append([]byte(nil), f.Payload...) // borrowed: copy to keep
			got[r] = append(got[r], f)
		}
		in := fab.Attach(r, h)
		me := self.New(r, h)
		routers[r] = transport.NewRouter(n, func(peer int) transport.Transport {
			if peer == r {
				return me
			}
			return in
		})
	}
	for i := 0; i < 10; i++ {
		f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i)}, From: 0, To: i % n, Payload: []byte{byte(i)}}
		if err := routers[0].Send(f); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < n; r++ {
		last := -1
		for _, f := range got[r] {
			if int(f.Tag) <= last || int(f.Tag)%n != r || f.Payload[0] != byte(f.Tag) {
				t.Errorf("endpoint %d got tag %d after %d", r, f.Tag, last)
			}
			last = int(f.Tag)
		}
	}
	if !routers[0].DirectRead(1) || !routers[0].DirectRead(0) || routers[0].DirectRead(7) {
		t.Error("DirectRead wrong")
	}
	if routers[0].Name(0) != "self" || routers[0].Name(2) != "inproc" || routers[0].Name(-1) != "none" {
		t.Errorf("names: %s %s", routers[0].Name(0), routers[0].Name(2))
	}
	if err := routers[0].Send(wire.Frame{To: 9}); err == nil || !strings.Contains(err.Error(), "no route to rank 9") {
		t.Errorf("send to rank 9: %v", err)
	}
	fab.Detach(2)
	if err := routers[0].Send(wire.Frame{To: 2}); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("send to a detached rank: %v", err)
	}
	s := self.New(1, func(wire.Frame) {})
	if err := s.Send(wire.Frame{To: 2}); err == nil {
		t.Error("self transport accepted a frame for another rank")
	}
}

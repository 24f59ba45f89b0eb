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

// The short road of goroutine ranks: SendEager hands the parts to the
// destination's EagerFunc (or, without one, a frame to its handler) before
// it returns, in order with Send, from the sending endpoint.
func TestInprocSendEager(t *testing.T) {
	fab := inproc.NewFabric(3)
	type msg struct {
		h    wire.Header
		from int
		data string
	}
	var viaEager, viaFrame []msg
	frames := func(dst *[]msg) transport.Handler {
		return func(f wire.Frame) { *dst = append(*dst, msg{f.Header, f.From, string(f.Payload)}) }
	}
	t0 := fab.AttachEager(0, frames(&viaFrame), nil)
	fab.AttachEager(1, frames(&viaFrame), func(h wire.Header, from int, p []byte) {
		viaEager = append(viaEager, msg{h, from, string(p)})
	})
	fab.Attach(2, frames(&viaFrame))
	var es transport.EagerSender = t0
	if es.EagerRoom() != 0 {
		t.Errorf("EagerRoom = %d, want 0 (no reason to raise the eager limit)", es.EagerRoom())
	}
	if err := t0.SendEager(1, 7, 3, 11, 0xabc, 5, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := t0.Send(wire.Frame{Header: wire.Header{Kind: wire.RTS, Tag: 12}, From: 0, To: 1}); err != nil {
		t.Fatal(err)
	}
	if err := t0.SendEager(2, 8, 4, 13, 0, 0, []byte("two")); err != nil {
		t.Fatal(err)
	}
	want := wire.Header{Kind: wire.Eager, Context: 7, Src: 3, Tag: 11, Size: 3, Sig: 0xabc, SendID: 5}
	if len(viaEager) != 1 || viaEager[0] != (msg{want, 0, "one"}) {
		t.Errorf("EagerFunc got %+v, want one message %+v from 0", viaEager, want)
	}
	want2 := wire.Header{Kind: wire.Eager, Context: 8, Src: 4, Tag: 13, Size: 3}
	if len(viaFrame) != 2 || viaFrame[0].h.Tag != 12 || viaFrame[1] != (msg{want2, 0, "two"}) {
		t.Errorf("handlers got %+v, want the RTS to 1, then %+v from 0 to 2", viaFrame, want2)
	}
	if err := t0.SendEager(5, 0, 0, 0, 0, 0, nil); err == nil {
		t.Error("SendEager to rank 5 of 3 succeeded")
	}
	fab.Detach(1)
	if err := t0.SendEager(1, 0, 0, 0, 0, 0, nil); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("SendEager to a detached rank: %v", err)
	}
}

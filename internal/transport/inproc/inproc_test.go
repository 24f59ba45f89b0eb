package inproc

import (
	"testing"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// SendEager hands the destination's handler the eager frame Send would
// have carried (sender, envelope, signature, send id, payload), and fails
// for a rank that does not exist or has exited.
func TestSendEager(t *testing.T) {
	fb := NewFabric(3)
	var got []wire.Frame
	fb.Attach(2, func(f wire.Frame) {
		f.Payload = append([]byte(nil), f.Payload...)
		got = append(got, f)
	})
	var es transport.EagerSender = fb.Attach(1, func(wire.Frame) {})
	if err := es.SendEager(2, 7, 3, 9, 0xabc, 42, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	want := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 7, Src: 3, Tag: 9, Size: 5, SendID: 42, Sig: 0xabc},
		From: 1, To: 2}
	if len(got) != 1 {
		t.Fatalf("%d frames delivered, want 1", len(got))
	}
	f := got[0]
	if string(f.Payload) != "hello" {
		t.Errorf("payload %q, want %q", f.Payload, "hello")
	}
	if !f.Unanswered(len(f.Payload)) {
		t.Errorf("frame %+v is not a plain eager one", f.Header)
	}
	f.Payload = nil
	if f.Header != want.Header || f.From != want.From || f.To != want.To || f.Region != nil || f.Source != nil {
		t.Errorf("frame %+v, want %+v", f, want)
	}
	if err := es.SendEager(0, 7, 3, 9, 0, 0, nil); err == nil {
		t.Error("SendEager to a rank with no handler succeeded")
	}
	if err := es.SendEager(3, 7, 3, 9, 0, 0, nil); err == nil {
		t.Error("SendEager to rank 3 of 3 succeeded")
	}
	fb.Detach(2)
	if err := es.SendEager(2, 7, 3, 9, 0, 0, nil); err == nil {
		t.Error("SendEager to an exited rank succeeded")
	}
	if r := es.EagerRoom(); r != 0 {
		t.Errorf("EagerRoom = %d, want 0 (the eager limit stays)", r)
	}
}

package engine

import "testing"

// BenchmarkEagerSend is Engine.Send of an 8-byte standard send, the frame
// left in the outbox: the engine's share of every eager Isend.
func BenchmarkEagerSend(b *testing.B) {
	e := New(0, DefaultConfig(), nil)
	r := &Request{}
	buf := make([]byte, 8)
	var out Outbox
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Reset()
		r.Context, r.Peer, r.To, r.Tag, r.Buf = 1, 1, 1, 1, buf
		e.Send(r, &out)
		out.Reset()
	}
}

// BenchmarkEagerSendCancellable is BenchmarkEagerSend for a request the
// user may cancel (Isend): its frame carries an id, one atomic increment.
func BenchmarkEagerSendCancellable(b *testing.B) {
	e := New(0, DefaultConfig(), nil)
	r := &Request{}
	buf := make([]byte, 8)
	var out Outbox
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Reset()
		r.Context, r.Peer, r.To, r.Tag, r.Buf, r.Cancellable = 1, 1, 1, 1, buf, true
		e.Send(r, &out)
		out.Reset()
	}
}

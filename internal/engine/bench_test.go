package engine

import (
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// The eager benchmarks (BenchmarkEagerPostedMatch, BenchmarkEagerUnexpected)
// are in sim_test.go; these cover the other protocols and deep queues.
// Frames are handed from engine to engine by value, as the inproc
// transport does, with no harness in between.

// BenchmarkSyncEagerPosted: a synchronous 8-byte send to a posted receive:
// Eager with FlagSync, then Ack.
func BenchmarkSyncEagerPosted(b *testing.B) {
	snd, rcv := New(0, DefaultConfig(), nil), New(1, DefaultConfig(), nil)
	var s, r Request
	sbuf, rbuf := make([]byte, 8), make([]byte, 8)
	var out, out2 Outbox
	b.ReportAllocs()
	for b.Loop() {
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 0, 1, rbuf
		rcv.PostRecv(&r, &out)
		s.Reset()
		s.Mode, s.Context, s.Peer, s.To, s.Tag, s.Buf = Synchronous, 1, 1, 1, 1, sbuf
		out.Reset()
		snd.Send(&s, &out)
		out2.Reset()
		rcv.Deliver(&out.At(0).F, &out2) // Eager: matched, Ack out
		out.Reset()
		snd.Deliver(&out2.At(0).F, &out) // Ack
		if !s.Done() || !r.Done() {
			b.Fatal("not complete")
		}
	}
}

// BenchmarkRendezvousDirectPosted: a 1 MiB rendezvous read in place (RTS
// with Region, one copy, Fin) into a posted receive.
func BenchmarkRendezvousDirectPosted(b *testing.B) {
	direct := func(int) bool { return true }
	snd, rcv := New(0, DefaultConfig(), direct), New(1, DefaultConfig(), direct)
	const size = 1 << 20
	var s, r Request
	sbuf, rbuf := make([]byte, size), make([]byte, size)
	var out, out2 Outbox
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 0, 1, rbuf
		rcv.PostRecv(&r, &out)
		s.Reset()
		s.Context, s.Peer, s.To, s.Tag, s.Buf = 1, 1, 1, 1, sbuf
		out.Reset()
		snd.Send(&s, &out)
		out2.Reset()
		rcv.Deliver(&out.At(0).F, &out2) // RTS: copy, Fin out
		out.Reset()
		snd.Deliver(&out2.At(0).F, &out) // Fin
		if !s.Done() || !r.Done() {
			b.Fatal("not complete")
		}
	}
}

// BenchmarkRendezvousStreamPosted: a 1 MiB rendezvous in 256 KiB Data
// chunks (RTS, CTS, 4 Data) into a posted receive.
func BenchmarkRendezvousStreamPosted(b *testing.B) {
	snd, rcv := New(0, DefaultConfig(), nil), New(1, DefaultConfig(), nil)
	const size = 1 << 20
	var s, r Request
	sbuf, rbuf := make([]byte, size), make([]byte, size)
	var out, out2 Outbox
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 0, 1, rbuf
		rcv.PostRecv(&r, &out)
		s.Reset()
		s.Context, s.Peer, s.To, s.Tag, s.Buf = 1, 1, 1, 1, sbuf
		out.Reset()
		snd.Send(&s, &out)
		out2.Reset()
		rcv.Deliver(&out.At(0).F, &out2) // RTS: CTS out
		out.Reset()
		snd.Deliver(&out2.At(0).F, &out) // CTS: Data out
		out2.Reset()
		for i := 0; i < out.Len(); i++ {
			it := out.At(i)
			rcv.Deliver(&it.F, &out2)
			if it.Done != nil {
				it.Done.Complete(Status{})
			}
		}
		if !s.Done() || !r.Done() {
			b.Fatal("not complete")
		}
	}
}

// BenchmarkEagerPostedDeep: an 8-byte eager message matched behind 100
// posted receives that do not match it (matching is a linear search).
func BenchmarkEagerPostedDeep(b *testing.B) {
	e := New(0, DefaultConfig(), nil)
	var out Outbox
	for i := range 100 {
		e.PostRecv(&Request{Context: 1, Peer: 1, Tag: 1000 + i, Buf: make([]byte, 8)}, &out)
	}
	r := &Request{}
	buf := make([]byte, 8)
	f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Src: 1, Tag: 1, Size: 8}, From: 1, Payload: make([]byte, 8)}
	b.ReportAllocs()
	for b.Loop() {
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 1, 1, buf
		e.PostRecv(r, &out)
		e.Deliver(&f, &out)
	}
}

package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// fuzzReader hands out the fuzzer's bytes; past the end it returns zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) n(mod int) int { return int(r.byte()) % mod }

func (r *fuzzReader) u16() int { return int(r.byte()) | int(r.byte())<<8 }

func (r *fuzzReader) bytes(n int) []byte {
	n = min(n, len(r.b))
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

// fuzzFrame decodes a frame for rank 1 from rank 0 or 2. Its header is
// anything the wire format accepts — a transport cannot hand the engine
// anything else — with ids and envelopes drawn from small ranges so that
// they hit the engine's real sends and receives.
func fuzzFrame(r *fuzzReader) (wire.Frame, bool) {
	f := wire.Frame{From: 2 * r.n(2), To: 1}
	f.Kind = wire.Kind(r.n(10))
	f.Flags = r.byte() & 15
	f.Context = uint32(r.n(3))
	f.Src = int32(r.n(4))
	f.Tag = int32(r.n(4))
	f.Size = int64(r.u16() % 600)
	f.Offset = int64(r.n(256))
	if f.Kind == wire.RTS {
		// An RTS has no offset; in its place it may carry a token.
		if f.Flags&wire.FlagToken != 0 {
			f.Token = uint64(f.Offset)
		}
		f.Offset = 0
	}
	f.SendID = uint64(r.n(8))
	f.RecvID = uint64(r.n(8))
	f.Sig = uint64(r.n(3))
	f.Payload = r.bytes(r.n(64))
	if f.Kind == wire.RTS && r.n(2) == 1 {
		f.Region = make([]byte, r.u16()%600)
	}
	var b [wire.HeaderSize]byte
	f.Header.Marshal(b[:], len(f.Payload))
	if _, _, err := wire.Unmarshal(b[:]); err != nil {
		return f, false
	}
	return f, true
}

// FuzzEngine drives three engines with a sequence of operations decoded
// from the input — sends and receives, deliveries of the frames they
// exchange, cancels, probes — interleaved with arbitrary frames injected
// into rank 1. Deliver may report errors for injected frames but must never
// panic, no request may complete twice, no receive may write past its
// buffer, and engines must only emit frames the wire can carry. Until a
// frame is injected or a rank fails, genuine frames must never be refused.
func FuzzEngine(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		c := r.byte()
		cfg := engCfg{EagerLimit: int(c % 64), ChunkSize: 1 + int(c>>4)%16, Direct: c&0x40 != 0, Export: c&0x80 != 0}
		h := newHarness(t, 3, cfg)
		h.holdFetches = cfg.Export && c&1 != 0
		var sends, recvs []*Request
		tainted := false // a frame was injected, or a rank failed: genuine frames may be refused
		for ops := 0; len(r.b) > 0 && ops < 200; ops++ {
			switch r.n(10) {
			case 0, 1: // inject a frame into rank 1
				fr, ok := fuzzFrame(r)
				if !ok {
					continue
				}
				tainted = true
				h.trace = append(h.trace, fmt.Sprintf("inject %+v", fr.Header))
				var out Outbox
				h.engs[1].Deliver(&fr, &out)
				h.flush(1, &out)
			case 2: // post a receive at rank 1
				rq := &Request{Context: uint32(r.n(3)), Peer: r.n(5) - 1, Tag: r.n(5) - 1, Sig: uint64(r.n(3))}
				if n := r.u16() % 700; n < 650 {
					rq.Buf = guarded(n)
				} else {
					rq.Alloc = func(n int) []byte { return guarded(min(n, 1<<12)) }
				}
				recvs = append(recvs, rq)
				h.recv(1, rq)
			case 3: // a send between any two ranks
				from, to := r.n(3), r.n(3)
				sq := &Request{Mode: Mode(r.n(3)), Context: uint32(r.n(3)), Peer: to, Self: from, To: to, Tag: r.n(4), Sig: uint64(r.n(3)), Buf: pattern(r.u16() % 600)}
				sends = append(sends, sq)
				h.send(from, sq)
			case 4, 5, 6: // deliver the oldest frame of a link
				ks := h.busy()
				if len(ks) == 0 {
					continue
				}
				k := ks[r.n(len(ks))]
				if err := h.deliver(k[0], k[1]); err != nil && !tainted {
					t.Fatalf("genuine frame refused: %v\ntrace: %s", err, h.traceString())
				}
			case 7: // cancel a send or a receive
				if r.n(2) == 0 && len(sends) > 0 {
					sq := sends[r.n(len(sends))]
					from := 0
					if sq.Self >= 0 && sq.Self < 3 {
						from = sq.Self
					}
					h.cancelSend(from, sq)
				} else if len(recvs) > 0 {
					h.engs[1].CancelRecv(recvs[r.n(len(recvs))])
				}
			case 8: // probe at rank 1
				ctx, src, tag := uint32(r.n(3)), r.n(5)-1, r.n(5)-1
				if r.n(2) == 0 {
					h.engs[1].Iprobe(ctx, src, tag, nil)
				} else if m, ok := h.engs[1].Improbe(ctx, src, tag, nil); ok && m != nil {
					rq := &Request{Buf: guarded(r.u16() % 700), Sig: uint64(r.n(3))}
					recvs = append(recvs, rq)
					h.mrecv(1, m, rq)
				}
			case 9: // a peer fails, or the job is aborted
				switch r.n(8) {
				case 0:
					tainted = true
					h.engs[1].FailAll(2*r.n(2), errors.New("peer failed"))
				case 1:
					tainted = true
					h.engs[r.n(3)].Abort(errors.New("abort"))
				case 2, 3: // a held read completes, or fails
					if len(h.fetches) > 0 {
						h.runFetch(r.n(len(h.fetches)), r.n(2) == 0)
					}
				}
			}
			h.checkOnce(t)
		}
		for _, rq := range recvs {
			if rq.Buf == nil {
				continue
			}
			if rq.Done() {
				st := rq.Status()
				if st.Count < 0 || st.Count > len(rq.Buf) || st.Count > st.Size && st.Err == nil {
					t.Fatalf("receive status %+v for a %d-byte buffer", st, len(rq.Buf))
				}
			}
			full := rq.Buf[:cap(rq.Buf)]
			for i := len(rq.Buf); i < len(full); i++ {
				if full[i] != guard {
					t.Fatalf("receive wrote byte %d past its %d-byte buffer\ntrace: %s", i, len(rq.Buf), h.traceString())
				}
			}
		}
	})
}

// fuzzOps builds inputs for FuzzEngine in the encoding it decodes, for
// the seed corpus.
type fuzzOps []byte

// cfg starts an input: eager limit (< 64), chunk size (1..16), direct.
func fuzzCfg(eager, chunk int, direct bool) fuzzOps {
	c := byte(eager) | byte(chunk-1)<<4&0x30
	if direct {
		c |= 0x40
	}
	return fuzzOps{c}
}

// exportCfg starts an input whose ranks export rendezvous buffers as
// tokens (single copy between processes); with an odd eager limit the
// reads are held until the input runs them (runFetch).
func exportCfg(eager, chunk int) fuzzOps {
	return fuzzOps{byte(eager) | byte(chunk-1)<<4&0x30 | 0x80}
}

// runFetch runs the i-th held read; it fails if fail is set.
func (o fuzzOps) runFetch(i int, fail bool) fuzzOps {
	f := byte(1)
	if fail {
		f = 0
	}
	return append(o, 9, 2, byte(i), f)
}

func (o fuzzOps) abort(rank int) fuzzOps { return append(o, 9, 1, byte(rank)) }

func (o fuzzOps) recv(ctx, src, tag, sig, n int) fuzzOps {
	return append(o, 2, byte(ctx), byte(src+1), byte(tag+1), byte(sig), byte(n), byte(n>>8))
}

func (o fuzzOps) send(from, to int, mode Mode, ctx, tag, sig, n int) fuzzOps {
	return append(o, 3, byte(from), byte(to), byte(mode), byte(ctx), byte(tag), byte(sig), byte(n), byte(n>>8))
}

// deliver delivers the head of the i-th busy link, n times.
func (o fuzzOps) deliver(i, n int) fuzzOps {
	for range n {
		o = append(o, 4, byte(i))
	}
	return o
}

func (o fuzzOps) cancelSend(i int) fuzzOps { return append(o, 7, 0, byte(i)) }

func (o fuzzOps) improbe(ctx, src, tag, sig, n int) fuzzOps {
	return append(o, 8, byte(ctx), byte(src+1), byte(tag+1), 1, byte(n), byte(n>>8), byte(sig))
}

func (o fuzzOps) inject(from int, k wire.Kind, flags byte, ctx, src, tag, size, off, sendID, recvID, sig int, payload []byte) fuzzOps {
	o = append(o, 0, byte(from/2), byte(k), flags, byte(ctx), byte(src), byte(tag), byte(size), byte(size>>8),
		byte(off), byte(sendID), byte(recvID), byte(sig), byte(len(payload)))
	o = append(o, payload...)
	if k == wire.RTS {
		o = append(o, 0)
	}
	return o
}

func fuzzSeeds() [][]byte {
	return [][]byte{
		// Eager, sync eager, rendezvous (streamed and direct) from rank 0 to
		// a receive posted at rank 1, early and late.
		fuzzCfg(16, 4, false).recv(1, 0, 1, 0, 8).send(0, 1, Standard, 1, 1, 0, 8).deliver(0, 4),
		fuzzCfg(16, 4, false).send(0, 1, Synchronous, 1, 1, 0, 8).deliver(0, 1).recv(1, -1, -1, 0, 8).deliver(0, 4),
		fuzzCfg(16, 4, false).send(0, 1, Standard, 1, 1, 0, 100).deliver(0, 1).recv(1, 0, 1, 0, 60).deliver(0, 40),
		fuzzCfg(16, 4, true).send(0, 1, Synchronous, 1, 1, 1, 100).recv(1, 0, 1, 2, 100).deliver(0, 40),
		// Cancel, probe and receive the probed message.
		fuzzCfg(16, 4, false).send(0, 1, Standard, 1, 1, 0, 100).deliver(0, 1).cancelSend(0).deliver(0, 4),
		fuzzCfg(16, 4, false).send(2, 1, Standard, 1, 1, 0, 50).deliver(0, 1).improbe(1, -1, -1, 0, 50).deliver(0, 20),
		// Rank 1 sends too, and frames are injected into the exchanges:
		// a CTS, Data, Fin and Ack for its sends and receives.
		fuzzCfg(8, 2, false).send(1, 0, Standard, 1, 1, 0, 40).inject(0, wire.CTS, 0, 1, 0, 0, 40, 0, 1, 1, 0, nil).deliver(0, 30),
		fuzzCfg(8, 2, false).recv(1, 0, 1, 0, 40).send(0, 1, Standard, 1, 1, 0, 40).deliver(0, 3).
			inject(0, wire.Data, 0, 1, 0, 1, 40, 38, 1, 1, 0, []byte{1, 2}).deliver(0, 30),
		fuzzCfg(8, 2, true).send(1, 2, Synchronous, 1, 1, 0, 4).inject(2, wire.Ack, 0, 1, 0, 0, 0, 0, 1, 0, 0, nil).
			inject(2, wire.Fin, 0, 1, 0, 0, 0, 0, 1, 0, 0, nil),
		fuzzCfg(8, 2, false).recv(1, -1, -1, 0, 30).inject(0, wire.RTS, 0, 1, 0, 1, 300, 0, 3, 0, 0, nil).
			inject(0, wire.Eager, 1, 1, 0, 1, 5, 0, 4, 0, 0, []byte{1, 2, 3, 4, 5}).inject(0, wire.CancelReq, 0, 1, 0, 0, 0, 0, 3, 0, 0, nil).deliver(0, 10),
		// Single copy: reads run at once (even eager limit), or are held
		// and then succeed, fail, or race an abort; an injected RTS names
		// a token nobody exported.
		exportCfg(16, 4).recv(1, 0, 1, 0, 100).send(0, 1, Standard, 1, 1, 0, 100).deliver(0, 4),
		exportCfg(15, 4).send(0, 1, Synchronous, 1, 1, 0, 100).deliver(0, 1).recv(1, 0, 1, 0, 100).runFetch(0, false).deliver(0, 4),
		exportCfg(15, 4).send(0, 1, Standard, 1, 1, 0, 100).recv(1, 0, 1, 0, 60).deliver(0, 1).runFetch(0, true).deliver(0, 40),
		exportCfg(15, 4).send(0, 1, Standard, 1, 1, 0, 100).deliver(0, 1).recv(1, -1, -1, 0, 100).abort(1).runFetch(0, false).deliver(0, 4),
		exportCfg(16, 4).recv(1, 0, 1, 0, 200).inject(0, wire.RTS, wire.FlagToken, 1, 0, 1, 200, 77, 5, 0, 0, nil).deliver(0, 40),
	}
}

package ft

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzDecode feeds arbitrary bodies to the decoders: they never panic,
// and what they accept encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	id := AgreeID{Key: Key{Ctx: 3, Group: 77}, Seq: 2}
	for _, b := range [][]byte{
		encodeAgree(id, flagPropose, u64(5), nil),
		encodeAgree(id, flagDecided, []byte{1, 2, 3}, []int{0, 2}),
		encodeAgree(id, flagAnswer, nil, []int{1}),
		encodeCollect(id),
		encodeRevoke(Notice{Key: id.Key, By: 1}),
		encodeFailed(2),
		{0xff, 0xff, 0xff, 0xff},
	} {
		f.Add(b, uint8(4))
	}
	f.Fuzz(func(t *testing.T, b []byte, size uint8) {
		n := int(size)
		if id, p, ok := decodeAgree(b, n); ok {
			if len(b) > agreeHdr {
				if got := encodeAgree(id, b[agreeHdr], p.val, p.failed); !bytes.Equal(got, b) {
					t.Fatalf("re-encoded %x, was %x", got, b)
				}
			} else if got := encodeCollect(id); !bytes.Equal(got, b) {
				t.Fatalf("re-encoded collect %x, was %x", got, b)
			}
			for _, r := range p.failed {
				if r < 0 || r >= n {
					t.Fatalf("rank %d accepted in a job of %d", r, n)
				}
			}
		}
		if nt, ok := DecodeRevoke(b); ok {
			if nt.By < 0 {
				t.Fatalf("negative revoker %d", nt.By)
			}
			if b[15]&0x80 == 0 && !bytes.Equal(encodeRevoke(nt), b) {
				t.Fatalf("revoke re-encoded differently")
			}
		}
		if r, ok := decodeFailed(b, n); ok && (r < 0 || r >= n || !bytes.Equal(encodeFailed(r), b)) {
			t.Fatalf("failed %d from %x", r, b)
		}
	})
}

// fuzzInput reads the fuzzer's bytes, as zeros once they run out.
type fuzzInput struct{ b []byte }

func (in *fuzzInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

func (in *fuzzInput) bytes(n int) []byte {
	n = min(n, len(in.b))
	b := in.b[:n]
	in.b = in.b[n:]
	return b
}

// FuzzMachine drives one rank of a job of four with arbitrary inputs:
// frames of any kind and body from any source (garbage, or well-formed
// agreement messages about any instance), its own Enter, Revoke and
// Adopt calls, failures and ticks. The machine must never panic, and its
// outputs must stay sane: no message to itself or outside the job, each
// failure once and never its own, each decision once and only for an
// agreement it entered, at most one revocation per communicator made.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{2, 1, 1, 1, 3, 1, 1, 3, 2, 1, 3, 3, 1})
	f.Add([]byte{3, 0, 2, 1, 1, 0, 3, 1, 2, 3, 5, 0, 0})
	f.Add([]byte{0, 1, 2, 16, 42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 6, 0, 4, 10})
	f.Add([]byte{4, 200, 4, 200, 4, 200, 4, 200, 4, 200, 4, 200, 4, 200, 4, 200, 4, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		const size = 4
		in := &fuzzInput{b: data}
		g := world(size)
		comms := []Comm{CommOf(10, g), CommOf(12, []int{0, 2, 3}), CommOf(14, []int{1, 0})}
		made := map[uint32]bool{}
		m := New(Config{Rank: 0, Size: size, Remote: []bool{false, true, true, false}, Period: time.Millisecond, Timeout: 4 * time.Millisecond,
			Comm: func(ctx uint32) (Comm, bool) {
				for _, c := range comms {
					if c.Key.Ctx == ctx && made[ctx] {
						return c, true
					}
				}
				return Comm{}, false
			}}, t0)
		now := t0
		entered := map[AgreeID]bool{}
		decided := map[AgreeID]bool{}
		failed := map[int]bool{}
		revoked := map[Key]int{}
		var out Out
		m.Start(now, &out)
		for steps := 0; len(in.b) > 0 && steps < 500; steps++ {
			switch in.byte() % 8 {
			case 0: // any frame
				from, kind, n := int(in.byte()%6)-1, Kind(in.byte()%8), int(in.byte())
				m.Handle(from, kind, in.bytes(n), now, &out)
			case 1: // a well-formed agreement message
				c := comms[in.byte()%3]
				id := AgreeID{Key: c.Key, Seq: uint64(in.byte() % 4)}
				var fl []int
				for r := range size {
					if in.byte()%4 == 0 {
						fl = append(fl, r)
					}
				}
				kind := Kind(Propose + Kind(in.byte()%3))
				body := encodeAgree(id, in.byte()%3, u64(uint64(in.byte())), fl)
				if kind == Collect {
					body = encodeCollect(id)
				}
				m.Handle(int(in.byte()%size), kind, body, now, &out)
			case 2:
				c := comms[in.byte()%3]
				if id, err := m.Enter(c.Key, c.Members, u64(uint64(in.byte())), and, &out); err == nil {
					entered[id] = true
				}
			case 3:
				m.Fail(int(in.byte()%(size+2))-1, errors.New("fuzz"), &out)
			case 4:
				now = now.Add(time.Duration(in.byte()) * 50 * time.Microsecond)
				m.Tick(now, &out)
			case 5:
				c := comms[in.byte()%3]
				made[c.Key.Ctx] = true
				delete(revoked, c.Key)
				m.Adopt(c, &out)
			case 6:
				c := comms[in.byte()%3]
				if made[c.Key.Ctx] {
					m.Revoke(c, &out)
				}
			case 7:
				if in.byte() == 0 {
					m.Stop(errors.New("stop"), &out)
				}
			}
			for _, s := range out.Sends {
				if s.To == 0 || s.To < 0 || s.To >= size {
					t.Fatalf("send %v to %d", s.Kind, s.To)
				}
			}
			for _, x := range out.Failures {
				if x.Rank == 0 || failed[x.Rank] {
					t.Fatalf("failure of %d (known: %v)", x.Rank, failed)
				}
				failed[x.Rank] = true
			}
			for _, d := range out.Decisions {
				if !entered[d.ID] || decided[d.ID] {
					t.Fatalf("decision of %+v (entered %v, decided %v)", d.ID, entered[d.ID], decided[d.ID])
				}
				decided[d.ID] = true
			}
			for _, r := range out.Revokes {
				if revoked[r.Key]++; revoked[r.Key] > 1 || !made[r.Key.Ctx] {
					t.Fatalf("revocation of %+v", r.Key)
				}
			}
			out.Reset()
		}
	})
}

// FuzzSim runs the simulation with schedules and options the fuzzer picks.
func FuzzSim(f *testing.F) {
	f.Add(uint64(1), uint8(0))
	f.Add(uint64(7), uint8(0xff))
	f.Fuzz(func(t *testing.T, seed uint64, o uint8) {
		opts := simOpts{n: 2 + int(o%5), agreements: 1 + int(o>>3%3), iagree: o&0x20 != 0, clock: o&0x40 != 0, revoke: o&0x80 != 0}
		opts.kills = int(seed>>32) % opts.n
		newSim(t, seed, opts, -1, nil).run()
	})
}

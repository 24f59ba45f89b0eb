package engine

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
)

// strided is a test Layout: message byte i lives at mem[i*stride]; the
// bytes between are not part of the message and must never be written.
// It records every chunk it was asked to pack or unpack.
type strided struct {
	mem    []byte
	n      int
	stride int
	packs  []int // lengths of the chunks packed
	unpack []int // offsets unpacked, in order
}

func newStrided(n, stride int, fill func(i int) byte) *strided {
	s := &strided{mem: bytes.Repeat([]byte{guard}, n*stride), n: n, stride: stride}
	if fill != nil {
		for i := range n {
			s.mem[i*stride] = fill(i)
		}
	}
	return s
}

func (s *strided) Len() int { return s.n }

func (s *strided) Pack(dst []byte, off int) {
	s.packs = append(s.packs, len(dst))
	for i := range dst {
		dst[i] = s.mem[(off+i)*s.stride]
	}
}

func (s *strided) Unpack(src []byte, off int) {
	s.unpack = append(s.unpack, off)
	for i, b := range src {
		s.mem[(off+i)*s.stride] = b
	}
}

// check reports whether the first count message bytes are want's and
// everything else still holds guard bytes.
func (s *strided) check(count int, want []byte) error {
	for i := range s.mem {
		exp := byte(guard)
		if i%s.stride == 0 && i/s.stride < count {
			exp = want[i/s.stride]
		}
		if s.mem[i] != exp {
			return errors.New("layout memory differs at byte " + strconv.Itoa(i))
		}
	}
	return nil
}

// TestLayouts sends and receives through Layouts (non-contiguous memory)
// with every protocol, the receive posted before or after the message
// arrives, layouts on either side or both, and a receive layout shorter
// than the message (truncation). Sent chunks never exceed the chunk size
// (or the eager limit); a receiver sharing the sender's memory packs from
// its layout in place, into a contiguous buffer in one copy; received
// bytes land at their place and nowhere else.
func TestLayouts(t *testing.T) {
	for _, p := range protos {
		for _, late := range []bool{false, true} {
			for _, sides := range []string{"send", "recv", "both"} {
				for _, trunc := range []bool{false, true} {
					name := p.name + "/" + sides
					if late {
						name += "/unexpected"
					}
					if trunc {
						name += "/truncated"
					}
					t.Run(name, func(t *testing.T) {
						size := p.size()
						want := pattern(size)
						h := newHarness(t, 2, p.cfg())
						s := &Request{Mode: p.mode, Context: 1, Peer: 1, Self: 0, To: 1, Tag: 2}
						var src *strided
						if sides != "recv" {
							src = newStrided(size, 3, func(i int) byte { return want[i] })
							s.Layout = src
						} else {
							s.Buf = want
						}
						room := size
						if trunc {
							room = size - 5
						}
						r := &Request{Context: 1, Peer: 0, Tag: 2}
						var dst *strided
						if sides != "send" {
							dst = newStrided(room, 2, nil)
							r.Layout = dst
						} else {
							r.Buf = guarded(room)
						}
						if !late {
							h.recv(1, r)
						}
						h.send(0, s)
						h.drain()
						if late {
							h.recv(1, r)
							h.drain()
						}
						if !r.Done() || !s.Done() {
							t.Fatalf("done: recv %v, send %v; trace %s", r.Done(), s.Done(), h.traceString())
						}
						st := r.Status()
						if st.Count != room || st.Size != size || (trunc != errors.Is(st.Err, ErrTruncate)) || (!trunc && st.Err != nil) {
							t.Fatalf("status %+v", st)
						}
						if dst != nil {
							if err := dst.check(room, want); err != nil {
								t.Fatal(err)
							}
						} else if err := checkGuarded(r.Buf, room, want); err != nil {
							t.Fatal(err)
						}
						if src != nil {
							total := 0
							limit := max(testChunk, p.cfg().EagerLimit)
							if p.direct {
								limit = pipeChunk // the receiver packs from the sender's layout in place
							}
							for _, n := range src.packs {
								total += n
								if n > limit {
									t.Fatalf("packed a chunk of %d bytes", n)
								}
							}
							if p.rndv && total != room || !p.rndv && total != size {
								t.Fatalf("packed %d bytes in all (%v)", total, src.packs)
							}
							switch {
							case p.direct && dst == nil && len(src.packs) != 1:
								t.Fatalf("in-place rendezvous into a contiguous buffer packed %d times, want once (one copy)", len(src.packs))
							case p.rndv && !p.direct && len(src.packs) < 2:
								t.Fatalf("streamed rendezvous packed in %d chunks", len(src.packs))
							}
						}
						h.checkClean(t)
						h.checkOnce(t)
					})
				}
			}
		}
	}
}

// TestLayoutDataDest: a byte-stream transport may not read Data straight
// into a receive whose memory is a Layout; DataDest says so.
func TestLayoutDataDest(t *testing.T) {
	p := proto{name: "rndv-stream", mode: Standard, rndv: true}
	h := newHarness(t, 2, p.cfg())
	dst := newStrided(p.size(), 2, nil)
	r := &Request{Context: 1, Peer: 0, Tag: 2, Layout: dst}
	h.recv(1, r)
	h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: pattern(p.size())})
	if err := h.deliver(0, 1); err != nil { // RTS
		t.Fatal(err)
	}
	if err := h.deliver(1, 0); err != nil { // CTS
		t.Fatal(err)
	}
	q := h.queued(0, 1)
	if len(q) == 0 {
		t.Fatal("no Data frame queued")
	}
	if d := h.engs[1].DataDest(&q[0].Header, 0, len(q[0].Payload)); d != nil {
		t.Fatalf("DataDest gave %d bytes of memory for a layout receive", len(d))
	}
	h.drain()
	if err := dst.check(p.size(), pattern(p.size())); err != nil {
		t.Fatal(err)
	}
	h.checkClean(t)
}

package engine

import (
	"bytes"
	"fmt"
	"testing"
)

// A rendezvous is cut into Data frames of the chunk size of its
// destination: Config.PeerChunk where it names one, else ChunkSize.
func TestPeerChunk(t *testing.T) {
	tests := []struct {
		name      string
		peerChunk []int
		to1, to2  int // Data frames towards ranks 1 and 2
	}{
		{"default everywhere", nil, 10, 10},
		{"larger towards rank 2", []int{0, 0, 16}, 10, 3},
		{"a short list leaves the rest at the default", []int{0, 8}, 5, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 3, engCfg{EagerLimit: 8, ChunkSize: 4, PeerChunk: tt.peerChunk},
				engCfg{EagerLimit: 8, ChunkSize: 4}, engCfg{EagerLimit: 8, ChunkSize: 4})
			msg := make([]byte, 40)
			for i := range msg {
				msg[i] = byte(i + 1)
			}
			var got [3][]byte
			for _, to := range []int{1, 2} {
				got[to] = make([]byte, 40)
				h.recv(to, &Request{Context: 1, Peer: 0, Tag: 5, Buf: got[to]})
				h.send(0, &Request{Context: 1, Peer: to, Self: 0, To: to, Tag: 5, Buf: msg})
			}
			h.drain()
			for to, want := range map[int]int{1: tt.to1, 2: tt.to2} {
				n := 0
				for _, e := range h.trace {
					if e == fmt.Sprintf("0->%d data", to) {
						n++
					}
				}
				if n != want {
					t.Errorf("%d Data frames to rank %d, want %d (trace %s)", n, to, want, h.traceString())
				}
				if !bytes.Equal(got[to], msg) {
					t.Errorf("rank %d received %v, want %v", to, got[to], msg)
				}
			}
			h.checkClean(t)
		})
	}
}

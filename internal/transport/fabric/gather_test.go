package fabric

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

// gathered builds a message of gathered frames, one per payload, each
// with the tag of its index.
func gathered(payloads ...[]byte) []byte {
	var b []byte
	for i, p := range payloads {
		h := wire.Header{Kind: wire.Eager, Tag: int32(i), Size: int64(len(p))}
		hb := make([]byte, wire.HeaderSize)
		h.Marshal(hb, len(p))
		b = append(append(b, hb...), p...)
	}
	return b
}

func TestSplitGathered(t *testing.T) {
	two := gathered([]byte("ab"), nil)
	for _, tc := range []struct {
		name string
		b    []byte
		want []string // the payloads, in order; nil: an error
		err  string
	}{
		{"two", two, []string{"ab", ""}, ""},
		{"three", gathered([]byte("x"), []byte("yz"), []byte("")), []string{"x", "yz", ""}, ""},
		{"one frame", gathered([]byte("a")), nil, "1 frames"},
		{"empty", nil, nil, "0 frames"},
		{"cut in a payload", two[:len(two)-wire.HeaderSize-1], nil, "past the message"},
		{"cut in a header", two[:len(two)-1], nil, "gathered frame 1"},
		{"bytes after the last frame", append(append([]byte{}, two...), 1, 2, 3), nil, "gathered frame 2"},
		{"too long", make([]byte, GatherCap+1), nil, "more than one gathers"},
		{"not a header", make([]byte, 2*wire.HeaderSize), nil, "gathered frame 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := SplitGathered(tc.b, func(h wire.Header, p []byte) {
				if int(h.Tag) != len(got) {
					t.Errorf("frame %d has tag %d", len(got), h.Tag)
				}
				got = append(got, string(p))
			})
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if len(got) > 0 {
					t.Fatalf("frames delivered before the error: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("frames %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzSplitGathered: any bytes a peer sends split without a panic, and
// what is taken is whole frames that make up the message exactly.
func FuzzSplitGathered(f *testing.F) {
	f.Add(gathered([]byte("ab"), nil))
	f.Add(gathered(bytes.Repeat([]byte{7}, 100), []byte("x"), []byte("yz")))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var back []byte
		err := SplitGathered(b, func(h wire.Header, p []byte) {
			hb := make([]byte, wire.HeaderSize)
			h.Marshal(hb, len(p))
			back = append(append(back, hb...), p...)
		})
		if err != nil {
			if back != nil {
				t.Fatalf("frames delivered before the error %v", err)
			}
			return
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("the frames taken (%d bytes) are not the message (%d)", len(back), len(b))
		}
	})
}

// The policy: the first small frame to a peer after a wait goes alone,
// the next ones are gathered until a flush or a wait's step; a slow
// flush pauses gathering for GatherPause times its delay.
func TestGatherPolicy(t *testing.T) {
	clock := time.Unix(1000, 0)
	g := NewGather(3)
	g.now = func() time.Time { return clock }
	take := func(peer int) bool {
		t.Helper()
		if !g.Take(peer) {
			return false
		}
		g.Added(peer)
		return true
	}
	if take(1) {
		t.Fatal("the first frame to a peer was gathered")
	}
	for i := range 2 {
		if !take(1) {
			t.Fatalf("frame %d was not gathered", i+2)
		}
	}
	if take(2) {
		t.Fatal("the first frame to another peer was gathered")
	}
	if !g.Has(1) || g.Has(2) || !g.Any() {
		t.Fatal("Has/Any wrong after gathering for peer 1")
	}
	var sent []int
	if !g.Flush(func(p int) { sent = append(sent, p) }) || fmt.Sprint(sent) != "[1]" {
		t.Fatalf("flush sent %v", sent)
	}
	if g.Any() || g.Flush(func(int) { t.Fatal("sent after the flush") }) {
		t.Fatal("frames left after the flush")
	}
	// No wait since the frame alone: the next is gathered again.
	if !take(1) {
		t.Fatal("not gathered after a flush without a wait")
	}
	if !g.Drop(1) || g.Drop(1) || g.Any() {
		t.Fatal("Drop did not remove peer 1 once")
	}
	g.Waited()
	if take(1) {
		t.Fatal("the first frame after a wait's step was gathered")
	}
	if !take(1) {
		t.Fatal("the second frame after a wait's step went alone")
	}
	g.Flush(func(int) {})
	// A frame from peer 1: the next to it goes alone (a reply); to peer
	// 2, which was not heard, it is gathered.
	take(2)
	g.Heard(1)
	if take(1) {
		t.Fatal("the first frame after one from the peer was gathered")
	}
	if !take(1) || !take(2) {
		t.Fatal("not gathered: the second frame after one from the peer, or to a peer not heard")
	}
	// A flush 2 GatherIdle after the last frame pauses gathering for 100
	// times that.
	clock = clock.Add(2 * GatherIdle)
	g.Flush(func(int) {})
	if n := g.SlowFlushes.Load(); n != 1 {
		t.Fatalf("%d slow flushes, want 1", n)
	}
	for range 3 {
		if take(1) || take(2) {
			t.Fatal("gathered during the pause")
		}
	}
	clock = clock.Add(GatherPause*2*GatherIdle - time.Microsecond)
	if take(1) {
		t.Fatal("gathered just before the pause ends")
	}
	clock = clock.Add(time.Microsecond)
	if !take(1) {
		t.Fatal("not gathered once the pause is over")
	}
	// A flush soon after the last frame does not pause; a very slow one
	// pauses for GatherPauseMax.
	clock = clock.Add(GatherIdle)
	g.Flush(func(int) {})
	if g.SlowFlushes.Load() != 1 {
		t.Fatal("a prompt flush paused gathering")
	}
	take(1)
	clock = clock.Add(time.Hour)
	g.Flush(func(int) {})
	clock = clock.Add(GatherPauseMax - time.Microsecond)
	for range 2 {
		if take(1) {
			t.Fatal("gathered before GatherPauseMax")
		}
	}
	clock = clock.Add(time.Microsecond)
	if !take(1) {
		t.Fatal("the pause outlasted GatherPauseMax")
	}
}

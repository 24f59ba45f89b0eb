package ucx

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

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
		{"too long", make([]byte, gatherCap+1), nil, "more than one gathers"},
		{"not a header", make([]byte, 2*wire.HeaderSize), nil, "gathered frame 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := splitGathered(tc.b, func(h wire.Header, p []byte) {
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
		err := splitGathered(b, func(h wire.Header, p []byte) {
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

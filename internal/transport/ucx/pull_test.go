package ucx

import (
	"bytes"
	"testing"
)

func TestParsePull(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      pullRequest
		size   int
		ok, in bool
	}{
		{"whole", pullRequest{7, 0, 100, 1}, 100, true, true},
		{"tail", pullRequest{7, 90, 10, 2}, 100, true, true},
		{"empty at the end", pullRequest{7, 100, 0, 3}, 100, true, true},
		{"one past the end", pullRequest{7, 90, 11, 4}, 100, true, false},
		{"offset past the end", pullRequest{7, 101, 0, 5}, 100, true, false},
		{"overflowing", pullRequest{7, 50, ^uint64(0) - 10, 6}, 100, true, false},
		{"read id too large for a tag", pullRequest{7, 0, 1, dataBit}, 100, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, pullSize)
			tc.p.put(b)
			p, ok := parsePull(b)
			if ok != tc.ok || p != tc.p {
				t.Fatalf("parsePull = %+v %v, want %+v %v", p, ok, tc.p, tc.ok)
			}
			if in := p.within(tc.size); in != tc.in {
				t.Fatalf("within(%d) = %v, want %v", tc.size, in, tc.in)
			}
		})
	}
	if _, ok := parsePull(make([]byte, pullSize-1)); ok {
		t.Fatal("a short request was taken")
	}
}

// FuzzParsePull: any bytes a peer sends decode without a panic, a request
// taken encodes back to the same bytes, and one within a region asks for
// bytes inside it.
func FuzzParsePull(f *testing.F) {
	b := make([]byte, pullSize)
	pullRequest{1, 2, 3, 4}.put(b)
	f.Add(b, 100)
	f.Add([]byte{1, 2, 3}, 0)
	f.Fuzz(func(t *testing.T, b []byte, size int) {
		p, ok := parsePull(b)
		if !ok {
			return
		}
		back := make([]byte, pullSize)
		p.put(back)
		if !bytes.Equal(back, b[:pullSize]) {
			t.Fatalf("%+v encodes to % x, not % x", p, back, b[:pullSize])
		}
		if p.within(size) && (p.off > uint64(size) || p.off+p.n > uint64(size) || p.off+p.n < p.off) {
			t.Fatalf("%+v within %d", p, size)
		}
	})
}

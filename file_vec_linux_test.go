package mpi

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAdvance: the buffers left after n bytes moved, whole buffers
// dropped without a copy, a partly done one on a copy of the list; the
// caller's list never changes.
func TestAdvance(t *testing.T) {
	a, b, c := make([]byte, 3), make([]byte, 0), make([]byte, 5)
	for _, tc := range []struct {
		name string
		n    int
		lens []int
		own  bool
	}{
		{"nothing", 0, []int{3, 0, 5}, false},
		{"first whole, the empty one after it too", 3, []int{5}, false},
		{"into the last", 4, []int{4}, true},
		{"all", 8, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bufs := [][]byte{a, b, c}
			own := false
			left := advance(bufs, tc.n, &own)
			var lens []int
			for _, x := range left {
				lens = append(lens, len(x))
			}
			if !slices.Equal(lens, tc.lens) || own != tc.own {
				t.Errorf("left %v (copied %v), want %v (%v)", lens, own, tc.lens, tc.own)
			}
			if len(bufs[0]) != 3 || len(bufs[1]) != 0 || len(bufs[2]) != 5 {
				t.Errorf("the caller's list changed")
			}
		})
	}
}

// TestVecRoundTrip: writeVec and readVec move many buffers (more than
// one call's IOV_MAX) in order, and readVec stops at the end of the file
// without changing the caller's list.
func TestVecRoundTrip(t *testing.T) {
	fd, err := os.Create(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	var out [][]byte
	var all []byte
	for i := range 2*iovMax + 7 {
		p := bytes.Repeat([]byte{byte(i)}, 1+i%13)
		out = append(out, p)
		all = append(all, p...)
	}
	if done, err := writeVec(fd, out, 10); !done || err != nil {
		t.Fatalf("writeVec: %v %v", done, err)
	}
	in := make([][]byte, len(out)+1)
	for i := range out {
		in[i] = make([]byte, len(out[i]))
	}
	in[len(out)] = make([]byte, 100) // past the end
	done, got, err := readVec(fd, in, 10)
	if !done || err != nil || got != int64(len(all)) {
		t.Fatalf("readVec: %v %d %v, want %d bytes", done, got, err, len(all))
	}
	if !bytes.Equal(bytes.Join(in[:len(out)], nil), all) || len(in[len(out)]) != 100 {
		t.Fatalf("read back other bytes, or the list changed")
	}
}

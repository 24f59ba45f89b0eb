package transport

import (
	"strings"
	"testing"
)

// An integer is reachable atomically only inside the memory, at an
// address that is a multiple of its size, and only at 4 or 8 bytes.
func TestAlignedInt(t *testing.T) {
	for _, tc := range []struct {
		base         uint64
		n, off, size int
		want         bool
	}{
		{0x1000, 64, 0, 8, true},
		{0x1000, 64, 56, 8, true},
		{0x1000, 64, 60, 8, false}, // runs past the end
		{0x1000, 64, 64, 4, false},
		{0x1000, 64, -8, 8, false},
		{0x1000, 64, 4, 8, false}, // misaligned
		{0x1000, 64, 4, 4, true},
		{0x1004, 64, 0, 8, false}, // the base decides alignment, not the offset
		{0x1004, 64, 4, 8, true},
		{0x1000, 64, 0, 2, false}, // no 2-byte atomics
		{0x1000, 64, 0, 16, false},
		{0x1000, 4, 0, 8, false},
	} {
		if got := AlignedInt(tc.base, tc.n, tc.off, tc.size); got != tc.want {
			t.Errorf("AlignedInt(%#x, %d, %d, %d) = %v, want %v", tc.base, tc.n, tc.off, tc.size, got, tc.want)
		}
	}
}

type alignedOnly struct {
	base uint64
	n    int
}

func (a alignedOnly) AtomicOK(off, size int) bool { return AlignedInt(a.base, a.n, off, size) }
func (a alignedOnly) Atomics(AtomicOp, int, []Atomic) error {
	return nil
}

// CheckAtomics refuses an unknown operation and any integer the remote
// cannot reach, saying which.
func TestCheckAtomics(t *testing.T) {
	r := alignedOnly{0x2000, 32}
	for _, tc := range []struct {
		op   AtomicOp
		size int
		offs []int
		want string // "" for no error
	}{
		{AtomicAdd, 8, []int{0, 8, 24}, ""},
		{AtomicCswap, 4, []int{28}, ""},
		{AtomicSwap, 8, nil, ""},
		{AtomicCswap + 1, 8, []int{0}, "unknown operation 6"},
		{AtomicAdd, 8, []int{0, 12}, "8 bytes at 12 are not an aligned integer of the 32 bytes"},
		{AtomicXor, 8, []int{32}, "8 bytes at 32 are not"},
	} {
		as := make([]Atomic, len(tc.offs))
		for i, o := range tc.offs {
			as[i].Off = o
		}
		err := CheckAtomics(r, tc.op, tc.size, r.n, as)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("op %d, %d bytes at %v: %v", tc.op, tc.size, tc.offs, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("op %d, %d bytes at %v: error %v, want one saying %q", tc.op, tc.size, tc.offs, err, tc.want)
		}
	}
}

package memcopy

import (
	"bytes"
	"fmt"
	"testing"
)

// Copy copies what copy copies, for every length around the threshold and
// every alignment, including overlapping buffers, and returns the same count.
func TestCopy(t *testing.T) {
	src := make([]byte, 3*Threshold+64)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for _, n := range []int{0, 1, 63, Threshold - 1, Threshold, Threshold + 1, 2*Threshold + 17, 3 * Threshold} {
		for _, off := range []int{0, 1, 7, 31} {
			got := make([]byte, n+off+8)
			want := make([]byte, n+off+8)
			if k, wk := Copy(got[off:off+n], src[off:]), copy(want[off:off+n], src[off:]); k != wk || !bytes.Equal(got, want) {
				t.Fatalf("n %d off %d: Copy returned %d, copy %d; bytes equal %v", n, off, k, wk, bytes.Equal(got, want))
			}
		}
	}
	// Overlapping forward and backward, as copy allows both.
	for _, shift := range []int{-5, 5, -Threshold, Threshold} {
		a := append([]byte(nil), src...)
		b := append([]byte(nil), src...)
		lo, hi := 0, 2*Threshold
		d, s := lo+max(shift, 0), lo+max(-shift, 0)
		k := Copy(a[d:d+hi], a[s:s+hi])
		wk := copy(b[d:d+hi], b[s:s+hi])
		if k != wk || !bytes.Equal(a, b) {
			t.Fatalf("overlap shift %d: differs from copy", shift)
		}
	}
}

// BenchmarkCopy compares Copy with Go's copy on buffers in this core's
// cache (the case where the string move gains least).
func BenchmarkCopy(b *testing.B) {
	for _, n := range []int{256, 4096, 32 << 10, 1 << 20} {
		src, dst := make([]byte, n), make([]byte, n)
		b.Run(fmt.Sprintf("Copy/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Copy(dst, src)
			}
		})
		b.Run(fmt.Sprintf("copy/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

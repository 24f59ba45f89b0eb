package hint

import (
	"testing"
	"time"
	"unsafe"
)

// Pause is a hint, not a sleep: a million of them take well under a
// second (about 20 ms on the test machine).
func TestPauseIsShort(t *testing.T) {
	start := time.Now()
	for range 1_000_000 {
		Pause()
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a million Pause calls took %v", d)
	}
}

// PrefetchWrite changes nothing, and is harmless on any address of a
// buffer, its ends included.
func TestPrefetchWriteChangesNothing(t *testing.T) {
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for i := range buf {
		PrefetchWrite(unsafe.Pointer(&buf[i]))
	}
	for i := range buf {
		if buf[i] != byte(i*7) {
			t.Fatalf("byte %d changed to %d", i, buf[i])
		}
	}
}

func BenchmarkPause(b *testing.B) {
	for b.Loop() {
		Pause()
	}
}

func BenchmarkPrefetchWrite(b *testing.B) {
	var line [64]byte
	for b.Loop() {
		PrefetchWrite(unsafe.Pointer(&line))
	}
}

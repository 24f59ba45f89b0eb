package spin

import (
	"testing"
	"time"
)

// Pause is a hint, not a sleep: a million of them take well under a
// second (about 40 ms where PAUSE costs 140 cycles).
func TestPauseIsShort(t *testing.T) {
	start := time.Now()
	for range 1_000_000 {
		Pause()
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a million Pause calls took %v", d)
	}
}

func BenchmarkPause(b *testing.B) {
	for b.Loop() {
		Pause()
	}
}

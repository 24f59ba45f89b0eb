package shm

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// BenchmarkBoxPingPong is an 8-byte round trip through the fast boxes
// between two endpoints of this process, each on its own thread, with no
// engine: the transport's share of the shm latency (run with -cpu 2).
func BenchmarkBoxPingPong(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two threads (-cpu 2)")
	}
	dir := b.TempDir()
	job := rand.Uint64()
	var got [2]struct {
		atomic.Int64
		_ [120]byte // each counter on its own cache lines
	}
	ts := make([]*Transport, 2)
	for r := range ts {
		c := Config{Rank: r, Size: 2, JobID: job, Locals: []int{0, 1}, Dir: dir}
		c.Handler = func(wire.Frame) { got[r].Add(1) }
		c.Eager = func(*wire.Header, int, []byte) error { got[r].Add(1); return nil }
		tr, err := New(c)
		if err != nil {
			b.Fatal(err)
		}
		ts[r] = tr
		b.Cleanup(func() { tr.Close() })
	}
	for _, tr := range ts {
		if err := tr.Attach(); err != nil {
			b.Fatal(err)
		}
	}
	payload := make([]byte, 8)
	n := b.N
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t := ts[1]
		for i := 1; i <= n; i++ {
			for got[1].Load() < int64(i) {
				t.progress(t.cfg.Handler)
			}
			t.SendEager(0, 1, 1, 0, 0, 0, payload)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	t := ts[0]
	for i := 1; i <= n; i++ {
		t.SendEager(1, 1, 0, 0, 0, 0, payload)
		for got[0].Load() < int64(i) {
			t.progress(t.cfg.Handler)
		}
	}
	<-done
}

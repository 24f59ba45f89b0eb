package mpi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/trace"
)

// checkTrace parses a trace file and checks what any timeline must hold:
// every arrow has both ends and goes forward in time, spans of one track
// nest, and each track's clock only goes forward.
func checkTrace(t *testing.T, file string) *trace.View {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := trace.Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	v, err := trace.NewView(f) // fails on an arrow with one end
	if err != nil {
		t.Fatal(err)
	}
	stacks := map[int][]float64{}
	last := map[int]float64{}
	for _, e := range f.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Ts < last[e.Tid] {
			t.Fatalf("track %d goes back in time: %v after %v", e.Tid, e.Ts, last[e.Tid])
		}
		last[e.Tid] = e.Ts
		st := stacks[e.Tid]
		for len(st) > 0 && st[len(st)-1] <= e.Ts {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && e.Ts+e.Dur > st[len(st)-1]+1e-6 {
			t.Fatalf("track %d: span %s [%v, %v] overlaps its parent ending at %v", e.Tid, e.Name, e.Ts, e.Ts+e.Dur, st[len(st)-1])
		}
		stacks[e.Tid] = append(st, e.Ts+e.Dur)
	}
	for _, a := range v.Arrows {
		if a.End < a.Start {
			t.Fatalf("message %d -> %d arrives before it is sent: %v < %v", a.From, a.To, a.End, a.Start)
		}
	}
	return v
}

// TestTraceGoroutineRanks traces a small job and checks the timeline:
// spans for the calls, an arrow for every message.
func TestTraceGoroutineRanks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.json")
	cfg := mpi.DefaultConfig()
	cfg.Trace = file
	const n, rounds = 3, 5
	err := mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
		next, prev := (c.Rank()+1)%n, (c.Rank()+n-1)%n
		for i := 0; i < rounds; i++ {
			if _, _, err := mpi.Sendrecv[int64](c, int64(i), next, i, prev, i); err != nil {
				return err
			}
		}
		if _, err := mpi.Allreduce(c, int64(c.Rank()), mpi.Sum[int64]()); err != nil {
			return err
		}
		if c.Rank() == 0 {
			return mpi.Send(c, make([]byte, 100000), 1, 9)
		} else if c.Rank() == 1 {
			_, _, err := mpi.Recv[[]byte](c, 0, 9)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v := checkTrace(t, file)
	if len(v.Ranks) != n {
		t.Fatalf("trace has ranks %v, want %d", v.Ranks, n)
	}
	calls := map[string]int{}
	for _, s := range v.Spans {
		calls[s.Name]++
	}
	if calls["Sendrecv"] != n*rounds || calls["Allreduce"] != n || calls["Send"] != 1 || calls["Recv"] != 1 {
		t.Fatalf("calls traced: %v", calls)
	}
	user, big := 0, false
	for _, a := range v.Arrows {
		if !a.Coll {
			user++
			big = big || (a.Bytes >= 100000 && a.From == 0 && a.To == 1 && a.Tag == 9)
		}
	}
	if user != n*rounds+1 || !big {
		t.Fatalf("%d user message arrows (want %d), the 100 kB one found: %v", user, n*rounds+1, big)
	}
}

// BenchmarkTraceLatency is the 8-byte ping-pong between two goroutine
// ranks with tracing off and on, side by side: what recording every call
// and message costs.
func BenchmarkTraceLatency(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cfg := mpi.DefaultConfig()
			if on {
				cfg.Trace = filepath.Join(b.TempDir(), "trace.json")
			}
			buf := make([]byte, 8)
			err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
				peer := 1 - c.Rank()
				if c.Rank() == 0 {
					b.ResetTimer()
				}
				for i := 0; i < b.N; i++ {
					if c.Rank() == 0 {
						if err := c.Send(buf, 8, mpi.Byte, peer, 1); err != nil {
							return err
						}
						if _, err := c.Recv(buf, 8, mpi.Byte, peer, 1); err != nil {
							return err
						}
					} else {
						if _, err := c.Recv(buf, 8, mpi.Byte, peer, 1); err != nil {
							return err
						}
						if err := c.Send(buf, 8, mpi.Byte, peer, 1); err != nil {
							return err
						}
					}
				}
				if c.Rank() == 0 {
					b.StopTimer()
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

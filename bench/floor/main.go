// Command floor measures what one message between two cores costs at the
// least on this machine: two goroutines, each locked to its own thread,
// pass a counter back and forth through two cache lines (each writes one
// and polls the other), with no MPI, no matching and no queue at all. A
// one-way hop is one trip of a cache line from core to core, the part of
// an 8-byte message's latency that no software removes; the MPI
// latencies of `mpigo bench latency` and bench/compare.sh can be read
// against it.
//
//	go build -o floor ./bench/floor && chrt -f 10 ./floor [-rounds R] [-hops N]
//
// Run it under the priority the benchmarks use (chrt -f 10), and on an
// otherwise idle machine: with two processors, the two goroutines need
// both. Build it first: under `chrt -f 10 go run`, the go command waiting
// for it would run at the same real-time priority and could take one of
// the two processors from it. It prints the median, the least and the most of R rounds of N
// round trips each, in nanoseconds one way. docs/performance.md
// ("Goroutine latency: the floor") has what it showed.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// line is a counter alone on its cache line (and the next: adjacent-line
// prefetch pairs lines on some processors).
type line struct {
	v atomic.Uint64
	_ [120]byte
}

func main() {
	rounds := flag.Int("rounds", 7, "rounds to take the median of")
	hops := flag.Int("hops", 2_000_000, "round trips per round")
	flag.Parse()
	if *rounds < 1 || *hops < 1 {
		fmt.Fprintln(os.Stderr, "floor: -rounds and -hops want positive numbers")
		os.Exit(2)
	}
	if runtime.GOMAXPROCS(0) < 2 {
		fmt.Fprintln(os.Stderr, "floor: needs two processors (GOMAXPROCS >= 2): the two goroutines poll")
		os.Exit(2)
	}
	oneWay := make([]float64, *rounds)
	for i := range oneWay {
		oneWay[i] = round(uint64(*hops))
	}
	slices.Sort(oneWay)
	fmt.Printf("one-way hop through a cache line: median %.1f ns, least %.1f, most %.1f (%d rounds of %d round trips)\n",
		oneWay[len(oneWay)/2], oneWay[0], oneWay[len(oneWay)-1], *rounds, *hops)
}

// round runs n round trips between this goroutine and another and returns
// the mean one-way time in ns.
func round(n uint64) float64 {
	var ping, pong line
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := uint64(1); i <= n; i++ {
			for ping.v.Load() != i {
			}
			pong.v.Store(i)
		}
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	for i := uint64(1); i <= n; i++ {
		ping.v.Store(i)
		for pong.v.Load() != i {
		}
	}
	el := time.Since(start)
	<-done
	return float64(el.Nanoseconds()) / float64(n) / 2
}

// Package hint holds the hints a loop that works with another core gives
// the processor: that it is polling (Pause), and which line it is about
// to write (PrefetchWrite).
//
// A loop that polls memory another core writes should say so between
// polls (PAUSE on amd64, YIELD on arm64): without it, the loads the loop
// has in flight when the line changes are thrown away with the pipeline,
// and the loop sees the change later. On this project's 2-core test
// machine a Go ping-pong through two cache lines took 471 ns one way
// without the pause and 317 ns with it.
//
// A writer that streams into cells another core reads waits, at its next
// locked instruction, until it owns the line it just wrote: each message
// pays a whole trip of the line. Asking for the next line early
// (PREFETCHW) overlaps that trip with the work before the next write.
// docs/performance.md, "Pausing while polling" and "Asking for the next
// cell early", has the measurements.
package hint

import "unsafe"

// Pause tells the processor that the caller is in a polling loop. It
// returns after a short delay (tens of cycles: 19 ns on the test machine,
// up to about 140 cycles on recent Intel cores); on processors with no
// such hint it returns at once.
func Pause() { pause() }

// PrefetchWrite asks the processor to fetch the cache line at p for
// writing, without waiting for it. It never faults and changes no memory;
// where the processor has no such prefetch it does nothing.
func PrefetchWrite(p unsafe.Pointer) { prefetchWrite(p) }

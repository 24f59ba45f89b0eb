// Package spin holds what a loop that waits for another core needs.
//
// A loop that polls memory another core writes should tell the processor
// so between polls (PAUSE on amd64, YIELD on arm64): without it, the loads
// the loop has in flight when the line changes are thrown away with the
// pipeline, and the loop sees the change later. On this project's 2-core
// test machine a Go ping-pong through two cache lines took 471 ns one way
// without the pause and 317 ns with it (docs/performance.md, "Pausing
// while polling").
package spin

// Pause tells the processor that the caller is in a polling loop. It
// returns after a short delay (tens of cycles: 19 ns on the test machine,
// up to about 140 cycles on recent Intel cores); on processors with no
// such hint it returns at once.
func Pause() { pause() }

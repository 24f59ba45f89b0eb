// Package memcopy copies message bytes between buffers that are usually
// in different cores' caches: a ring in shared memory and a receive
// buffer, or two goroutine ranks' buffers.
//
// On amd64 processors with fast string moves (ERMS), Copy of a kilobyte or
// more uses REP MOVSB, which writes whole cache lines without first
// reading them from the core that last held them. Go's copy reads each
// line it writes (its vector stores need the line in this core's cache):
// streaming through a ring between two cores, 32 KiB at a time, it moved
// 6.9 GB/s on the machine docs/performance.md describes, against 25.9
// GB/s with REP MOVSB for the writes into the ring and 12.5 for the reads
// out of it ("Copying between cores"). Elsewhere, under the race detector
// (which does not see memory touched by assembly), and for small copies,
// Copy is Go's copy.
package memcopy

// Threshold is the smallest copy that takes the string move: below it,
// the move's start-up costs more than it saves.
const Threshold = 1024

// Copy copies min(len(dst), len(src)) bytes from src to dst and returns
// their number, as copy does. dst and src may overlap only as copy allows
// for a forward copy: Copy falls back to copy when they overlap.
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n < Threshold || !fast || overlap(dst[:n], src[:n]) {
		return copy(dst, src)
	}
	move(dst[:n], src[:n])
	return n
}

// Fast reports whether Copy moves large buffers with the processor's
// string move (see the package's doc) rather than with Go's copy.
func Fast() bool { return fast }

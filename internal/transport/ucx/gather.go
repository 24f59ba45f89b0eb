package ucx

import (
	"fmt"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

// Gathered small frames, in every build so that their decoder is tested
// and fuzzed without UCX. A rank that sends a second small frame to a
// peer with no wait of its own polling the worker in between gathers it,
// and the small frames after it, in a buffer of the peer's; the buffer
// goes as one message, tagged gatherBit|rank, at the next step of the
// worker (a wait's poll, or the progress goroutine's step, which the
// first frame gathered wakes), when it is full, or before a frame to the
// same peer that is not gathered. A stream of small messages then costs
// the kernel one send per buffer rather than one per message; a lone
// message, or the first of a burst, goes at once, so a ping-pong's
// latency does not change. The message is the frames one after the
// other, each its 64-byte header and the payload the header announces.

// A flush is slow when the frame gathered last waited more than
// gatherIdle for it: the program computed after its sends, without an MPI
// call, and the frame waited for the transport's progress goroutine,
// which may wait for a processor (with one, until Go preempts the
// program: 3-15 ms measured; with two on a busy node, 0.1-3.5 ms). The
// transport then sends every frame alone for gatherPause times that
// delay (at most gatherPauseMax), so that a program that overlaps its
// sends with computation loses to such delays about 1% of its time at
// most, while one that sends bursts and then waits (its wait's poll
// sends what was gathered at once) keeps gathering; a thread that the
// kernel preempted between a burst and its wait stops the gathering for
// a pause in proportion.
const (
	gatherIdle     = 200 * time.Microsecond
	gatherPause    = 100
	gatherPauseMax = time.Second
)

// gatherBit is the tag bit MG_GATHER: a message of gathered frames, from
// the rank in the low bits.
const gatherBit = uint64(1) << 60

// gatherFrame is the longest frame (header and payload) that is gathered:
// at least two fit in a message. Gathering costs no copy of its own (a
// frame sent alone is copied into C memory too), and a send saved is a
// system call over UCX's tcp: 1 KiB messages went at 0.68x Open MPI's
// rate sent alone.
const gatherFrame = 4096

// gatherCap is the most bytes of frames one message gathers: it is
// received whole, as any message of at most maxWhole bytes (the cgo
// build checks that it is no more).
const gatherCap = wire.HeaderSize + 8<<10

// splitGathered calls fn with each frame of b, a message of gathered
// frames, in order; the payload it passes borrows b. If b does not hold
// whole frames end to end, or holds fewer than two, it returns an error
// and calls fn for none.
func splitGathered(b []byte, fn func(h wire.Header, payload []byte)) error {
	if len(b) > gatherCap {
		return fmt.Errorf("a message of gathered frames of %d bytes, more than one gathers (%d)", len(b), gatherCap)
	}
	count := 0
	for off := 0; off < len(b); count++ {
		_, n, err := wire.Unmarshal(b[off:])
		if err != nil {
			return fmt.Errorf("gathered frame %d at byte %d: %w", count, off, err)
		}
		if n < 0 || n > len(b)-off-wire.HeaderSize {
			return fmt.Errorf("gathered frame %d at byte %d announces %d bytes of payload, past the message's %d", count, off, n, len(b))
		}
		off += wire.HeaderSize + n
	}
	if count < 2 {
		return fmt.Errorf("a message of gathered frames with %d frames (a single frame goes alone)", count)
	}
	for off := 0; off < len(b); {
		h, n, _ := wire.Unmarshal(b[off:])
		end := off + wire.HeaderSize + n
		fn(h, b[off+wire.HeaderSize:end:end])
		off = end
	}
	return nil
}

package ucx

import (
	"fmt"

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
// The tag bit, the limits and the pause after a slow flush are beside
// the code that uses them (ucx.go, "The gathering of small frames").

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

package fabric

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

// Gathered small frames. A rank that sends a second small frame to a
// peer with no wait of its own stepping the transport in between gathers
// it, and the small frames after it, in a buffer of the peer's; the
// buffer goes as one message at the transport's next step (a wait's
// poll, or the progress goroutine's step, which the first frame gathered
// wakes: Loop.Kick), when it is full, or before a frame to the same peer
// that is not gathered. A stream of small messages then costs the kernel
// one send per buffer rather than one per message; a lone message, or
// the first of a burst, goes at once, so a ping-pong's latency does not
// change. The message is the frames one after the other, each its
// 64-byte header and the payload the header announces (SplitGathered).
//
// Gather is the policy, shared by the fabric transports; the buffers and
// the sends are each transport's own.

// GatherCap is the most bytes of frames one message gathers; each
// transport receives it whole.
const GatherCap = wire.HeaderSize + 8<<10

// GatherFrame is the longest frame (header and payload) that is
// gathered: at least two fit in a message. Gathering costs no copy of its
// own (a frame sent alone is copied into C memory too), and a send saved
// is a system call over the fabrics' tcp: 1 KiB messages went at 0.68x
// Open MPI's rate sent alone over UCX.
const GatherFrame = 4096

// A flush is slow when the frame gathered last waited more than
// GatherIdle for it: the program computed after its sends, without an MPI
// call, and the frame waited for the transport's progress goroutine,
// which may wait for a processor (with one, until Go preempts the
// program: 3-15 ms measured over UCX; with two on a busy node, 0.1-3.5
// ms). Frames then go alone for GatherPause times that delay (at most
// GatherPauseMax), so that a program that overlaps its sends with
// computation loses to such delays about 1% of its time at most, while
// one that sends bursts and then waits (its wait's step sends what was
// gathered at once) keeps gathering; a thread that the kernel preempted
// between a burst and its wait stops the gathering for a pause in
// proportion.
const (
	GatherIdle     = 200 * time.Microsecond
	GatherPause    = 100
	GatherPauseMax = time.Second
)

// Gather decides which small frames a transport gathers and when what is
// gathered goes. Its methods are called with the transport's send lock
// held; SlowFlushes may be read at any time.
type Gather struct {
	// soloAt is, per peer, the wait epoch of the last small frame sent
	// to it alone (0: none since a frame came from it); epoch counts the
	// steps of the program's waits: a frame is gathered only if another
	// went alone since the last wait's step or frame from the peer.
	soloAt []uint64
	epoch  uint64
	has    []bool // per peer: frames gathered, not sent yet
	peers  []int  // the peers with frames gathered
	// flushing is the list of peers a flush goes through (the last one's).
	flushing []int
	// last is when the last frame was gathered; pauseUntil, if set,
	// when gathering resumes after a slow flush.
	last, pauseUntil time.Time
	// now is the clock (tests set it).
	now func() time.Time
	// SlowFlushes counts the flushes that paused gathering, Frames the
	// frames gathered.
	SlowFlushes, Frames atomic.Uint64
}

// NewGather returns the policy for a job of size ranks.
func NewGather(size int) *Gather {
	return &Gather{soloAt: make([]uint64, size), epoch: 1, has: make([]bool, size), now: time.Now}
}

// Small reports whether a frame of n bytes (header and payload) may be
// gathered.
func Small(n int) bool { return n <= GatherFrame }

// Take reports whether a small frame to peer is gathered: it is if frames
// are gathered for peer already, or if the last small frame to peer went
// alone with no wait's step and no frame from peer since, and gathering
// is not paused. If it is
// not, it goes alone, and Take notes that.
func (g *Gather) Take(peer int) bool {
	if g.has[peer] {
		return true
	}
	if g.soloAt[peer] == g.epoch && g.on() {
		return true
	}
	g.soloAt[peer] = g.epoch
	return false
}

// on reports whether a new gathering may begin: not while paused after a
// slow flush.
func (g *Gather) on() bool {
	if g.pauseUntil.IsZero() {
		return true
	}
	if g.now().Before(g.pauseUntil) {
		return false
	}
	g.pauseUntil = time.Time{}
	return true
}

// Added notes a frame gathered for peer and reports whether it is the
// first gathered since the last flush: the transport then wakes its
// progress goroutine, whose next step must come soon even if the program
// makes no MPI call for a while.
func (g *Gather) Added(peer int) (first bool) {
	first = len(g.peers) == 0
	if !g.has[peer] {
		g.has[peer] = true
		g.peers = append(g.peers, peer)
	}
	g.last = g.now()
	g.Frames.Add(1)
	return first
}

// Waited notes a step of a wait: the program's next small frame to each
// peer goes alone (it may be the reply the wait was for).
func (g *Gather) Waited() { g.epoch++ }

// Heard notes a frame received from peer: the program's next small frame
// to peer goes alone, since it may answer this one. A wait that finds its
// message already received (the progress goroutine took it) makes no
// step of its own, so Waited alone would have the reply of a ping-pong
// gathered, and sent only when the goroutine next steps.
func (g *Gather) Heard(peer int) { g.soloAt[peer] = 0 }

// Has reports whether frames are gathered for peer.
func (g *Gather) Has(peer int) bool { return g.has[peer] }

// Any reports whether frames are gathered for any peer.
func (g *Gather) Any() bool { return len(g.peers) > 0 }

// Flush calls send for each peer with frames gathered, which must send
// them, and reports whether there were any (none if g is nil: gathering
// is off). A flush that finds the last frame gathered older than
// GatherIdle pauses gathering.
func (g *Gather) Flush(send func(peer int)) bool {
	if g == nil || len(g.peers) == 0 {
		return false
	}
	if now := g.now(); now.Sub(g.last) > GatherIdle {
		// The program went on without an MPI call after its last frame
		// (computing, its messages under way), or the thread was not
		// running: that frame waited for the progress goroutine, which
		// may wait for a processor. Frames go alone for a while, at
		// once.
		g.pauseUntil = now.Add(min(GatherPause*now.Sub(g.last), GatherPauseMax))
		g.SlowFlushes.Add(1)
	}
	// send may drop other peers' frames (a peer that failed meanwhile):
	// the list is taken first, and a peer dropped is skipped.
	g.peers, g.flushing = g.flushing[:0], g.peers
	for _, p := range g.flushing {
		if g.has[p] {
			g.has[p] = false
			send(p)
		}
	}
	return true
}

// Drop notes that peer's frames were sent (before a frame that is not
// gathered) or dropped (the peer failed), and reports whether there were
// any.
func (g *Gather) Drop(peer int) bool {
	if !g.has[peer] {
		return false
	}
	g.has[peer] = false
	g.peers = slices.DeleteFunc(g.peers, func(p int) bool { return p == peer })
	return true
}

// FlushPeer calls send for peer if frames are gathered for it, before
// anything else goes to peer, so that it comes after them; g may be nil.
func (g *Gather) FlushPeer(peer int, send func(peer int)) {
	if g != nil && g.Drop(peer) {
		send(peer)
	}
}

// PutFrame writes f, with its payload of n bytes, at the start of b, a
// transport's buffer of gathered frames, and returns the bytes written.
func PutFrame(b []byte, f wire.Frame, n int) int {
	f.Header.Marshal(b, n)
	copy(b[wire.HeaderSize:], f.Payload)
	return wire.HeaderSize + n
}

// SplitGathered calls fn with each frame of b, a message of gathered
// frames, in order; the payload it passes borrows b. If b does not hold
// whole frames end to end, or holds fewer than two, it returns an error
// and calls fn for none.
func SplitGathered(b []byte, fn func(h wire.Header, payload []byte)) error {
	if len(b) > GatherCap {
		return fmt.Errorf("a message of gathered frames of %d bytes, more than one gathers (%d)", len(b), GatherCap)
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

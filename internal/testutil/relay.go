// Package testutil holds helpers that tests of several packages share.
// Only test code imports it.
package testutil

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// Relay sits between two ends of a test's tcp connections: it accepts
// connections on a loopback address and forwards each to a target,
// optionally altering the bytes on the way and recording what passes.
type Relay struct {
	ln   net.Listener
	cfg  RelayConfig
	mu   sync.Mutex
	seen bytes.Buffer // both directions, as they passed (with Record)
	// conns are the accepted and dialed connections, closed at cleanup.
	conns []net.Conn
}

// RelayConfig says where a Relay forwards and what it does on the way.
type RelayConfig struct {
	Target string // the address every accepted connection is forwarded to
	// Out carries the bytes of the end that dialed the relay to the
	// target, Back the target's bytes back (nil: a plain copy). They
	// return when src ends; the relay then closes dst.
	Out, Back func(dst io.Writer, src io.Reader)
	// Record keeps every byte that passes, for Saw.
	Record bool
}

// StartRelay starts a relay as cfg says; it stops, with every connection
// it made, when the test ends.
func StartRelay(t testing.TB, cfg RelayConfig) *Relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := &Relay{ln: ln, cfg: cfg}
	go rl.serve()
	t.Cleanup(func() {
		ln.Close()
		rl.mu.Lock()
		for _, c := range rl.conns {
			c.Close()
		}
		rl.mu.Unlock()
	})
	return rl
}

func (rl *Relay) serve() {
	for {
		a, err := rl.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", rl.cfg.Target)
		if err != nil {
			a.Close()
			continue
		}
		rl.mu.Lock()
		rl.conns = append(rl.conns, a, b)
		rl.mu.Unlock()
		go rl.pipe(b, a, rl.cfg.Out)
		go rl.pipe(a, b, rl.cfg.Back)
	}
}

// pipe carries src to dst through forward (nil: a copy), recording, and
// closes dst when src ends.
func (rl *Relay) pipe(dst, src net.Conn, forward func(dst io.Writer, src io.Reader)) {
	defer dst.Close()
	var in io.Reader = src
	if rl.cfg.Record {
		in = io.TeeReader(src, recorder{rl})
	}
	if forward == nil {
		io.Copy(dst, in)
		return
	}
	forward(dst, in)
}

type recorder struct{ rl *Relay }

func (w recorder) Write(p []byte) (int, error) {
	w.rl.mu.Lock()
	defer w.rl.mu.Unlock()
	return w.rl.seen.Write(p)
}

// Addr is the address the relay accepts connections on.
func (rl *Relay) Addr() string { return rl.ln.Addr().String() }

// Saw reports whether p passed through the relay (with Record).
func (rl *Relay) Saw(p []byte) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return bytes.Contains(rl.seen.Bytes(), p)
}

// FlipAt returns a forward function that copies src to dst flipping the
// bits of mask in byte off, then copies the rest.
func FlipAt(off int64, mask byte) func(dst io.Writer, src io.Reader) {
	return func(dst io.Writer, src io.Reader) {
		if _, err := io.CopyN(dst, src, off); err != nil {
			return
		}
		var b [1]byte
		if _, err := io.ReadFull(src, b[:]); err != nil {
			return
		}
		b[0] ^= mask
		dst.Write(b[:])
		io.Copy(dst, src)
	}
}

// Seen returns a copy of every byte that has passed so far (with Record),
// both directions interleaved as they passed.
func (rl *Relay) Seen() []byte {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return append([]byte(nil), rl.seen.Bytes()...)
}

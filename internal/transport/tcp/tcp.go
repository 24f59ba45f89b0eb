// Package tcp carries frames between processes over TCP.
//
// Every rank listens on one socket and publishes its address through the
// bootstrap store. A rank dials a peer the first time it sends to it,
// unless the peer dialed it first: a connection carries frames both ways,
// so a reply rides on the connection its request came by, and its TCP
// acknowledgement rides on the data (two one-way connections per pair
// cost every message a pure ACK segment each way: 2.5 us of the 8 us
// one-way latency measured here). A rank sends to a peer on one connection
// only, so frames from one rank to another arrive in order. When two ranks
// dial each other at the same moment (the first collective of a job does
// that), the lower rank's connection is kept: the lower rank, accepting
// the higher one's connection while dialing it, answers the handshake with
// "use mine", and the higher rank sends nothing on its own connection and
// adopts the lower rank's when it arrives (or already has: it adopts any
// connection from a lower rank it is dialing). Before this rule a job's
// first exchange left each pair with two one-way connections for good.
//
// A connection starts with a handshake. The accepting side sends a random
// 32-byte challenge; the dialer answers with magic "MPIGO", the wire
// version, the job id, its rank, a challenge of its own, and an
// HMAC-SHA256 of the first challenge and those fields keyed with the job's
// secret (which the launcher hands to the ranks out of band); the acceptor
// answers the dialer's challenge the same way before either side takes a
// frame from the other. A stranger, a bad secret or a mismatch closes the
// connection with an error that says what was wrong; the job goes on. Then
// each frame is the 64-byte wire header followed by its payload, written
// with one writev (net.Buffers) so the payload is not copied. One
// goroutine per connection reads frames and hands them to the Handler.
package tcp

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Config describes one endpoint.
type Config struct {
	Rank, Size int
	JobID      uint64
	// Addrs returns the listen address of a peer; it is called once per
	// peer, on the first send to it.
	Addrs func(peer int) (string, error)
	// Handler receives every arriving frame, on the reading goroutine of
	// the peer's connection. The frame borrows its payload.
	Handler transport.Handler
	// SockBuf, if positive, sets the kernel's send and receive buffer sizes
	// (SO_SNDBUF, SO_RCVBUF) of every connection, in bytes.
	SockBuf int
	// Secret is the job's shared secret: a connection must prove it knows
	// it before any frame from it is accepted.
	Secret []byte
	// Place, if set, returns where the payload of a frame belongs (the
	// posted receive buffer, for rendezvous Data), so that the reader
	// reads it there directly instead of into its own buffer; nil means
	// "read it as usual". The frame is then delivered with that payload.
	Place func(h *wire.Header, from, n int) []byte
	// OnPeerError, if set, is called once when a connection to or from a
	// peer fails (not when it is closed by Close); peer is -1 for a
	// connection that failed its handshake.
	OnPeerError func(peer int, err error)
	// Oversubscribed says the machine runs more ranks than it has cores:
	// readers then park in the network poller at once instead of polling
	// their socket first, which would take the core from a rank with work
	// (measured with 4 processes on 2 cores: a barrier took 430 us with
	// polling, 107 us without).
	Oversubscribed bool
}

// Transport is one rank's TCP endpoint. It is safe for concurrent use.
type Transport struct {
	cfg Config
	ln  net.Listener

	mu      sync.Mutex
	out     map[int]*conn // the connection this rank sends to each peer on
	in      map[net.Conn]bool
	closed  bool
	failed  map[int]bool
	live    map[int]int // connections with each peer being read
	readers sync.WaitGroup
}

type conn struct {
	ready  chan struct{} // closed once c or err is set
	once   sync.Once
	dialed bool // made by dial: this rank is connecting, or connected, to the peer
	failed bool // the dial failed (under Transport.mu)
	c      net.Conn
	err    error
	mu     sync.Mutex // serialises writes
	hdr    [wire.HeaderSize]byte
	bufs   net.Buffers
}

const (
	handshakeSize = 5 + 1 + 8 + 4 // magic, version, job, rank
	nonceSize     = 32
	greetingSize  = handshakeSize + nonceSize + macSize // the dialer's answer
	macSize       = sha256.Size
)

// finish sets the connection's outcome, once, and releases its waiters.
func (c *conn) finish(nc net.Conn, err error) {
	c.once.Do(func() {
		c.c, c.err = nc, err
		close(c.ready)
	})
}

// adoptTimeout bounds how long a rank told "use mine" waits for the
// lower rank's connection.
const adoptTimeout = time.Minute

// mac proves knowledge of the secret for this challenge and greeting.
func mac(secret, nonce, hello []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(nonce)
	m.Write(hello)
	return m.Sum(nil)
}

var magic = [5]byte{'M', 'P', 'I', 'G', 'O'}

// hello is the identity part of the handshake of rank in job.
func hello(job uint64, rank int) []byte {
	var hs [handshakeSize]byte
	copy(hs[:], magic[:])
	hs[5] = wire.Version
	binary.LittleEndian.PutUint64(hs[6:], job)
	binary.LittleEndian.PutUint32(hs[14:], uint32(rank))
	return hs[:]
}

// greeting is the dialer's answer to the acceptor's challenge: its hello,
// its own challenge, and the proof that it knows secret.
func greeting(secret, challenge []byte, job uint64, rank int, mine []byte) []byte {
	g := append(hello(job, rank), mine...)
	return append(g, mac(secret, challenge, g)...)
}

// handshakeTimeout bounds how long a connection may take to prove itself.
const handshakeTimeout = time.Minute

// New starts an endpoint that accepts connections on ln.
func New(cfg Config, ln net.Listener) *Transport {
	t := &Transport{cfg: cfg, ln: ln, out: map[int]*conn{}, in: map[net.Conn]bool{}, failed: map[int]bool{}, live: map[int]int{}}
	t.readers.Add(1)
	go t.accept()
	return t
}

// Addr returns the address peers dial.
func (t *Transport) Addr() string { return t.ln.Addr().String() }

// Name returns "tcp".
func (t *Transport) Name() string { return "tcp" }

func (t *Transport) peerError(peer int, err error) {
	t.mu.Lock()
	report := !t.closed && (peer < 0 || !t.failed[peer]) // -1: a stranger, always reported
	t.failed[peer] = true
	t.mu.Unlock()
	if report && t.cfg.OnPeerError != nil {
		t.cfg.OnPeerError(peer, err)
	}
}

// dial returns the connection for frames to peer, making it on first use.
func (t *Transport) dial(peer int) (*conn, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, errors.New("tcp: transport closed")
	}
	c := t.out[peer]
	if c == nil {
		c = &conn{ready: make(chan struct{}), dialed: true}
		t.out[peer] = c
		t.mu.Unlock()
		nc, redirect, err := t.connect(peer)
		switch {
		case err != nil:
			c.finish(nil, err)
		case !redirect:
			c.finish(nc, nil)
		default:
			// The peer is dialing us too and keeps its connection: send
			// on that one, once it has arrived (see the package doc).
			select {
			case <-c.ready:
			case <-time.After(adoptTimeout):
				c.finish(nil, fmt.Errorf("tcp: rank %d asked rank %d to use its connection and did not make it within %v", peer, t.cfg.Rank, adoptTimeout))
			}
		}
		<-c.ready
		if c.err != nil {
			t.mu.Lock()
			c.failed = true
			t.mu.Unlock()
			t.peerError(peer, c.err)
		}
	} else {
		t.mu.Unlock()
		<-c.ready
	}
	return c, c.err
}

// connect dials peer and proves both sides. redirect reports that the
// peer, dialing this rank at the same time, keeps its own connection:
// this one then carries no frames from this rank.
func (t *Transport) connect(peer int) (_ net.Conn, redirect bool, _ error) {
	addr, err := t.cfg.Addrs(peer)
	if err != nil {
		return nil, false, fmt.Errorf("tcp: no address for rank %d: %w", peer, err)
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, false, fmt.Errorf("tcp: cannot connect to rank %d at %s: %w", peer, addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if t.cfg.SockBuf > 0 {
			tc.SetWriteBuffer(t.cfg.SockBuf)
			tc.SetReadBuffer(t.cfg.SockBuf)
		}
	}
	var nonce, mine [nonceSize]byte
	rand.Read(mine[:])
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if _, err := io.ReadFull(nc, nonce[:]); err != nil {
		nc.Close()
		return nil, false, fmt.Errorf("tcp: handshake with rank %d at %s: no challenge: %w", peer, addr, err)
	}
	if _, err := nc.Write(greeting(t.cfg.Secret, nonce[:], t.cfg.JobID, t.cfg.Rank, mine[:])); err != nil {
		nc.Close()
		return nil, false, fmt.Errorf("tcp: handshake with rank %d at %s: %w", peer, addr, err)
	}
	// The peer proves the secret too before its frames are taken.
	var proof [macSize + 1]byte // the proof, then 1 for "use my connection"
	if _, err := io.ReadFull(nc, proof[:]); err != nil {
		nc.Close()
		return nil, false, fmt.Errorf("tcp: handshake with rank %d at %s: refused or no answer to our challenge: %w", peer, addr, err)
	}
	nc.SetDeadline(time.Time{})
	if !hmac.Equal(proof[:macSize], mac(t.cfg.Secret, mine[:], hello(t.cfg.JobID, peer))) {
		nc.Close()
		return nil, false, fmt.Errorf("tcp: the process at %s, which should be rank %d, does not know the job's secret", addr, peer)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		nc.Close()
		return nil, false, errors.New("tcp: transport closed")
	}
	redirect = proof[macSize] == 1 && peer < t.cfg.Rank
	t.readers.Add(1)
	t.live[peer]++
	if redirect {
		// A connection the peer told us not to send on is in no t.out:
		// Close finds it with the accepted ones.
		t.in[nc] = true
	}
	t.mu.Unlock()
	go func() {
		defer t.readers.Done()
		t.serve(nc, t.reader(nc), peer)
		if redirect {
			nc.Close()
			t.mu.Lock()
			delete(t.in, nc)
			t.mu.Unlock()
		}
	}()
	return nc, redirect, nil
}

// sendConn returns the connection frames to peer go on, nil if none is
// established (for tests).
func (t *Transport) sendConn(peer int) net.Conn {
	t.mu.Lock()
	c := t.out[peer]
	t.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c.ready:
		return c.c
	default:
		return nil
	}
}

// Send writes f to its destination and returns when the payload has been
// handed to the kernel.
func (t *Transport) Send(f wire.Frame) error {
	c, err := t.dial(f.To)
	if err != nil {
		return err
	}
	if len(f.Payload) > wire.MaxPayload {
		return fmt.Errorf("tcp: frame payload of %d bytes exceeds %d", len(f.Payload), wire.MaxPayload)
	}
	c.mu.Lock()
	f.Header.Marshal(c.hdr[:], len(f.Payload))
	c.bufs = append(c.bufs[:0], c.hdr[:], f.Payload)
	bufs := c.bufs
	_, err = bufs.WriteTo(c.c)
	c.bufs[1] = nil
	c.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("tcp: sending to rank %d: %w", f.To, err)
		t.peerError(f.To, err)
	}
	return err
}

func (t *Transport) accept() {
	defer t.readers.Done()
	for {
		nc, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			nc.Close()
			return
		}
		t.in[nc] = true
		t.readers.Add(1)
		t.mu.Unlock()
		go t.read(nc)
	}
}

// checkHandshake validates a dialer's greeting and returns its rank.
func (t *Transport) checkHandshake(hs []byte) (int, error) {
	if string(hs[:5]) != string(magic[:]) {
		return -1, errors.New("tcp: a connection that does not speak mpigo (bad magic)")
	}
	if hs[5] != wire.Version {
		return -1, fmt.Errorf("tcp: peer speaks wire version %d, we speak %d", hs[5], wire.Version)
	}
	if id := binary.LittleEndian.Uint64(hs[6:]); id != t.cfg.JobID {
		return -1, fmt.Errorf("tcp: peer belongs to job %d, we are job %d", id, t.cfg.JobID)
	}
	peer := int(binary.LittleEndian.Uint32(hs[14:]))
	if peer < 0 || peer >= t.cfg.Size {
		return -1, fmt.Errorf("tcp: peer claims rank %d in a job of %d", peer, t.cfg.Size)
	}
	return peer, nil
}

func (t *Transport) read(nc net.Conn) {
	defer t.readers.Done()
	defer func() {
		nc.Close()
		t.mu.Lock()
		delete(t.in, nc)
		t.mu.Unlock()
	}()
	if tc, ok := nc.(*net.TCPConn); ok && t.cfg.SockBuf > 0 {
		tc.SetReadBuffer(t.cfg.SockBuf)
		tc.SetWriteBuffer(t.cfg.SockBuf)
	}
	r := t.reader(nc)
	var nonce [nonceSize]byte
	rand.Read(nonce[:])
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	var hs [greetingSize]byte
	if _, err := nc.Write(nonce[:]); err != nil {
		return
	}
	if _, err := io.ReadFull(r, hs[:]); err != nil {
		t.peerError(-1, fmt.Errorf("tcp: connection from %s closed during the handshake: %w", nc.RemoteAddr(), err))
		return
	}
	peer, err := t.checkHandshake(hs[:handshakeSize])
	signed := hs[:handshakeSize+nonceSize]
	if err == nil && !hmac.Equal(hs[len(signed):], mac(t.cfg.Secret, nonce[:], signed)) {
		err = errors.New("tcp: peer does not know the job's secret")
	}
	if err != nil {
		t.peerError(-1, fmt.Errorf("%w (connection from %s refused)", err, nc.RemoteAddr()))
		return
	}
	// Frames to the peer go back on this connection, unless this rank
	// already sends to it on another. When both dial at once, the lower
	// rank's connection wins (see the package doc): a lower rank tells the
	// higher one to use its own, a higher rank adopts the lower one's.
	t.mu.Lock()
	var c, adopt *conn
	keepMine := false
	t.live[peer]++
	switch out := t.out[peer]; {
	case t.closed:
	case out == nil:
		// Ready only once the answer below is written: a frame sent
		// before it would reach the dialer as its proof.
		c = &conn{ready: make(chan struct{})}
		t.out[peer] = c
	case out.dialed && !out.failed && peer > t.cfg.Rank:
		keepMine = true
	case out.dialed && peer < t.cfg.Rank:
		adopt = out
	}
	t.mu.Unlock()
	answer := mac(t.cfg.Secret, hs[handshakeSize:len(signed)], hello(t.cfg.JobID, t.cfg.Rank))
	if keepMine {
		answer = append(answer, 1)
	} else {
		answer = append(answer, 0)
	}
	if _, err := nc.Write(answer); err != nil {
		err = fmt.Errorf("tcp: answering the handshake of rank %d: %w", peer, err)
		t.mu.Lock()
		t.live[peer]--
		if c != nil && t.out[peer] == c {
			delete(t.out, peer)
		}
		t.mu.Unlock()
		if c != nil {
			c.finish(nil, err)
		}
		t.peerError(peer, err)
		return
	}
	nc.SetDeadline(time.Time{})
	if c != nil {
		c.finish(nc, nil)
	}
	if adopt != nil {
		adopt.finish(nc, nil)
		if adopt.c == nc {
			c = adopt
		}
	}
	t.serve(nc, r, peer)
	if c != nil {
		t.mu.Lock()
		if t.out[peer] == c {
			delete(t.out, peer) // a later send dials afresh (and fails if the peer is gone)
		}
		t.mu.Unlock()
	}
}

// reader buffers the reads of connection nc, polling it first unless the
// node is oversubscribed.
func (t *Transport) reader(nc net.Conn) *bufio.Reader {
	var src io.Reader = nc
	if !t.cfg.Oversubscribed {
		src = newPollReader(nc)
	}
	return bufio.NewReaderSize(src, 64<<10)
}

// serve reads frames from peer on nc until the connection ends.
func (t *Transport) serve(nc net.Conn, r *bufio.Reader, peer int) {
	err := ReadFrames(r, t.cfg.Rank, peer, wire.MaxPayload, t.cfg.Handler, t.cfg.Place)
	t.mu.Lock()
	t.live[peer]--
	last := t.live[peer] == 0
	t.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		t.peerError(peer, fmt.Errorf("tcp: connection from rank %d: %w", peer, err))
	} else if last {
		// A peer that ends cleanly closes every connection it has; its
		// frames to us may still be coming on another one, which ends
		// after them.
		t.peerError(peer, fmt.Errorf("tcp: rank %d closed its connection", peer))
	}
}

// ReadFrames reads frames from r until it fails, handing each to h with
// From set to peer and To to self. Payloads larger than limit are refused.
// If place gives a destination of the payload's exact length, the payload
// is read straight into it. It returns io.EOF at a clean end between
// frames.
func ReadFrames(r io.Reader, self, peer, limit int, h transport.Handler, place func(h *wire.Header, from, n int) []byte) error {
	var hb [wire.HeaderSize]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, hb[:]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("truncated frame header: %w", err)
			}
			return err
		}
		hdr, n, err := wire.Unmarshal(hb[:])
		if err != nil {
			return err
		}
		if n > limit {
			return fmt.Errorf("frame payload of %d bytes exceeds the limit of %d", n, limit)
		}
		if place != nil && n > 0 {
			if dst := place(&hdr, peer, n); len(dst) == n {
				if _, err := io.ReadFull(r, dst); err != nil {
					return fmt.Errorf("truncated frame payload: %w", err)
				}
				h(wire.Frame{Header: hdr, From: peer, To: self, Payload: dst})
				continue
			}
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("truncated frame payload: %w", err)
		}
		h(wire.Frame{Header: hdr, From: peer, To: self, Payload: buf})
	}
}

// Close closes the listener and every connection and waits for the
// reading goroutines to finish. It is safe to call more than once.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	outs := make([]*conn, 0, len(t.out))
	for _, c := range t.out {
		outs = append(outs, c)
	}
	for nc := range t.in {
		nc.Close()
	}
	t.mu.Unlock()
	err := t.ln.Close()
	for _, c := range outs {
		<-c.ready
		if c.c != nil {
			c.c.Close()
		}
	}
	t.readers.Wait()
	return err
}

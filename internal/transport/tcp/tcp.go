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
// A connection starts with a handshake (secure.go) that proves both sides
// know the job's secret, which the launcher hands to the ranks out of
// band, and agrees on the connection's keys: the accepting side sends a
// random challenge; the dialer answers with its identity (magic "MPIGO",
// wire version, job id, rank), the protection it wants, a challenge of
// its own and an ephemeral X25519 public key, all under an HMAC-SHA256
// keyed with the secret; the acceptor answers with its protection, the
// "use mine" flag and its own public key under an HMAC of the whole
// exchange. A relay that does not know the secret can neither finish a
// handshake nor swap a key for its own, and a recorded handshake fails
// against a fresh challenge. A stranger, a bad secret or a mismatch closes
// the connection with an error that says what was wrong; the job goes on.
// Both sides then derive one AES-128-GCM key per direction with HKDF from
// the X25519 secret, the job's secret and the transcript. Each frame is
// the 64-byte wire header followed by its payload: in the clear, written
// with one writev (net.Buffers) so the payload is not copied, when
// protection is off; otherwise the header and every 64 KiB of payload are
// sealed as records numbered per direction, so a record altered,
// replayed, reordered or dropped fails its check and ends the connection
// with an integrity error naming the peer. Protection is on by default
// except between two loopback addresses (Protect, LoopbackPlain). One
// goroutine per connection reads frames and hands them to the Handler.
//
// An accepting rank survives strangers: accept errors (out of file
// descriptors) are retried with a growing pause, unproven connections are
// bounded in number (maxPending) and time (acceptHandshakeTimeout), and
// refused connections are reported a few at a time.
package tcp

import (
	"bufio"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/gateway"
	"github.com/mpigo/mpi/internal/sockerr"
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
	// Protect says how frames are protected after the handshake (see
	// Protect); every rank of a job must use the same.
	Protect Protect
	// Gateways, if set, is the job's gateway table (internal/gateway): a
	// peer in another network of it is reached through gateways. Its
	// address is compared with this rank's own, Addrs(Rank).
	Gateways *gateway.Table
}

// Transport is one rank's TCP endpoint. It is safe for concurrent use.
type Transport struct {
	cfg Config
	ln  net.Listener
	// maxPending is the package's maxPending when the endpoint started
	// (tests lower it for one endpoint's life).
	maxPending int

	mu      sync.Mutex
	out     map[int]*conn // the connection this rank sends to each peer on
	in      map[net.Conn]bool
	closed  bool
	failed  map[int]bool
	reason  map[int]error // the first failure reported of each peer
	live    map[int]int   // connections with each peer being read
	readers sync.WaitGroup
	done    chan struct{} // closed by Close
	// pending holds the accepted connections that have not proved
	// themselves yet, oldest first (at most maxPending).
	pending []pendingConn
	// Reports of refused connections are rate-limited: rejTokens refill
	// one per rejectEvery up to rejectBurst; rejHidden counts the
	// reports left out since the last one made.
	rejTokens float64
	rejLast   time.Time
	rejHidden int
}

type conn struct {
	ready  chan struct{} // closed once c or err is set
	once   sync.Once
	dialed bool // made by dial: this rank is connecting, or connected, to the peer
	failed bool // the dial failed (under Transport.mu)
	c      net.Conn
	seal   *sealer // nil: frames go in the clear
	err    error
	mu     sync.Mutex // serialises writes
	hdr    [wire.HeaderSize]byte
	bufs   net.Buffers
}

// finish sets the connection's outcome, once, and releases its waiters.
func (c *conn) finish(nc net.Conn, s *sealer, err error) {
	c.once.Do(func() {
		c.c, c.seal, c.err = nc, s, err
		close(c.ready)
	})
}

// adoptTimeout bounds how long a rank told "use mine" waits for the
// lower rank's connection.
const adoptTimeout = time.Minute

// dialHandshakeTimeout bounds how long a dialer waits for its peer's side
// of the handshake; the peer may be busy (or backing off after running out
// of file descriptors) before it accepts.
const dialHandshakeTimeout = 30 * time.Second

// acceptHandshakeTimeout bounds how long an accepted connection may take
// to prove itself: a real peer takes milliseconds, a stranger that says
// nothing is closed after this.
var acceptHandshakeTimeout = 5 * time.Second

// maxPending bounds the accepted connections that have not yet proved
// themselves, so that idle strangers cannot exhaust a rank's file
// descriptors or goroutines. When it is reached, the rank accepts no more
// until one proves itself or fails, or the oldest has waited evictAge:
// that one is then closed to make room. Real peers, whose handshakes
// take milliseconds, wait in the kernel's backlog meanwhile, and are not
// cut off when many of them dial at once (a job's start).
var maxPending = 128

// evictAge is how long an unproven connection keeps its place when the
// rank has maxPending of them.
var evictAge = time.Second

type pendingConn struct {
	nc    net.Conn
	since time.Time
}

// dialRetries is how many times a dialer reconnects when its handshake
// was cut before the peer proved itself (the peer may have closed it as
// the oldest unproven connection during a flood of strangers).
const dialRetries = 4

// New starts an endpoint that accepts connections on ln.
func New(cfg Config, ln net.Listener) *Transport {
	t := &Transport{cfg: cfg, ln: ln, out: map[int]*conn{}, in: map[net.Conn]bool{}, failed: map[int]bool{}, reason: map[int]error{}, live: map[int]int{},
		done: make(chan struct{}), rejTokens: rejectBurst, rejLast: time.Now(), maxPending: maxPending}
	t.readers.Add(1)
	go t.accept()
	return t
}

// Addr returns the address peers dial.
func (t *Transport) Addr() string { return t.ln.Addr().String() }

// Name returns "tcp".
func (t *Transport) Name() string { return "tcp" }

// ChunkSize is the Data frame size of a rendezvous over tcp
// (transport.Chunker): 2 MiB, eight times the engine's default: each
// frame costs a write, a wake-up of the reader and a header, and the
// kernel's copies cost the same however the bytes are cut. Over loopback
// on 2 cores, alternating runs under chrt -f 10 (medians of 5), 512 KiB
// against 256 KiB moved the one-way bandwidth from 4058 to 4735 MB/s at
// 1 MiB and from 3737 to 5458 at 4 MiB (stop 33); 2 MiB against 512 KiB,
// from 4355 to 4985 and from 4367 to 6041 (stop 41); docs/performance.md,
// "Larger chunks over tcp".
const ChunkSize = 2 << 20

// ChunkSize implements transport.Chunker.
func (t *Transport) ChunkSize() int { return ChunkSize }

// Refused connections are reported at most rejectBurst at once, then one
// per rejectEvery, each report counting the ones left out: a flood of
// strangers must not flood the rank's standard error.
const (
	rejectBurst = 10
	rejectEvery = 10 * time.Second
)

func (t *Transport) peerError(peer int, err error) {
	t.mu.Lock()
	report := !t.closed && (peer < 0 || !t.failed[peer]) // -1: a stranger
	if peer >= 0 {
		if !t.failed[peer] {
			t.reason[peer] = err
		}
		t.failed[peer] = true
	} else if report {
		now := time.Now()
		t.rejTokens = min(rejectBurst, t.rejTokens+float64(now.Sub(t.rejLast))/float64(rejectEvery))
		t.rejLast = now
		if t.rejTokens < 1 {
			t.rejHidden++
			report = false
		} else {
			t.rejTokens--
			if t.rejHidden > 0 {
				err = fmt.Errorf("%w (and %d more refused connections not shown)", err, t.rejHidden)
				t.rejHidden = 0
			}
		}
	}
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
	if c == nil && t.failed[peer] {
		// The peer failed (or its connection could not be trusted): a new
		// connection would only wait for it, as a crossed dial waits for
		// the peer's own connection that will not come.
		why := t.reason[peer]
		t.mu.Unlock()
		if why == nil {
			why = errors.New("it failed earlier")
		}
		return nil, fmt.Errorf("tcp: no new connection to rank %d: %w", peer, why)
	}
	if c == nil {
		c = &conn{ready: make(chan struct{}), dialed: true}
		t.out[peer] = c
		t.mu.Unlock()
		nc, s, redirect, err := t.connect(peer, c)
		switch {
		case err != nil:
			c.finish(nil, nil, err)
		case !redirect:
			c.finish(nc, s, nil)
		default:
			// The peer is dialing us too and keeps its connection: send
			// on that one, once it has arrived (see the package doc).
			// Close ends the wait: the peer may have closed before its
			// connection was made (a job that ended), and Close waits
			// for this conn.
			select {
			case <-c.ready:
			case <-t.done:
				c.finish(nil, nil, errors.New("tcp: transport closed"))
			case <-time.After(adoptTimeout):
				c.finish(nil, nil, fmt.Errorf("tcp: rank %d asked rank %d to use its connection and did not make it within %v", peer, t.cfg.Rank, adoptTimeout))
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

// connect dials peer, proves both sides and agrees on the connection's
// keys. redirect reports that the peer, dialing this rank at the same
// time, keeps its own connection: this one then carries no frames from
// this rank, and its end fails out, the conn that waits for the peer's,
// if that has not come (the peer closed or died first).
func (t *Transport) connect(peer int, out *conn) (_ net.Conn, _ *sealer, redirect bool, _ error) {
	addr, err := t.cfg.Addrs(peer)
	if err != nil {
		return nil, nil, false, fmt.Errorf("tcp: no address for rank %d: %w", peer, err)
	}
	var hops []string
	if t.cfg.Gateways != nil {
		self, err := t.cfg.Addrs(t.cfg.Rank)
		if err != nil {
			return nil, nil, false, fmt.Errorf("tcp: no address for this rank (%d) to route by: %w", t.cfg.Rank, err)
		}
		hops = t.cfg.Gateways.Route(self, addr)
	}
	var nc net.Conn
	var s *sealer
	var o *opener
	for try := 0; ; try++ {
		var retry bool
		nc, s, o, redirect, retry, err = t.handshake(peer, addr, hops)
		if err == nil {
			break
		}
		if !retry || try == dialRetries {
			return nil, nil, false, err
		}
		select {
		case <-t.done:
			return nil, nil, false, errors.New("tcp: transport closed")
		case <-time.After(time.Duration(10<<try) * time.Millisecond):
		}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		nc.Close()
		return nil, nil, false, errors.New("tcp: transport closed")
	}
	t.readers.Add(1)
	t.live[peer]++
	if redirect {
		// A connection the peer told us not to send on is in no t.out:
		// Close finds it with the accepted ones.
		t.in[nc] = true
	}
	t.mu.Unlock()
	via := ""
	if len(hops) > 0 {
		via = hops[0]
	}
	go func() {
		defer t.readers.Done()
		t.serve(nc, t.reader(nc), peer, o, via)
		if redirect {
			nc.Close()
			t.mu.Lock()
			delete(t.in, nc)
			closed := t.closed // this rank's Close ended the connection
			t.mu.Unlock()
			if closed {
				out.finish(nil, nil, errors.New("tcp: transport closed"))
			} else {
				out.finish(nil, nil, fmt.Errorf("tcp: rank %d told rank %d to wait for its own connection and closed before making it", peer, t.cfg.Rank))
			}
		}
	}()
	return nc, s, redirect, nil
}

// handshake makes one connection to peer at addr, through the gateways
// hops if any, and runs the dialer's side of the handshake on it. retry
// says the connection was cut before the peer proved itself, so that a
// new one may succeed.
func (t *Transport) handshake(peer int, addr string, hops []string) (_ net.Conn, _ *sealer, _ *opener, redirect, retry bool, _ error) {
	gc := gateway.Client{JobID: t.cfg.JobID, Secret: t.cfg.Secret, DialTimeout: dialHandshakeTimeout}
	nc, err := gc.Dial(hops, addr)
	if err != nil {
		if len(hops) > 0 {
			return nil, nil, nil, false, false, fmt.Errorf("tcp: cannot reach rank %d at %s through gateway %s: %w", peer, addr, strings.Join(hops, " then "), err)
		}
		if unreachable(err) {
			self, _ := t.cfg.Addrs(t.cfg.Rank)
			err = fmt.Errorf("%w; %s", err, t.cfg.Gateways.Explain(self, addr))
		}
		return nil, nil, nil, false, false, fmt.Errorf("tcp: cannot connect to rank %d at %s: %w", peer, addr, err)
	}
	if len(hops) > 0 {
		addr += " through gateway " + strings.Join(hops, " then ")
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if t.cfg.SockBuf > 0 {
			tc.SetWriteBuffer(t.cfg.SockBuf)
			tc.SetReadBuffer(t.cfg.SockBuf)
		}
	}
	fail := func(retry bool, err error) (net.Conn, *sealer, *opener, bool, bool, error) {
		nc.Close()
		return nil, nil, nil, false, retry && cut(err), err
	}
	nc.SetDeadline(time.Now().Add(dialHandshakeTimeout))
	var challenge, mine [nonceSize]byte
	if _, err := io.ReadFull(nc, challenge[:]); err != nil {
		return fail(true, fmt.Errorf("tcp: handshake with rank %d at %s: no challenge: %w", peer, addr, err))
	}
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return fail(false, fmt.Errorf("tcp: handshake with rank %d: %w", peer, err))
	}
	rand.Read(mine[:])
	mode := ProtectFor(t.cfg.Protect, nc.LocalAddr(), nc.RemoteAddr())
	if len(hops) > 0 && t.cfg.Protect == ProtectAuto {
		// The bytes leave this host whatever the first hop's address.
		mode = ProtectEncrypt
	}
	g := greeting(t.cfg.Secret, challenge[:], t.cfg.JobID, t.cfg.Rank, mode, mine[:], priv.PublicKey().Bytes())
	if _, err := nc.Write(g); err != nil {
		return fail(true, fmt.Errorf("tcp: handshake with rank %d at %s: %w", peer, addr, err))
	}
	// The peer proves the secret too before its frames are taken.
	var a [answerSize]byte
	if _, err := io.ReadFull(nc, a[:]); err != nil {
		return fail(true, fmt.Errorf("tcp: handshake with rank %d at %s: refused or no answer to our challenge: %w", peer, addr, err))
	}
	nc.SetDeadline(time.Time{})
	m, err := checkAnswer(t.cfg.Secret, t.cfg.JobID, peer, challenge[:], g, a[:])
	if err != nil {
		return fail(false, fmt.Errorf("tcp: the process at %s, which should be rank %d, %v", addr, peer, err))
	}
	if m.mode != mode {
		return fail(false, fmt.Errorf("tcp: rank %d at %s protects its connections with %s, rank %d with %s: every rank of a job needs the same MPIGO_TCP_PROTECT", peer, addr, m.mode, t.cfg.Rank, mode))
	}
	var s *sealer
	var o *opener
	if mode != ProtectOff {
		shared, err := agree(priv, m.pub)
		if err == nil {
			s, o, err = derive(t.cfg.Secret, shared, challenge[:], g, a[:], true)
		}
		if err != nil {
			return fail(false, fmt.Errorf("tcp: handshake with rank %d at %s: %w", peer, addr, err))
		}
	}
	return nc, s, o, m.redirect, false, nil
}

// unreachable says err reports an address this host has no way to, or
// whose packets vanish on the way: a peer in another network, perhaps.
func unreachable(err error) bool {
	var ne net.Error
	return sockerr.Unreachable(err) || (errors.As(err, &ne) && ne.Timeout())
}

// cut says err reports a connection closed or reset by the other end (not
// a timeout): a handshake cut that way may succeed on a new connection.
func cut(err error) bool { return sockerr.Cut(err) }

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
	if c.seal != nil {
		err = c.seal.write(c.c, c.hdr[:], f.Payload)
	} else {
		c.bufs = append(c.bufs[:0], c.hdr[:], f.Payload)
		bufs := c.bufs
		_, err = bufs.WriteTo(c.c)
		c.bufs[1] = nil
	}
	c.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("tcp: sending to rank %d: %w", f.To, err)
		t.peerError(f.To, err)
		// The write may have failed because the connection was closed
		// for a reason reported first (an integrity error): say that.
		t.mu.Lock()
		if r := t.reason[f.To]; r != nil {
			err = r
		}
		t.mu.Unlock()
	}
	return err
}

// accept accepts connections until the transport closes. An error (out
// of file descriptors, a connection aborted before it was accepted) does
// not end it: it closes the oldest unproven connection, if any, and tries
// again after a pause that grows to a second.
func (t *Transport) accept() {
	defer t.readers.Done()
	var pause time.Duration
	for {
		if !t.waitForRoom() {
			return
		}
		nc, err := t.ln.Accept()
		if err != nil {
			t.mu.Lock()
			closed := t.closed
			t.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			t.evict(true)
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			t.peerError(-1, fmt.Errorf("tcp: accepting a connection: %w (trying again in %v)", err, pause))
			select {
			case <-t.done:
				return
			case <-time.After(pause):
			}
			continue
		}
		pause = 0
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			nc.Close()
			return
		}
		t.pending = append(t.pending, pendingConn{nc, time.Now()})
		t.in[nc] = true
		t.readers.Add(1)
		t.mu.Unlock()
		go t.read(nc)
	}
}

// waitForRoom returns when the rank may accept another connection: fewer
// than maxPending are unproven, or the oldest of them has waited evictAge
// and is closed. It returns false if the transport closes meanwhile.
func (t *Transport) waitForRoom() bool {
	for {
		t.mu.Lock()
		if len(t.pending) < t.maxPending {
			t.mu.Unlock()
			return true
		}
		wait := evictAge - time.Since(t.pending[0].since)
		t.mu.Unlock()
		if wait <= 0 && t.evict(false) {
			return true
		}
		select {
		case <-t.done:
			return false
		case <-time.After(min(max(wait, time.Millisecond), 10*time.Millisecond)):
		}
	}
}

// evict closes the oldest accepted connection that has not proved itself,
// if there is one and it has waited evictAge or always is set. It
// reports whether it closed one.
func (t *Transport) evict(always bool) bool {
	t.mu.Lock()
	var old net.Conn
	if len(t.pending) > 0 && (always || time.Since(t.pending[0].since) >= evictAge) {
		old = t.pending[0].nc
		t.pending = t.pending[1:]
	}
	t.mu.Unlock()
	if old == nil {
		return false
	}
	old.Close()
	t.peerError(-1, fmt.Errorf("tcp: closed the connection from %s, which had not proved itself, to make room", old.RemoteAddr()))
	return true
}

// proven removes nc from the unproven connections; t.mu is held.
func (t *Transport) proven(nc net.Conn) {
	for i, p := range t.pending {
		if p.nc == nc {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			return
		}
	}
}

func (t *Transport) read(nc net.Conn) {
	defer t.readers.Done()
	defer func() {
		nc.Close()
		t.mu.Lock()
		delete(t.in, nc)
		t.proven(nc)
		t.mu.Unlock()
	}()
	if tc, ok := nc.(*net.TCPConn); ok && t.cfg.SockBuf > 0 {
		tc.SetReadBuffer(t.cfg.SockBuf)
		tc.SetWriteBuffer(t.cfg.SockBuf)
	}
	var challenge [nonceSize]byte
	rand.Read(challenge[:])
	nc.SetDeadline(time.Now().Add(acceptHandshakeTimeout))
	var g [greetingSize]byte
	if _, err := nc.Write(challenge[:]); err != nil {
		return
	}
	// Read exactly the greeting, unbuffered: a stranger costs no buffer,
	// and frames that follow it stay in the socket for the reader below.
	if _, err := io.ReadFull(nc, g[:]); err != nil {
		t.peerError(-1, fmt.Errorf("tcp: connection from %s closed during the handshake: %w", nc.RemoteAddr(), err))
		return
	}
	m, err := checkGreeting(t.cfg.Secret, t.cfg.JobID, t.cfg.Size, challenge[:], g[:])
	if err != nil {
		t.peerError(-1, fmt.Errorf("%w (connection from %s refused)", err, nc.RemoteAddr()))
		return
	}
	peer := m.rank
	t.mu.Lock()
	t.proven(nc)
	t.mu.Unlock()
	mode := ProtectFor(t.cfg.Protect, nc.LocalAddr(), nc.RemoteAddr())
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.peerError(peer, fmt.Errorf("tcp: handshake with rank %d: %w", peer, err))
		return
	}
	if m.mode == ProtectEncrypt && t.cfg.Protect == ProtectAuto {
		// A dialer that wants more than auto would give here (its
		// connection came through a gateway) gets it.
		mode = ProtectEncrypt
	}
	if m.mode != mode {
		// Tell the peer (it reports the mismatch too), then refuse.
		nc.Write(answer(t.cfg.Secret, challenge[:], g[:], t.cfg.JobID, t.cfg.Rank, mode, false, priv.PublicKey().Bytes()))
		t.peerError(peer, fmt.Errorf("tcp: rank %d protects its connections with %s, rank %d with %s: every rank of a job needs the same MPIGO_TCP_PROTECT", peer, m.mode, t.cfg.Rank, mode))
		return
	}
	var shared []byte
	if mode != ProtectOff {
		if shared, err = agree(priv, m.pub); err != nil {
			t.peerError(peer, fmt.Errorf("tcp: handshake with rank %d: %w", peer, err))
			return
		}
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
	a := answer(t.cfg.Secret, challenge[:], g[:], t.cfg.JobID, t.cfg.Rank, mode, keepMine, priv.PublicKey().Bytes())
	var s *sealer
	var o *opener
	if mode != ProtectOff {
		s, o, err = derive(t.cfg.Secret, shared, challenge[:], g[:], a, false)
	}
	if err == nil {
		_, err = nc.Write(a)
	}
	if err != nil {
		err = fmt.Errorf("tcp: answering the handshake of rank %d: %w", peer, err)
		t.mu.Lock()
		t.live[peer]--
		if c != nil && t.out[peer] == c {
			delete(t.out, peer)
		}
		t.mu.Unlock()
		if c != nil {
			c.finish(nil, nil, err)
		}
		t.peerError(peer, err)
		return
	}
	nc.SetDeadline(time.Time{})
	r := t.reader(nc)
	if c != nil {
		c.finish(nc, s, nil)
	}
	if adopt != nil {
		adopt.finish(nc, s, nil)
		if adopt.c == nc {
			c = adopt
		}
	}
	t.serve(nc, r, peer, o, t.cfg.Gateways.Via(nc.RemoteAddr()))
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

// serve reads frames from peer on nc, checked by o unless it is nil,
// until the connection ends. A connection whose bytes fail their check is
// closed: nothing more it carries can be trusted, and its other end learns
// of the failure. via names the gateway the connection goes through, if
// any.
func (t *Transport) serve(nc net.Conn, r *bufio.Reader, peer int, o *opener, via string) {
	var err error
	if o != nil {
		err = readFramesProtected(r, o, t.cfg.Rank, peer, wire.MaxPayload, t.cfg.Handler, t.cfg.Place)
	} else {
		err = ReadFrames(r, t.cfg.Rank, peer, wire.MaxPayload, t.cfg.Handler, t.cfg.Place)
	}
	t.mu.Lock()
	t.live[peer]--
	last := t.live[peer] == 0
	t.mu.Unlock()
	if via != "" && err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w (through gateway %s)", err, via)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		// Reported before the connection is closed, so that the report
		// is this error and not a sender's write on the closed socket.
		t.peerError(peer, fmt.Errorf("tcp: connection from rank %d: %w", peer, err))
		if errors.Is(err, ErrIntegrity) {
			// Nothing more from this peer can be trusted, on any
			// connection: close them all, so that the peer learns of it
			// too (an EOF on one of two connections alone looks like a
			// crossed dial, not a failure, and it would wait for us).
			nc.Close()
			t.mu.Lock()
			c := t.out[peer]
			t.mu.Unlock()
			if c != nil {
				select {
				case <-c.ready:
					if c.c != nil {
						c.c.Close()
					}
				default:
				}
			}
		}
	} else if last {
		// A peer that ends cleanly closes every connection it has; its
		// frames to us may still be coming on another one, which ends
		// after them.
		if via != "" {
			// A gateway that dies closes its connections as cleanly as
			// a rank that ends: name both.
			t.peerError(peer, fmt.Errorf("tcp: the connection with rank %d through gateway %s ended (rank %d closed it, or the gateway is gone)", peer, via, peer))
		} else {
			t.peerError(peer, fmt.Errorf("tcp: rank %d closed its connection", peer))
		}
	}
}

// ReadFrames reads frames from r until it fails, handing each to h with
// From set to peer and To to self. Payloads larger than limit are refused.
// If place gives a destination of the payload's exact length, the payload
// is read straight into it. It returns io.EOF at a clean end between
// frames.
func ReadFrames(r io.Reader, self, peer, limit int, h transport.Handler, place func(h *wire.Header, from, n int) []byte) error {
	return readFrames(func(b []byte) error {
		_, err := io.ReadFull(r, b)
		return err
	}, self, peer, limit, h, place)
}

// readFrames is the receive loop of every connection, plain or
// protected: read fills its argument completely or fails (io.EOF only
// when nothing at all could be read).
func readFrames(read func([]byte) error, self, peer, limit int, h transport.Handler, place func(h *wire.Header, from, n int) []byte) error {
	var hb [wire.HeaderSize]byte
	var buf []byte
	for {
		if err := read(hb[:]); err != nil {
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
		var dst []byte
		if place != nil && n > 0 {
			if d := place(&hdr, peer, n); len(d) == n {
				dst = d
			}
		}
		if dst == nil {
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			dst = buf[:n]
		}
		if err := read(dst); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return fmt.Errorf("truncated frame payload: %w", io.ErrUnexpectedEOF)
			}
			return err
		}
		h(wire.Frame{Header: hdr, From: peer, To: self, Payload: dst})
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
	close(t.done)
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

// Connect makes the connection to peer now rather than on the first
// frame, so that the peer's failure is noticed even if nothing is ever
// sent to it (a link to another job: internal/device/links.go).
func (t *Transport) Connect(peer int) error {
	_, err := t.dial(peer)
	return err
}

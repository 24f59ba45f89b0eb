package gateway

import (
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
)

// The relay protocol, one exchange per hop, in the style of the rank
// handshake:
//
//	gateway -> client: challenge  N[32]
//	client -> gateway: request    "MPIGW" version[1] job[8] len[2] target[len] mac[32]
//	gateway -> client: reply      status[1] len[2] message[len] mac[32]
//
// The request's mac is HMAC-SHA256, keyed with the job's secret, of a
// label, N and the request before the mac; the reply's, of another label,
// N, the whole request and the reply before the mac. Status 0 means the
// gateway is connected to target and copies bytes from now on; otherwise
// message says why not and the gateway closes the connection.
const (
	relayVersion    = 1
	relayHeaderSize = 5 + 1 + 8 + 2
	maxTarget       = 255
	maxReplyMsg     = 1024
	relayReqLabel   = "mpigo gateway request v1"
	relayRepLabel   = "mpigo gateway reply v1"
)

var relayMagic = [5]byte{'M', 'P', 'I', 'G', 'W'}

const (
	nonceSize = 32
	macSize   = sha256.Size
)

// DefaultDialTimeout bounds each connection a rank or a gateway makes, so
// that an address whose packets vanish (a firewall that drops them) fails
// in time; it is generous because a busy peer's full accept queue drops
// connection requests too, and the kernel retries them after 1, 3, 7 s...
const DefaultDialTimeout = 30 * time.Second

// DefaultTimeout bounds each exchange of the relay protocol.
const DefaultTimeout = 10 * time.Second

// mac is HMAC-SHA256 keyed with secret over parts, in order.
func mac(secret []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, secret)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func relayRequest(secret, challenge []byte, job uint64, target string) []byte {
	r := make([]byte, relayHeaderSize, relayHeaderSize+len(target)+macSize)
	copy(r, relayMagic[:])
	r[5] = relayVersion
	binary.LittleEndian.PutUint64(r[6:], job)
	binary.LittleEndian.PutUint16(r[14:], uint16(len(target)))
	r = append(r, target...)
	return append(r, mac(secret, []byte(relayReqLabel), challenge, r)...)
}

func relayReply(secret, challenge, req []byte, status byte, msg string) []byte {
	if len(msg) > maxReplyMsg {
		msg = msg[:maxReplyMsg]
	}
	r := make([]byte, 3, 3+len(msg)+macSize)
	r[0] = status
	binary.LittleEndian.PutUint16(r[1:], uint16(len(msg)))
	r = append(r, msg...)
	return append(r, mac(secret, []byte(relayRepLabel), challenge, req, r)...)
}

// Client is what a rank needs to go through gateways: the job's identity
// and secret, which every gateway of the job checks, and the bounds of
// each step.
type Client struct {
	JobID  uint64
	Secret []byte
	// DialTimeout bounds each connection (0: DefaultDialTimeout), Timeout
	// each exchange with a gateway (0: DefaultTimeout).
	DialTimeout, Timeout time.Duration
}

func (c *Client) dialTimeout() time.Duration { return orDefault(c.DialTimeout, DefaultDialTimeout) }
func (c *Client) timeout() time.Duration     { return orDefault(c.Timeout, DefaultTimeout) }

func orDefault(d, dflt time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return dflt
}

// hop asks the gateway at the other end of nc, reached as gw, to connect
// it to target. On success nc carries bytes to and from target.
func (c *Client) hop(nc net.Conn, gw, target string) error {
	secret, job := c.Secret, c.JobID
	relayTimeout, relayDialTimeout := c.timeout(), c.dialTimeout()
	if len(target) > maxTarget {
		return fmt.Errorf("address %q is too long for a gateway", target)
	}
	nc.SetDeadline(time.Now().Add(relayTimeout))
	defer nc.SetDeadline(time.Time{})
	var challenge [nonceSize]byte
	if _, err := io.ReadFull(nc, challenge[:]); err != nil {
		return fmt.Errorf("gateway %s sent no challenge (is it an mpigo gateway?): %w", gw, err)
	}
	// The gateway connects to target before it answers.
	nc.SetDeadline(time.Now().Add(relayTimeout + relayDialTimeout))
	req := relayRequest(secret, challenge[:], job, target)
	if _, err := nc.Write(req); err != nil {
		return fmt.Errorf("gateway %s: %w", gw, err)
	}
	var h [3]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		return fmt.Errorf("gateway %s closed the connection instead of answering (it refuses strangers: does it belong to this job?): %w", gw, err)
	}
	n := int(binary.LittleEndian.Uint16(h[1:]))
	if n > maxReplyMsg {
		return fmt.Errorf("gateway %s answered with a message of %d bytes (at most %d): not an mpigo gateway", gw, n, maxReplyMsg)
	}
	rest := make([]byte, n+macSize)
	if _, err := io.ReadFull(nc, rest); err != nil {
		return fmt.Errorf("gateway %s: truncated answer: %w", gw, err)
	}
	rep := append(h[:], rest[:n]...)
	if !hmac.Equal(rest[n:], mac(secret, []byte(relayRepLabel), challenge[:], req[:len(req)-macSize], rep)) {
		return fmt.Errorf("gateway %s does not know the job's secret", gw)
	}
	if h[0] != 0 {
		return fmt.Errorf("gateway %s could not reach %s: %s", gw, target, rest[:n])
	}
	return nil
}

// Dial connects to target through the gateways hops, in order (none:
// directly). An error says which gateway failed and how.
func (c *Client) Dial(hops []string, target string) (net.Conn, error) {
	first := target
	if len(hops) > 0 {
		first = hops[0]
	}
	nc, err := net.DialTimeout("tcp", first, c.dialTimeout())
	if err != nil {
		if len(hops) > 0 {
			return nil, fmt.Errorf("cannot connect to gateway %s: %w", first, err)
		}
		return nil, err
	}
	for i, gw := range hops {
		next := target
		if i+1 < len(hops) {
			next = hops[i+1]
		}
		if err := c.hop(nc, gw, next); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return nc, nil
}

// Config describes a gateway.
type Config struct {
	JobID  uint64
	Secret []byte
	// Log, if set, receives a line for each refused or failed connection.
	Log func(string)
	// DialTimeout bounds each connection the gateway makes (0:
	// DefaultDialTimeout), Timeout the exchange with a connecting side (0:
	// DefaultTimeout).
	DialTimeout, Timeout time.Duration
}

// Relay is a running gateway: it serves the relay protocol on a listener
// and copies the bytes of every connection it made.
type Relay struct {
	cfg    Config
	ln     net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
	// Relayed counts the connections relayed so far.
	relayed int
}

// NewRelay starts a gateway that accepts connections on ln.
func NewRelay(cfg Config, ln net.Listener) *Relay {
	r := &Relay{cfg: cfg, ln: ln, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept()
	return r
}

// Addr returns the gateway's listening address.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Relayed returns the number of connections relayed so far.
func (r *Relay) Relayed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.relayed
}

func (r *Relay) log(format string, args ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log(fmt.Sprintf(format, args...))
	}
}

func (r *Relay) track(nc net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		nc.Close()
		return false
	}
	r.conns[nc] = true
	return true
}

func (r *Relay) untrack(nc net.Conn) {
	r.mu.Lock()
	delete(r.conns, nc)
	r.mu.Unlock()
	nc.Close()
}

func (r *Relay) accept() {
	defer r.wg.Done()
	var pause time.Duration
	for {
		nc, err := r.ln.Accept()
		if err != nil {
			r.mu.Lock()
			closed := r.closed
			r.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			r.log("gateway: accepting a connection: %v (trying again in %v)", err, pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if !r.track(nc) {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.serve(nc)
		}()
	}
}

// serve runs one hop: it checks the request, connects to its target and
// copies bytes both ways until either side ends.
func (r *Relay) serve(nc net.Conn) {
	defer r.untrack(nc)
	var challenge [nonceSize]byte
	rand.Read(challenge[:])
	nc.SetDeadline(time.Now().Add(orDefault(r.cfg.Timeout, DefaultTimeout)))
	if _, err := nc.Write(challenge[:]); err != nil {
		return
	}
	var h [relayHeaderSize]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil {
		r.log("gateway: connection from %s closed before its request: %v", nc.RemoteAddr(), err)
		return
	}
	if string(h[:5]) != string(relayMagic[:]) || h[5] != relayVersion {
		r.log("gateway: connection from %s does not speak the mpigo gateway protocol (refused)", nc.RemoteAddr())
		return
	}
	if id := binary.LittleEndian.Uint64(h[6:]); id != r.cfg.JobID {
		r.log("gateway: connection from %s belongs to job %d, not %d (refused)", nc.RemoteAddr(), id, r.cfg.JobID)
		return
	}
	n := int(binary.LittleEndian.Uint16(h[14:]))
	if n == 0 || n > maxTarget {
		r.log("gateway: connection from %s asks for a target of %d bytes (refused)", nc.RemoteAddr(), n)
		return
	}
	rest := make([]byte, n+macSize)
	if _, err := io.ReadFull(nc, rest); err != nil {
		r.log("gateway: connection from %s: truncated request: %v", nc.RemoteAddr(), err)
		return
	}
	req := append(h[:], rest[:n]...)
	if !hmac.Equal(rest[n:], mac(r.cfg.Secret, []byte(relayReqLabel), challenge[:], req)) {
		r.log("gateway: connection from %s does not know the job's secret (refused)", nc.RemoteAddr())
		return
	}
	target := string(rest[:n])
	out, err := net.DialTimeout("tcp", target, orDefault(r.cfg.DialTimeout, DefaultDialTimeout))
	if err != nil {
		msg := err.Error()
		r.log("gateway: %s asked for %s: %s", nc.RemoteAddr(), target, msg)
		nc.Write(relayReply(r.cfg.Secret, challenge[:], req, 1, msg))
		return
	}
	if !r.track(out) {
		return
	}
	defer r.untrack(out)
	if tc, ok := out.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if _, err := nc.Write(relayReply(r.cfg.Secret, challenge[:], req, 0, "")); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	r.mu.Lock()
	r.relayed++
	r.mu.Unlock()
	splice(nc, out)
}

// splice copies bytes both ways between a and b. A direction that ends
// cleanly passes the end on (half-close) and waits for the other; one that
// fails ends both at once.
func splice(a, b net.Conn) {
	done := make(chan error, 2)
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err == nil {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			} else {
				dst.Close()
			}
		}
		done <- err
	}
	go pipe(a, b)
	go pipe(b, a)
	if err := <-done; err != nil {
		a.Close()
		b.Close()
	}
	<-done
}

// Close stops the gateway: it closes the listener and every connection
// and waits for its goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	for nc := range r.conns {
		nc.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

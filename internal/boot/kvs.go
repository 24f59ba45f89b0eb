package boot

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/gateway"
	"github.com/mpigo/mpi/internal/sockerr"
)

// The launcher's store speaks a line protocol over TCP, one request and
// one answer per line.
//
// A connection starts with a handshake in which each side proves that it
// knows the job's secret without sending it (HMAC-SHA256 over both sides'
// fresh nonces, with a different label for each direction, so that neither
// a recorded handshake nor a reflected one is accepted):
//
//	(server) mpigo-kvs 1 SNONCE         SNONCE: 32 random bytes, in hex
//	auth CNONCE CMAC                    CMAC = HMAC(secret, "mpigo-kvs client" SNONCE CNONCE)
//	(server) ok SMAC                    SMAC = HMAC(secret, "mpigo-kvs server" SNONCE CNONCE)
//
// A store without a secret (the one rank 0 serves under Open MPI's mpirun,
// where nothing is shared before the store exists) greets with
// "mpigo-kvs 1 -" and is answered "auth -"; a client that has a secret
// refuses such a store. Then:
//
//	hello RANK         -> ok
//	put KEY VALUE      -> ok
//	fence              -> ok            (once every process has sent fence)
//	                   -> err MESSAGE   (a process left the job, or the store closes)
//	get KEY            -> val VALUE | err MESSAGE
//	watch              -> (no answer; the connection stays open while the
//	                      launcher lives, so a rank learns of its death)
//	bye                -> ok            (the process leaves the job in order:
//	                                     mpi.Main finished; sent by Close)
//
// Keys contain no spaces; values run to the end of the line and contain no
// newline. No line is longer than maxLine bytes.
//
// Every wait of the server ends when the store closes, and a fence also
// ends (with an error) when a process that took part in the job goes away
// before it, since the fence could then never complete.

const (
	kvsGreeting = "mpigo-kvs 1"
	// maxPending bounds how many connections may be proving the secret at
	// once (more are closed at once; a client retries).
	maxPending = 64
	// dialHandshakeTimeout bounds a client's handshake when its caller
	// gives no bound.
	dialHandshakeTimeout = 60 * time.Second
	// logEvery is the least time between two messages about rejected
	// connections or failing accepts.
	logEvery = 10 * time.Second
)

// storeMaxData bounds what the store holds (keys and values, plus a fixed
// charge per entry), so that a client cannot make it grow without end (a
// variable for tests).
var storeMaxData = 64 << 20

// handshakeTimeout bounds how long a connection may take to prove the
// secret (a variable for tests).
var handshakeTimeout = 10 * time.Second

// Server is the launcher's side of the store for a job of Size processes
// (a fence completes when all of them have reached it).
type Server struct {
	ln     net.Listener
	size   int
	secret []byte
	munge  string        // munged's socket: clients prove their user with MUNGE (storemunge.go)
	done   chan struct{} // closed by Close

	mu        sync.Mutex
	data      map[string]string
	dataBytes int
	round     *fenceRound  // the current fence
	fences    int          // fences completed
	joinedR   map[int]bool // ranks (from hello) of processes that took part
	byeR      map[int]bool // ranks of processes that said bye
	lost      error        // a process left the job: no fence can complete
	closed    bool
	conns     map[net.Conn]*storeConn
	pending   int // connections still in the handshake
	wg        sync.WaitGroup

	// spawn starts the processes a rank asks for (SetSpawn); names is
	// the name service (SetNames). Both are set before ranks start.
	spawn Spawner
	names *Names

	logMu      sync.Mutex
	logf       func(msg string)
	lastLog    time.Time
	suppressed int
}

// fenceRound is one fence: it completes when every process has joined it,
// or fails.
type fenceRound struct {
	done    chan struct{}
	err     error
	members map[*storeConn]bool
}

func newRound() *fenceRound {
	return &fenceRound{done: make(chan struct{}), members: map[*storeConn]bool{}}
}

// storeConn is the server's state of one client.
type storeConn struct {
	c      net.Conn
	rank   int  // from hello; -1 before
	joined bool // it took part in the job (put or fence)
}

// NewServer starts a store for a job of size processes, listening on addr
// (e.g. "127.0.0.1:0"). Clients must prove they know secret (see Dial); an
// empty secret makes a store anyone who can connect may use.
func NewServer(addr string, size int, secret []byte) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("boot: key-value store: %w", err)
	}
	return serveOn(ln, size, secret), nil
}

// serveOn starts a store on a listener.
func serveOn(ln net.Listener, size int, secret []byte) *Server {
	return serveOnAuth(ln, size, secret, "")
}

// serveOnAuth starts a store on a listener whose clients prove secret or,
// if munge names munged's socket, their user (storemunge.go).
func serveOnAuth(ln net.Listener, size int, secret []byte, munge string) *Server {
	s := &Server{ln: ln, size: size, secret: secret, munge: munge, done: make(chan struct{}), data: map[string]string{},
		round: newRound(), conns: map[net.Conn]*storeConn{}, joinedR: map[int]bool{}, byeR: map[int]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s
}

// SetLog has the server report rejected connections and failing accepts
// through logf, at most one message every logEvery (with a count of those
// left out).
func (s *Server) SetLog(logf func(msg string)) {
	s.logMu.Lock()
	s.logf = logf
	s.logMu.Unlock()
}

func (s *Server) log(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logf == nil {
		return
	}
	now := time.Now()
	if now.Sub(s.lastLog) < logEvery {
		s.suppressed++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if s.suppressed > 0 {
		msg += fmt.Sprintf(" (and %d more since the last message)", s.suppressed)
	}
	s.lastLog, s.suppressed = now, 0
	s.logf(msg)
}

// Preset stores a value before any rank connects (a store served by rank
// 0 of a job started by mpirun says which job it belongs to).
func (s *Server) Preset(key, value string) {
	s.mu.Lock()
	s.data[key] = value
	s.mu.Unlock()
}

// StartupProgress reports on the job's first fence, which every process
// reaches once it has started and published its address: whether it has
// completed, and if not, the ranks (as each process said hello) of the
// processes that have reached it so far.
func (s *Server) StartupProgress() (done bool, arrived []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fences > 0 {
		return true, nil
	}
	for sc := range s.round.members {
		if sc.rank >= 0 {
			arrived = append(arrived, sc.rank)
		}
	}
	return false, arrived
}

// join notes that sc takes part in the job (s.mu held).
func (s *Server) join(sc *storeConn) {
	sc.joined = true
	if sc.rank >= 0 {
		if s.joinedR == nil {
			s.joinedR = map[int]bool{}
		}
		s.joinedR[sc.rank] = true
	}
}

// Departure says whether the process whose (first) rank is rank took part
// in the job (it published a value or reached a fence) and whether it left
// in order (mpi.Main finished: its store client's Close said bye). A
// process that took part and exits without bye left in the middle.
func (s *Server) Departure(rank int) (joined, inOrder bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.joinedR[rank], s.byeR[rank]
}

// ReturnedKey is the key a rank started by mpigo run puts when its
// function has returned and it waits for the others to finish.
func ReturnedKey(rank int) string { return "mpigo.returned." + strconv.Itoa(rank) }

// Returned reports whether rank has put ReturnedKey.
func (s *Server) Returned(rank int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.data[ReturnedKey(rank)]
	return ok
}

// Addr returns the address ranks connect to.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, drops its connections and ends every wait: a
// client waiting at a fence gets an error (or sees its connection close).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	backoff := time.Duration(0)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors (EMFILE), an aborted connection, ...:
			// none of it stops the store for good. Wait a little, longer
			// each time it fails in a row, and accept again.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log("mpigo: key-value store: accepting a connection: %v (retrying)", err)
			select {
			case <-s.done:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		if s.pending >= maxPending || len(s.conns) >= s.maxConns() {
			s.mu.Unlock()
			s.log("mpigo: key-value store: too many connections; closed one from %v", c.RemoteAddr())
			c.Close()
			continue
		}
		sc := &storeConn{c: c, rank: -1}
		s.conns[c] = sc
		s.pending++
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(sc)
	}
}

// maxConns bounds the connections open at once: every process has two
// (its requests, and the watch), plus room for processes that try a store
// that is not their job's (Open MPI) and for connections being turned away.
func (s *Server) maxConns() int { return 4*s.size + 2*maxPending }

// storeMAC is the proof of the secret: HMAC-SHA256 of both nonces under a
// label that names the side that sends it.
func storeMAC(secret []byte, side, snonce, cnonce string) string {
	m := hmac.New(sha256.New, secret)
	io.WriteString(m, "mpigo-kvs "+side+"\x00"+snonce+"\x00"+cnonce)
	return hex.EncodeToString(m.Sum(nil))
}

func newNonce() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// handshake has the client prove the secret, within handshakeTimeout.
func (s *Server) handshake(c net.Conn, r *bufio.Reader) error {
	if s.munge != "" {
		return s.mungeHandshake(c, r)
	}
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	snonce := "-"
	if len(s.secret) > 0 {
		var err error
		if snonce, err = newNonce(); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(c, kvsGreeting+" "+snonce+"\n"); err != nil {
		return err
	}
	line, err := readLimited(r, 512)
	if err != nil {
		return err
	}
	f := strings.Fields(line)
	if len(s.secret) == 0 {
		if len(f) != 2 || f[0] != "auth" || f[1] != "-" {
			io.WriteString(c, "err want auth -\n")
			return fmt.Errorf("bad handshake %.40q", line)
		}
		_, err = io.WriteString(c, "ok -\n")
	} else {
		if len(f) != 3 || f[0] != "auth" || len(f[1]) != 64 || !hmac.Equal([]byte(f[2]), []byte(storeMAC(s.secret, "client", snonce, f[1]))) {
			io.WriteString(c, "err not this job's secret\n")
			return fmt.Errorf("the client does not know the job's secret")
		}
		_, err = io.WriteString(c, "ok "+storeMAC(s.secret, "server", snonce, f[1])+"\n")
	}
	if err != nil {
		return err
	}
	c.SetDeadline(time.Time{})
	return nil
}

func (s *Server) serve(sc *storeConn) {
	c := sc.c
	defer s.wg.Done()
	authed := false
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		if !authed {
			s.pending--
		}
		if sc.joined && !s.closed && s.lost == nil {
			// A process of the job is gone: a fence could never complete
			// again; fail the one under way, and any later one.
			who := "a process"
			if sc.rank >= 0 {
				who = "rank " + strconv.Itoa(sc.rank)
			}
			s.lost = errors.New(who + leftTheJob)
			if len(s.round.members) > 0 && !s.round.members[sc] {
				s.round.err = s.lost
				close(s.round.done)
				s.round = newRound()
			}
		}
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReaderSize(c, 4096)
	if err := s.handshake(c, r); err != nil {
		// A client that goes away in the middle (a rank that dies) is
		// not worth a word; one that fails the proof, or takes too long, is.
		if !sockerr.Cut(err) {
			s.log("mpigo: key-value store: rejected a connection from %v: %v", c.RemoteAddr(), err)
		}
		return
	}
	s.mu.Lock()
	s.pending--
	authed = true
	s.mu.Unlock()
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) bool {
		fmt.Fprintf(w, format+"\n", args...)
		return w.Flush() == nil
	}
	for {
		line, err := readLimited(r, maxLine)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				reply("err line longer than %d bytes", maxLine)
			}
			return
		}
		cmd, rest, _ := strings.Cut(line, " ")
		switch cmd {
		case "hello":
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 || n >= max(s.size, 1)<<20 {
				if !reply("err hello needs a rank") {
					return
				}
				continue
			}
			sc.rank = n
			if !reply("ok") {
				return
			}
		case "put":
			key, val, ok := strings.Cut(rest, " ")
			if !ok || key == "" {
				if !reply("err put needs a key and a value") {
					return
				}
				continue
			}
			s.mu.Lock()
			s.join(sc)
			old, had := s.data[key]
			grow := len(key) + len(val) + 64
			if had {
				grow = len(val) - len(old)
			}
			full := s.dataBytes+grow > storeMaxData
			if !full {
				s.data[key] = val
				s.dataBytes += grow
			}
			s.mu.Unlock()
			if full {
				if !reply("err the store is full (%d bytes)", storeMaxData) {
					return
				}
				continue
			}
			if !reply("ok") {
				return
			}
		case "get":
			if rest == KeyNow {
				if !reply("val %d", time.Now().UnixNano()) {
					return
				}
				continue
			}
			s.mu.Lock()
			v, ok := s.data[rest]
			s.mu.Unlock()
			if ok {
				if !reply("val %s", v) {
					return
				}
			} else if !reply("err no value for key %s", rest) {
				return
			}
		case "spawn", "publish", "lookup", "unpublish":
			if !s.control(sc, cmd, rest, reply) {
				return
			}
		case "bye":
			s.mu.Lock()
			if sc.rank >= 0 {
				if s.byeR == nil {
					s.byeR = map[int]bool{}
				}
				s.byeR[sc.rank] = true
			}
			s.mu.Unlock()
			if !reply("ok") {
				return
			}
		case "watch":
			// Block until the launcher closes the store (or dies): the
			// rank's read then fails and it knows to exit. What the rank
			// sends is read and dropped, never kept.
			io.Copy(io.Discard, r)
			return
		case "fence":
			if err := s.fence(sc, r); err != nil {
				if errors.Is(err, errPeerGone) || !reply("err fence failed: %v", err) {
					return
				}
				continue
			}
			if !reply("ok") {
				return
			}
		default:
			if !reply("err unknown command %.40q", cmd) {
				return
			}
		}
	}
}

var errPeerGone = errors.New("the client went away")

const leftTheJob = " left the job (did it die?)"

// fence adds sc to the current fence and waits until it completes, fails,
// the store closes or the client goes away.
func (s *Server) fence(sc *storeConn, r *bufio.Reader) error {
	s.mu.Lock()
	s.join(sc)
	if s.lost != nil {
		err := s.lost
		s.mu.Unlock()
		return err
	}
	f := s.round
	f.members[sc] = true
	if len(f.members) >= s.size {
		close(f.done)
		s.fences++
		s.round = newRound()
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	default:
	}
	// Watch the connection while waiting: a client that closes it (or
	// dies) must not hold this goroutine, and through it Close.
	peeked := make(chan error, 1)
	go func() {
		_, err := r.Peek(1)
		peeked <- err
	}()
	watching := true
	var err error
wait:
	for {
		select {
		case <-f.done:
			err = f.err
			break wait
		case <-s.done:
			err = errors.New("the key-value store is closing")
			break wait
		case e := <-peeked:
			watching = false
			if e != nil {
				return errPeerGone
			}
			peeked = nil // the client sent more: it is there
		}
	}
	if watching {
		// Stop the watcher: a read deadline in the past ends its Peek.
		sc.c.SetReadDeadline(time.Unix(1, 0))
		e := <-peeked
		sc.c.SetReadDeadline(time.Time{})
		if e != nil && !errors.Is(e, os.ErrDeadlineExceeded) {
			return errPeerGone
		}
	}
	return err
}

var errLineTooLong = errors.New("line too long")

// readLimited reads one line of at most limit bytes (without its end of
// line): a peer cannot make the reader hold more.
func readLimited(r *bufio.Reader, limit int) (string, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > limit+1 {
			return "", errLineTooLong
		}
		line = append(line, frag...)
		if err == nil {
			return strings.TrimRight(string(line), "\r\n"), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
}

// client is a rank's connection to the store.
type client struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// Dial connects rank to the store at addr, proving the job's secret (nil
// for a store without one).
func Dial(addr string, rank int, secret []byte) (KV, error) {
	return DialTimeout(addr, rank, secret, 0)
}

// DialTimeout is Dial with a bound on the time to connect and be greeted
// (0: a minute).
func DialTimeout(addr string, rank int, secret []byte, d time.Duration) (KV, error) {
	return dialKV(storeAddr{addr: addr, secret: secret}, rank, d)
}

// storeAddr is where a process reaches a store, and how: directly, or
// through the job's gateways (docs/gateways.md), which check the job's
// identity and secret before they relay.
type storeAddr struct {
	addr   string
	secret []byte
	job    uint64
	via    []string
	// explain, if set, says what the gateway table did for a store that
	// could not be reached directly.
	explain func() string
}

// dial connects to the store, within d.
func (st storeAddr) dial(d time.Duration) (net.Conn, error) {
	if len(st.via) == 0 {
		c, err := net.DialTimeout("tcp", st.addr, d)
		if err != nil {
			why := ""
			var ne net.Error
			if st.explain != nil && (sockerr.Unreachable(err) || errors.As(err, &ne) && ne.Timeout()) {
				why = "; " + st.explain()
			}
			return nil, fmt.Errorf("boot: cannot reach the launcher's key-value store at %s (%s): %w%s", st.addr, EnvKVS, err, why)
		}
		return c, nil
	}
	gc := gateway.Client{JobID: st.job, Secret: st.secret, DialTimeout: d}
	c, err := gc.Dial(st.via, st.addr)
	if err != nil {
		return nil, fmt.Errorf("boot: cannot reach the launcher's key-value store at %s (%s) through gateway %s: %w", st.addr, EnvKVS, strings.Join(st.via, " then "), err)
	}
	return c, nil
}

func dialKV(st storeAddr, rank int, d time.Duration) (KV, error) {
	c, r, err := dialStore(st, d)
	if err != nil {
		return nil, err
	}
	k := &client{conn: c, r: r}
	c.SetDeadline(time.Now().Add(cmp(d, dialHandshakeTimeout)))
	if _, err := k.call(fmt.Sprintf("hello %d", rank)); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return k, nil
}

func cmp(d, dflt time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return dflt
}

// dialStore connects to the store and does the handshake.
func dialStore(st storeAddr, d time.Duration) (net.Conn, *bufio.Reader, error) {
	d = cmp(d, dialHandshakeTimeout)
	deadline := time.Now().Add(d)
	pause := 10 * time.Millisecond
	addr := st.addr
	for {
		c, err := st.dial(time.Until(deadline))
		if err != nil {
			return nil, nil, err
		}
		r := bufio.NewReaderSize(c, 4096)
		err = clientHandshake(c, r, st.secret, time.Until(deadline))
		if err == nil {
			return c, r, nil
		}
		c.Close()
		// A store busy with other connections closes new ones before
		// its greeting: try again while there is time.
		if !errors.Is(err, errNoGreeting) || time.Now().Add(pause).After(deadline) {
			return nil, nil, fmt.Errorf("boot: the key-value store at %s: %w", addr, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 500*time.Millisecond)
	}
}

var errNoGreeting = errors.New("the store closed the connection before its greeting")

func clientHandshake(c net.Conn, r *bufio.Reader, secret []byte, d time.Duration) error {
	c.SetDeadline(time.Now().Add(d))
	defer c.SetDeadline(time.Time{})
	line, err := readLimited(r, 512)
	if err != nil {
		if errors.Is(err, io.EOF) || sockerr.Reset(err) {
			return errNoGreeting
		}
		return fmt.Errorf("no greeting: %w", err)
	}
	snonce, ok := strings.CutPrefix(line, kvsGreeting+" ")
	if !ok {
		return fmt.Errorf("not an mpigo store (greeting %.60q)", line)
	}
	if len(secret) == 0 {
		if snonce != "-" {
			return errors.New("the store wants a secret this process was not given")
		}
		if _, err := io.WriteString(c, "auth -\n"); err != nil {
			return err
		}
		line, err = readLimited(r, 512)
		if err != nil || line != "ok -" {
			return fmt.Errorf("handshake failed: %.60q %v", line, err)
		}
		return nil
	}
	if len(snonce) != 64 {
		return errors.New("the store does not ask for the job's secret: not this job's store")
	}
	cnonce, err := newNonce()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(c, "auth "+cnonce+" "+storeMAC(secret, "client", snonce, cnonce)+"\n"); err != nil {
		return err
	}
	line, err = readLimited(r, 512)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	mac, ok := strings.CutPrefix(line, "ok ")
	if !ok {
		return fmt.Errorf("handshake refused: %.80q", line)
	}
	if !hmac.Equal([]byte(mac), []byte(storeMAC(secret, "server", snonce, cnonce))) {
		return errors.New("the store does not know the job's secret: not this job's store")
	}
	return nil
}

func (k *client) call(req string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(req) > maxLine {
		return "", fmt.Errorf("boot: key-value store: request longer than %d bytes", maxLine)
	}
	if _, err := io.WriteString(k.conn, req+"\n"); err != nil {
		return "", fmt.Errorf("boot: key-value store: %w", err)
	}
	line, err := readLimited(k.r, maxLine+8)
	if err != nil {
		return "", fmt.Errorf("boot: key-value store closed the connection (did the launcher exit?): %w", err)
	}
	if msg, ok := strings.CutPrefix(line, "err "); ok {
		return "", errors.New("boot: " + msg)
	}
	return line, nil
}

func (k *client) Put(key, value string) error {
	if key == "" || strings.ContainsAny(key, " \r\n") || strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("boot: bad key or value %q=%q", key, value)
	}
	_, err := k.call("put " + key + " " + value)
	return err
}

// ErrPeerLeft is the error of a fence that cannot complete because a
// process of the job left (died) before reaching it.
var ErrPeerLeft = errors.New("the fence cannot complete")

func (k *client) Fence() error {
	_, err := k.call("fence")
	if err != nil && strings.HasSuffix(err.Error(), leftTheJob) {
		_, who, _ := strings.Cut(err.Error(), "fence failed: ")
		return fmt.Errorf("boot: %w: %s", ErrPeerLeft, who)
	}
	return err
}

func (k *client) Get(key string) (string, error) {
	line, err := k.call("get " + key)
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(line, "val ")
	if !ok {
		return "", fmt.Errorf("boot: bad answer %.80q", line)
	}
	return v, nil
}

// Close tells the store that this process leaves the job in order (bye;
// a store that does not know the word answers an error, which does not
// matter), then closes the connection. The goodbye waits for the store's
// answer at most byeTimeout, and is skipped when a call is under way (a
// Close that ends a Fence must not wait for it).
func (k *client) Close() error {
	if k.mu.TryLock() {
		k.conn.SetDeadline(time.Now().Add(byeTimeout))
		if _, err := io.WriteString(k.conn, "bye\n"); err == nil {
			readLimited(k.r, maxLine+8)
		}
		k.mu.Unlock()
	}
	return k.conn.Close()
}

// byeTimeout bounds the goodbye of Close.
const byeTimeout = 5 * time.Second

// Watch calls lost (on its own goroutine) if the launcher's store goes
// away, which happens when the launcher exits or dies: a rank started on
// another host through ssh has no other way to learn it is orphaned.
func Watch(info *Info, lost func()) error {
	c, _, err := dialStore(info.store(), 0)
	if err != nil {
		return fmt.Errorf("boot: cannot watch the launcher at %s: %w", info.KVSAddr, err)
	}
	if _, err := io.WriteString(c, "watch\n"); err != nil {
		c.Close()
		return err
	}
	go func() {
		io.Copy(io.Discard, c)
		lost()
	}()
	return nil
}

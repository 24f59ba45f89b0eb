package mpi

// Ports and client/server jobs (MPI-4.1 section 11.4): OpenPort,
// CommAccept, CommConnect, CommJoin, Disconnect. A port is a tcp listener
// of the rank that opened it, and its name carries a secret: a client must
// prove it knows the secret before the server tells it anything, and the
// server proves it back, so a stranger can neither join a job nor pose as
// its server. Over the port's connection the two roots exchange their
// groups' link addresses and agree on a context id free on every member
// of both groups; then every member connects to the other group through a
// link (internal/device/links.go), and the intercommunicator addresses the
// other group's members as peers appended to the rank's routes.

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	hexenc "encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/device"
)

// portPrefix starts every port name: mpigo-port:SECRET@HOST:PORT.
const portPrefix = "mpigo-port:"

// port is a port this process opened.
type port struct {
	name   string
	secret []byte
	ln     net.Listener
	conns  chan provenConn // connections that proved the secret, for CommAccept
	done   chan struct{}   // closed by ClosePort
	once   sync.Once
}

var ports struct {
	sync.Mutex
	open map[string]*port
}

// portHost is the address other jobs dial to reach this process's ports:
// loopback unless the launcher named another (MPIGO_ADDR).
func portHost() string { s, _ := launchAddr.Load().(string); return s }

// launchAddr is MPIGO_ADDR of a launched process (runLaunched), where
// other jobs reach its ports.
var launchAddr atomic.Value

// OpenPort opens a port on which CommAccept takes connections from other
// jobs (MPI_Open_port) and returns its name, which the server gives its
// clients (PublishName, a file, the command line). The name carries a
// secret: only those who have the name can connect. info is ignored and
// may be nil. Close the port with ClosePort.
func OpenPort(info *Info) (_ string, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("OpenPort", nil, Undefined, Undefined), &err)
	}
	host := portHost()
	bind := host
	if host == "" || host == "localhost" || host == "127.0.0.1" {
		host, bind = "127.0.0.1", "127.0.0.1"
	} else {
		bind = ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		return "", (*Comm)(nil).errorf("OpenPort", ErrPort, loc{}, "cannot listen: %v", err)
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	_, pnum, _ := net.SplitHostPort(ln.Addr().String())
	pt := &port{secret: secret, ln: ln, conns: make(chan provenConn), done: make(chan struct{})}
	pt.name = portPrefix + hexenc.EncodeToString(secret) + "@" + net.JoinHostPort(host, pnum)
	ports.Lock()
	if ports.open == nil {
		ports.open = map[string]*port{}
	}
	ports.open[pt.name] = pt
	ports.Unlock()
	go pt.accept()
	return pt.name, nil
}

// provenConn is a client's connection to a port that proved the secret.
type provenConn struct {
	c net.Conn
	r *bufio.Reader
}

// accept takes clients' connections: each proves the secret at once (so
// that a stranger learns promptly that it is refused), then waits for
// CommAccept.
func (pt *port) accept() {
	for {
		c, err := pt.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			r := bufio.NewReader(c)
			c.SetDeadline(time.Now().Add(portTimeout))
			if err := portProve(c, r, pt.secret, true); err != nil {
				c.Close()
				return
			}
			c.SetDeadline(time.Time{})
			select {
			case pt.conns <- provenConn{c, r}:
			case <-pt.done:
				c.Close()
			}
		}()
	}
}

func (pt *port) close() {
	pt.once.Do(func() {
		close(pt.done)
		pt.ln.Close()
	})
}

// ClosePort closes a port opened by OpenPort (MPI_Close_port): a
// CommAccept waiting on it fails with ErrPort, and clients can no longer
// connect.
func ClosePort(name string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ClosePort", nil, Undefined, Undefined), &err)
	}
	ports.Lock()
	pt := ports.open[name]
	delete(ports.open, name)
	ports.Unlock()
	if pt == nil {
		return (*Comm)(nil).errorf("ClosePort", ErrPort, loc{}, "%q is not a port this process opened", name)
	}
	pt.close()
	return nil
}

// parsePort splits a port name into its secret and address.
func parsePort(name string) (secret []byte, addr string, err error) {
	rest, ok := strings.CutPrefix(name, portPrefix)
	if !ok {
		return nil, "", fmt.Errorf("%.80q is not a port name (they start with %q: from OpenPort, or LookupName)", name, portPrefix)
	}
	sec, addr, ok := strings.Cut(rest, "@")
	if !ok {
		return nil, "", fmt.Errorf("port name %.80q has no address", name)
	}
	if secret, err = hexenc.DecodeString(sec); err != nil || len(secret) < 16 {
		return nil, "", fmt.Errorf("port name %.80q has a damaged secret", name)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, "", fmt.Errorf("port name %.80q has a damaged address: %v", name, err)
	}
	return secret, addr, nil
}

// CommAccept waits for a client to connect to the port name (which this
// process opened with OpenPort) and returns an intercommunicator between
// comm's group and the client's (MPI_Comm_accept). It is collective over
// comm; only root's name and info count, and info may be nil.
func (c *Comm) CommAccept(name string, info *Info, root int) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CommAccept", c, root, Undefined), &err)
	}
	return c.acceptOn(name, root, nil)
}

// acceptOn is CommAccept; stop, if not nil, ends the wait with an error
// (a spawn whose children never connect).
func (c *Comm) acceptOn(name string, root int, stop <-chan error) (*Comm, error) {
	const op = "CommAccept"
	if err := c.rootCheck(op, root); err != nil {
		return nil, err
	}
	var dial func() (net.Conn, *bufio.Reader, []byte, error)
	if c.rank == root {
		dial = func() (net.Conn, *bufio.Reader, []byte, error) {
			select {
			case err := <-stop:
				return nil, nil, nil, err
			default:
			}
			ports.Lock()
			pt := ports.open[name]
			ports.Unlock()
			if pt == nil {
				return nil, nil, nil, fmt.Errorf("%w: %.80q is not an open port of this process (OpenPort)", ErrPort, name)
			}
			select {
			case pc := <-pt.conns:
				return pc.c, pc.r, pt.secret, nil
			case <-pt.done:
				return nil, nil, nil, fmt.Errorf("%w: the port was closed", ErrPort)
			case err := <-stop:
				return nil, nil, nil, err
			}
		}
	}
	return c.linkGroups(op, root, true, dial)
}

// CommConnect connects to the server that accepts on the port name and
// returns an intercommunicator between comm's group and the server's
// (MPI_Comm_connect). It is collective over comm; only root's name and
// info count, and info may be nil. A name that is no port, or whose job is
// gone, is ErrPort at once.
func (c *Comm) CommConnect(name string, info *Info, root int) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CommConnect", c, root, Undefined), &err)
	}
	const op = "CommConnect"
	if err := c.rootCheck(op, root); err != nil {
		return nil, err
	}
	var dial func() (net.Conn, *bufio.Reader, []byte, error)
	if c.rank == root {
		dial = func() (net.Conn, *bufio.Reader, []byte, error) {
			secret, addr, err := parsePort(name)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%w: %v", ErrPort, err)
			}
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%w: nobody listens on port %.80q (was it closed, or its job ended?): %v", ErrPort, name, err)
			}
			return conn, nil, secret, nil
		}
	}
	return c.linkGroups(op, root, false, dial)
}

func (c *Comm) rootCheck(op string, root int) error {
	if err := c.intraOnly(op); err != nil {
		return err
	}
	if root < 0 || root >= len(c.group) {
		return c.fail(op, ErrRoot, loc{}, "root %d is not a rank of %s (size %d)", root, c.Name(), len(c.group))
	}
	return nil
}

// The roots' conversation on a port's connection: length-prefixed
// records, after a proof of the port's secret both ways.
const (
	portHello   = "mpigo-port/1"
	portTimeout = 10 * time.Second
)

func writeRec(w io.Writer, b []byte) error {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

func readRec(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	l := binary.LittleEndian.Uint32(n[:])
	if l > 16<<20 {
		return nil, fmt.Errorf("a record of %d bytes", l)
	}
	b := make([]byte, l)
	_, err := io.ReadFull(r, b)
	return b, err
}

func portMAC(secret []byte, side string, nonce []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(portHello + side))
	m.Write(nonce)
	return m.Sum(nil)
}

// portProve runs the proof of the port's secret: each side sends a nonce
// and checks the other's MAC of its own nonce.
func portProve(conn net.Conn, r io.Reader, secret []byte, accepting bool) error {
	mine := make([]byte, 16)
	rand.Read(mine)
	me, them := "c", "a"
	if accepting {
		me, them = "a", "c"
	}
	if err := writeRec(conn, append([]byte(portHello), mine...)); err != nil {
		return err
	}
	hello, err := readRec(r)
	if err != nil {
		return err
	}
	theirs, ok := strings.CutPrefix(string(hello), portHello)
	if !ok || len(theirs) != 16 {
		return errors.New("the other side does not speak mpigo's port protocol")
	}
	if !accepting {
		if err := writeRec(conn, portMAC(secret, me, []byte(theirs))); err != nil {
			return err
		}
	}
	mac, err := readRec(r)
	if err != nil {
		return err
	}
	if string(mac) == portRefused {
		return errors.New("the server refused the connection: the port name's secret is wrong")
	}
	if !hmac.Equal(mac, portMAC(secret, them, mine)) {
		if accepting {
			writeRec(conn, []byte(portRefused))
		}
		return errors.New("the other side does not know the port's secret")
	}
	if accepting {
		return writeRec(conn, portMAC(secret, me, []byte(theirs)))
	}
	return nil
}

// portRefused is the server's answer to a client whose proof is wrong.
const portRefused = "refused"

// linkRec is what a root tells its group: the other group's link
// addresses, the link's secret and id, and this group's place in it; or
// why the connection failed.
type linkRec struct {
	err       string
	remote    []string
	secret    []byte
	jobID     uint64
	accepting bool
}

func (l *linkRec) encode() []byte {
	if l.err != "" {
		return append([]byte{1}, l.err...)
	}
	b := []byte{0, 0}
	if l.accepting {
		b[1] = 1
	}
	b = binary.LittleEndian.AppendUint64(b, l.jobID)
	b = append(b, byte(len(l.secret)))
	b = append(b, l.secret...)
	return append(b, encodeStrings(l.remote)...)
}

func decodeLinkRec(b []byte) (*linkRec, error) {
	if len(b) == 0 {
		return nil, errors.New("empty record")
	}
	if b[0] == 1 {
		return &linkRec{err: string(b[1:])}, nil
	}
	if len(b) < 11 || int(b[10])+11 > len(b) {
		return nil, errors.New("short record")
	}
	l := &linkRec{accepting: b[1] == 1, jobID: binary.LittleEndian.Uint64(b[2:])}
	n := int(b[10])
	l.secret = b[11 : 11+n]
	var err error
	l.remote, err = decodeStrings(b[11+n:])
	return l, err
}

func encodeStrings(ss []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(ss)))
	for _, s := range ss {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

func decodeStrings(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, errors.New("short list")
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > len(b)/4 {
		return nil, errors.New("list longer than its record")
	}
	ss := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return nil, errors.New("short list")
		}
		l := int(binary.LittleEndian.Uint32(b))
		if l > len(b)-4 {
			return nil, errors.New("short list")
		}
		ss = append(ss, string(b[4:4+l]))
		b = b[4+l:]
	}
	return ss, nil
}

// linkGroups joins c's group with another group that does the same on the
// other end of a connection that root makes with dial (accepting: this
// group accepted it), and returns the intercommunicator. Collective over c.
func (c *Comm) linkGroups(op string, root int, accepting bool, dial func() (net.Conn, *bufio.Reader, []byte, error)) (*Comm, error) {
	lcc := c.coll()
	tGather, tRec, tAgree := c.collTag(), c.collTag(), c.collTag()
	ll, addr, lerr := device.ListenLink(c.p.job.linkAddr)
	if lerr != nil {
		addr = ""
	}
	addrs, err := coll.Gather(lcc, []byte(addr), root, tGather)
	if err != nil {
		if ll != nil {
			ll.Close()
		}
		return nil, c.collErr(op, err)
	}
	var conn net.Conn
	var r *bufio.Reader
	var rec []byte
	if c.rank == root {
		var l *linkRec
		conn, r, l = c.rootHandshake(accepting, addrs, dial)
		rec = l.encode()
		if l.err != "" && conn != nil {
			conn.Close()
			conn = nil
		}
	}
	if conn != nil {
		defer conn.Close()
	}
	rec, err = coll.BcastVarAlg(lcc, "", rec, root, tRec)
	if err != nil {
		if ll != nil {
			ll.Close()
		}
		return nil, c.collErr(op, err)
	}
	l, derr := decodeLinkRec(rec)
	switch {
	case derr != nil:
		if ll != nil {
			ll.Close()
		}
		return nil, c.fail(op, ErrIntern, loc{}, "the root's record: %v", derr)
	case l.err != "":
		if ll != nil {
			ll.Close()
		}
		class := ErrPort
		if strings.HasPrefix(l.err, "spawn:") {
			class = ErrSpawn
			l.err = strings.TrimPrefix(l.err, "spawn:")
		}
		return nil, c.fail(op, class, loc{}, "%s", l.err)
	}
	var exch func([]byte) ([]byte, error)
	if c.rank == root {
		exch = func(b []byte) ([]byte, error) {
			conn.SetDeadline(time.Now().Add(portTimeout))
			if err := writeRec(conn, b); err != nil {
				return nil, err
			}
			return readRec(r)
		}
	}
	id, err := c.p.agreeContext(acrossGroups(lcc, root, tAgree, tAgree+4, agreeCombine, exch))
	if err != nil {
		ll.Close()
		return nil, c.ctxFail(op, err)
	}
	na, nr := len(c.group), len(l.remote)
	cfg := device.LinkConfig{Me: c.rank, RemoteBase: na, RemoteN: nr, Secret: l.secret, JobID: l.jobID}
	mine := make([]string, na)
	if accepting {
		cfg.Addrs = append(append(cfg.Addrs, mine...), l.remote...)
	} else {
		cfg.Me, cfg.RemoteBase = nr+c.rank, 0
		cfg.Addrs = append(append(cfg.Addrs, l.remote...), mine...)
	}
	p := c.p
	cfg.OnPeerError = func(peer int, err error) {
		p.Eng.FailAll(peer, fmt.Errorf("%w: a process of the connected job (peer %d): %w", ErrProcFailed, peer, err))
	}
	link, err := p.Device.StartLink(ll, cfg)
	if err != nil {
		ll.Close()
		p.ctx.release(id)
		return nil, c.fail(op, ErrOther, loc{}, "linking to the other group: %v", err)
	}
	p.addLink(link)
	remote := make([]int, nr)
	for i := range remote {
		remote[i] = link.First + i
	}
	ic := newInterComm(p, id, c.rank, c.group, remote, fmt.Sprintf("%s.%s", c.name, strings.ToLower(op[4:])))
	ic.inter.link, ic.inter.low = link, accepting
	ic.errh.Store(c.errh.Load())
	return ic, nil
}

// rootHandshake is the root's part of linkGroups: it makes the connection,
// proves the secret, and swaps the groups' link addresses.
func (c *Comm) rootHandshake(accepting bool, addrs [][]byte, dial func() (net.Conn, *bufio.Reader, []byte, error)) (net.Conn, *bufio.Reader, *linkRec) {
	fail := func(format string, args ...any) *linkRec { return &linkRec{err: fmt.Sprintf(format, args...)} }
	mine := make([]string, len(addrs))
	for i, a := range addrs {
		if len(a) == 0 {
			return nil, nil, fail("rank %d of %s could not listen for the other group", i, c.Name())
		}
		mine[i] = string(a)
	}
	conn, r, secret, err := dial()
	if err != nil {
		if errors.Is(err, ErrSpawn) {
			return nil, nil, fail("spawn:%s", strings.TrimPrefix(err.Error(), ErrSpawn.Error()+": "))
		}
		return nil, nil, fail("%s", strings.TrimPrefix(err.Error(), ErrPort.Error()+": "))
	}
	conn.SetDeadline(time.Now().Add(portTimeout))
	if r == nil {
		r = bufio.NewReader(conn)
		if err := portProve(conn, r, secret, accepting); err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
	}
	l := &linkRec{accepting: accepting}
	if accepting {
		l.secret = make([]byte, 32)
		rand.Read(l.secret)
		var id [8]byte
		rand.Read(id[:])
		l.jobID = binary.LittleEndian.Uint64(id[:])
		b := binary.LittleEndian.AppendUint64(append([]byte{byte(len(l.secret))}, l.secret...), l.jobID)
		if err := writeRec(conn, append(b, encodeStrings(mine)...)); err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
		theirs, err := readRec(r)
		if err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
		if l.remote, err = decodeStrings(theirs); err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
	} else {
		theirs, err := readRec(r)
		if err == nil && (len(theirs) < 1 || len(theirs) < 1+int(theirs[0])+8) {
			err = errors.New("short record")
		}
		if err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
		n := int(theirs[0])
		l.secret = theirs[1 : 1+n]
		l.jobID = binary.LittleEndian.Uint64(theirs[1+n:])
		if l.remote, err = decodeStrings(theirs[9+n:]); err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
		if err := writeRec(conn, encodeStrings(mine)); err != nil {
			return conn, nil, fail("the port's handshake: %v", err)
		}
	}
	if len(l.remote) == 0 {
		return conn, nil, fail("the other group is empty")
	}
	return conn, r, l
}

// addLink keeps a link of p, to close when the job ends.
func (p *proc) addLink(l *device.Link) {
	p.linkMu.Lock()
	p.links = append(p.links, l)
	p.linkMu.Unlock()
}

// closeLinks cuts p's links (the job ends).
func (p *proc) closeLinks() error {
	p.linkMu.Lock()
	ls := p.links
	p.links = nil
	p.linkMu.Unlock()
	for _, l := range ls {
		l.Close()
	}
	return nil
}

// Disconnect waits for the messages of c's pending communication to be
// delivered, then frees c (MPI_Comm_disconnect); on an intercommunicator
// between two jobs (CommAccept, CommConnect, Spawn, CommJoin) it also cuts
// the connection to the other job, so that the jobs are independent
// again: communicators derived from c (IntercommMerge, Dup) stop working.
// It is collective over both groups. If the other group is gone, it
// returns ErrProcFailed rather than waiting for it.
func (c *Comm) Disconnect() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Disconnect", c, Undefined, Undefined), &err)
	}
	const op = "Disconnect"
	if err := c.check(op); err != nil {
		return err
	}
	berr := Barrier(c)
	var link *device.Link
	if c.inter != nil {
		link = c.inter.link
	}
	if err := c.free(); err != nil {
		return err
	}
	if link != nil {
		link.Close()
	}
	if berr != nil {
		return c.fail(op, ErrorClass(berr), loc{}, "waiting for the other processes: %v", berr)
	}
	return nil
}

package boot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A PMIx client: how a rank started by Slurm's srun --mpi=pmix, by Open
// MPI's mpirun (its daemon is a PMIx server) or by any other PMIx server
// joins its job, without the C library.
//
// The server tells its clients where it listens in PMIX_SERVER_URI<V>
// (V names the newest protocol it speaks: 41, 4, 3, 21), as
// "SERVERNSPACE.RANK;tcp4://127.0.0.1:PORT"; the client's own name is
// PMIX_NAMESPACE and PMIX_RANK. The connection starts with a handshake:
//
//	header:  int32 -1, uint32 0xffffffff, uint32 N, uint32 0 (this
//	         machine's byte order: client and server share a node)
//	N bytes: "native\0"          security module (the server offers a list
//	                             in PMIX_SECURITY_MODE; native is the peer
//	                             credential of the socket, always offered)
//	         uint32 L, L bytes   credential: for TCP the effective uid and
//	                             gid (4 bytes each, this machine's order);
//	                             empty on a unix socket
//	         byte 0              "simple client" (a process the server
//	                             started and registered)
//	         NSPACE\0 uint32     our namespace and rank
//	         "4.1.0\0"           the client's version
//	         "v41\0" byte 1      bfrops module and buffer type (non-described)
//	         "hash\0"            where we keep job data (in our memory)
//	reply:   uint32 status (0: accepted), uint32 our index
//
// (the uint32s of the body and reply are big-endian). After that every
// message, either way, is a 16-byte header of big-endian int32 index,
// uint32 tag, uint32 length, uint32 padding, and a buffer (pmix_wire.go)
// that starts with the command. A reply carries the tag of its request;
// messages with tags of no request (event notifications) are skipped.
//
//	command        request (each item a top-level count and value)            reply
//	0 REQ          -                                                          nspace, then key/value items (job info)
//	2 COMMIT       [scope 1, buffer of key/values] [scope 2, buffer ...]     status
//	3 FENCE        nprocs, procs, ninfo, infos (pmix.collect=true)            status
//	4 GET          nspace, rank, ninfo, infos, key                            status, byte objects: proc, key/values
//	1 ABORT        status, message, nprocs (0: the whole job), procs          status
//	5 FINALIZE     -                                                          (anything)
//
// A Put is kept until the next Fence, which commits it first (COMMIT sends
// the local-scope values in a buffer marked 1, the remote-scope ones in a
// buffer marked 2; a global value goes in both). The job info answered to
// REQ holds the job-level keys (pmix.job.size, pmix.univ.size, ...) and,
// per rank, a byte object under pmix.pblob with the rank and its keys
// (pmix.lrank, pmix.nodeid, ...); node-level ones (pmix.lpeers) come under
// pmix.node.arr or at the job level. A key not found there is asked of the
// server with GET.

// Reserved PMIx keys this package reads.
const (
	PMIxJobSize    = "pmix.job.size"   // uint32: ranks in the job
	PMIxUnivSize   = "pmix.univ.size"  // uint32: slots in the session
	PMIxAppNum     = "pmix.appnum"     // uint32: application number of a rank
	PMIxLocalRank  = "pmix.lrank"      // uint16: rank among the job's ranks of its node
	PMIxLocalSize  = "pmix.local.size" // uint32: ranks of the job on this node
	PMIxLocalPeers = "pmix.lpeers"     // string: the job's ranks on this node, "0,1,2"
	PMIxNodeID     = "pmix.nodeid"     // uint32: node of a rank
	PMIxHostname   = "pmix.hname"      // string: host of a rank
)

const (
	pmixCmdReq      = 0
	pmixCmdAbort    = 1
	pmixCmdCommit   = 2
	pmixCmdFence    = 3
	pmixCmdGet      = 4
	pmixCmdFinalize = 5
)

// maxPMIxMsg bounds one message from the server (the job info of a large
// job, or a rank's data).
const maxPMIxMsg = 64 << 20

// pmixStatusName names the status codes a person may meet.
func pmixStatusName(s int32) string {
	names := map[int32]string{0: "success", -1: "error", -12: "invalid credential", -20: "cannot unpack",
		-24: "timeout", -25: "unreachable", -27: "bad parameter", -31: "init failed", -46: "not found",
		-47: "not supported", -61: "lost connection"}
	if n, ok := names[s]; ok {
		return fmt.Sprintf("%d (%s)", s, n)
	}
	return strconv.Itoa(int(s))
}

// PMIxServer is where a PMIx server listens, as the environment says.
type PMIxServer struct {
	Var     string // the variable it came from: PMIX_SERVER_URI41, ...
	URI     string // its value
	Network string // "tcp" or "unix"
	Addr    string // host:port, or a socket path
	Bfrops  string // the buffer format spoken: v41, v4, v3, v21
	Version string // the client version announced
	Flex    bool   // integers in the flex encoding (v4, v41)
}

// pmixURIVars are the server address variables, newest protocol first.
var pmixURIVars = []struct{ name, bfrops, version string }{
	{"PMIX_SERVER_URI41", "v41", "4.1.0"},
	{"PMIX_SERVER_URI4", "v4", "4.0.0"},
	{"PMIX_SERVER_URI3", "v3", "3.1.0"},
	{"PMIX_SERVER_URI21", "v21", "2.1.0"},
}

// hasPMIxURI reports whether the environment names a PMIx server.
func hasPMIxURI(env lookupFunc) bool {
	for _, v := range append(pmixURIVars, struct{ name, bfrops, version string }{"PMIX_SERVER_URI2", "", ""}) {
		if s, _ := env(v.name); s != "" {
			return true
		}
	}
	return false
}

// FindPMIxServer reads the server's address from the environment.
func FindPMIxServer(env func(string) (string, bool)) (PMIxServer, error) {
	for _, v := range pmixURIVars {
		uri, _ := env(v.name)
		if uri == "" {
			continue
		}
		s, err := ParsePMIxURI(uri)
		if err != nil {
			return s, fmt.Errorf("PMIx: %s=%q: %v", v.name, uri, err)
		}
		s.Var, s.Bfrops, s.Version = v.name, v.bfrops, v.version
		if want, _ := env("MPIGO_PMIX_BFROPS"); want != "" {
			// An older format than the server's newest, which it
			// also speaks (for tests, and servers that misbehave).
			i := slices.IndexFunc(pmixURIVars, func(u struct{ name, bfrops, version string }) bool { return u.bfrops == want })
			if i < 0 {
				return s, fmt.Errorf("PMIx: MPIGO_PMIX_BFROPS=%q: want v41, v4, v3 or v21", want)
			}
			s.Bfrops, s.Version = pmixURIVars[i].bfrops, pmixURIVars[i].version
		}
		s.Flex = s.Bfrops == "v41" || s.Bfrops == "v4"
		return s, nil
	}
	if uri, _ := env("PMIX_SERVER_URI2"); uri != "" {
		return PMIxServer{Var: "PMIX_SERVER_URI2", URI: uri}, fmt.Errorf("PMIx: the server speaks only PMIx 2.0 (PMIX_SERVER_URI2=%s), which mpigo does not: use a PMIx 2.1 or later server, or srun --mpi=pmi2", uri)
	}
	return PMIxServer{}, errors.New("PMIx: no PMIX_SERVER_URI41, PMIX_SERVER_URI4, PMIX_SERVER_URI3 or PMIX_SERVER_URI21 in the environment: the launcher did not say where its PMIx server listens")
}

// ParsePMIxURI reads "NSPACE.RANK;tcp4://HOST:PORT" (also tcp6://[HOST]:PORT
// and usock:// or unix:// with a socket path).
func ParsePMIxURI(uri string) (PMIxServer, error) {
	s := PMIxServer{URI: uri}
	id, addr, ok := strings.Cut(uri, ";")
	if !ok || strings.Contains(addr, ";") {
		return s, errors.New("want SERVERNSPACE.RANK;ADDRESS")
	}
	if i := strings.LastIndexByte(id, '.'); i < 0 {
		return s, errors.New("the server's name has no .RANK")
	} else if _, err := strconv.ParseUint(id[i+1:], 10, 32); err != nil {
		return s, fmt.Errorf("the server's rank %q is not a number", id[i+1:])
	}
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok {
		return s, fmt.Errorf("address %q has no scheme://", addr)
	}
	switch scheme {
	case "tcp4", "tcp6", "tcp":
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return s, fmt.Errorf("address %q: %v", rest, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return s, fmt.Errorf("bad port %q", port)
		}
		if net.ParseIP(host) == nil {
			return s, fmt.Errorf("%q is not an IP address", host)
		}
		s.Network, s.Addr = "tcp", net.JoinHostPort(host, port)
	case "usock", "unix":
		if rest == "" {
			return s, errors.New("empty socket path")
		}
		s.Network, s.Addr = "unix", rest
	default:
		return s, fmt.Errorf("transport %q is not one mpigo speaks (tcp4, tcp6, usock)", scheme)
	}
	return s, nil
}

// pmixPut is a value put and not yet committed.
type pmixPut struct {
	scope int
	key   string
	val   pmixVal
}

// PMIxClient is one process's connection to its PMIx server.
type PMIxClient struct {
	mu      sync.Mutex // one request and its reply at a time
	conn    net.Conn
	srv     PMIxServer
	me      pmixProcID
	index   uint32 // our index at the server
	tag     uint32
	reply   time.Duration
	fenceT  time.Duration
	pending []pmixPut
	own     map[string]pmixVal
	peers   map[uint32]map[string]pmixVal // peers' data fetched since the last fence
	job     map[string]pmixVal            // job-level info
	ranks   map[uint32]map[string]pmixVal // per-rank info
	nodes   [][]pmixInfo                  // node-level info arrays
	// JobInfoErr is why the job info was read only in part (an item of
	// a type this client does not read); what came before it is kept.
	JobInfoErr error
	closed     atomic.Bool // Close does not wait for the request under way: it ends it
	// Security is the security mode the server accepted: "native" or
	// "munge".
	Security  string
	mungeSock string // munged's socket, for mode munge
	cred      []byte // the credential of the connection request (makeCred)
}

func (c *PMIxClient) fail(what string, err error) error {
	return fmt.Errorf("PMIx server at %s (%s): %s: %w", c.srv.URI, c.srv.Var, what, err)
}

// DialPMIx connects to the server the environment names, introduces this
// process and reads the job's info.
func DialPMIx(env func(string) (string, bool)) (*PMIxClient, error) {
	srv, err := FindPMIxServer(env)
	if err != nil {
		return nil, err
	}
	ns, _ := env("PMIX_NAMESPACE")
	rs, _ := env("PMIX_RANK")
	rank, err := strconv.ParseUint(rs, 10, 32)
	if ns == "" || err != nil || rank >= pmixRankWildcard {
		return nil, fmt.Errorf("PMIx: PMIX_NAMESPACE=%q and PMIX_RANK=%q do not name this process", ns, rs)
	}
	if len(ns) > 255 {
		return nil, fmt.Errorf("PMIx: PMIX_NAMESPACE is longer than 255 bytes")
	}
	modes, err := pmixSecModes(env)
	if err != nil {
		return nil, fmt.Errorf("PMIx server at %s: %w", srv.URI, err)
	}
	reply, fence := pmiTimeouts(env)
	var errs []error
	for i, mode := range modes {
		c := newPMIxClient(srv, pmixProcID{ns, uint32(rank)}, reply, fence)
		c.Security, c.mungeSock = mode, mungeSocket(env)
		// The credential first: a mode that cannot make one does not
		// open a connection only to close it unspoken.
		err := c.makeCred()
		if err == nil {
			d := net.Dialer{Timeout: reply}
			conn, derr := d.Dial(srv.Network, srv.Addr)
			if derr != nil {
				return nil, c.fail("cannot connect", derr)
			}
			err = c.start(conn)
		}
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		// Another mode is worth a try only if this one was refused (or
		// could not make its credential), not if the server is silent.
		var ref *pmixRefusal
		if i == len(modes)-1 || !(errors.As(err, &ref) || errors.Is(err, errNoCred)) {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// errNoCred marks a handshake that could not make its credential.
var errNoCred = errors.New("no credential")

// pmixRefusal is a server's refusal of the connection request (or its
// closing the connection instead of answering it).
type pmixRefusal struct{ msg string }

func (e *pmixRefusal) Error() string { return e.msg }

// pmixSecDetail says, for a person, which security modes the client will
// offer.
func pmixSecDetail(env lookupFunc) string {
	modes, err := pmixSecModes(env)
	switch {
	case err != nil:
		return "security: " + err.Error()
	case len(modes) == 1:
		return "security " + modes[0]
	}
	return "security " + modes[0] + ", then " + strings.Join(modes[1:], ", ") + " if the server refuses it (MPIGO_PMIX_SECURITY chooses one)"
}

// pmixSecModes are the security modes to offer the server, in order: the
// one MPIGO_PMIX_SECURITY names, else native (the peer credential of the
// socket) if the server accepts it, then munge. PMIX_SECURITY_MODE lists
// the modes the server accepts; unset, the server takes native.
func pmixSecModes(env lookupFunc) ([]string, error) {
	offered := []string{"native"}
	if m := getenv(env, "PMIX_SECURITY_MODE"); m != "" {
		offered = strings.Split(m, ",")
	}
	if want := getenv(env, "MPIGO_PMIX_SECURITY"); want != "" {
		if want != "native" && want != "munge" {
			return nil, fmt.Errorf("MPIGO_PMIX_SECURITY=%q: mpigo speaks native and munge", want)
		}
		if !slices.Contains(offered, want) {
			return nil, fmt.Errorf("MPIGO_PMIX_SECURITY=%q, but the server accepts only %q (PMIX_SECURITY_MODE)", want, strings.Join(offered, ","))
		}
		return []string{want}, nil
	}
	var modes []string
	for _, m := range []string{"native", "munge"} {
		if slices.Contains(offered, m) {
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 {
		return nil, fmt.Errorf("it accepts only the security modes %q (PMIX_SECURITY_MODE); mpigo speaks native and munge", strings.Join(offered, ","))
	}
	return modes, nil
}

// newPMIxClient makes the client of process me for server srv (not
// connected yet).
func newPMIxClient(srv PMIxServer, me pmixProcID, reply, fence time.Duration) *PMIxClient {
	return &PMIxClient{srv: srv, me: me, reply: reply, fenceT: fence,
		tag: 100, own: map[string]pmixVal{}, peers: map[uint32]map[string]pmixVal{},
		job: map[string]pmixVal{}, ranks: map[uint32]map[string]pmixVal{}}
}

// start introduces this process on conn and reads the job's info; on
// failure it closes conn.
func (c *PMIxClient) start(conn net.Conn) error {
	c.conn = conn
	if err := c.handshake(); err != nil {
		conn.Close()
		return err
	}
	if err := c.init(); err != nil {
		conn.Close()
		return err
	}
	return nil
}

// nativeCred is the credential of security mode native: on TCP the
// effective uid and gid (the server cannot ask the socket); on a unix
// socket nothing.
func nativeCred(srv PMIxServer, uid, gid uint32) []byte {
	var cred []byte
	if srv.Network == "tcp" {
		cred = binary.NativeEndian.AppendUint32(cred, uid)
		cred = binary.NativeEndian.AppendUint32(cred, gid)
	}
	return cred
}

// handshakeMsg is the connection request of a simple client, introduced
// in security mode sec with credential cred.
func handshakeMsg(srv PMIxServer, me pmixProcID, sec string, cred []byte) []byte {
	var body []byte
	body = append(body, sec...)
	body = append(body, 0)
	body = binary.BigEndian.AppendUint32(body, uint32(len(cred)))
	body = append(body, cred...)
	body = append(body, 0) // simple client
	body = append(body, me.Nspace...)
	body = append(body, 0)
	body = binary.BigEndian.AppendUint32(body, me.Rank)
	body = append(body, srv.Version...)
	body = append(body, 0)
	body = append(body, srv.Bfrops...)
	body = append(body, 0, 1) // non-described buffers
	body = append(body, "hash\x00"...)
	hdr := make([]byte, 16)
	binary.NativeEndian.PutUint32(hdr[0:], 0xffffffff)
	binary.NativeEndian.PutUint32(hdr[4:], 0xffffffff)
	binary.NativeEndian.PutUint32(hdr[8:], uint32(len(body)))
	return append(hdr, body...)
}

// readHandshakeReply reads the server's answer: a status, then (if 0) our
// index.
func readHandshakeReply(r io.Reader) (uint32, error) {
	var b [8]byte
	if n, err := io.ReadFull(r, b[:4]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return 0, &pmixRefusal{"the server closed the connection without an answer (servers do that to a credential they refuse)"}
		}
		return 0, pmixIOError(err, n)
	}
	if st := int32(binary.BigEndian.Uint32(b[:4])); st != 0 {
		return 0, &pmixRefusal{fmt.Sprintf("the server refused this process: status %s", pmixStatusName(st))}
	}
	if n, err := io.ReadFull(r, b[4:]); err != nil {
		return 0, pmixIOError(err, n)
	}
	idx := binary.BigEndian.Uint32(b[4:])
	if idx > 1<<24 {
		return 0, fmt.Errorf("the server gave this process index %d, which makes no sense", idx)
	}
	return idx, nil
}

func pmixIOError(err error, got int) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && got > 0:
		return fmt.Errorf("the server sent %d bytes of its reply, then nothing more", got)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errors.New("no reply")
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if got > 0 {
			return fmt.Errorf("the server closed the connection in the middle of its reply (%d bytes)", got)
		}
		return errors.New("the server closed the connection")
	}
	return err
}

// makeCred makes the credential of c's security mode (c.cred).
func (c *PMIxClient) makeCred() error {
	switch c.Security {
	case "munge":
		// A credential munged makes, which the server's munged checks;
		// the libpmix servers want it with its NUL.
		s, err := mungeEncode(c.mungeSock, nil, mungeAny, c.reply)
		if err != nil {
			return c.fail("security mode munge", fmt.Errorf("%w: %w", errNoCred, err))
		}
		c.cred = append([]byte(s), 0)
	default:
		c.Security = "native"
		c.cred = nativeCred(c.srv, uint32(os.Geteuid()), uint32(os.Getegid()))
	}
	return nil
}

func (c *PMIxClient) handshake() error {
	start := time.Now()
	c.conn.SetDeadline(start.Add(c.reply))
	defer c.conn.SetDeadline(time.Time{})
	if c.cred == nil {
		if err := c.makeCred(); err != nil {
			return err
		}
	}
	if _, err := c.conn.Write(handshakeMsg(c.srv, c.me, c.Security, c.cred)); err != nil {
		return c.fail("cannot send the connection request", err)
	}
	idx, err := readHandshakeReply(c.conn)
	if err != nil {
		return c.fail(fmt.Sprintf("connection handshake in security mode %s (within %v)", c.Security, c.reply), err)
	}
	c.index = idx
	return nil
}

func (c *PMIxClient) enc() *pmixEnc { return &pmixEnc{flex: c.srv.Flex} }

// call sends one request and returns the body of its reply.
func (c *PMIxClient) call(what string, msg *pmixEnc, d time.Duration) (*pmixDec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callLocked(what, msg, d)
}

func (c *PMIxClient) callLocked(what string, msg *pmixEnc, d time.Duration) (*pmixDec, error) {
	if c.closed.Load() || c.conn == nil {
		return nil, c.fail(what, errors.New("the connection is closed"))
	}
	c.tag++
	tag := c.tag
	hdr := make([]byte, 16, 16+len(msg.b))
	binary.BigEndian.PutUint32(hdr[0:], c.index)
	binary.BigEndian.PutUint32(hdr[4:], tag)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(msg.b)))
	c.conn.SetDeadline(time.Now().Add(d))
	defer c.conn.SetDeadline(time.Time{})
	if _, err := c.conn.Write(append(hdr, msg.b...)); err != nil {
		return nil, c.fail("cannot send "+what, err)
	}
	for {
		var h [16]byte
		if n, err := io.ReadFull(c.conn, h[:]); err != nil {
			return nil, c.fail(fmt.Sprintf("%s (waited %v)", what, d), pmixIOError(err, n))
		}
		n := binary.BigEndian.Uint32(h[8:])
		if n > maxPMIxMsg {
			return nil, c.fail(what, fmt.Errorf("a message of %d bytes (at most %d accepted): not a PMIx server?", n, maxPMIxMsg))
		}
		body := make([]byte, n)
		if k, err := io.ReadFull(c.conn, body); err != nil {
			return nil, c.fail(fmt.Sprintf("%s (waited %v)", what, d), pmixIOError(err, 16+k))
		}
		if binary.BigEndian.Uint32(h[4:]) == tag {
			return &pmixDec{b: body, flex: c.srv.Flex}, nil
		}
		// An event notification, or the reply to a request we gave
		// up on: not ours.
	}
}

// init asks for the job's info (REQ).
func (c *PMIxClient) init() error {
	m := c.enc()
	m.count(1)
	m.byte1(pmixCmdReq)
	d, err := c.call("request for the job's info", m, c.reply)
	if err != nil {
		return err
	}
	if err := c.readJobInfo(d); err != nil {
		return c.fail("the job's info", err)
	}
	return nil
}

// readJobInfo decodes the reply to REQ. A bad namespace is an error; an
// item it cannot read ends the reading, keeping what came before.
func (c *PMIxClient) readJobInfo(d *pmixDec) error {
	n, err := d.count()
	if err != nil || n != 1 {
		return fmt.Errorf("no namespace (%v)", err)
	}
	ns, err := d.str()
	if err != nil {
		return fmt.Errorf("namespace: %v", err)
	}
	if ns != c.me.Nspace {
		return fmt.Errorf("the info is for namespace %q, not this process's %q", ns, c.me.Nspace)
	}
	for d.more() {
		key, v, err := readTopKval(d)
		if err != nil {
			c.JobInfoErr = err
			break
		}
		c.addJobInfo(key, v)
	}
	return nil
}

func readTopKval(d *pmixDec) (string, pmixVal, error) {
	n, err := d.count()
	if err != nil {
		return "", pmixVal{}, err
	}
	if n != 1 {
		return "", pmixVal{}, fmt.Errorf("%d key/values in one item", n)
	}
	return d.kval()
}

func (c *PMIxClient) addJobInfo(key string, v pmixVal) {
	switch key {
	case "pmix.pblob": // one rank's keys
		b, ok := v.V.([]byte)
		if !ok {
			return
		}
		d := &pmixDec{b: b, flex: c.srv.Flex}
		if n, err := d.count(); err != nil || n != 1 {
			return
		}
		r, err := d.u32()
		if err != nil {
			return
		}
		m := c.ranks[r]
		if m == nil {
			m = map[string]pmixVal{}
			c.ranks[r] = m
		}
		for d.more() {
			k, v, err := readTopKval(d)
			if err != nil {
				c.JobInfoErr = err
				return
			}
			m[k] = v
		}
	case "pmix.pdata": // an array of infos, one of them the rank
		arr, _ := v.V.([]any)
		var infos []pmixInfo
		rank := int64(-1)
		for _, x := range arr {
			if in, ok := x.(pmixInfo); ok {
				if in.Key == "pmix.rank" {
					if u, ok := in.Val.uint(); ok {
						rank = int64(u)
					}
				}
				infos = append(infos, in)
			}
		}
		if rank >= 0 {
			m := c.ranks[uint32(rank)]
			if m == nil {
				m = map[string]pmixVal{}
				c.ranks[uint32(rank)] = m
			}
			for _, in := range infos {
				m[in.Key] = in.Val
			}
		}
	case "pmix.node.arr":
		arr, _ := v.V.([]any)
		var infos []pmixInfo
		for _, x := range arr {
			if in, ok := x.(pmixInfo); ok {
				infos = append(infos, in)
			}
		}
		c.nodes = append(c.nodes, infos)
	default:
		c.job[key] = v
	}
}

// Me is this process's namespace and rank.
func (c *PMIxClient) Me() (string, uint32) { return c.me.Nspace, c.me.Rank }

// Server says which server this client talks to.
func (c *PMIxClient) Server() PMIxServer { return c.srv }

// Put keeps a value to publish at the next Commit, under scope PMIxLocal,
// PMIxRemote or PMIxGlobal.
func (c *PMIxClient) Put(scope int, key string, value []byte) error {
	if scope < PMIxLocal || scope > PMIxGlobal {
		return fmt.Errorf("PMIx: put %q: scope %d is not local, remote or global", key, scope)
	}
	if key == "" || len(key) > 511 || strings.HasPrefix(key, "pmix.") || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("PMIx: put: bad key %q (non-empty, at most 511 bytes, not pmix.*)", key)
	}
	v := pmixVal{Type: pmixByteObject, V: slices.Clone(value)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, pmixPut{scope, key, v})
	c.own[key] = v
	return nil
}

// Commit sends the values put since the last commit to the server.
func (c *PMIxClient) Commit() error {
	c.mu.Lock()
	puts := c.pending
	c.pending = nil
	c.mu.Unlock()
	if len(puts) == 0 {
		return nil
	}
	m := c.enc()
	m.count(1)
	m.byte1(pmixCmdCommit)
	for _, scope := range []int{PMIxLocal, PMIxRemote} {
		bkt := c.enc()
		for _, p := range puts {
			if p.scope == scope || p.scope == PMIxGlobal {
				bkt.count(1)
				if err := bkt.kval(p.key, p.val); err != nil {
					return err
				}
			}
		}
		if len(bkt.b) == 0 {
			continue
		}
		m.count(1)
		m.byte1(byte(scope))
		m.count(1)
		m.byte1(1) // the bucket is a non-described buffer
		m.size(len(bkt.b))
		m.b = append(m.b, bkt.b...)
	}
	d, err := c.call("commit", m, c.reply)
	if err != nil {
		return err
	}
	return c.checkStatus("commit", d)
}

func (c *PMIxClient) checkStatus(what string, d *pmixDec) error {
	st, err := d.status()
	if err != nil {
		return c.fail(what, fmt.Errorf("bad reply: %v", err))
	}
	if st != 0 {
		return c.fail(what, fmt.Errorf("status %s", pmixStatusName(st)))
	}
	return nil
}

// Fence commits what was put, then waits until every process of the job
// has fenced; with collect, the server gathers everyone's values so that
// Get finds them without asking the rank that put them.
func (c *PMIxClient) Fence(collect bool) error {
	if err := c.Commit(); err != nil {
		return err
	}
	m := c.enc()
	m.count(1)
	m.byte1(pmixCmdFence)
	m.count(1)
	m.size(1)
	m.count(1)
	m.proc(pmixProcID{c.me.Nspace, pmixRankWildcard})
	m.count(1)
	m.size(1)
	m.count(1)
	if err := m.info(pmixInfo{Key: "pmix.collect", Val: pmixVal{Type: pmixBool, V: collect}}); err != nil {
		return err
	}
	d, err := c.call("fence", m, c.fenceT)
	if err != nil {
		return err
	}
	if err := c.checkStatus("fence", d); err != nil {
		return err
	}
	c.mu.Lock()
	c.peers = map[uint32]map[string]pmixVal{}
	c.mu.Unlock()
	return nil
}

// errPMIxNotFound says a key has no value.
var errPMIxNotFound = errors.New("not found")

// Get returns the value of key put by rank (this process's own, another
// rank's after a fence, or a reserved key the server holds for the rank;
// pmixRankWildcard for the job's).
func (c *PMIxClient) get(rank uint32, key string) (pmixVal, error) {
	c.mu.Lock()
	if rank == c.me.Rank {
		if v, ok := c.own[key]; ok {
			c.mu.Unlock()
			return v, nil
		}
	}
	if rank == pmixRankWildcard {
		if v, ok := c.job[key]; ok {
			c.mu.Unlock()
			return v, nil
		}
	} else if v, ok := c.ranks[rank][key]; ok {
		c.mu.Unlock()
		return v, nil
	} else if v, ok := c.peers[rank][key]; ok {
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	m := c.enc()
	m.count(1)
	m.byte1(pmixCmdGet)
	m.count(1)
	m.str(c.me.Nspace)
	m.count(1)
	m.u32(rank)
	m.count(1)
	m.size(0)
	m.count(1)
	m.str(key)
	what := fmt.Sprintf("get %s of rank %d", key, rank)
	if rank == pmixRankWildcard {
		what = "get " + key + " of the job"
	}
	d, err := c.call(what, m, c.fenceT)
	if err != nil {
		return pmixVal{}, err
	}
	st, err := d.status()
	if err != nil {
		return pmixVal{}, c.fail(what, fmt.Errorf("bad reply: %v", err))
	}
	if st == -46 {
		return pmixVal{}, errPMIxNotFound
	}
	if st != 0 {
		return pmixVal{}, c.fail(what, fmt.Errorf("status %s", pmixStatusName(st)))
	}
	got, err := readGetReply(d)
	if err != nil {
		return pmixVal{}, c.fail(what, fmt.Errorf("bad reply: %v", err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for r, kv := range got {
		if r == pmixRankUndef {
			r = rank
		}
		m := c.peers[r]
		if m == nil {
			m = map[string]pmixVal{}
			c.peers[r] = m
		}
		for k, v := range kv {
			m[k] = v
		}
	}
	if v, ok := c.peers[rank][key]; ok {
		return v, nil
	}
	return pmixVal{}, errPMIxNotFound
}

// readGetReply reads the byte objects that follow a GET reply's status:
// each holds a proc and its key/values.
func readGetReply(d *pmixDec) (map[uint32]map[string]pmixVal, error) {
	out := map[uint32]map[string]pmixVal{}
	for d.more() {
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		if n != 1 {
			return nil, fmt.Errorf("%d byte objects in one item", n)
		}
		b, err := d.bo()
		if err != nil {
			return nil, err
		}
		in := &pmixDec{b: b, flex: d.flex}
		if n, err := in.count(); err != nil || n != 1 {
			return nil, fmt.Errorf("no proc in a byte object (%v)", err)
		}
		p, err := in.proc()
		if err != nil {
			return nil, err
		}
		m := out[p.Rank]
		if m == nil {
			m = map[string]pmixVal{}
			out[p.Rank] = m
		}
		for in.more() {
			k, v, err := readTopKval(in)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
	}
	return out, nil
}

// Get returns the value of a key put by rank, as bytes.
func (c *PMIxClient) Get(rank int, key string) ([]byte, error) {
	v, err := c.get(uint32(rank), key)
	if err != nil {
		return nil, err
	}
	switch x := v.V.(type) {
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return []byte(v.String()), nil
}

// JobUint reads an integer reserved key of the job (rank < 0) or of a rank.
func (c *PMIxClient) JobUint(rank int, key string) (uint64, error) {
	r := uint32(pmixRankWildcard)
	if rank >= 0 {
		r = uint32(rank)
	}
	v, err := c.get(r, key)
	if err != nil {
		return 0, err
	}
	u, ok := v.uint()
	if !ok {
		return 0, fmt.Errorf("PMIx: %s is %v, not a number", key, v.V)
	}
	return u, nil
}

// LocalPeers returns the ranks of the job on this node, from pmix.lpeers
// (at the job level, in this node's info array, or from the server).
func (c *PMIxClient) LocalPeers(size int) ([]int, error) {
	var s string
	c.mu.Lock()
	if v, ok := c.job[PMIxLocalPeers]; ok {
		s, _ = v.V.(string)
	}
	if s == "" {
		host, _ := os.Hostname()
		myNode, hasNode := c.ranks[c.me.Rank][PMIxNodeID].uint()
		for _, infos := range c.nodes {
			mine := false
			var peers string
			for _, in := range infos {
				switch in.Key {
				case PMIxHostname:
					if h, _ := in.Val.V.(string); h == host {
						mine = true
					}
				case PMIxNodeID:
					if u, ok := in.Val.uint(); ok && hasNode && u == myNode {
						mine = true
					}
				case PMIxLocalPeers:
					peers, _ = in.Val.V.(string)
				}
			}
			if mine && peers != "" {
				s = peers
				break
			}
		}
	}
	c.mu.Unlock()
	if s == "" {
		v, err := c.get(pmixRankWildcard, PMIxLocalPeers)
		if err != nil {
			return nil, err
		}
		s, _ = v.V.(string)
	}
	return parsePeers(s, size)
}

// parsePeers reads "0,1,5" (ranks of a node) into ascending ranks.
func parsePeers(s string, size int) ([]int, error) {
	var rs []int
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 0 || r >= size {
			return nil, fmt.Errorf("PMIx: pmix.lpeers=%q: %q is not a rank of %d", s, f, size)
		}
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return slices.Compact(rs), nil
}

// Abort asks the server to end the whole job, with a status and a message
// for the person, and waits a moment for its answer.
func (c *PMIxClient) Abort(code int, msg string) error {
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	m := c.enc()
	m.count(1)
	m.byte1(pmixCmdAbort)
	m.count(1)
	m.i32(int32(code))
	m.count(1)
	m.str(msg)
	m.count(1)
	m.size(0)
	// A failing rank must not wait behind a request of another goroutine
	// (a fence can take minutes): give up on the lock after a while.
	wait := min(c.reply, 10*time.Second)
	for end := time.Now().Add(wait); !c.mu.TryLock(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			return c.fail("abort", errors.New("another request holds the connection"))
		}
	}
	d, err := c.callLocked("abort", m, wait)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.checkStatus("abort", d)
}

// Finalize tells the server this process is done, and closes the
// connection.
func (c *PMIxClient) Finalize() error {
	m := c.enc()
	m.count(1)
	m.byte1(pmixCmdFinalize)
	_, err := c.call("finalize", m, c.reply)
	return errors.Join(err, c.Close())
}

// Close closes the connection without a word to the server; a request
// under way fails.
func (c *PMIxClient) Close() error {
	if c.conn == nil || c.closed.Swap(true) {
		return nil
	}
	return c.conn.Close()
}

// pmixConn is the PMIx client in the shape of the other launchers'
// stores (pmiConn): mpigo's keys are flat, PMIx's belong to the rank that
// put them, so the rank is read from the key. mpigo's keys name it:
// "mpigo.NAME.R" and its pieces "mpigo.NAME.R.P" are rank R's; a key
// without a rank ("mpigo.secret", "mpigo.secret.P") is rank 0's.
type pmixConn struct {
	c *PMIxClient
}

func keyOwner(key string) int {
	parts := strings.Split(key, ".")
	if len(parts) >= 3 {
		if r, err := strconv.Atoi(parts[2]); err == nil && r >= 0 && parts[1] != "secret" {
			return r
		}
	}
	return 0
}

func (p *pmixConn) put(key, value string) error {
	return p.c.Put(PMIxGlobal, key, []byte(value))
}
func (p *pmixConn) fence() error { return p.c.Fence(true) }
func (p *pmixConn) get(key string) (string, bool, error) {
	b, err := p.c.Get(keyOwner(key), key)
	if errors.Is(err, errPMIxNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}
func (p *pmixConn) maxValue() int   { return 1 << 20 }
func (p *pmixConn) finalize() error { return p.c.Finalize() }
func (p *pmixConn) abort(code int, msg string) {
	p.c.Abort(code, msg)
}
func (p *pmixConn) close() error { return p.c.Close() }

// pmixWho names the launcher for Info.Launcher.
func pmixWho(env lookupFunc) string {
	if getenv(env, "SLURM_STEP_ID") != "" || getenv(env, "SLURM_JOB_ID") != "" {
		return LauncherPMIx + " (Slurm)"
	}
	if getenv(env, "OMPI_COMM_WORLD_SIZE") != "" {
		return LauncherPMIx + " (Open MPI)"
	}
	return LauncherPMIx
}

// detectPMIx builds the Info of a process started by a PMIx server.
// Under Open MPI's mpirun, a server that cannot be reached or refuses the
// connection leaves the rank-0 side channel (ompi.go): every rank meets
// the same server, so all fall back alike.
func detectPMIx(env lookupFunc) (*Info, error) {
	c, err := DialPMIx(env)
	if err != nil {
		if getenv(env, "OMPI_COMM_WORLD_SIZE") != "" {
			info, err2 := detectOMPI(env)
			if err2 != nil {
				return nil, errors.Join(err, err2)
			}
			return info, nil
		}
		return nil, err
	}
	info, err := pmixJobInfo(c, env)
	if err != nil {
		c.Close()
		return nil, err
	}
	return info, nil
}

func pmixJobInfo(c *PMIxClient, env lookupFunc) (*Info, error) {
	size, err := c.JobUint(-1, PMIxJobSize)
	if err != nil {
		return nil, c.fail("the job's size ("+PMIxJobSize+")", err)
	}
	if size < 1 || size > 1<<24 || uint64(c.me.Rank) >= size {
		return nil, c.fail("the job's size", fmt.Errorf("rank %d of %d makes no sense", c.me.Rank, size))
	}
	info := &Info{Rank: int(c.me.Rank), Size: int(size), Launcher: pmixWho(env), JobID: jobIDOf("pmix/" + c.me.Nspace)}
	var mapping []int
	if peers, err := c.LocalPeers(int(size)); err == nil && slices.Contains(peers, info.Rank) {
		mapping = make([]int, size)
		for r := range mapping {
			mapping[r] = 1
		}
		for _, r := range peers {
			mapping[r] = 0
		}
	}
	if err := pmiStart(env, info, &pmixConn{c}, mapping); err != nil {
		return nil, err
	}
	return info, nil
}

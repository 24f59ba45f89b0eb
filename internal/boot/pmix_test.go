package boot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/testutil"
)

// fakePMIx is a PMIx server in the test process: enough of the protocol
// for N clients to join, put, fence, get, abort and finalize, or, by
// mode, a server that misbehaves.
type fakePMIx struct {
	t    *testing.T
	ln   net.Listener
	ns   string
	size int
	mode string // "", "garbage", "close", "silent", "refuse", "badjob"
	sec  string // if set, the one security mode accepted ("native", "munge")

	refusals []string // why connection requests were refused (sec)

	mu      sync.Mutex
	cond    *sync.Cond
	data    map[uint32]map[string]pmixVal
	fenced  int
	gen     int
	aborts  []string
	finals  int
	formats []string // bfrops names clients announced
	conns   []net.Conn
}

func newFakePMIx(t *testing.T, ns string, size int, mode string) *fakePMIx {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakePMIx{t: t, ln: ln, ns: ns, size: size, mode: mode, data: map[uint32]map[string]pmixVal{}}
	s.cond = sync.NewCond(&s.mu)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.gen = -1 // release fences
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	return s
}

func (s *fakePMIx) uri() string { return "fake-server.0;tcp4://" + s.ln.Addr().String() }

// env is the environment a rank of this server's job sees.
func (s *fakePMIx) env(rank int, uriVar string) lookupFunc {
	m := map[string]string{uriVar: s.uri(), "PMIX_NAMESPACE": s.ns, "PMIX_RANK": strconv.Itoa(rank), "PMIX_SECURITY_MODE": "munge,native"}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func (s *fakePMIx) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// readHandshake parses a client's connection request.
func readHandshake(r io.Reader) (bfrops string, me pmixProcID, err error) {
	h, err := readHello(r)
	return h.bfrops, h.me, err
}

// hello is a client's connection request.
type hello struct {
	sec    string // security mode
	cred   []byte
	bfrops string
	me     pmixProcID
}

// readHello parses a client's connection request.
func readHello(r io.Reader) (h hello, err error) {
	var hdr [16]byte
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	n := binary.NativeEndian.Uint32(hdr[8:])
	if n > 4096 {
		return h, fmt.Errorf("handshake of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err = io.ReadFull(r, body); err != nil {
		return
	}
	cstr := func() string {
		i := bytes.IndexByte(body, 0)
		if i < 0 {
			err = errors.New("unterminated string")
			return ""
		}
		v := string(body[:i])
		body = body[i+1:]
		return v
	}
	if h.sec = cstr(); h.sec != "native" && h.sec != "munge" {
		return h, fmt.Errorf("security %q", h.sec)
	}
	cl := binary.BigEndian.Uint32(body)
	if cl > uint32(len(body)-4) {
		return h, fmt.Errorf("credential of %d bytes", cl)
	}
	h.cred = body[4 : 4+cl]
	body = body[4+cl:]
	if body[0] != 0 {
		return h, fmt.Errorf("flag %d", body[0])
	}
	body = body[1:]
	h.me.Nspace = cstr()
	h.me.Rank = binary.BigEndian.Uint32(body)
	body = body[4:]
	cstr() // version
	h.bfrops = cstr()
	if len(body) < 1 || body[0] != 1 {
		return h, errors.New("not a non-described buffer")
	}
	body = body[1:]
	if g := cstr(); g != "hash" {
		return h, fmt.Errorf("gds %q", g)
	}
	return h, err
}

// checkCred is what a server that wants security mode sec says of a
// client's request: nil if it accepts it. A munge credential is checked
// with munge's own tool, unmunge, which must say it is this process's.
func checkCred(h hello, sec string) error {
	if h.sec != sec {
		return fmt.Errorf("security mode %q, want %q", h.sec, sec)
	}
	if sec != "munge" {
		return nil
	}
	if len(h.cred) < 2 || h.cred[len(h.cred)-1] != 0 {
		return fmt.Errorf("munge credential %q does not end in NUL", h.cred)
	}
	cmd := exec.Command("unmunge", "--socket", mungeSocket(getenvOS), "--metadata", "-", "--output", "/dev/null")
	cmd.Stdin = bytes.NewReader(h.cred[:len(h.cred)-1])
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("unmunge refuses the credential: %v", err)
	}
	if !strings.Contains(string(out), "("+strconv.Itoa(os.Geteuid())+")") {
		return fmt.Errorf("the credential is someone else's: %s", out)
	}
	return nil
}

func (s *fakePMIx) serve(c net.Conn) {
	defer c.Close()
	h, err := readHello(c)
	if err != nil {
		s.t.Errorf("fake PMIx server: %v", err)
		return
	}
	bfrops, me := h.bfrops, h.me
	if s.sec != "" {
		// A server that takes only one security mode: it answers a
		// request in another, or with a bad credential, with "invalid
		// credential" and closes.
		if err := checkCred(h, s.sec); err != nil {
			s.mu.Lock()
			s.refusals = append(s.refusals, err.Error())
			s.mu.Unlock()
			c.Write([]byte{0xff, 0xff, 0xff, 0xf4}) // -12
			return
		}
	}
	flex := bfrops == "v41" || bfrops == "v4"
	s.mu.Lock()
	s.formats = append(s.formats, bfrops)
	s.mu.Unlock()
	switch s.mode {
	case "garbage":
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
		return
	case "close":
		return
	case "silent":
		io.Copy(io.Discard, c)
		return
	case "refuse":
		c.Write([]byte{0xff, 0xff, 0xff, 0xd2}) // -46
		return
	}
	c.Write([]byte{0, 0, 0, 0, 0, 0, 0, byte(me.Rank)})
	for {
		var h [16]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(h[8:]))
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		reply, err := s.handle(me, &pmixDec{b: body, flex: flex}, flex)
		if err != nil {
			s.t.Errorf("fake PMIx server: rank %d: %v", me.Rank, err)
			return
		}
		if reply == nil {
			continue
		}
		out := make([]byte, 16, 16+len(reply))
		copy(out[4:8], h[4:8]) // the request's tag
		binary.BigEndian.PutUint32(out[8:], uint32(len(reply)))
		// An unsolicited event first, which the client must skip.
		ev := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 7}
		if _, err := c.Write(append(ev, append(out, reply...)...)); err != nil {
			return
		}
	}
}

func status(e *pmixEnc, st int32) { e.count(1); e.i32(st) }

func (s *fakePMIx) handle(me pmixProcID, d *pmixDec, flex bool) ([]byte, error) {
	e := &pmixEnc{flex: flex}
	if n, err := d.count(); err != nil || n != 1 {
		return nil, fmt.Errorf("no command (%v)", err)
	}
	cmd, _ := d.byte1()
	switch cmd {
	case pmixCmdReq:
		if s.mode == "badjob" {
			e.count(1)
			e.str("another-namespace")
			return e.b, nil
		}
		e.count(1)
		e.str(s.ns)
		e.count(1)
		e.kval(PMIxJobSize, pmixVal{Type: pmixUint32, V: uint32(s.size)})
		e.count(1)
		e.kval(PMIxUnivSize, pmixVal{Type: pmixUint32, V: uint32(s.size)})
		for r := 0; r < s.size; r++ {
			b := &pmixEnc{flex: flex}
			b.count(1)
			b.u32(uint32(r))
			b.count(1)
			b.str(PMIxLocalRank)
			b.u16(pmixUint16)
			b.u16(uint16(r))
			b.count(1)
			b.kval(PMIxNodeID, pmixVal{Type: pmixUint32, V: uint32(r / 2)})
			e.count(1)
			e.kval("pmix.pblob", pmixVal{Type: pmixByteObject, V: b.b})
		}
		// Nodes of two ranks each.
		for n := 0; n*2 < s.size; n++ {
			peers := strconv.Itoa(2 * n)
			if 2*n+1 < s.size {
				peers += "," + strconv.Itoa(2*n+1)
			}
			e.count(1)
			e.str("pmix.node.arr")
			e.u16(pmixDataArray)
			e.u16(pmixTInfo)
			e.size(3)
			e.info(pmixInfo{Key: PMIxHostname, Val: pmixVal{Type: pmixString, V: "node" + strconv.Itoa(n)}})
			e.info(pmixInfo{Key: PMIxNodeID, Val: pmixVal{Type: pmixUint32, V: uint32(n)}})
			e.info(pmixInfo{Key: PMIxLocalPeers, Val: pmixVal{Type: pmixString, V: peers}})
		}
		// An item of a type the client does not read ends the info.
		e.count(1)
		e.str("pmix.topo2")
		e.u16(56)
		e.b = append(e.b, 1, 2, 3)
		return e.b, nil
	case pmixCmdCommit:
		for d.more() {
			if _, err := d.count(); err != nil {
				return nil, err
			}
			scope, _ := d.byte1()
			if _, err := d.count(); err != nil {
				return nil, err
			}
			if t, _ := d.byte1(); t != 1 {
				return nil, fmt.Errorf("bucket of type %d", t)
			}
			b, err := d.bo()
			if err != nil {
				return nil, err
			}
			in := &pmixDec{b: b, flex: flex}
			for in.more() {
				k, v, err := readTopKval(in)
				if err != nil {
					return nil, err
				}
				s.mu.Lock()
				if s.data[me.Rank] == nil {
					s.data[me.Rank] = map[string]pmixVal{}
				}
				s.data[me.Rank][k+"@"+strconv.Itoa(int(scope))] = v
				s.mu.Unlock()
			}
		}
		status(e, 0)
		return e.b, nil
	case pmixCmdFence:
		n, _ := d.count()
		np, _ := d.size()
		d.count()
		p, err := d.proc()
		if err != nil || n != 1 || np != 1 || p.Rank != pmixRankWildcard {
			return nil, fmt.Errorf("fence of procs %v (%v)", p, err)
		}
		d.count()
		ni, _ := d.size()
		d.count()
		in, err := d.info(0)
		if err != nil || ni != 1 || in.Key != "pmix.collect" {
			return nil, fmt.Errorf("fence info %v (%v)", in, err)
		}
		s.mu.Lock()
		g := s.gen
		s.fenced++
		if s.fenced == s.size {
			s.fenced = 0
			s.gen++
			s.cond.Broadcast()
		}
		for s.gen == g {
			s.cond.Wait()
		}
		s.mu.Unlock()
		status(e, 0)
		return e.b, nil
	case pmixCmdGet:
		d.count()
		ns, _ := d.str()
		d.count()
		r, _ := d.u32()
		d.count()
		d.size()
		d.count()
		key, err := d.str()
		if err != nil || ns != s.ns {
			return nil, fmt.Errorf("get %q of %s: %v", key, ns, err)
		}
		s.mu.Lock()
		vals := map[string]pmixVal{}
		for k, v := range s.data[r] {
			if name, scope, _ := strings.Cut(k, "@"); (scope == "2") == (r/2 != me.Rank/2) {
				vals[name] = v
			}
		}
		s.mu.Unlock()
		if _, ok := vals[key]; !ok {
			status(e, -46)
			return e.b, nil
		}
		status(e, 0)
		b := &pmixEnc{flex: flex}
		b.count(1)
		b.proc(pmixProcID{s.ns, r})
		for k, v := range vals {
			b.count(1)
			b.kval(k, v)
		}
		e.count(1)
		e.size(len(b.b))
		e.b = append(e.b, b.b...)
		return e.b, nil
	case pmixCmdAbort:
		d.count()
		code, _ := d.i32()
		d.count()
		msg, _ := d.str()
		s.mu.Lock()
		s.aborts = append(s.aborts, fmt.Sprintf("%d:%d:%s", me.Rank, code, msg))
		s.mu.Unlock()
		status(e, 0)
		return e.b, nil
	case pmixCmdFinalize:
		s.mu.Lock()
		s.finals++
		s.mu.Unlock()
		status(e, 0)
		return e.b, nil
	}
	return nil, fmt.Errorf("command %d", cmd)
}

// Ranks join a job through a PMIx server in every buffer format: the
// reserved keys give size, local peers and node, the ranks exchange values
// through Put/Fence/Get, and Close finalizes.
func TestPMIxJob(t *testing.T) {
	for _, f := range []struct{ uriVar, bfrops string }{
		{"PMIX_SERVER_URI41", "v41"}, {"PMIX_SERVER_URI4", "v4"}, {"PMIX_SERVER_URI3", "v3"}, {"PMIX_SERVER_URI21", "v21"},
	} {
		t.Run(f.bfrops, func(t *testing.T) {
			const n = 5
			srv := newFakePMIx(t, "job-"+f.bfrops, n, "")
			infos := make([]*Info, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for r := 0; r < n; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					infos[r], errs[r] = detectPMIx(srv.env(r, f.uriVar))
				}()
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			for r, info := range infos {
				wantNode := []int{r &^ 1, r | 1}
				if r == n-1 {
					wantNode = []int{r}
				}
				if info.Rank != r || info.Size != n || fmt.Sprint(info.NodeRanks) != fmt.Sprint(wantNode) || info.LocalRank != r&1 || info.Launcher != LauncherPMIx {
					t.Errorf("rank %d: %+v", r, info)
				}
				if !bytes.Equal(info.Secret, infos[0].Secret) || len(info.Secret) == 0 || info.JobID != infos[0].JobID {
					t.Errorf("rank %d: secret or job id differs from rank 0's", r)
				}
			}
			// Flat keys through pmiKV, with values of every byte and one
			// too long for a single put.
			long := strings.Repeat("x;= %\n", 300000)
			for r, info := range infos {
				v := fmt.Sprintf("addr of %d; =%%\x00", r)
				if r == 2 {
					v = long
				}
				if err := info.KV.Put("mpigo.tcp."+strconv.Itoa(r), v); err != nil {
					t.Fatal(err)
				}
			}
			for r, info := range infos {
				wg.Add(1)
				go func() { defer wg.Done(); errs[r] = info.KV.Fence() }()
			}
			wg.Wait()
			for r, info := range infos {
				if errs[r] != nil {
					t.Fatalf("fence: rank %d: %v", r, errs[r])
				}
				peer := (r + 2) % n
				got, err := info.KV.Get("mpigo.tcp." + strconv.Itoa(peer))
				want := fmt.Sprintf("addr of %d; =%%\x00", peer)
				if peer == 2 {
					want = long
				}
				if err != nil || got != want {
					t.Errorf("rank %d gets rank %d's address: %.40q, %v", r, peer, got, err)
				}
				if _, err := info.KV.Get("mpigo.none.1"); err == nil {
					t.Errorf("rank %d: a key nobody put has a value", r)
				}
			}
			for _, info := range infos {
				if err := info.KV.Close(); err != nil {
					t.Error(err)
				}
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if srv.finals != n || srv.formats[0] != f.bfrops {
				t.Errorf("%d finalized, formats %v", srv.finals, srv.formats)
			}
		})
	}
}

// Put scopes: a local value reaches only the ranks of the same node, a
// remote one only the others, a global one all.
func TestPMIxPutScopes(t *testing.T) {
	srv := newFakePMIx(t, "scopes", 4, "")
	cs := make([]*PMIxClient, 4)
	for r := range cs {
		c, err := DialPMIx(srv.env(r, "PMIX_SERVER_URI41"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Finalize()
		cs[r] = c
	}
	if err := cs[0].Put(7, "k", nil); err == nil {
		t.Error("scope 7 accepted")
	}
	if err := cs[0].Put(PMIxGlobal, "pmix.job.size", nil); err == nil {
		t.Error("a reserved key accepted")
	}
	cs[0].Put(PMIxLocal, "l", []byte("local"))
	cs[0].Put(PMIxRemote, "r", []byte("remote"))
	cs[0].Put(PMIxGlobal, "g", []byte("global"))
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Fence(true); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, tc := range []struct {
		rank int
		key  string
		ok   bool
	}{{1, "l", true}, {1, "r", false}, {1, "g", true}, {2, "l", false}, {2, "r", true}, {3, "g", true}, {0, "l", true}} {
		v, err := cs[tc.rank].Get(0, tc.key)
		if tc.ok != (err == nil) {
			t.Errorf("rank %d gets %s: %q, %v", tc.rank, tc.key, v, err)
		}
	}
	for _, tc := range []struct {
		rank int
		key  string
		want uint64
	}{{-1, PMIxJobSize, 4}, {-1, PMIxUnivSize, 4}, {3, PMIxLocalRank, 3}, {3, PMIxNodeID, 1}} {
		if v, err := cs[0].JobUint(tc.rank, tc.key); err != nil || v != tc.want {
			t.Errorf("%s of %d: %d, %v; want %d", tc.key, tc.rank, v, err, tc.want)
		}
	}
	if cs[0].JobInfoErr == nil || !strings.Contains(cs[0].JobInfoErr.Error(), "data type 56") {
		t.Errorf("the item the client cannot read: %v", cs[0].JobInfoErr)
	}
}

// A rank's Abort reaches the server with its code and message.
func TestPMIxAbort(t *testing.T) {
	srv := newFakePMIx(t, "abort", 2, "")
	info, errs := make([]*Info, 2), make([]error, 2)
	var wg sync.WaitGroup
	for r := range info {
		wg.Add(1)
		go func() { defer wg.Done(); info[r], errs[r] = detectPMIx(srv.env(r, "PMIX_SERVER_URI41")) }()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	info[1].KV.(Aborter).Abort(5, "rank 1 called Abort with code 5")
	srv.mu.Lock()
	got := strings.Join(srv.aborts, "|")
	srv.mu.Unlock()
	if got != "1:5:rank 1 called Abort with code 5" {
		t.Errorf("server saw aborts %q", got)
	}
	info[0].KV.Close()
	info[1].KV.Close()
}

// A server that answers garbage, closes, never answers or refuses: a
// start-up error naming PMIx and the server, within the timeout.
func TestPMIxServerFailures(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"garbage", "refused this process: status 1213486160"},
		{"close", "handshake in security mode native (within 400ms): the server closed the connection"},
		{"silent", "handshake in security mode native (within 400ms): no reply"},
		{"refuse", "refused this process: status -46 (not found)"},
		{"badjob", "is for namespace \"another-namespace\""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv := newFakePMIx(t, "ns", 1, tc.mode)
			start := time.Now()
			_, err := detectPMIx(withVars(srv.env(0, "PMIX_SERVER_URI41"), "MPIGO_PMI_TIMEOUT", "400ms"))
			if err == nil || !strings.Contains(err.Error(), "PMIx server at "+srv.uri()) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q and the server", err, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	t.Run("nobody listens", func(t *testing.T) {
		addr := testutil.RefusedAddr(t)
		env := func(k string) (string, bool) {
			m := map[string]string{"PMIX_SERVER_URI41": "s.0;tcp4://" + addr, "PMIX_NAMESPACE": "n", "PMIX_RANK": "0"}
			v, ok := m[k]
			return v, ok
		}
		if _, err := DialPMIx(env); err == nil || !strings.Contains(err.Error(), "cannot connect") || !strings.Contains(err.Error(), addr) {
			t.Errorf("%v", err)
		}
	})
}

// A reply that stops in the middle of a message, after the handshake.
func TestPMIxTruncatedReply(t *testing.T) {
	a, b := net.Pipe()
	c := newPMIxClient(PMIxServer{URI: "s.0;tcp4://127.0.0.1:1", Var: "PMIX_SERVER_URI41", Network: "tcp", Bfrops: "v41", Version: "4.1.0", Flex: true}, pmixProcID{"n", 0}, 300*time.Millisecond, time.Second)
	go func() {
		readHandshake(b)
		b.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
		var h [16]byte
		io.ReadFull(b, h[:])
		io.ReadFull(b, make([]byte, binary.BigEndian.Uint32(h[8:])))
		h[11] = 100 // 100 bytes follow ...
		b.Write(h[:])
		b.Write([]byte("only these"))
		b.Close()
	}()
	err := c.start(a)
	if err == nil || !strings.Contains(err.Error(), "in the middle of its reply") {
		t.Errorf("%v", err)
	}
}

func TestParsePMIxURI(t *testing.T) {
	for _, tc := range []struct{ uri, net, addr, err string }{
		{"pmix-server.4518;tcp4://127.0.0.1:55717", "tcp", "127.0.0.1:55717", ""},
		{"2140143616.0;tcp4://127.0.0.1:39575", "tcp", "127.0.0.1:39575", ""},
		{"srv.3;tcp6://[::1]:4000", "tcp", "[::1]:4000", ""},
		{"srv.0;usock:///tmp/pmix-12", "unix", "/tmp/pmix-12", ""},
		{"srv.0;tcp4://127.0.0.1", "", "", "missing port"},
		{"srv.0;tcp4://host.example:4", "", "", "not an IP address"},
		{"srv;tcp4://127.0.0.1:4", "", "", "no .RANK"},
		{"srv.x;tcp4://127.0.0.1:4", "", "", "not a number"},
		{"tcp4://127.0.0.1:4", "", "", "want SERVERNSPACE.RANK;ADDRESS"},
		{"srv.0;ofi://x", "", "", "not one mpigo speaks"},
		{"srv.0;tcp4://127.0.0.1:99999", "", "", "bad port"},
	} {
		s, err := ParsePMIxURI(tc.uri)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.uri, err, tc.err)
			}
			continue
		}
		if err != nil || s.Network != tc.net || s.Addr != tc.addr {
			t.Errorf("%s: %+v, %v", tc.uri, s, err)
		}
	}
}

func TestFindPMIxServer(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	u := "s.0;tcp4://127.0.0.1:5"
	for _, tc := range []struct {
		vars   map[string]string
		bfrops string
		err    string
	}{
		{map[string]string{"PMIX_SERVER_URI41": u, "PMIX_SERVER_URI3": u}, "v41", ""},
		{map[string]string{"PMIX_SERVER_URI3": u, "PMIX_SERVER_URI21": u}, "v3", ""},
		{map[string]string{"PMIX_SERVER_URI41": u, "MPIGO_PMIX_BFROPS": "v21"}, "v21", ""},
		{map[string]string{"PMIX_SERVER_URI41": u, "MPIGO_PMIX_BFROPS": "v9"}, "", "want v41"},
		{map[string]string{"PMIX_SERVER_URI2": u}, "", "only PMIx 2.0"},
		{map[string]string{}, "", "no PMIX_SERVER_URI41"},
	} {
		s, err := FindPMIxServer(env(tc.vars))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %q", tc.vars, err, tc.err)
			}
		} else if err != nil || s.Bfrops != tc.bfrops || s.Flex != (tc.bfrops == "v41" || tc.bfrops == "v4") {
			t.Errorf("%v: %+v %v", tc.vars, s, err)
		}
	}
	// A server that offers only munge.
	srv := newFakePMIx(t, "m", 1, "")
	e := srv.env(0, "PMIX_SERVER_URI41")
	munge := func(k string) (string, bool) {
		if k == "PMIX_SECURITY_MODE" {
			return "munge", true
		}
		return e(k)
	}
	if _, err := DialPMIx(munge); err != nil && !strings.Contains(err.Error(), "munged") {
		t.Errorf("munge only: %v", err)
	}
	for _, tc := range []struct{ offered, force, want, err string }{
		{"", "", "native", ""},
		{"munge,native", "", "native munge", ""},
		{"native,munge", "", "native munge", ""},
		{"munge", "", "munge", ""},
		{"munge,native", "munge", "munge", ""},
		{"native", "munge", "", "accepts only \"native\""},
		{"munge,native", "kerberos", "", "speaks native and munge"},
		{"none", "", "", "mpigo speaks native and munge"},
	} {
		e := env(map[string]string{"PMIX_SECURITY_MODE": tc.offered, "MPIGO_PMIX_SECURITY": tc.force})
		if d := pmixSecDetail(e); tc.err == "" && !strings.HasPrefix(d, "security "+strings.ReplaceAll(tc.want, " ", ", then ")) || tc.err != "" && !strings.Contains(d, tc.err) {
			t.Errorf("offered %q, forced %q: mpigo info says %q", tc.offered, tc.force, d)
		}
		modes, err := pmixSecModes(e)
		if got := strings.Join(modes, " "); got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("offered %q, forced %q: %q %v, want %q %q", tc.offered, tc.force, got, err, tc.want, tc.err)
		}
	}
}

// Security mode munge: a server that takes only munge (it refuses native)
// gets a credential from munged that unmunge accepts as this process's,
// on the first try when MPIGO_PMIX_SECURITY=munge, else after native is
// refused.
func TestPMIxMunge(t *testing.T) {
	needMunged(t)
	if _, err := exec.LookPath("unmunge"); err != nil {
		t.Skip("unmunge is not installed (apt-get install munge)")
	}
	for _, force := range []string{"munge", ""} {
		t.Run("forced="+force, func(t *testing.T) {
			srv := newFakePMIx(t, "mungejob", 1, "")
			srv.sec = "munge"
			base := srv.env(0, "PMIX_SERVER_URI41")
			env := func(k string) (string, bool) {
				if k == "MPIGO_PMIX_SECURITY" {
					return force, force != ""
				}
				return base(k)
			}
			c, err := DialPMIx(env)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Security != "munge" {
				t.Errorf("security %q", c.Security)
			}
			srv.mu.Lock()
			refusals := srv.refusals
			srv.mu.Unlock()
			if force == "munge" && len(refusals) != 0 || force == "" && (len(refusals) != 1 || !strings.Contains(refusals[0], `"native"`)) {
				t.Errorf("refusals %q", refusals)
			}
			if n, err := c.JobUint(-1, PMIxJobSize); err != nil || n != 1 {
				t.Errorf("job size %d %v", n, err)
			}
		})
	}
	// A server that takes only native refuses a forced munge, and the
	// error says which mode was tried.
	srv := newFakePMIx(t, "nativejob", 1, "")
	srv.sec = "native"
	base := srv.env(0, "PMIX_SERVER_URI41")
	env := func(k string) (string, bool) {
		if k == "MPIGO_PMIX_SECURITY" {
			return "munge", true
		}
		return base(k)
	}
	if _, err := DialPMIx(env); err == nil || !strings.Contains(err.Error(), "security mode munge") || !strings.Contains(err.Error(), "invalid credential") {
		t.Errorf("%v", err)
	}
}

// Values survive a trip through both integer encodings, and the encodings
// are the ones the servers use (checked against a capture of libpmix's
// client talking to Slurm: a put of "mykey" = "hello" is 02 0c "mykey\0"
// 03 0c "hello\0" in v41).
func TestPMIxWire(t *testing.T) {
	e := &pmixEnc{flex: true}
	e.count(1)
	e.kval("mykey", pmixVal{Type: pmixString, V: "hello"})
	if want := "\x02\x0cmykey\x00\x03\x0chello\x00"; string(e.b) != want {
		t.Errorf("flex kval % x, want % x", e.b, want)
	}
	e = &pmixEnc{flex: true}
	e.u32(pmixRankWildcard)
	if want := "\xfe\xff\xff\xff\x0f"; string(e.b) != want {
		t.Errorf("flex wildcard % x", e.b)
	}
	e = &pmixEnc{flex: false}
	e.size(3)
	if want := "\x00\x0f\x00\x00\x00\x00\x00\x00\x00\x03"; string(e.b) != want {
		t.Errorf("fixed size % x", e.b)
	}
	for _, flex := range []bool{true, false} {
		for _, v := range []int64{0, 1, -1, 63, -64, 64, 1 << 20, -1 << 31, 1<<31 - 1} {
			e := &pmixEnc{flex: flex}
			e.i32(int32(v))
			d := &pmixDec{b: e.b, flex: flex}
			if got, err := d.i32(); err != nil || int64(got) != v || d.more() {
				t.Errorf("flex %v: int32 %d came back %d, %v", flex, v, got, err)
			}
		}
		for _, v := range []uint64{0, 127, 128, 1 << 56, 1<<63 + 5, ^uint64(0)} {
			e := &pmixEnc{flex: flex}
			e.u64(v)
			d := &pmixDec{b: e.b, flex: flex}
			if got, err := d.unsigned(64); err != nil || got != v || d.more() {
				t.Errorf("flex %v: uint64 %d came back %d, %v", flex, v, got, err)
			}
		}
		e := &pmixEnc{flex: flex}
		e.count(1)
		e.info(pmixInfo{Key: "a", Val: pmixVal{Type: pmixBool, V: true}})
		e.count(1)
		e.kval("b", pmixVal{Type: pmixByteObject, V: []byte{0, 1, 2}})
		e.count(1)
		e.kval("c", pmixVal{Type: pmixUint8, V: uint8(9)})
		d := &pmixDec{b: e.b, flex: flex}
		d.count()
		in, err := d.info(0)
		if err != nil || in.Key != "a" || in.Val.V != true {
			t.Errorf("info %+v %v", in, err)
		}
		k, v, err := readTopKval(d)
		if err != nil || k != "b" || !bytes.Equal(v.V.([]byte), []byte{0, 1, 2}) {
			t.Errorf("kval %s %v %v", k, v, err)
		}
		if k, v, err := readTopKval(d); err != nil || k != "c" || v.V != uint8(9) || d.more() {
			t.Errorf("kval %s %v %v", k, v, err)
		}
	}
	// Lies are errors, not allocations or panics.
	for _, b := range []string{"\x02\xfe\xff\xff\xff\x07", "\x02\x0cab", "\x02\x04ab\x00\x03", "\x02\x02\x00\x27\x04\xff\xff\xff\xff\x0f"} {
		d := &pmixDec{b: []byte(b), flex: true}
		if _, _, err := readTopKval(d); err == nil {
			t.Errorf("% x decoded", b)
		}
	}
}

// keyOwner reads the rank that put one of mpigo's keys.
func TestPMIxKeyOwner(t *testing.T) {
	for k, want := range map[string]int{"mpigo.tcp.3": 3, "mpigo.tcp.3.1": 3, "mpigo.host.12": 12, "mpigo.secret": 0, "mpigo.secret.2": 0, "odd": 0} {
		if got := keyOwner(k); got != want {
			t.Errorf("%s: %d, want %d", k, got, want)
		}
	}
}

// Under Open MPI, a PMIx server that cannot be reached leaves the store
// rank 0 serves.
func TestPMIxFallbackOMPI(t *testing.T) {
	addr := testutil.RefusedAddr(t)
	m := map[string]string{"PMIX_SERVER_URI41": "s.0;tcp4://" + addr, "PMIX_NAMESPACE": "n", "PMIX_RANK": "0", "MPIGO_PMI_TIMEOUT": "2s",
		"OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0", "OMPI_MCA_ess_base_jobid": "fallback-test",
		"OMPI_MCA_orte_num_nodes": "1", "OMPI_MCA_orte_jobfam_session_dir": t.TempDir()}
	info, err := detectPMIx(func(k string) (string, bool) { v, ok := m[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	defer info.KV.Close()
	if info.Launcher != LauncherOMPI || info.Size != 1 {
		t.Errorf("%+v", info)
	}
}

// Abort does not wait behind a fence that holds the connection.
func TestPMIxAbortDuringFence(t *testing.T) {
	srv := newFakePMIx(t, "busy", 2, "")
	c, err := DialPMIx(srv.env(0, "PMIX_SERVER_URI41"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.reply, c.fenceT = 200*time.Millisecond, 10*time.Second
	go c.Fence(true) // rank 1 never comes
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	err = c.Abort(3, "x")
	if err == nil || !strings.Contains(err.Error(), "another request holds the connection") {
		t.Errorf("abort: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("abort waited %v", d)
	}
}

package boot

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// The reply parsers and the clients built on them must turn any bytes a
// launcher sends into values or errors: never a panic, never a hang.
// `go test -fuzz FuzzPMI1Client ./internal/boot` (and the others) explore
// further; the seeds and what fuzzing found worth keeping are in
// testdata/fuzz.

func FuzzParsePMI1(f *testing.F) {
	for _, s := range []string{
		"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1",
		"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024",
		"cmd=get_result rc=-1 msg=key not found",
		"cmd=get_result rc=0 msg=success value=(vector,(0,1,4))",
		"cmd= =", "cmd=a b=c b=d", "mcmd=spawn", "x", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := ParsePMI1(line)
		if err == nil && m["cmd"] == "" && m["mcmd"] == "" {
			t.Errorf("%q: parsed without a command", line)
		}
	})
}

func FuzzParsePMI2(f *testing.F) {
	for _, s := range []string{
		"cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=4;appnum=-1;debugged=FALSE;pmiverbose=FALSE;",
		"cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b;",
		"cmd=kvs-get-response;rc=0;found=FALSE;",
		"cmd=x", "cmd=;", ";;", "cmd=a;=b;", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		m, err := ParsePMI2(body)
		if err == nil && m["cmd"] == "" {
			t.Errorf("%q: parsed without a command", body)
		}
	})
}

func FuzzProcessMapping(f *testing.F) {
	for _, s := range []string{"(vector,(0,1,4))", "(vector,(0,2,1),(2,1,3))", "(vector,(0,16777216,1))", "(vector,"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, size int) {
		size = size%1000 + 1
		if size < 1 {
			size = -size + 1
		}
		nodes, err := ParseProcessMapping(s, size)
		if err == nil && len(nodes) != size {
			t.Errorf("%q: %d nodes for %d ranks", s, len(nodes), size)
		}
	})
}

// replayConn is a connection whose peer sends the bytes of a fuzz input
// and then closes; what the client writes is dropped.
type replayConn struct {
	net.Conn // nil: only the methods below are used
	r        *bytes.Reader
}

func (c *replayConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *replayConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *replayConn) Close() error                     { return nil }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }

// pmi1Session is a client's whole life against a launcher that answers
// with replies.
func pmi1Session(replies []byte) {
	c := &replayConn{r: bytes.NewReader(replies)}
	p := &pmi1{conn: c, r: bufio.NewReader(c), who: "PMI-1", reply: time.Second, fenceT: time.Second}
	if p.init() != nil {
		return
	}
	kv := &pmiKV{c: p}
	if v, found, err := p.get("PMI_process_mapping"); err == nil && found {
		ParseProcessMapping(v, 4)
	}
	kv.Put("k", strings.Repeat("x y", 300))
	kv.Fence()
	kv.Get("k")
	kv.Close()
}

func pmi2Session(replies []byte) {
	c := &replayConn{r: bytes.NewReader(replies)}
	p := &pmi2{conn: c, r: bufio.NewReader(c), who: "PMI-2", reply: time.Second, fenceT: time.Second}
	if _, _, err := p.start("1.0", "0"); err != nil {
		return
	}
	kv := &pmiKV{c: p}
	if v, found, err := p.jobAttr("PMI_process_mapping"); err == nil && found {
		ParseProcessMapping(v, 4)
	}
	kv.Put("k", strings.Repeat("x;y", 300))
	kv.Fence()
	kv.Get("k")
	kv.Close()
}

func FuzzPMI1Client(f *testing.F) {
	f.Add([]byte("cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\ncmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n" +
		"cmd=appnum rc=0 appnum=0\ncmd=my_kvsname rc=0 kvsname=kvs_1_0\ncmd=get_result rc=0 value=(vector,(0,1,4))\n" +
		"cmd=put_result rc=0\ncmd=put_result rc=0\ncmd=barrier_out\ncmd=get_result rc=0 value=*2\ncmd=get_result rc=0 value=abc\ncmd=get_result rc=0 value=%2\ncmd=finalize_ack\n"))
	f.Add([]byte("cmd=response_to_init rc=0 pmi_version=1\ncmd=maxes vallen_max=16\ncmd=appnum appnum=x\n"))
	f.Add([]byte("cmd=response_to_init\ncmd=maxes vallen_max=99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, replies []byte) { pmi1Session(replies) })
}

func FuzzPMI2Client(f *testing.F) {
	msg := func(s string) string { return m2(s) }
	f.Add([]byte("cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n" +
		msg("cmd=fullinit-response;rc=0;rank=0;size=4;appnum=-1;") + msg("cmd=job-getid-response;rc=0;jobid=5.0;") +
		msg("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,2));") + msg("cmd=kvs-put-response;rc=0;") +
		msg("cmd=kvs-fence-response;rc=0;") + msg("cmd=kvs-get-response;rc=0;found=TRUE;value=*1;") +
		msg("cmd=kvs-get-response;rc=0;found=TRUE;value=x%3By;") + msg("cmd=finalize-response;rc=0;")))
	f.Add([]byte("cmd=response_to_init rc=0 pmi_version=2\n-5    cmd=x;"))
	f.Add([]byte("cmd=response_to_init rc=0 pmi_version=2\n999999cmd=fullinit-response;"))
	f.Fuzz(func(t *testing.T, replies []byte) { pmi2Session(replies) })
}

// storeSession runs one server connection of the launcher's store on
// input: the handshake is done properly first unless raw, then input is
// what the client sends. It returns when the server has closed the
// connection or input is spent.
func storeSession(t *testing.T, raw bool, input []byte) {
	s := &Server{size: 2, secret: testSecret, done: make(chan struct{}), data: map[string]string{},
		round: newRound(), conns: map[net.Conn]*storeConn{}, pending: 1}
	cli, srv := net.Pipe()
	s.wg.Add(1)
	go s.serve(&storeConn{c: srv, rank: -1})
	defer func() {
		cli.Close()
		s.Close()
		s.wg.Wait()
	}()
	cli.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(cli)
	if !raw {
		if err := clientHandshake(cli, r, testSecret, 5*time.Second); err != nil {
			t.Fatalf("handshake: %v", err)
		}
		cli.SetDeadline(time.Now().Add(5 * time.Second))
	}
	go func() {
		cli.Write(input)
		// A fence waits for the other process: end the session shortly.
		time.Sleep(20 * time.Millisecond)
		cli.Close()
	}()
	for {
		if _, err := readLimited(r, 2*maxLine); err != nil {
			if errors.Is(err, errLineTooLong) {
				t.Fatalf("the store answered a line longer than %d bytes", 2*maxLine)
			}
			return
		}
	}
}

// FuzzStoreServer feeds a connection of the store whatever a client may
// send, before and after the handshake: answers or a closed connection,
// never a panic, a hang or an answer without bound.
func FuzzStoreServer(f *testing.F) {
	f.Add(false, []byte("hello 0\nput k v\nget k\nget nothing\nfence\n"))
	f.Add(false, []byte("put k\nput  v\nhello -1\nhello 99999999999999999999\nwatch\n"))
	f.Add(false, []byte("frobnicate "+strings.Repeat("x", 100)+"\n"))
	f.Add(true, []byte("auth - \n"))
	f.Add(true, []byte("auth "+strings.Repeat("a", 64)+" "+strings.Repeat("b", 64)+"\nget k\n"))
	f.Add(true, []byte("get mpigo.secret\n"))
	f.Fuzz(func(t *testing.T, raw bool, input []byte) { storeSession(t, raw, input) })
}

// FuzzStoreClient gives a client of the store whatever a server (or an
// impostor) may answer.
func FuzzStoreClient(f *testing.F) {
	f.Add([]byte(kvsGreeting + " -\nok -\nok\nok\nval x\nok\n"))
	f.Add([]byte(kvsGreeting + " " + strings.Repeat("0", 64) + "\nok " + strings.Repeat("1", 64) + "\n"))
	f.Add([]byte("mpigo-kvs 2 x\n"))
	f.Add([]byte(kvsGreeting + " -\nerr no\n"))
	f.Fuzz(func(t *testing.T, replies []byte) {
		for _, secret := range [][]byte{nil, testSecret} {
			c := &replayConn{r: bytes.NewReader(replies)}
			r := bufio.NewReader(c)
			if clientHandshake(c, r, secret, time.Second) != nil {
				continue
			}
			k := &client{conn: c, r: r}
			k.call("hello 0")
			k.Put("k", "v")
			k.Fence()
			k.Get("k")
			k.Close()
		}
	})
}

package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/sockerr"
	"github.com/mpigo/mpi/internal/testutil"
)

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func startRelay(t testing.TB, cfg Config) *Relay {
	rl := NewRelay(cfg, listen(t))
	t.Cleanup(func() { rl.Close() })
	return rl
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{" ; ", "", ""},
		{"10.1.0.0/16=10.1.0.254:7000", "10.1.0.0/16=10.1.0.254:7000", ""},
		{"10.1.2.3/16=10.1.0.254:7000/203.0.113.5:7001;192.168.1.0/24", "10.1.0.0/16=10.1.0.254:7000/203.0.113.5:7001;192.168.1.0/24", ""},
		{"fd00::/8=[fd00::1]:7000", "fd00::/8=[fd00::1]:7000", ""},
		{"10.1.0.0=10.1.0.254:7000", "", "not a network prefix"},
		{"10.1.0.0/16=10.1.0.254", "", "not a HOST:PORT"},
		{"10.1.0.0/16=10.1.0.254:0", "", "not a HOST:PORT"},
		{"10.1.0.0/16=/1.2.3.4:5", "", "public address without an inside one"},
	} {
		g, err := Parse(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): error %v, want one saying %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case g.String() != tc.want:
			t.Errorf("Parse(%q) = %q, want %q", tc.in, g.String(), tc.want)
		}
	}
}

func TestRoute(t *testing.T) {
	// Site A and B share a gateway host with a leg in each; site C sits
	// behind a NAT whose gateway other sites reach at a public address;
	// site D lists no gateway.
	g, err := Parse("10.1.0.0/16=10.1.0.254:7000;10.2.0.0/16=10.2.0.254:7000;10.3.0.0/16=10.3.0.1:7000/198.51.100.3:7000;10.4.0.0/16;10.1.5.0/24=10.1.5.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		self, peer string
		want       []string
	}{
		{"10.1.0.2:5000", "10.1.0.3:5000", nil},                         // one network
		{"10.1.0.2:5000", "10.2.0.3:5000", []string{"10.1.0.254:7000"}}, // my gateway reaches the peer
		{"10.2.0.3:5000", "10.1.0.2:5000", []string{"10.2.0.254:7000"}}, // and back
		{"10.1.0.2:5000", "10.3.0.7:5000", []string{"10.1.0.254:7000", "198.51.100.3:7000"}},
		{"10.3.0.7:5000", "10.1.0.2:5000", []string{"10.3.0.1:7000"}},      // out of the NAT
		{"192.0.2.9:5000", "10.3.0.7:5000", []string{"198.51.100.3:7000"}}, // from no listed network
		{"192.0.2.9:5000", "10.1.0.2:5000", nil},                           // reachable directly
		{"10.1.0.2:5000", "192.0.2.9:5000", nil},                           // a peer in no network
		{"10.4.0.2:5000", "10.1.0.2:5000", nil},                            // no gateway to use
		{"10.1.0.2:5000", "10.1.5.9:5000", []string{"10.1.0.254:7000"}},    // the longest prefix wins
		{"10.1.5.9:5000", "10.1.5.10:5000", nil},
		{"localhost:5000", "10.1.0.2:5000", nil},                                 // a name is resolved: not in a listed network
		{"[::ffff:10.1.0.2]:5000", "10.2.0.3:5000", []string{"10.1.0.254:7000"}}, // mapped IPv4
	} {
		if got := g.Route(tc.self, tc.peer); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Route(%s, %s) = %v, want %v", tc.self, tc.peer, got, tc.want)
		}
	}
	// A name is resolved to its addresses.
	lo, err := Parse("127.0.0.0/8=127.0.0.1:7000;10.9.0.0/16=10.9.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if r := lo.Route("10.9.0.5:1", "localhost:5000"); fmt.Sprint(r) != "[10.9.0.1:7000]" {
		t.Errorf("Route to localhost = %v, want through 10.9.0.1:7000", r)
	}
	var none *Table
	if r := none.Route("10.1.0.2:1", "10.2.0.2:1"); r != nil {
		t.Errorf("nil table routes %v", r)
	}
}

// Through one gateway and through two, bytes pass both ways unchanged and
// the far end sees a connection from the last gateway.
func TestDial(t *testing.T) {
	echo := testutil.Serve(t, func(nc net.Conn) { io.Copy(nc, nc) })
	secret := []byte("s3cret")
	a := startRelay(t, Config{JobID: 3, Secret: secret})
	b := startRelay(t, Config{JobID: 3, Secret: secret})
	c := Client{JobID: 3, Secret: secret}
	for _, hops := range [][]string{nil, {a.Addr()}, {a.Addr(), b.Addr()}} {
		nc, err := c.Dial(hops, echo)
		if err != nil {
			t.Fatalf("through %v: %v", hops, err)
		}
		msg := bytes.Repeat([]byte("ping"), 1<<14)
		go nc.Write(msg)
		got := make([]byte, len(msg))
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(nc, got); err != nil || !bytes.Equal(got, msg) {
			t.Errorf("through %v: echo %v", hops, err)
		}
		nc.Close()
	}
	if a.Relayed() != 2 || b.Relayed() != 1 {
		t.Errorf("relayed %d and %d connections, want 2 and 1", a.Relayed(), b.Relayed())
	}
}

// Each way a gateway can fail ends the dial within the client's bounds,
// with an error that says which gateway and what it did.
func TestBadRelay(t *testing.T) {
	secret := []byte("s3cret")
	refused := testutil.RefusedAddr(t)
	target := testutil.Serve(t, func(nc net.Conn) { io.Copy(io.Discard, nc) })
	c := Client{JobID: 5, Secret: secret, Timeout: time.Second, DialTimeout: 2 * time.Second}
	for _, tc := range []struct {
		name   string
		gw     func(t *testing.T) string
		target string
		want   string
	}{
		{"wrong secret", func(t *testing.T) string { return startRelay(t, Config{JobID: 5, Secret: []byte("other")}).Addr() }, target, "closed the connection instead of answering"},
		{"wrong job", func(t *testing.T) string { return startRelay(t, Config{JobID: 6, Secret: secret}).Addr() }, target, "closed the connection instead of answering"},
		{"target refuses", func(t *testing.T) string { return startRelay(t, Config{JobID: 5, Secret: secret}).Addr() }, refused, "could not reach " + refused},
		{"no gateway there", func(t *testing.T) string { return refused }, target, "cannot connect to gateway " + refused},
		{"silent", func(t *testing.T) string { return testutil.Serve(t, func(nc net.Conn) { io.Copy(io.Discard, nc) }) }, target, "sent no challenge"},
		{"challenge only", func(t *testing.T) string {
			return testutil.Serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); io.Copy(io.Discard, nc) })
		}, target, "closed the connection instead of answering"},
		{"garbage answer", func(t *testing.T) string {
			return testutil.Serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write(bytes.Repeat([]byte{0xff}, 100)) })
		}, target, "not an mpigo gateway"},
		{"truncated answer", func(t *testing.T) string {
			return testutil.Serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write([]byte{0, 10, 0, 'x'}) })
		}, target, "truncated answer"},
		{"forged answer", func(t *testing.T) string {
			return testutil.Serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write(make([]byte, 3+macSize)) })
		}, target, "does not know the job's secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := tc.gw(t)
			start := time.Now()
			nc, err := c.Dial([]string{gw}, tc.target)
			if err == nil {
				nc.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), gw) {
				t.Errorf("got %v, want an error naming gateway %s: %q", err, gw, tc.want)
			}
			// The "closed instead of answering" cases wait for the
			// client's timeout at most.
			if d := time.Since(start); d > c.Timeout+c.DialTimeout+5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	gw := startRelay(t, Config{JobID: 5, Secret: secret}).Addr()
	if _, err := c.Dial([]string{gw}, strings.Repeat("x", maxTarget+1)); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("a too long target: %v", err)
	}
}

// A stranger that connects to a gateway and says nothing is closed after
// the relay's timeout; one that sends the wrong job is refused at once.
func TestStrangers(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	rl := NewRelay(Config{JobID: 9, Secret: []byte("x"), Timeout: 300 * time.Millisecond, Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() }}, listen(t))
	defer rl.Close()
	for _, send := range [][]byte{nil, []byte("GET / HTTP/1.0\r\n\r\n"), relayRequest([]byte("x"), make([]byte, nonceSize), 8, "127.0.0.1:1")} {
		nc, err := net.Dial("tcp", rl.Addr())
		if err != nil {
			t.Fatal(err)
		}
		nc.Write(send)
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		n, err := io.Copy(io.Discard, nc)
		if (err != nil && !sockerr.Reset(err)) || n != nonceSize {
			t.Errorf("stranger sending %q: got %d bytes, %v; want the challenge and a close", send, n, err)
		}
		nc.Close()
	}
	if rl.Relayed() != 0 {
		t.Errorf("relayed %d", rl.Relayed())
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "belongs to job 8, not 9"; len(logs) != 3 || !strings.Contains(strings.Join(logs, "\n"), want) {
		t.Errorf("log %q, want 3 lines, one with %q", logs, want)
	}
}

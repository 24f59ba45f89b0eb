package tcp

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
	"github.com/mpigo/mpi/internal/wire"
)

func TestParseGateways(t *testing.T) {
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
		g, err := ParseGateways(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseGateways(%q): error %v, want one saying %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("ParseGateways(%q): %v", tc.in, err)
		case g.String() != tc.want:
			t.Errorf("ParseGateways(%q) = %q, want %q", tc.in, g.String(), tc.want)
		}
	}
}

func TestGatewayRoute(t *testing.T) {
	// Site A and B share a gateway host with a leg in each; site C sits
	// behind a NAT whose gateway other sites reach at a public address;
	// site D lists no gateway.
	g, err := ParseGateways("10.1.0.0/16=10.1.0.254:7000;10.2.0.0/16=10.2.0.254:7000;10.3.0.0/16=10.3.0.1:7000/198.51.100.3:7000;10.4.0.0/16;10.1.5.0/24=10.1.5.1:7000")
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
	lo, err := ParseGateways("127.0.0.0/8=127.0.0.1:7000;10.9.0.0/16=10.9.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if r := lo.Route("10.9.0.5:1", "localhost:5000"); fmt.Sprint(r) != "[10.9.0.1:7000]" {
		t.Errorf("Route to localhost = %v, want through 10.9.0.1:7000", r)
	}
	var none *Gateways
	if r := none.Route("10.1.0.2:1", "10.2.0.2:1"); r != nil {
		t.Errorf("nil table routes %v", r)
	}
}

// gatewayJob starts n endpoints: rank 0 listens on 127.0.0.2, the others
// on 127.0.0.3; the table puts the two addresses in two networks with a
// gateway each (one relay process serves both), so that rank 0 reaches
// the others only through it while they reach each other directly.
func gatewayJob(t *testing.T, n int, job uint64, secret string) ([]*endpoint, *Relay) {
	t.Helper()
	var rl *Relay
	eps := gatewayJobWith(t, n, job, func() string {
		gln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl = NewRelay(RelayConfig{JobID: job, Secret: []byte(secret)}, gln)
		t.Cleanup(func() { rl.Close() })
		return fmt.Sprintf("127.0.0.2/32=%s;127.0.0.3/32=%s", rl.Addr(), rl.Addr())
	})
	return eps, rl
}

// gatewayJobWith is gatewayJob with the gateways that table starts and
// returns the table of.
func gatewayJobWith(t *testing.T, n int, job uint64, table func() string) []*endpoint {
	t.Helper()
	for _, a := range []string{"127.0.0.2:0", "127.0.0.3:0"} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Skipf("needs 127.0.0.2 and 127.0.0.3 (Linux loopback): %v", err)
		}
		ln.Close()
	}
	g, err := ParseGateways(table())
	if err != nil {
		t.Fatal(err)
	}
	mine := make([]net.Listener, n)
	eps := startJobWith(t, n, job, func(r int, cfg *Config, ln *net.Listener) {
		(*ln).Close()
		host := "127.0.0.3:0"
		if r == 0 {
			host = "127.0.0.2:0"
		}
		l, err := net.Listen("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		*ln, mine[r] = l, l
		cfg.Addrs = func(peer int) (string, error) { return mine[peer].Addr().String(), nil }
		cfg.Gateways = g
		cfg.Protect = ProtectAuto
	})
	return eps
}

// Frames of every size cross the gateway both ways intact and in order;
// ranks of one network still connect directly; the relayed connections
// are encrypted end to end even though every address is loopback.
func TestThroughGateway(t *testing.T) {
	eps, rl := gatewayJob(t, 3, 31, "s3cret")
	exchangeAll(t, eps, []int{0, 1, 8, 64<<10 + 3, 4 << 20}, func(from, to, i int) int { return from*7 + to + i })
	if n := rl.Relayed(); n < 2 || n > 4 {
		t.Errorf("the gateway relayed %d connections, want one or two per pair (0,1) and (0,2)", n)
	}
	for _, peer := range []int{1, 2} {
		if c := eps[0].t.sendConn(peer); c == nil || c.RemoteAddr().String() != rl.Addr() && !strings.HasPrefix(c.RemoteAddr().String(), "127.0.0.1:") {
			t.Errorf("rank 0 sends to %d on %v, not through the gateway", peer, c)
		}
	}
	if c := eps[1].t.sendConn(2); c == nil || !strings.HasPrefix(c.RemoteAddr().String(), "127.0.0.3:") {
		t.Errorf("rank 1 sends to rank 2 on %v, want a direct connection", c)
	}
	// The relay saw only sealed bytes: rank 0 to rank 1 went through it
	// and both ends chose encryption.
	eps[0].t.mu.Lock()
	c := eps[0].t.out[1]
	eps[0].t.mu.Unlock()
	if c == nil || c.seal == nil {
		t.Errorf("the relayed connection is not encrypted")
	}
}

// Two sites whose gateways reach each other only by their public
// addresses: a connection between the sites goes through both (a source
// route of two hops), and frames both ways arrive intact.
func TestTwoGateways(t *testing.T) {
	var rls []*Relay
	eps := gatewayJobWith(t, 2, 33, func() string {
		for range 2 {
			ln := mustListen(t)
			rl := NewRelay(RelayConfig{JobID: 33, Secret: []byte("s3cret")}, ln)
			t.Cleanup(func() { rl.Close() })
			rls = append(rls, rl)
		}
		// Each gateway's inside and public address are the same
		// listener here; what matters is the route the ranks take.
		return fmt.Sprintf("127.0.0.2/32=%s/%s;127.0.0.3/32=%s/%s", rls[0].Addr(), rls[0].Addr(), rls[1].Addr(), rls[1].Addr())
	})
	for _, sz := range []int{8, 1 << 20} {
		for r := range eps {
			if err := eps[r].t.Send(sumFrame(r, 1-r, sz, pay(sz, r))); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the frames", func() bool {
		for _, ep := range eps {
			ep.mu.Lock()
			k := 0
			for _, fs := range ep.got {
				k += len(fs)
			}
			ep.mu.Unlock()
			if k != 2 {
				return false
			}
		}
		return true
	})
	for r, ep := range eps {
		if ep.checkFrames(t) != 2 {
			t.Errorf("rank %d got %d frames", r, ep.checkFrames(t))
		}
		if errs := ep.errors(); len(errs) > 0 {
			t.Errorf("rank %d: %v", r, errs)
		}
	}
	// Rank 0 dialed through gateway 0, which connected to gateway 1,
	// which connected to rank 1; rank 1 answers on that connection.
	if rls[0].Relayed() != 1 || rls[1].Relayed() != 1 {
		t.Errorf("relayed %d and %d connections, want both gateways on the route", rls[0].Relayed(), rls[1].Relayed())
	}
}

// A gateway that goes away ends the connections through it with an error
// that names it, and a new connection through it fails saying so.
func TestGatewayGone(t *testing.T) {
	eps, rl := gatewayJob(t, 2, 32, "s3cret")
	if err := eps[0].t.Send(sumFrame(0, 1, 0, pay(100, 1))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the frame", func() bool { eps[1].mu.Lock(); defer eps[1].mu.Unlock(); return len(eps[1].got[0]) == 1 })
	rl.Close()
	for r, ep := range eps {
		waitFor(t, fmt.Sprintf("rank %d to notice", r), func() bool {
			for _, e := range ep.errors() {
				if strings.Contains(e, "through gateway 127.0.0.1") {
					return true
				}
			}
			return false
		})
	}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = eps[0].t.Send(sumFrame(0, 1, 1, pay(1<<16, 2)))
	}
	if err == nil || !strings.Contains(err.Error(), "rank 1") || !strings.Contains(err.Error(), "gateway") {
		t.Errorf("send after the gateway went: %v", err)
	}
}

// Bad gateways end the dial with an error naming the peer and the
// gateway, within the relay's timeouts, never a hang.
func TestBadGateway(t *testing.T) {
	defer func(d time.Duration) { relayTimeout = d }(relayTimeout)
	relayTimeout = 2 * time.Second
	target := mustListen(t)
	defer target.Close()
	closed := testutil.RefusedAddr(t)
	secret := []byte("s3cret")
	serve := func(t *testing.T, f func(nc net.Conn)) string {
		ln := mustListen(t)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { defer nc.Close(); f(nc) }()
			}
		}()
		return ln.Addr().String()
	}
	realRelay := func(t *testing.T, s string) string {
		ln := mustListen(t)
		rl := NewRelay(RelayConfig{JobID: 5, Secret: []byte(s)}, ln)
		t.Cleanup(func() { rl.Close() })
		return rl.Addr()
	}
	for _, tc := range []struct {
		name   string
		gw     func(t *testing.T) string
		target string
		want   string
	}{
		{"wrong secret", func(t *testing.T) string { return realRelay(t, "other") }, target.Addr().String(), "closed the connection instead of answering"},
		{"target refuses", func(t *testing.T) string { return realRelay(t, "s3cret") }, closed, "could not reach " + closed},
		{"no gateway there", func(t *testing.T) string { return closed }, target.Addr().String(), "cannot connect to gateway " + closed},
		{"silent", func(t *testing.T) string { return serve(t, func(nc net.Conn) { io.Copy(io.Discard, nc) }) }, target.Addr().String(), "sent no challenge"},
		{"garbage answer", func(t *testing.T) string {
			return serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write(bytes.Repeat([]byte{0xff}, 100)) })
		}, target.Addr().String(), "not an mpigo gateway"},
		{"forged answer", func(t *testing.T) string {
			return serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write(make([]byte, 3+macSize)) })
		}, target.Addr().String(), "does not know the job's secret"},
		{"garbage after ok", func(t *testing.T) string {
			// A gateway of the job that relays garbage instead of the
			// peer's bytes: the rank handshake over it fails.
			return serve(t, func(nc net.Conn) {
				var ch [nonceSize]byte
				nc.Write(ch[:])
				h := make([]byte, relayHeaderSize)
				io.ReadFull(nc, h)
				n := int(h[14]) | int(h[15])<<8
				rest := make([]byte, n+macSize)
				io.ReadFull(nc, rest)
				nc.Write(relayReply(secret, ch[:], append(h, rest[:n]...), 0, ""))
				nc.Write(bytes.Repeat([]byte("garbage!"), 100))
				io.Copy(io.Discard, nc)
			})
		}, target.Addr().String(), "does not know the job's secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := tc.gw(t)
			g, err := ParseGateways(fmt.Sprintf("127.0.0.2/32=%s;127.0.0.1/32", gw))
			if err != nil {
				t.Fatal(err)
			}
			ln := mustListen(t)
			tr := New(Config{Rank: 0, Size: 2, JobID: 5, Secret: secret, Gateways: g, Handler: func(wire.Frame) {},
				Addrs: func(p int) (string, error) {
					if p == 0 {
						return "127.0.0.2:1", nil
					}
					return tc.target, nil
				}}, ln)
			defer tr.Close()
			start := time.Now()
			err = tr.Send(wire.Frame{To: 1})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "rank 1") || !strings.Contains(err.Error(), "gateway "+gw) {
				t.Errorf("got %v, want an error about rank 1, gateway %s: %q", err, gw, tc.want)
			}
			if d := time.Since(start); d > relayTimeout+relayDialTimeout+5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// A stranger that connects to a gateway and says nothing is closed after
// the relay's timeout; one that sends the wrong job is refused at once.
func TestGatewayStrangers(t *testing.T) {
	defer func(d time.Duration) { relayTimeout = d }(relayTimeout)
	relayTimeout = 300 * time.Millisecond
	var mu sync.Mutex
	var logs []string
	rl := NewRelay(RelayConfig{JobID: 9, Secret: []byte("x"), Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() }}, mustListen(t))
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

// BenchmarkGatewayPingPong is BenchmarkPingPong through a gateway on
// loopback, beside the direct connection, both encrypted.
func BenchmarkGatewayPingPong(b *testing.B) {
	for _, via := range []bool{false, true} {
		for _, size := range []int{8, 1 << 20, 4 << 20} {
			name := "direct"
			if via {
				name = "gateway"
			}
			b.Run(fmt.Sprintf("%s/%d", name, size), func(b *testing.B) {
				lns := []net.Listener{}
				for _, a := range []string{"127.0.0.2:0", "127.0.0.3:0"} {
					ln, err := net.Listen("tcp", a)
					if err != nil {
						b.Skip(err)
					}
					lns = append(lns, ln)
				}
				var g *Gateways
				if via {
					gln, _ := net.Listen("tcp", "127.0.0.1:0")
					rl := NewRelay(RelayConfig{Secret: []byte("s")}, gln)
					defer rl.Close()
					g, _ = ParseGateways(fmt.Sprintf("127.0.0.2/32=%s;127.0.0.3/32=%s", rl.Addr(), rl.Addr()))
				}
				got := make([]chan struct{}, 2)
				trs := make([]*Transport, 2)
				for r := 0; r < 2; r++ {
					got[r] = make(chan struct{}, 1)
					trs[r] = New(Config{Rank: r, Size: 2, Protect: ProtectEncrypt, Secret: []byte("s"), Gateways: g,
						Addrs:   func(p int) (string, error) { return lns[p].Addr().String(), nil },
						Handler: func(wire.Frame) { got[r] <- struct{}{} }}, lns[r])
					defer trs[r].Close()
				}
				p := make([]byte, size)
				b.SetBytes(int64(2 * size))
				for i := 0; i < b.N; i++ {
					trs[0].Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: int64(size)}, From: 0, To: 1, Payload: p})
					<-got[1]
					trs[1].Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: int64(size)}, From: 1, To: 0, Payload: p})
					<-got[0]
				}
			})
		}
	}
}

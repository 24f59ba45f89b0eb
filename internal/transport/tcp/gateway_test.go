package tcp

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/gateway"
	"github.com/mpigo/mpi/internal/testutil"
	"github.com/mpigo/mpi/internal/wire"
)

// gatewayJob starts n endpoints: rank 0 listens on 127.0.0.2, the others
// on 127.0.0.3; the table puts the two addresses in two networks with a
// gateway each (one relay process serves both), so that rank 0 reaches
// the others only through it while they reach each other directly.
func gatewayJob(t *testing.T, n int, job uint64, secret string) ([]*endpoint, *gateway.Relay) {
	t.Helper()
	var rl *gateway.Relay
	eps := gatewayJobWith(t, n, job, func() string {
		gln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl = gateway.NewRelay(gateway.Config{JobID: job, Secret: []byte(secret)}, gln)
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
	g, err := gateway.Parse(table())
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
	// Rank 1 sends to rank 2 on a connection it dialed or accepted: either
	// way, directly, its far end is one of rank 2's own sockets.
	if c := eps[1].t.sendConn(2); c == nil || !hasSocket(eps[2].t, c.RemoteAddr(), c.LocalAddr()) {
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

// hasSocket says tr has a connection from local to remote.
func hasSocket(tr *Transport, local, remote net.Addr) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var all []net.Conn
	for _, c := range tr.out {
		if c.c != nil {
			all = append(all, c.c)
		}
	}
	for nc := range tr.in {
		all = append(all, nc)
	}
	for _, nc := range all {
		if nc.LocalAddr().String() == local.String() && nc.RemoteAddr().String() == remote.String() {
			return true
		}
	}
	return false
}

// Two sites whose gateways reach each other only by their public
// addresses: a connection between the sites goes through both (a source
// route of two hops), and frames both ways arrive intact.
func TestTwoGateways(t *testing.T) {
	var rls []*gateway.Relay
	eps := gatewayJobWith(t, 2, 33, func() string {
		for range 2 {
			ln := mustListen(t)
			rl := gateway.NewRelay(gateway.Config{JobID: 33, Secret: []byte("s3cret")}, ln)
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
//
// The gateway package tests each failure of the relay protocol itself
// (internal/gateway TestBadRelay); this test checks what a rank's send
// says of them.
func TestBadGateway(t *testing.T) {
	target := mustListen(t)
	defer target.Close()
	closed := testutil.RefusedAddr(t)
	secret := []byte("s3cret")
	realRelay := func(t *testing.T, s string) string {
		ln := mustListen(t)
		rl := gateway.NewRelay(gateway.Config{JobID: 5, Secret: []byte(s)}, ln)
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
		{"garbage answer", func(t *testing.T) string {
			return testutil.Serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write(bytes.Repeat([]byte{0xff}, 100)) })
		}, target.Addr().String(), "not an mpigo gateway"},
		{"forged answer", func(t *testing.T) string {
			return testutil.Serve(t, func(nc net.Conn) { nc.Write(make([]byte, nonceSize)); nc.Write(make([]byte, 3+macSize)) })
		}, target.Addr().String(), "does not know the job's secret"},
		// A gateway of the job that relays garbage instead of the peer's
		// bytes: the rank handshake over it fails.
		{"garbage after ok", func(t *testing.T) string { return realRelay(t, "s3cret") },
			testutil.Serve(t, func(nc net.Conn) { nc.Write(bytes.Repeat([]byte("garbage!"), 100)); io.Copy(io.Discard, nc) }), "does not know the job's secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := tc.gw(t)
			g, err := gateway.Parse(fmt.Sprintf("127.0.0.2/32=%s;127.0.0.1/32", gw))
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
			if d := time.Since(start); d > gateway.DefaultTimeout+dialHandshakeTimeout+5*time.Second {
				t.Errorf("took %v", d)
			}
		})
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
				var g *gateway.Table
				if via {
					gln, _ := net.Listen("tcp", "127.0.0.1:0")
					rl := gateway.NewRelay(gateway.Config{Secret: []byte("s")}, gln)
					defer rl.Close()
					g, _ = gateway.Parse(fmt.Sprintf("127.0.0.2/32=%s;127.0.0.3/32=%s", rl.Addr(), rl.Addr()))
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

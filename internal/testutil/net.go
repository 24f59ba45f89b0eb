package testutil

import (
	"net"
	"testing"
	"time"
)

// RefusedAddr returns a loopback address where nothing listens, for tests
// of what a dial to a dead address does.
//
// It is not a port freed by closing a listener: such a port lies in the
// ephemeral range, so another test's listener may take it, and a dial to
// it may pick the same port as its source and connect to itself (TCP
// simultaneous open), which answers with the dialer's own bytes. Port 1
// is outside that range and nobody binds it. The test is skipped if,
// on this machine, something does answer there.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	const addr = "127.0.0.1:1"
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		t.Skipf("something listens on %s on this machine; this test needs an address that refuses", addr)
	}
	return addr
}

// Serve starts a loopback server that runs f on every connection it
// accepts (closing the connection after), until the test ends, and
// returns its address: a fake peer for tests of what a client does with
// what it is sent.
func Serve(t testing.TB, f func(nc net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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

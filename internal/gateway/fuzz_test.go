package gateway

import (
	"io"
	"net"
	"testing"
	"time"
)

// FuzzRelayRequest feeds a gateway arbitrary bytes as a connecting side's
// request: it must refuse them (no forged request passes the HMAC) without
// panicking, reading past what the request announces, or waiting longer
// than its timeout.
func FuzzRelayRequest(f *testing.F) {
	secret := []byte("s3cret")
	f.Add([]byte{})
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))
	f.Add(relayRequest(secret, make([]byte, nonceSize), 7, "127.0.0.1:1"))
	f.Add(append(relayMagic[:], relayVersion, 7, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, req []byte) {
		r := &Relay{cfg: Config{JobID: 7, Secret: secret, Timeout: time.Second, DialTimeout: time.Second}, conns: map[net.Conn]bool{}}
		gw, client := net.Pipe()
		r.track(gw)
		done := make(chan struct{})
		go func() { r.serve(gw); close(done) }()
		client.SetDeadline(time.Now().Add(5 * time.Second))
		var ch [nonceSize]byte
		if _, err := io.ReadFull(client, ch[:]); err != nil {
			t.Fatalf("no challenge: %v", err)
		}
		go func() { client.Write(req); client.Close() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the gateway is still serving a connection whose request was garbage")
		}
		if r.Relayed() != 0 {
			t.Fatalf("relayed a request without the secret: %q", req)
		}
	})
}

// FuzzRelayReply feeds a connecting rank arbitrary bytes as a gateway's
// answer: the hop fails cleanly, within the client's timeout.
func FuzzRelayReply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0})
	f.Add(append([]byte{1, 4, 0, 'n', 'o', 'p', 'e'}, make([]byte, macSize)...))
	f.Add([]byte{0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, answer []byte) {
		c := &Client{JobID: 7, Secret: []byte("s3cret"), Timeout: time.Second, DialTimeout: time.Second}
		rank, gw := net.Pipe()
		defer rank.Close()
		go func() {
			defer gw.Close()
			gw.SetDeadline(time.Now().Add(5 * time.Second))
			gw.Write(make([]byte, nonceSize))
			go io.Copy(io.Discard, gw)
			gw.Write(answer)
		}()
		start := time.Now()
		if err := c.hop(rank, "gw", "127.0.0.1:1"); err == nil {
			t.Fatalf("a hop succeeded on a forged answer %q", answer)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("the hop took %v", d)
		}
	})
}

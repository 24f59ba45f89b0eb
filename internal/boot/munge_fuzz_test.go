package boot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mungeSeedDecodeRsp is a decode reply as munged sends it.
func mungeSeedDecodeRsp(payload string) []byte {
	b := []byte{0, 0, 1, 2, 0, 0, 0, 0, 1, 44, 4, 10, 0, 0, 1}
	b = binary.BigEndian.AppendUint32(b, 100)
	b = binary.BigEndian.AppendUint32(b, 101)
	for _, v := range []uint32{0, 0, 0, mungeAny} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// FuzzMungeReply gives the client's decoders whatever munged (or an
// impostor on its socket) may send: values or an error, never a panic,
// never a field longer than the bytes that came.
func FuzzMungeReply(f *testing.F) {
	cred := "MUNGE:AwQFAAB=:\x00"
	enc := binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(len(cred)))
	enc = append(enc, cred...)
	f.Add(append(mungeHeader(mungeEncRsp, len(enc)), enc...))
	dec := mungeSeedDecodeRsp("mpigo-kvs client\x00aa\x00bb")
	f.Add(append(mungeHeader(mungeDecRsp, len(dec)), dec...))
	f.Add(append(mungeHeader(mungeDecRsp, 8), 17, 4, 'r', 'e', 'p', 0, 0, 0))
	f.Add(mungeHeader(mungeEncRsp, 1<<30))
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseMungeHeader(b)
		if c, err := parseMungeDecodeRsp(b); err == nil && len(c.Payload) > len(b) {
			t.Fatalf("payload of %d bytes from %d", len(c.Payload), len(b))
		}
		if cred, err := parseMungeEncodeRsp(b); err == nil && len(cred) > len(b) {
			t.Fatalf("credential of %d bytes from %d", len(cred), len(b))
		}
		for _, want := range []byte{mungeEncRsp, mungeDecRsp} {
			if body, err := readMungeMsg(bytes.NewReader(b), want); err == nil {
				if len(body) > len(b) {
					t.Fatalf("body of %d bytes from %d", len(body), len(b))
				}
				parseMungeEncodeRsp(body)
				parseMungeDecodeRsp(body)
			}
		}
	})
}

// fakeMunged answers on a unix socket in dir: an encode request with a
// fixed credential, a decode request with "invalid credential".
func fakeMunged(tb testing.TB, dir string) string {
	sock := filepath.Join(dir, "munge.socket")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				var h [mungeHdrSize]byte
				if _, err := io.ReadFull(c, h[:]); err != nil {
					return
				}
				typ, n, err := parseMungeHeader(h[:])
				if err != nil {
					return
				}
				io.CopyN(io.Discard, c, int64(n))
				var body []byte
				if typ == mungeEncReq {
					cred := "MUNGE:fake:\x00"
					body = binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(len(cred)))
					body = append(body, cred...)
					c.Write(append(mungeHeader(mungeEncRsp, len(body)), body...))
					return
				}
				body = mungeSeedDecodeRsp("")
				body[0] = 14
				c.Write(append(mungeHeader(mungeDecRsp, len(body)), body...))
			}()
		}
	}()
	return sock
}

// FuzzMungeStore feeds both sides of the store's munge handshake whatever
// the other side (or an impostor) may send: an error or a session, never
// a panic or a hang. munged is a fake that refuses every credential, so
// no input may be let in.
func FuzzMungeStore(f *testing.F) {
	f.Add([]byte(kvsGreeting + " munge " + strings.Repeat("0", 64) + "\nok MUNGE:x:\n"))
	f.Add([]byte(kvsGreeting + " munge short\n"))
	f.Add([]byte(kvsGreeting + " " + strings.Repeat("0", 64) + "\n"))
	f.Add([]byte("auth munge " + strings.Repeat("a", 64) + " MUNGE:x:\nget k\n"))
	f.Add([]byte("auth - \n"))
	sock := fakeMunged(f, f.TempDir())
	f.Fuzz(func(t *testing.T, input []byte) {
		// The client facing a server that says input.
		c := &replayConn{r: bytes.NewReader(input)}
		if err := mungeClientHandshake(c, bufio.NewReader(c), sock, "", time.Second); err == nil {
			t.Fatal("a client let itself in with a credential munged refuses")
		}
		// The server facing a client that says input.
		s := &Server{size: 2, munge: sock, done: make(chan struct{}), data: map[string]string{},
			round: newRound(), conns: map[net.Conn]*storeConn{}}
		cli, srv := net.Pipe()
		defer cli.Close()
		errc := make(chan error, 1)
		go func() {
			defer srv.Close()
			errc <- s.handshake(srv, bufio.NewReader(srv))
		}()
		cli.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			cli.Write(input)
			cli.Write([]byte("\n"))
		}()
		io.Copy(io.Discard, cli)
		if err := <-errc; err == nil {
			t.Fatal("the store let in a client whose credential munged refuses")
		}
	})
}

package sockerr

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// resetConn returns the client end of a loopback connection and a
// function that resets the connection from the server's end: it closes
// the server's socket with linger 0 and bytes from the client unread
// (either makes the stack send a reset; Wine honours only the second).
func resetConn(t *testing.T) (net.Conn, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("unread")); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return c, func() {
		time.Sleep(50 * time.Millisecond) // the bytes reach the server's socket
		s.(*net.TCPConn).SetLinger(0)
		s.Close()
	}
}

// TestResetRead: a read waiting on a connection when the peer resets it
// fails with an error that is Reset and Cut on every platform
// (WSAECONNRESET on Windows, ECONNRESET on Unix).
func TestResetRead(t *testing.T) {
	c, reset := resetConn(t)
	go reset()
	_, err := c.Read(make([]byte, 1))
	if !Reset(err) || !Cut(err) {
		t.Fatalf("read from a reset connection: %v (%#v): Reset %v, Cut %v, want both", err, errors.Unwrap(err), Reset(err), Cut(err))
	}
	if Unreachable(err) || Broken(err) && !Reset(err) {
		t.Fatalf("%v: Unreachable %v, Broken %v", err, Unreachable(err), Broken(err))
	}
}

// TestWriteAfterReset: writes to a connection the peer reset fail, with an
// error that Cut recognises (EPIPE or ECONNRESET on Unix, WSAECONNRESET or
// WSAECONNABORTED on Windows).
func TestWriteAfterReset(t *testing.T) {
	c, reset := resetConn(t)
	reset()
	time.Sleep(50 * time.Millisecond) // the reset reaches the client
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		_, err = c.Write(make([]byte, 4096))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
	if !Cut(err) {
		t.Fatalf("write to a reset connection: %v (%#v): Cut is false", err, errors.Unwrap(err))
	}
}

// TestNotCut: a timeout and unrelated errors are not a cut connection.
func TestNotCut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	if err == nil || Cut(err) || Reset(err) || Unreachable(err) {
		t.Fatalf("read timeout %v: Cut %v Reset %v Unreachable %v, want a timeout and none of them", err, Cut(err), Reset(err), Unreachable(err))
	}
	for _, e := range []error{nil, os.ErrNotExist, errors.New("reset")} {
		if Cut(e) || Reset(e) || Broken(e) || Unreachable(e) {
			t.Errorf("%v classified as a connection error", e)
		}
	}
	if !Cut(io.EOF) || !Cut(io.ErrUnexpectedEOF) {
		t.Error("end of stream is not Cut")
	}
}

package boot

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/gateway"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func newTestStore(t *testing.T, size int, secret []byte) *Server {
	t.Helper()
	s, err := NewServer("127.0.0.1:0", size, secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// within fails the test if f does not return within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s did not return within %v\n%s", what, d, buf[:runtime.Stack(buf, true)])
	}
}

// Close ends every wait: clients at a fence get an error, and Close itself
// returns (it used to wait for them forever).
func TestStoreCloseReleasesFence(t *testing.T) {
	s, err := NewServer("127.0.0.1:0", 3, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for r := 0; r < 2; r++ {
		kv, err := Dial(s.Addr(), r, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		go func() { errs <- kv.Fence() }()
	}
	time.Sleep(100 * time.Millisecond)
	within(t, 5*time.Second, "Close", func() { s.Close() })
	for i := 0; i < 2; i++ {
		select {
		case err := <-errs:
			if err == nil {
				t.Errorf("a fence of 2 of 3 processes succeeded")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a client's fence did not end when the store closed")
		}
	}
}

// A client that goes away while it waits at a fence (a rank that dies
// there) holds nothing: Close still returns.
func TestStoreFenceClientGone(t *testing.T) {
	for round := 0; round < 20; round++ {
		s, err := NewServer("127.0.0.1:0", 4, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		var kvs []KV
		for r := 0; r < 3; r++ {
			kv, err := Dial(s.Addr(), r, testSecret)
			if err != nil {
				t.Fatal(err)
			}
			kvs = append(kvs, kv)
			go kv.Fence()
		}
		time.Sleep(time.Duration(round%4) * 10 * time.Millisecond)
		for _, kv := range kvs {
			kv.Close()
		}
		within(t, 5*time.Second, "Close", func() { s.Close() })
	}
}

// A process that took part and leaves makes the fence under way (and any
// later one) fail at once, rather than wait for it forever.
func TestStoreFenceFailsWhenRankLeaves(t *testing.T) {
	s := newTestStore(t, 3, testSecret)
	a, err := Dial(s.Addr(), 0, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Dial(s.Addr(), 2, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put("addr.2", "x"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Fence() }()
	time.Sleep(50 * time.Millisecond)
	b.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "rank 2 left") {
			t.Errorf("fence after rank 2 left: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the fence did not fail when rank 2 left")
	}
	c, err := Dial(s.Addr(), 1, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Fence(); err == nil {
		t.Error("a later fence succeeded without rank 2")
	}
}

// rawStore connects without the client's handshake.
func rawStore(t *testing.T, s *Server) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	line, err := readLimited(r, 512)
	if err != nil {
		t.Fatal(err)
	}
	nonce, ok := strings.CutPrefix(line, kvsGreeting+" ")
	if !ok {
		t.Fatalf("greeting %q", line)
	}
	return c, r, nonce
}

// The store serves only who proves the job's secret: no request is
// answered before, a wrong secret or a replayed proof is refused, and a
// client refuses a store that does not know the secret.
func TestStoreAuth(t *testing.T) {
	s := newTestStore(t, 1, testSecret)
	// Requests before the handshake: refused, nothing stored.
	c, r, _ := rawStore(t, s)
	io.WriteString(c, "put mpigo.tcp.0 evil:1\n")
	if line, _ := readLimited(r, 512); !strings.HasPrefix(line, "err") {
		t.Errorf("a request without the handshake got %q", line)
	}
	// Wrong secret.
	if _, err := Dial(s.Addr(), 0, []byte("not the secret")); err == nil || !strings.Contains(err.Error(), "secret") {
		t.Errorf("dial with a wrong secret: %v", err)
	}
	// No secret at all.
	if _, err := Dial(s.Addr(), 0, nil); err == nil {
		t.Error("dial without a secret succeeded")
	}
	// A proof recorded on one connection does not open another: the
	// server's nonce differs.
	c1, r1, n1 := rawStore(t, s)
	cn := strings.Repeat("ab", 32)
	io.WriteString(c1, "auth "+cn+" "+storeMAC(testSecret, "client", n1, cn)+"\n")
	if line, err := readLimited(r1, 512); err != nil || line != "ok "+storeMAC(testSecret, "server", n1, cn) {
		t.Fatalf("a right proof: %q %v", line, err)
	}
	c2, r2, n2 := rawStore(t, s)
	if n1 == n2 {
		t.Fatal("the server's nonce repeats")
	}
	io.WriteString(c2, "auth "+cn+" "+storeMAC(testSecret, "client", n1, cn)+"\n")
	if line, _ := readLimited(r2, 512); !strings.HasPrefix(line, "err") {
		t.Errorf("a replayed proof got %q", line)
	}
	// The server's proof is not the client's (no reflection).
	if storeMAC(testSecret, "client", n1, cn) == storeMAC(testSecret, "server", n1, cn) {
		t.Error("both directions prove alike")
	}
	// A client with the secret refuses an impostor: a store with another
	// secret, or with none.
	other := newTestStore(t, 1, []byte("another job's secret"))
	if _, err := Dial(other.Addr(), 0, testSecret); err == nil {
		t.Error("dial accepted a store with another secret")
	}
	open := newTestStore(t, 1, nil)
	if _, err := Dial(open.Addr(), 0, testSecret); err == nil || !strings.Contains(err.Error(), "not this job's store") {
		t.Errorf("dial of a store without a secret: %v", err)
	}
	if kv, err := Dial(open.Addr(), 0, nil); err != nil {
		t.Errorf("a store without a secret refused a client without one: %v", err)
	} else {
		kv.Close()
	}
	// The watch connection proves the secret too.
	if err := Watch(&Info{KVSAddr: s.Addr(), Secret: []byte("wrong")}, func() {}); err == nil {
		t.Error("watch with a wrong secret succeeded")
	}
	lost := make(chan struct{})
	if err := Watch(&Info{KVSAddr: s.Addr(), Secret: testSecret}, func() { close(lost) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Error("the watcher was not told the store went away")
	}
}

// Lines from outside are bounded: a client that sends a huge line without
// an end is cut off, on either side of the handshake, and the store keeps
// serving.
func TestStoreBoundedLines(t *testing.T) {
	s := newTestStore(t, 1, testSecret)
	huge := strings.Repeat("x", 4<<20)
	// Before the handshake.
	c, r, _ := rawStore(t, s)
	go io.WriteString(c, huge)
	if _, err := readLimited(r, 512); err == nil {
		// an "err" line may come first; then the connection must close
		if _, err := readLimited(r, 512); err == nil {
			t.Error("the store kept reading an endless handshake line")
		}
	}
	// After it.
	kv, err := Dial(s.Addr(), 0, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if err := kv.Put("k", huge); err == nil {
		t.Error("a 4 MiB value was accepted")
	}
	c2, r2, n := rawStore(t, s)
	cn := strings.Repeat("cd", 32)
	io.WriteString(c2, "auth "+cn+" "+storeMAC(testSecret, "client", n, cn)+"\n")
	readLimited(r2, 512)
	go io.WriteString(c2, "put k "+huge)
	line, err := readLimited(r2, 512)
	if err == nil && !strings.Contains(line, "longer than") {
		t.Errorf("a 4 MiB line got %q", line)
	}
	if _, err := readLimited(r2, 512); err == nil {
		t.Error("the connection stayed open after a line beyond the limit")
	}
	// The store still serves.
	kv2, err := Dial(s.Addr(), 0, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer kv2.Close()
	if err := kv2.Put("k", "v"); err != nil {
		t.Fatal(err)
	}
	// A reply without end is bounded on the client's side too.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, kvsGreeting+" "+huge)
	}()
	if _, err := DialTimeout(ln.Addr().String(), 0, testSecret, 5*time.Second); err == nil {
		t.Error("a client took an endless greeting")
	}
}

// Connections that do not finish the handshake are dropped after a while,
// and too many at once do not keep the job's processes out for long.
func TestStoreHalfOpenConnections(t *testing.T) {
	old := handshakeTimeout
	handshakeTimeout = 300 * time.Millisecond
	defer func() { handshakeTimeout = old }()
	s := newTestStore(t, 1, testSecret)
	var idle []net.Conn
	for i := 0; i < maxPending+10; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// A silent connection is closed after the handshake timeout.
	idle[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, idle[0]); err != nil {
		t.Errorf("an idle connection was not closed: %v", err)
	}
	// A rank still gets in (it retries while the store is full).
	start := time.Now()
	kv, err := DialTimeout(s.Addr(), 0, testSecret, 10*time.Second)
	if err != nil {
		t.Fatalf("a rank could not get past %d idle connections: %v", len(idle), err)
	}
	kv.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("getting in took %v", d)
	}
}

// flakyListener fails its first accepts, as a process out of descriptors
// does.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return l.Listener.Accept()
}

// Failing accepts (EMFILE) do not stop the store for good, and they are
// logged sparingly.
func TestStoreAcceptErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: ln}
	fl.fails.Store(8)
	var mu sync.Mutex
	var logs []string
	s := serveOn(fl, 1, testSecret)
	s.SetLog(func(m string) { mu.Lock(); logs = append(logs, m); mu.Unlock() })
	defer s.Close()
	kv, err := DialTimeout(s.Addr(), 0, testSecret, 10*time.Second)
	if err != nil {
		t.Fatalf("the store stopped accepting after accept errors: %v", err)
	}
	defer kv.Close()
	if err := kv.Put("k", "v"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) > 2 {
		t.Errorf("%d messages for 8 failed accepts: %q", len(logs), logs)
	}
	if len(logs) == 0 || !strings.Contains(logs[0], "too many open files") {
		t.Errorf("the failing accept was not reported: %q", logs)
	}
	within(t, 5*time.Second, "Close", func() { s.Close() })
}

// The store does not grow without end.
func TestStoreFull(t *testing.T) {
	old := storeMaxData
	storeMaxData = 1 << 20
	defer func() { storeMaxData = old }()
	s := newTestStore(t, 1, testSecret)
	kv, err := Dial(s.Addr(), 0, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	v := strings.Repeat("v", maxLine-100)
	var full error
	for i := 0; i < storeMaxData/len(v)+10 && full == nil; i++ {
		full = kv.Put("k"+strconv.Itoa(i), v)
	}
	if full == nil || !strings.Contains(full.Error(), "full") {
		t.Errorf("the store took more than %d bytes: %v", storeMaxData, full)
	}
}

// A rank of mpigo run reads the secret from a descriptor, closes it, and
// leaves no trace of it in its environment; with it, it gets into its store.
func TestStoreSecretFD(t *testing.T) {
	s := newTestStore(t, 2, testSecret)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	io.WriteString(w, hex.EncodeToString(testSecret)+"\n")
	w.Close()
	fd, err := dupFD(r)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no descriptor duplication here")
	}
	if err != nil {
		t.Fatal(err)
	}
	setOrUnset(t, EnvRank, "1")
	setOrUnset(t, EnvSize, "2")
	setOrUnset(t, EnvKVS, s.Addr())
	t.Setenv(EnvSecretFD, strconv.Itoa(fd))
	info, err := Detect(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer info.KV.Close()
	if string(info.Secret) != string(testSecret) {
		t.Errorf("secret %q", info.Secret)
	}
	if _, ok := os.LookupEnv(EnvSecretFD); ok {
		t.Error(EnvSecretFD + " is still set")
	}
	// Nonsense on the descriptor is an error, not a hang.
	for _, v := range []string{"x", "-1", "999"} {
		t.Setenv(EnvSecretFD, v)
		if _, err := Detect(os.LookupEnv); err == nil {
			t.Errorf("%s=%s: no error", EnvSecretFD, v)
		}
	}
}

// A rank whose network reaches the launcher only through its gateway
// (MPIGO_GATEWAYS puts the two in different networks) reaches the store,
// and watches the launcher, through the gateway; a gateway that refuses
// the rank (another job's) gives an error naming it.
func TestStoreThroughGateway(t *testing.T) {
	s := newTestStore(t, 1, testSecret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := gateway.NewRelay(gateway.Config{JobID: 77, Secret: testSecret}, ln)
	defer rl.Close()
	setOrUnset(t, EnvRank, "0")
	setOrUnset(t, EnvSize, "1")
	setOrUnset(t, EnvKVS, s.Addr())
	setOrUnset(t, EnvAddr, "127.0.0.2")
	setOrUnset(t, EnvGateways, "127.0.0.2/32="+rl.Addr()+";127.0.0.1/32")
	unset(t, EnvSecretFD)
	for _, job := range []string{"78", "77"} {
		setOrUnset(t, EnvJobID, job)
		t.Setenv(EnvSecret, hex.EncodeToString(testSecret))
		info, err := Detect(os.LookupEnv)
		if job == "78" {
			if err == nil || !strings.Contains(err.Error(), "through gateway "+rl.Addr()) || !strings.Contains(err.Error(), "closed the connection instead of answering") {
				t.Errorf("through another job's gateway: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		defer info.KV.Close()
		if fmt.Sprint(info.StoreVia) != fmt.Sprint([]string{rl.Addr()}) {
			t.Errorf("StoreVia = %v, want [%s]", info.StoreVia, rl.Addr())
		}
		if err := info.KV.Put("k", "v"); err != nil {
			t.Fatal(err)
		}
		if err := info.KV.Fence(); err != nil {
			t.Fatal(err)
		}
		if v, err := info.KV.Get("k"); err != nil || v != "v" {
			t.Errorf("Get = %q, %v", v, err)
		}
		if err := Watch(info, func() {}); err != nil {
			t.Errorf("Watch: %v", err)
		}
		if n := rl.Relayed(); n != 2 {
			t.Errorf("the gateway relayed %d connections, want 2 (the store and the watch)", n)
		}
	}
}

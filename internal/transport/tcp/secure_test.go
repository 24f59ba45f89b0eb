package tcp

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/testutil"
	"github.com/mpigo/mpi/internal/wire"
)

// relayedJob starts a job of 2 whose rank 1 reaches rank 0 through a
// relay, with protection p on both ranks.
func relayedJob(t *testing.T, job uint64, p Protect, forward func(dst io.Writer, src io.Reader)) ([]*endpoint, *testutil.Relay) {
	var rl *testutil.Relay
	eps := startJobWith(t, 2, job, func(r int, cfg *Config, ln *net.Listener) {
		cfg.Protect = p
		if r == 1 {
			cfg.Addrs = func(int) (string, error) { return rl.Addr(), nil }
		}
	})
	rl = testutil.StartRelay(t, testutil.RelayConfig{Target: eps[0].t.Addr(), Out: forward, Record: true})
	return eps, rl
}

func (ep *endpoint) errors() []string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return append([]string(nil), ep.errs...)
}

// checkFrames fails the test if a frame ep got does not match its
// checksum: wrong data must never be delivered.
func (ep *endpoint) checkFrames(t *testing.T) int {
	t.Helper()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	n := 0
	for _, fs := range ep.got {
		for _, f := range fs {
			n++
			if uint64(crc32.ChecksumIEEE(f.Payload)) != f.Sig {
				t.Errorf("a frame with altered data was delivered (tag %d)", f.Tag)
			}
		}
	}
	return n
}

func sumFrame(from, to, tag int, p []byte) wire.Frame {
	return wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(tag), Size: int64(len(p)), Sig: uint64(crc32.ChecksumIEEE(p))},
		From: from, To: to, Payload: p}
}

// A relay that flips one bit inside a large frame makes the receiver
// fail the connection with an integrity error naming the sender; the
// altered frame is never delivered. With protection off the same relay
// does deliver wrong data, which is what protection is for.
func TestBitFlipRelay(t *testing.T) {
	for _, p := range []Protect{ProtectEncrypt, ProtectOff} {
		t.Run(p.String(), func(t *testing.T) {
			// Past the greeting, inside the payload of the first frame.
			eps, _ := relayedJob(t, 21, p, testutil.FlipAt(greetingSize+wire.HeaderSize+100000, 1))
			payload := pay(1<<20, 3)
			// Encrypted, rank 0 finds the altered record and drops the
			// connection, possibly while rank 1 is still writing the rest
			// of the frame (on a slow machine, or under an emulator): Send
			// may then fail, which is fine; what rank 0 reports is checked
			// below.
			if err := eps[1].t.Send(sumFrame(1, 0, 0, payload)); err != nil && p == ProtectOff {
				t.Fatal(err)
			}
			if p == ProtectOff {
				waitFor(t, "the frame", func() bool { eps[0].mu.Lock(); defer eps[0].mu.Unlock(); return len(eps[0].got[1]) == 1 })
				if bytes.Equal(eps[0].got[1][0].Payload, payload) {
					t.Fatal("the relay did not alter the frame: the test proves nothing")
				}
				return
			}
			waitFor(t, "the integrity error", func() bool { return len(eps[0].errors()) > 0 })
			errs := eps[0].errors()
			if !strings.HasPrefix(errs[0], "1: ") || !strings.Contains(errs[0], "integrity") || !strings.Contains(errs[0], "rank 1") {
				t.Errorf("rank 0 reported %q; want an integrity error naming rank 1", errs)
			}
			if n := eps[0].checkFrames(t); n != 0 {
				t.Errorf("%d frames delivered from a tampered connection", n)
			}
			// The connection is closed: rank 1 learns of it too.
			waitFor(t, "rank 1 to see the connection fail", func() bool {
				eps[1].t.Send(sumFrame(1, 0, 1, pay(1<<16, 1)))
				return len(eps[1].errors()) > 0
			})
		})
	}
}

// Records dropped, replayed or swapped on the way fail the check of the
// record numbers: the receiver reports an integrity error and delivers
// nothing after the first frame that went wrong.
func TestRecordsOutOfOrder(t *testing.T) {
	const rec = wire.HeaderSize + tagSize // a frame without payload is one record
	for _, tc := range []struct {
		name string
		edit func(recs [][]byte) [][]byte
	}{
		{"drop", func(r [][]byte) [][]byte { return append(r[:1:1], r[2:]...) }},
		{"replay", func(r [][]byte) [][]byte { return append(r[:1:1], r...) }},
		{"swap", func(r [][]byte) [][]byte { r[1], r[2] = r[2], r[1]; return r }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps, _ := relayedJob(t, 22, ProtectEncrypt, func(dst io.Writer, src io.Reader) {
				if _, err := io.CopyN(dst, src, greetingSize); err != nil {
					return
				}
				recs := make([][]byte, 4)
				for i := range recs {
					recs[i] = make([]byte, rec)
					if _, err := io.ReadFull(src, recs[i]); err != nil {
						return
					}
				}
				for _, r := range tc.edit(recs) {
					dst.Write(r)
				}
				io.Copy(dst, src)
			})
			for i := 0; i < 4; i++ {
				if err := eps[1].t.Send(sumFrame(1, 0, i, nil)); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "the integrity error", func() bool { return len(eps[0].errors()) > 0 })
			if errs := eps[0].errors(); !strings.Contains(errs[0], "integrity check failed at record 1") {
				t.Errorf("rank 0 reported %q", errs)
			}
			eps[0].mu.Lock()
			defer eps[0].mu.Unlock()
			if len(eps[0].got[1]) != 1 || eps[0].got[1][0].Tag != 0 {
				t.Errorf("frames delivered: %v; want only the first", eps[0].got[1])
			}
		})
	}
}

// A relay that only forwards lets the job work but sees no payload: the
// bytes it carried hold neither the request nor the reply. Without
// protection it does see them (the control).
func TestPlainRelayCannotRead(t *testing.T) {
	for _, p := range []Protect{ProtectEncrypt, ProtectOff} {
		t.Run(p.String(), func(t *testing.T) {
			eps, rl := relayedJob(t, 23, p, nil)
			req := bytes.Repeat([]byte("request: the launch codes are 0000. "), 100)
			rep := bytes.Repeat([]byte("reply: understood, 0000. "), 100)
			if err := eps[1].t.Send(sumFrame(1, 0, 0, req)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the request", func() bool { eps[0].mu.Lock(); defer eps[0].mu.Unlock(); return len(eps[0].got[1]) == 1 })
			if err := eps[0].t.Send(sumFrame(0, 1, 0, rep)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the reply", func() bool { eps[1].mu.Lock(); defer eps[1].mu.Unlock(); return len(eps[1].got[0]) == 1 })
			eps[0].checkFrames(t)
			eps[1].checkFrames(t)
			if !bytes.Equal(eps[0].got[1][0].Payload, req) || !bytes.Equal(eps[1].got[0][0].Payload, rep) {
				t.Fatal("payloads changed on the way")
			}
			if errs := append(eps[0].errors(), eps[1].errors()...); len(errs) > 0 {
				t.Errorf("errors: %q", errs)
			}
			readable := rl.Saw(req[:40]) || rl.Saw(rep[:40])
			if want := p != ProtectEncrypt; readable != want {
				t.Errorf("the relay could read the payload: %v, want %v", readable, want)
			}
		})
	}
}

// A relay in the middle that replaces the dialer's public key with its own
// (to agree on keys with each side itself) is refused: it cannot make
// the greeting's proof without the job's secret.
func TestRelayCannotReplaceKeys(t *testing.T) {
	priv, _ := ecdh.X25519().GenerateKey(rand.Reader)
	mine := priv.PublicKey().Bytes()
	eps, _ := relayedJob(t, 24, ProtectEncrypt, func(dst io.Writer, src io.Reader) {
		g := make([]byte, greetingSize)
		if _, err := io.ReadFull(src, g); err != nil {
			return
		}
		copy(g[handshakeSize+1+nonceSize:], mine)
		dst.Write(g)
		io.Copy(dst, src)
	})
	err := eps[1].t.Send(sumFrame(1, 0, 0, pay(100, 1)))
	if err == nil {
		t.Fatal("a send through a key-replacing relay succeeded")
	}
	waitFor(t, "rank 0 to refuse", func() bool {
		errs := eps[0].errors()
		return len(errs) > 0 && strings.Contains(errs[0], "does not know the job's secret")
	})
	if n := eps[0].checkFrames(t); n != 0 {
		t.Errorf("%d frames delivered", n)
	}
}

// A recorded handshake replayed on a new connection is refused by the
// acceptor (its challenge is fresh), and a recorded answer replayed by a
// listener at a peer's address is refused by the dialer.
func TestReplayedHandshake(t *testing.T) {
	var mu sync.Mutex
	var dialerBytes bytes.Buffer
	eps, _ := relayedJob(t, 25, ProtectEncrypt, func(dst io.Writer, src io.Reader) {
		io.Copy(io.MultiWriter(dst, writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return dialerBytes.Write(p)
		})), src)
	})
	if err := eps[1].t.Send(sumFrame(1, 0, 0, pay(100, 1))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the frame", func() bool { eps[0].mu.Lock(); defer eps[0].mu.Unlock(); return len(eps[0].got[1]) == 1 })
	mu.Lock()
	recorded := append([]byte(nil), dialerBytes.Bytes()...)
	mu.Unlock()

	// The whole dialer stream, greeting and frame, on a new connection.
	nc, err := net.Dial("tcp", eps[0].t.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	challenge := make([]byte, nonceSize)
	io.ReadFull(nc, challenge)
	nc.Write(recorded)
	waitFor(t, "the replay to be refused", func() bool {
		errs := eps[0].errors()
		return len(errs) > 0 && strings.Contains(errs[0], "does not know the job's secret")
	})
	if n := eps[0].checkFrames(t); n != 1 {
		t.Errorf("%d frames delivered; want the 1 sent", n)
	}

	// The acceptor's side: record a real challenge and answer, replay them
	// to a dialer.
	rec := testutil.StartRelay(t, testutil.RelayConfig{Target: eps[0].t.Addr(), Record: true})
	nc2, finish := fakeGreet(t, rec.Addr(), []byte("s3cret"), 25, 1, ProtectEncrypt, nil)
	if _, _, err := finish(); err != nil {
		t.Fatal(err)
	}
	nc2.Close()
	seen := rec.Seen()
	// seen interleaves the directions; the acceptor's part is the
	// challenge, then the answer after the greeting.
	if len(seen) < nonceSize+greetingSize+answerSize {
		t.Fatalf("recorded %d bytes", len(seen))
	}
	replayChallenge := seen[:nonceSize]
	replayAnswer := seen[nonceSize+greetingSize : nonceSize+greetingSize+answerSize]
	fake := mustListen(t)
	defer fake.Close()
	go func() {
		c, err := fake.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write(replayChallenge)
		io.ReadFull(c, make([]byte, greetingSize))
		c.Write(replayAnswer)
		time.Sleep(time.Second)
	}()
	tr := New(Config{Rank: 1, Size: 2, JobID: 25, Secret: []byte("s3cret"), Protect: ProtectEncrypt,
		Addrs:   func(int) (string, error) { return fake.Addr().String(), nil },
		Handler: func(wire.Frame) { t.Error("a frame from a replayed answer was delivered") },
	}, mustListen(t))
	defer tr.Close()
	if err := tr.Send(sumFrame(1, 0, 0, nil)); err == nil || !strings.Contains(err.Error(), "does not know the job's secret") {
		t.Errorf("send to a replaying listener: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// ProtectAuto encrypts connections between hosts and, with LoopbackPlain,
// leaves loopback connections plain: a relay on loopback sees the payload.
func TestProtectAuto(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	lo6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 1}
	host := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 1}
	for _, tc := range []struct {
		p            Protect
		local, other net.Addr
		want         Protect
	}{
		{ProtectAuto, lo, lo, ProtectOff},
		{ProtectAuto, lo6, lo6, ProtectOff},
		{ProtectAuto, host, host, ProtectEncrypt},
		{ProtectAuto, lo, host, ProtectEncrypt},
		{ProtectEncrypt, lo, lo, ProtectEncrypt},
		{ProtectOff, host, host, ProtectOff},
	} {
		if got := ProtectFor(tc.p, tc.local, tc.other); got != tc.want {
			t.Errorf("ProtectFor(%v, %v, %v) = %v, want %v", tc.p, tc.local, tc.other, got, tc.want)
		}
	}
	for _, s := range []string{"", "auto", "on", "encrypt", "off", "OFF"} {
		if _, err := ParseProtect(s); err != nil {
			t.Errorf("ParseProtect(%q): %v", s, err)
		}
	}
	if _, err := ParseProtect("integrity"); err == nil {
		t.Error(`ParseProtect("integrity") succeeded`)
	}
	eps, rl := relayedJob(t, 30, ProtectAuto, nil)
	msg := []byte("plain on loopback, by the rule")
	if err := eps[1].t.Send(sumFrame(1, 0, 0, msg)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the frame", func() bool { eps[0].mu.Lock(); defer eps[0].mu.Unlock(); return len(eps[0].got[1]) == 1 })
	if rl.Saw(msg) != LoopbackPlain {
		t.Errorf("with LoopbackPlain %v the relay saw the payload: %v", LoopbackPlain, rl.Saw(msg))
	}
}

// Ranks that disagree on protection refuse each other, both saying why.
func TestProtectMismatch(t *testing.T) {
	eps := startJobWith(t, 2, 26, func(r int, cfg *Config, ln *net.Listener) {
		cfg.Protect = []Protect{ProtectEncrypt, ProtectOff}[r]
	})
	err := eps[1].t.Send(sumFrame(1, 0, 0, nil))
	if err == nil || !strings.Contains(err.Error(), "MPIGO_TCP_PROTECT") {
		t.Errorf("send from rank 1: %v", err)
	}
	waitFor(t, "rank 0's error", func() bool {
		errs := eps[0].errors()
		return len(errs) > 0 && strings.HasPrefix(errs[0], "1: ") && strings.Contains(errs[0], "MPIGO_TCP_PROTECT")
	})
}

// Every protection carries frames of every size intact and in order.
func TestExchangeProtections(t *testing.T) {
	for _, p := range []Protect{ProtectEncrypt, ProtectOff} {
		t.Run(p.String(), func(t *testing.T) {
			eps := startJobWith(t, 3, 27, func(r int, cfg *Config, ln *net.Listener) { cfg.Protect = p })
			sizes := []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 17}
			exchangeAll(t, eps, sizes, func(from, to, i int) int { return from + to + i })
		})
	}
}

// exchangeAll sends from every endpoint of eps to every other one frame
// of each size in sizes (frame i: tag i, payload pay(sizes[i], seed(from,
// to, i))), waits until every frame has arrived, and checks that each
// matches its checksum, tag, length and contents, in order, and that no
// endpoint reported an error.
func exchangeAll(t *testing.T, eps []*endpoint, sizes []int, seed func(from, to, i int) int) {
	t.Helper()
	var wg sync.WaitGroup
	for r := range eps {
		for q := range eps {
			if q == r {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, sz := range sizes {
					if err := eps[r].t.Send(sumFrame(r, q, i, pay(sz, seed(r, q, i)))); err != nil {
						t.Errorf("%d -> %d: %v", r, q, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for r, ep := range eps {
		waitFor(t, fmt.Sprintf("rank %d's frames", r), func() bool {
			ep.mu.Lock()
			defer ep.mu.Unlock()
			for q := range eps {
				if q != r && len(ep.got[q]) != len(sizes) {
					return false
				}
			}
			return true
		})
		ep.checkFrames(t)
		for from, fs := range ep.got {
			for i, f := range fs {
				if f.Tag != int32(i) || len(f.Payload) != sizes[i] || !bytes.Equal(f.Payload, pay(sizes[i], seed(from, r, i))) {
					t.Errorf("rank %d: frame %d from %d: tag %d, %d bytes, or wrong data", r, i, from, f.Tag, len(f.Payload))
				}
			}
		}
		if errs := ep.errors(); len(errs) > 0 {
			t.Errorf("rank %d: %q", r, errs)
		}
	}
}

// Strangers that send garbage, cut their handshake short or say nothing
// at all cost the job nothing: the real peers still connect and exchange,
// and a silent connection is closed after acceptHandshakeTimeout.
func TestStrangersDoNotHurt(t *testing.T) {
	defer func(d time.Duration) { acceptHandshakeTimeout = d }(acceptHandshakeTimeout)
	acceptHandshakeTimeout = 300 * time.Millisecond
	eps := startJob(t, 3, 28)
	addr := eps[0].t.Addr()
	var strangers []net.Conn
	for i := 0; i < 6; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		strangers = append(strangers, nc)
		switch i % 3 {
		case 0: // garbage of the greeting's size
			nc.Write(pay(greetingSize, i))
		case 1: // a greeting cut short
			nc.Write(pay(10, i))
		case 2: // nothing at all
		}
	}
	for r := range eps {
		for q := range eps {
			if q != r {
				if err := eps[r].t.Send(sumFrame(r, q, 0, pay(1000, r))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for r, ep := range eps {
		waitFor(t, fmt.Sprintf("rank %d's frames", r), func() bool {
			ep.mu.Lock()
			defer ep.mu.Unlock()
			return len(ep.got) == 2
		})
		ep.checkFrames(t)
	}
	// The silent stranger is cut off after the handshake timeout.
	silent := strangers[2]
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	io.ReadFull(silent, make([]byte, nonceSize))
	if _, err := silent.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a silent connection was not closed: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a silent connection lived %v", d)
	}
}

// emfileListener fails Accept with EMFILE while fail is positive, as a
// listener does when the process is out of file descriptors.
type emfileListener struct {
	net.Listener
	mu    sync.Mutex
	fail  int
	calls int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.calls++
	if l.fail > 0 {
		l.fail--
		l.mu.Unlock()
		time.Sleep(time.Millisecond)
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// 200 idle strangers and a run of EMFILE errors from accept do not stop a
// rank from accepting its real peers afterwards, and the refusals are
// reported a few lines at a time, not one line each.
func TestIdleFloodAndAcceptErrors(t *testing.T) {
	var el *emfileListener
	eps := startJobWith(t, 2, 29, func(r int, cfg *Config, ln *net.Listener) {
		if r == 0 {
			el = &emfileListener{Listener: *ln}
			*ln = el
		}
	})
	addr := eps[0].t.Addr()
	el.mu.Lock()
	el.fail = 8 // about 1.3 s of pauses, from the second connection on
	el.mu.Unlock()
	for i := 0; i < 200; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	waitFor(t, "the accept errors to pass", func() bool { el.mu.Lock(); defer el.mu.Unlock(); return el.fail == 0 })
	start := time.Now()
	if err := eps[1].t.Send(sumFrame(1, 0, 0, pay(100, 1))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the real peer's frame", func() bool { eps[0].mu.Lock(); defer eps[0].mu.Unlock(); return len(eps[0].got[1]) == 1 })
	t.Logf("the real peer got through %v after the accept errors", time.Since(start))
	errs := eps[0].errors()
	if len(errs) > rejectBurst+1 {
		t.Errorf("%d reports of refused connections; want at most %d", len(errs), rejectBurst+1)
	}
	for _, e := range errs {
		if !strings.HasPrefix(e, "-1: ") {
			t.Errorf("a real peer was reported: %s", e)
		}
	}
}

// fuzzHandshakeSeeds are a valid greeting and answer made with fixed
// values, for the fuzz targets and their corpus.
func fuzzHandshakeSeeds() (secret, challenge, g, a []byte) {
	secret = []byte("s3cret")
	challenge = bytes.Repeat([]byte{7}, nonceSize)
	pub := bytes.Repeat([]byte{9}, pubSize)
	g = greeting(secret, challenge, 1, 1, ProtectEncrypt, bytes.Repeat([]byte{8}, nonceSize), pub)
	a = answer(secret, challenge, g, 1, 0, ProtectEncrypt, false, pub)
	return
}

// FuzzHandshake feeds arbitrary bytes to the handshake decoders as a
// greeting and as an answer: errors are fine; panics are not, and neither
// is accepting anything but the one message made with the secret.
func FuzzHandshake(f *testing.F) {
	secret, challenge, g, a := fuzzHandshakeSeeds()
	f.Add(g)
	f.Add(a)
	f.Add(g[:handshakeSize])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := checkGreeting(secret, 1, 4, challenge, data); err == nil {
			if !bytes.Equal(data, g) || m.rank != 1 || m.mode != ProtectEncrypt || len(m.pub) != pubSize || len(m.nonce) != nonceSize {
				t.Fatalf("accepted a greeting nobody made: %x", data)
			}
		}
		if m, err := checkAnswer(secret, 1, 0, challenge, g, data); err == nil {
			if !bytes.Equal(data, a) || m.redirect || len(m.pub) != pubSize {
				t.Fatalf("accepted an answer nobody made: %x", data)
			}
		}
	})
}

// fuzzChannel returns the two ends of a protected connection with fixed
// keys.
func fuzzChannel() (*sealer, *opener) {
	shared := bytes.Repeat([]byte{5}, 32)
	s, _, _ := derive([]byte("s3cret"), shared, nil, nil, nil, true)
	_, o, _ := derive([]byte("s3cret"), shared, nil, nil, nil, false)
	return s, o
}

// fuzzFrame is a frame with payload "abc" sealed by fuzzChannel's sealer.
func fuzzFrame() []byte {
	s, _ := fuzzChannel()
	var b bytes.Buffer
	var hb [wire.HeaderSize]byte
	(&wire.Header{Kind: wire.Eager, Size: 3}).Marshal(hb[:], 3)
	s.write(&b, hb[:], []byte("abc"))
	return b.Bytes()
}

// FuzzReadFramesProtected feeds arbitrary bytes to the protected frame
// reader: errors are fine, panics and huge allocations are not, and nothing but
// the frame the sealers made is delivered.
func FuzzReadFramesProtected(f *testing.F) {
	f.Add(fuzzFrame())
	f.Fuzz(func(t *testing.T, data []byte) {
		_, o := fuzzChannel()
		readFramesProtected(bytes.NewReader(data), o, 0, 1, 1<<20, func(fr wire.Frame) {
			if string(fr.Payload) != "abc" || fr.From != 1 {
				t.Fatalf("delivered a frame nobody sealed: %+v", fr.Header)
			}
		}, nil)
	})
}

// TestWriteFuzzCorpus writes the seeds of the fuzz targets to
// testdata/fuzz when MPIGO_WRITE_CORPUS=1.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("MPIGO_WRITE_CORPUS") != "1" {
		t.Skip("MPIGO_WRITE_CORPUS=1 writes the corpus")
	}
	write := func(target, name string, data []byte) {
		dir := "testdata/fuzz/" + target
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(dir+"/"+name, fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, g, a := fuzzHandshakeSeeds()
	write("FuzzHandshake", "greeting", g)
	write("FuzzHandshake", "answer", a)
	write("FuzzHandshake", "greeting-cut", g[:handshakeSize+3])
	bad := append([]byte(nil), g...)
	bad[greetingSize-1] ^= 1
	write("FuzzHandshake", "greeting-bad-mac", bad)
	fr := fuzzFrame()
	write("FuzzReadFramesProtected", "frame", fr)
	write("FuzzReadFramesProtected", "frame-cut", fr[:len(fr)-5])
	write("FuzzReadFramesProtected", "frame-twice", append(fr, fr...))
}

// Many real peers dialing one rank at once, more than maxPending, all get
// through: the rank lets them wait in the backlog rather than cutting off
// handshakes in progress.
func TestManyPeersAtOnce(t *testing.T) {
	defer func(n int) { maxPending = n }(maxPending)
	maxPending = 2
	const n = 10
	eps := startJob(t, n, 31)
	var wg sync.WaitGroup
	for r := 1; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := eps[r].t.Send(sumFrame(r, 0, 0, pay(100, r))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waitFor(t, "every peer's frame", func() bool { eps[0].mu.Lock(); defer eps[0].mu.Unlock(); return len(eps[0].got) == n-1 })
	for r, ep := range eps {
		if errs := ep.errors(); len(errs) > 0 {
			t.Errorf("rank %d: %q", r, errs)
		}
	}
}

package tcp

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

type endpoint struct {
	t    *Transport
	mu   sync.Mutex
	got  map[int][]wire.Frame // by sender
	errs []string
}

// startJob starts n endpoints on loopback that encrypt their connections
// (as connections between hosts do by default).
func startJob(t *testing.T, n int, job uint64) []*endpoint {
	t.Helper()
	return startJobWith(t, n, job, nil)
}

// startJobWith is startJob with setup, if not nil, changing each rank's
// configuration and listener before the rank starts.
func startJobWith(t *testing.T, n int, job uint64, setup func(r int, cfg *Config, ln *net.Listener)) []*endpoint {
	t.Helper()
	eps := make([]*endpoint, n)
	lns := make([]net.Listener, n)
	for r := range eps {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[r] = ln
	}
	for r := range eps {
		ep := &endpoint{got: map[int][]wire.Frame{}}
		cfg := Config{Rank: r, Size: n, JobID: job, Secret: []byte("s3cret"), Protect: ProtectEncrypt,
			Addrs: func(peer int) (string, error) { return lns[peer].Addr().String(), nil },
			Handler: func(f wire.Frame) {
				f.Payload = append([]byte(nil), f.Payload...)
				ep.mu.Lock()
				ep.got[f.From] = append(ep.got[f.From], f)
				ep.mu.Unlock()
			},
			OnPeerError: func(peer int, err error) {
				ep.mu.Lock()
				ep.errs = append(ep.errs, fmt.Sprintf("%d: %v", peer, err))
				ep.mu.Unlock()
			}}
		ln := lns[r]
		if setup != nil {
			setup(r, &cfg, &ln)
		}
		ep.t = New(cfg, ln)
		eps[r] = ep
	}
	t.Cleanup(func() {
		for _, ep := range eps {
			ep.t.Close()
		}
	})
	return eps
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func pay(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + seed)
	}
	return b
}

// Every pair exchanges frames of several sizes, from several goroutines
// at once (simultaneous dials included); everything arrives intact and in
// order per sending goroutine.
func TestExchange(t *testing.T) {
	const n, goroutines = 4, 3
	sizes := []int{0, 1, 64 << 10, 4 << 20}
	eps := startJob(t, n, 7)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for peer := 0; peer < n; peer++ {
					if peer == r {
						continue
					}
					for i, sz := range sizes {
						p := pay(sz, r+peer+i)
						f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Src: int32(g), Tag: int32(i), Size: int64(sz), Sig: uint64(crc32.ChecksumIEEE(p))},
							From: r, To: peer, Payload: p}
						if err := eps[r].t.Send(f); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	want := (n - 1) * goroutines * len(sizes)
	for r, ep := range eps {
		waitFor(t, fmt.Sprintf("rank %d's frames", r), func() bool {
			ep.mu.Lock()
			defer ep.mu.Unlock()
			total := 0
			for _, fs := range ep.got {
				total += len(fs)
			}
			return total == want
		})
		for from, fs := range ep.got {
			next := map[int32]int32{}
			for _, f := range fs {
				if f.From != from || f.To != r {
					t.Errorf("addresses %d->%d on %d->%d", f.From, f.To, from, r)
				}
				if uint64(crc32.ChecksumIEEE(f.Payload)) != f.Sig || int64(len(f.Payload)) != f.Size {
					t.Errorf("corrupt frame from %d", from)
				}
				if f.Tag != next[f.Src] {
					t.Errorf("from %d goroutine %d: frame %d arrived when %d was due", from, f.Src, f.Tag, next[f.Src])
				}
				next[f.Src] = f.Tag + 1
			}
		}
		ep.mu.Lock()
		if len(ep.errs) > 0 {
			t.Errorf("rank %d: peer errors %v", r, ep.errs)
		}
		ep.mu.Unlock()
	}
}

func TestHandshakeMismatch(t *testing.T) {
	eps := startJob(t, 2, 1)
	addr := eps[0].t.Addr()
	tests := []struct {
		mod  func(hs []byte)
		want string
	}{
		{func(hs []byte) { hs[0] = 'X' }, "bad magic"},
		{func(hs []byte) { hs[5] = 9 }, "wire version 9"},
		{func(hs []byte) { binary.LittleEndian.PutUint64(hs[6:], 2) }, "job 2"},
		{func(hs []byte) { binary.LittleEndian.PutUint32(hs[14:], 5) }, "rank 5"},
	}
	tests = append(tests, struct {
		mod  func(hs []byte)
		want string
	}{func(hs []byte) { hs[greetingSize-1] ^= 1 }, "does not know the job's secret"})
	for _, tt := range tests {
		nc, _ := fakeGreet(t, addr, []byte("s3cret"), 1, 1, ProtectEncrypt, tt.mod)
		var fb [wire.HeaderSize]byte // a frame after a refused handshake must not arrive
		(&wire.Header{Kind: wire.Eager}).Marshal(fb[:], 0)
		nc.Write(fb[:])
		waitFor(t, "the handshake error", func() bool {
			eps[0].mu.Lock()
			defer eps[0].mu.Unlock()
			return len(eps[0].errs) > 0 && strings.Contains(eps[0].errs[len(eps[0].errs)-1], tt.want)
		})
		nc.Close()
	}
	eps[0].mu.Lock()
	n := len(eps[0].got)
	eps[0].mu.Unlock()
	if n != 0 {
		t.Errorf("frames from refused connections were delivered")
	}
	// The job goes on: the real peer still gets through.
	if err := eps[1].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, From: 1, To: 0}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the real peer's frame", func() bool {
		eps[0].mu.Lock()
		defer eps[0].mu.Unlock()
		return len(eps[0].got[1]) == 1
	})
}

// A peer with the wrong secret is refused.
func TestWrongSecret(t *testing.T) {
	eps := startJob(t, 2, 5)
	eps[1].t.cfg.Secret = []byte("wrong")
	eps[1].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, From: 1, To: 0})
	waitFor(t, "the refusal", func() bool {
		eps[0].mu.Lock()
		defer eps[0].mu.Unlock()
		return len(eps[0].errs) > 0 && strings.Contains(eps[0].errs[0], "does not know the job's secret")
	})
	eps[0].mu.Lock()
	defer eps[0].mu.Unlock()
	if len(eps[0].got) != 0 {
		t.Error("a frame from a peer with the wrong secret was delivered")
	}
}

func TestPeerFailure(t *testing.T) {
	eps := startJob(t, 2, 3)
	if err := eps[0].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, From: 0, To: 1}); err != nil {
		t.Fatal(err)
	}
	if err := eps[1].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, From: 1, To: 0}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "frames", func() bool {
		eps[1].mu.Lock()
		defer eps[1].mu.Unlock()
		return len(eps[1].got[0]) == 1
	})
	eps[1].t.Close() // rank 1 goes away
	waitFor(t, "rank 0 to notice", func() bool {
		eps[0].mu.Lock()
		defer eps[0].mu.Unlock()
		return len(eps[0].errs) > 0 && strings.HasPrefix(eps[0].errs[0], "1: ")
	})
	var err error
	for i := 0; i < 100 && err == nil; i++ { // the kernel may take a write or two to notice
		err = eps[0].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Size: 1 << 16}, From: 0, To: 1, Payload: make([]byte, 1<<16)})
	}
	if err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Errorf("send to a dead peer: %v", err)
	}
	eps[1].mu.Lock()
	defer eps[1].mu.Unlock()
	if len(eps[1].errs) != 0 {
		t.Errorf("the closed side reported errors: %v", eps[1].errs)
	}
}

func TestNoRoute(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	tr := New(Config{Rank: 0, Size: 2, Addrs: func(int) (string, error) { return "", errors.New("unknown") }, Handler: func(wire.Frame) {}}, ln)
	defer tr.Close()
	if err := tr.Send(wire.Frame{To: 1}); err == nil || !strings.Contains(err.Error(), "no address for rank 1") {
		t.Errorf("got %v", err)
	}
}

// FuzzReadFrames feeds arbitrary bytes to the frame reader: errors are
// fine, panics and huge allocations are not.
func FuzzReadFrames(f *testing.F) {
	var b bytes.Buffer
	var hb [wire.HeaderSize]byte
	h := wire.Header{Kind: wire.Eager, Size: 3}
	h.Marshal(hb[:], 3)
	b.Write(hb[:])
	b.WriteString("abc")
	f.Add(b.Bytes())
	f.Add(hb[:10])
	f.Fuzz(func(t *testing.T, data []byte) {
		place := func(h *wire.Header, from, n int) []byte {
			if h.Kind == wire.Data && h.Tag%2 == 0 {
				return make([]byte, n)
			}
			return nil
		}
		ReadFrames(bytes.NewReader(data), 0, 1, 1<<16, func(fr wire.Frame) {
			if len(fr.Payload) > 1<<16 || fr.From != 1 {
				t.Fatalf("bad frame %+v", fr.Header)
			}
		}, place)
	})
}

// BenchmarkPingPong bounces a frame between two endpoints over loopback,
// with each protection (auto is off on loopback when LoopbackPlain is set).
func BenchmarkPingPong(b *testing.B) {
	for _, p := range []Protect{ProtectOff, ProtectEncrypt} {
		for _, size := range []int{8, 1 << 20, 4 << 20} {
			b.Run(fmt.Sprintf("%v/%d", p, size), func(b *testing.B) {
				lns := []net.Listener{}
				for i := 0; i < 2; i++ {
					ln, _ := net.Listen("tcp", "127.0.0.1:0")
					lns = append(lns, ln)
				}
				got := make([]chan struct{}, 2)
				trs := make([]*Transport, 2)
				for r := 0; r < 2; r++ {
					got[r] = make(chan struct{}, 1)
					trs[r] = New(Config{Rank: r, Size: 2, Protect: p, Addrs: func(p int) (string, error) { return lns[p].Addr().String(), nil },
						Handler: func(wire.Frame) { got[r] <- struct{}{} }}, lns[r])
					defer trs[r].Close()
				}
				p := make([]byte, size)
				b.SetBytes(int64(2 * size))
				b.ReportAllocs()
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

// A peer that proves the secret and then sends garbage loses its
// connection (reported as a failure of that peer); nothing panics and the
// other peers are unaffected.
func TestGarbageFrames(t *testing.T) {
	eps := startJob(t, 4, 9)
	for i, garbage := range [][]byte{
		bytes.Repeat([]byte{0xFF}, wire.HeaderSize),                        // bad magic
		append([]byte{wire.Magic, wire.Version, 200}, make([]byte, 61)...), // bad kind
		func() []byte { // a payload length beyond the limit
			var hb [wire.HeaderSize]byte
			(&wire.Header{Kind: wire.Eager, Size: 1 << 40}).Marshal(hb[:], wire.MaxPayload)
			binary.LittleEndian.PutUint32(hb[56:], wire.MaxPayload+1)
			return hb[:]
		}(),
	} {
		nc, s := fakeDial(t, eps[0].t.Addr(), []byte("s3cret"), 9, i+1, ProtectEncrypt) // claims to be rank i+1
		s.write(nc, garbage, nil)                                                       // sealed: the frame reader sees it
		waitFor(t, fmt.Sprintf("garbage %d to be refused", i), func() bool {
			eps[0].mu.Lock()
			defer eps[0].mu.Unlock()
			return len(eps[0].errs) > i && strings.HasPrefix(eps[0].errs[i], fmt.Sprintf("%d: ", i+1))
		})
		nc.Close()
	}
	if err := eps[1].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, From: 1, To: 0}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a good frame after the garbage", func() bool {
		eps[0].mu.Lock()
		defer eps[0].mu.Unlock()
		return len(eps[0].got[1]) == 1
	})
}

// A connection carries frames both ways: the rank that was dialed answers
// on it instead of dialing back, so a pair of ranks that take turns uses
// one connection.
func TestRepliesRideTheDialedConnection(t *testing.T) {
	eps := startJob(t, 2, 11)
	for i := 0; i < 3; i++ {
		if err := eps[0].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i), Size: 10}, From: 0, To: 1, Payload: pay(10, i)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("request %d", i), func() bool {
			eps[1].mu.Lock()
			defer eps[1].mu.Unlock()
			return len(eps[1].got[0]) == i+1
		})
		if err := eps[1].t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i), Size: 20}, From: 1, To: 0, Payload: pay(20, i)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the reply", func() bool {
			eps[0].mu.Lock()
			defer eps[0].mu.Unlock()
			return len(eps[0].got[1]) == i+1
		})
	}
	eps[0].t.mu.Lock()
	accepted0 := len(eps[0].t.in)
	eps[0].t.mu.Unlock()
	eps[1].t.mu.Lock()
	accepted1 := len(eps[1].t.in)
	eps[1].t.mu.Unlock()
	if accepted0 != 0 || accepted1 != 1 {
		t.Errorf("connections accepted: rank 0 %d, rank 1 %d; want 0 and 1 (one connection for the pair)", accepted0, accepted1)
	}
	for i, f := range eps[0].got[1] {
		if !bytes.Equal(f.Payload, pay(20, i)) || f.Tag != int32(i) {
			t.Errorf("reply %d: tag %d, payload %v", i, f.Tag, f.Payload)
		}
	}
}

// The dialer does not trust whoever answers at a peer's address: a
// listener that cannot prove the job's secret is refused and reported,
// and nothing it sends is delivered.
func TestImpostorListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.Write(make([]byte, nonceSize))
		g := make([]byte, greetingSize)
		io.ReadFull(nc, g)
		a := make([]byte, answerSize) // a proof made without the secret
		a[0] = byte(ProtectEncrypt)
		nc.Write(a)
		var fb [wire.HeaderSize]byte
		(&wire.Header{Kind: wire.Eager}).Marshal(fb[:], 0)
		nc.Write(fb[:])
		time.Sleep(time.Second)
	}()
	var mu sync.Mutex
	var errs []string
	var got int
	tr := New(Config{Rank: 0, Size: 2, JobID: 4, Secret: []byte("s3cret"),
		Addrs:       func(int) (string, error) { return ln.Addr().String(), nil },
		Handler:     func(wire.Frame) { mu.Lock(); got++; mu.Unlock() },
		OnPeerError: func(peer int, err error) { mu.Lock(); errs = append(errs, err.Error()); mu.Unlock() },
	}, mustListen(t))
	defer tr.Close()
	err = tr.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, From: 0, To: 1})
	if err == nil || !strings.Contains(err.Error(), "does not know the job's secret") {
		t.Fatalf("send to an impostor: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if got != 0 {
		t.Errorf("%d frames from the impostor were delivered", got)
	}
	if len(errs) != 1 {
		t.Errorf("errors reported: %q", errs)
	}
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Two ranks that dial each other at the same moment end with one
// connection carrying frames both ways (the lower rank's), so that replies
// carry the TCP acknowledgements; frames sent meanwhile arrive in order.
func TestSimultaneousDialKeepsOneConnection(t *testing.T) {
	for round := 0; round < 20; round++ {
		const n = 3
		eps := startJob(t, n, uint64(100+round))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for r := 0; r < n; r++ {
			for peer := 0; peer < n; peer++ {
				if peer == r {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := 0; i < 5; i++ {
						f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(i)}, From: r, To: peer}
						if err := eps[r].t.Send(f); err != nil {
							t.Error(err)
						}
					}
				}()
			}
		}
		close(start)
		wg.Wait()
		for r := 0; r < n; r++ {
			for q := r + 1; q < n; q++ {
				a, b := eps[r].t.sendConn(q), eps[q].t.sendConn(r)
				if a == nil || b == nil || a.LocalAddr().String() != b.RemoteAddr().String() || a.RemoteAddr().String() != b.LocalAddr().String() {
					t.Fatalf("round %d: ranks %d and %d send on different connections (%v, %v)", round, r, q, a, b)
				}
			}
		}
		for r, ep := range eps {
			waitFor(t, fmt.Sprintf("rank %d's frames", r), func() bool {
				ep.mu.Lock()
				defer ep.mu.Unlock()
				return len(ep.got) == n-1 && len(ep.got[(r+1)%n]) == 5 && len(ep.got[(r+2)%n]) == 5
			})
			ep.mu.Lock()
			for from, fs := range ep.got {
				for i, f := range fs {
					if f.Tag != int32(i) {
						t.Errorf("round %d: rank %d got frame %d from %d when %d was due", round, r, f.Tag, from, i)
					}
				}
			}
			if len(ep.errs) > 0 {
				t.Errorf("round %d: rank %d: peer errors %v", round, r, ep.errs)
			}
			ep.mu.Unlock()
		}
	}
}

// fakeGreet dials addr and sends the dialer's greeting by hand, as rank
// of job with secret, altered by mod if it is not nil. It returns the
// connection and what the acceptor needs to finish: see fakeDial.
func fakeGreet(t *testing.T, addr string, secret []byte, job uint64, rank int, mode Protect, mod func([]byte)) (net.Conn, func() (*sealer, *opener, error)) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	var challenge [nonceSize]byte
	if _, err := io.ReadFull(nc, challenge[:]); err != nil {
		t.Fatal(err)
	}
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	g := greeting(secret, challenge[:], job, rank, mode, make([]byte, nonceSize), priv.PublicKey().Bytes())
	if mod != nil {
		mod(g)
	}
	if _, err := nc.Write(g); err != nil {
		t.Fatal(err)
	}
	return nc, func() (*sealer, *opener, error) {
		var a [answerSize]byte
		if _, err := io.ReadFull(nc, a[:]); err != nil {
			return nil, nil, err
		}
		m, err := checkAnswer(secret, job, 0, challenge[:], g, a[:])
		if err != nil {
			return nil, nil, err
		}
		if m.mode != mode {
			return nil, nil, fmt.Errorf("the acceptor protects with %v, not %v", m.mode, mode)
		}
		shared, err := agree(priv, m.pub)
		if err != nil {
			return nil, nil, err
		}
		if mode == ProtectOff {
			return nil, nil, nil
		}
		return derive(secret, shared, challenge[:], g, a[:], true)
	}
}

// fakeDial completes a handshake by hand with rank 0 at addr as rank of
// job and returns the connection and the sealer for frames to rank 0.
func fakeDial(t *testing.T, addr string, secret []byte, job uint64, rank int, mode Protect) (net.Conn, *sealer) {
	t.Helper()
	nc, finish := fakeGreet(t, addr, secret, job, rank, mode, nil)
	s, _, err := finish()
	if err != nil {
		t.Fatal(err)
	}
	return nc, s
}

// A rank told by its peer to wait for the peer's own connection (both
// dialed at once, and the lower rank keeps its own) stops waiting when
// the peer closes the connection it told it to wait beside, or when the
// rank itself closes: a peer that closed before its connection was made
// (its job had ended) left Close waiting adoptTimeout (a minute) for it,
// which hung goroutine jobs of TestDifferentRoots over tcp.
func TestAdoptWaitEnds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		peerCloses bool
		want       string
	}{
		{"rank closes", false, "transport closed"},
		{"peer closes", true, "closed before making it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			eps := startJobWith(t, 2, 31, func(r int, cfg *Config, ln *net.Listener) {
				if r == 1 {
					cfg.Addrs = func(int) (string, error) { return fake.Addr().String(), nil }
				}
			})
			// Rank 0's side of the handshake, answering "use mine", and
			// then nothing: its connection never comes.
			answered := make(chan net.Conn, 1)
			go func() {
				nc, err := fake.Accept()
				if err != nil {
					return
				}
				var challenge [nonceSize]byte
				nc.Write(challenge[:])
				g := make([]byte, greetingSize)
				if _, err := io.ReadFull(nc, g); err != nil {
					return
				}
				priv, _ := ecdh.X25519().GenerateKey(rand.Reader)
				nc.Write(answer([]byte("s3cret"), challenge[:], g, 31, 0, ProtectEncrypt, true, priv.PublicKey().Bytes()))
				answered <- nc
			}()
			sent := make(chan error, 1)
			go func() { sent <- eps[1].t.Send(sumFrame(1, 0, 0, pay(10, 1))) }()
			var nc net.Conn
			select {
			case nc = <-answered:
				defer nc.Close()
			case <-time.After(20 * time.Second):
				t.Fatal("no handshake")
			}
			time.Sleep(100 * time.Millisecond)
			select {
			case err := <-sent:
				t.Fatalf("the send ended before the wait could (%v): no wait for the peer's connection?", err)
			default:
			}
			if tc.peerCloses {
				nc.Close()
			} else {
				closed := make(chan struct{})
				go func() { eps[1].t.Close(); close(closed) }()
				select {
				case <-closed:
				case <-time.After(5 * time.Second):
					t.Fatal("Close still waits for the peer's connection after 5 s")
				}
			}
			select {
			case err := <-sent:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("the send returned %v, want an error saying %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the send still waits after 5 s")
			}
		})
	}
}

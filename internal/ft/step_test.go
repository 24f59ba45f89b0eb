package ft

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

// render writes out's outputs one per line, in a form the tables spell.
func render(out *Out) []string {
	var l []string
	for _, f := range out.Failures {
		l = append(l, fmt.Sprintf("fail %d", f.Rank))
	}
	for _, r := range out.Revokes {
		l = append(l, fmt.Sprintf("revoke ctx %d by %d", r.Key.Ctx, r.By))
	}
	for _, d := range out.Decisions {
		if d.Err != nil {
			l = append(l, fmt.Sprintf("decision %d err", d.ID.Seq))
		} else {
			l = append(l, fmt.Sprintf("decision %d %x failed %v", d.ID.Seq, d.Value, d.Failed))
		}
	}
	for _, s := range out.Sends {
		l = append(l, fmt.Sprintf("send %d %v%s", s.To, s.Kind, describe(s)))
	}
	return l
}

// describe renders a message body.
func describe(s Send) string {
	switch s.Kind {
	case Propose, Decide:
		id, p, ok := decodeAgree(s.Body, 64)
		if !ok {
			return " malformed"
		}
		a := ""
		if p.answer {
			a = " (answer)"
		}
		return fmt.Sprintf(" %d %x failed %v%s", id.Seq, p.val, p.failed, a)
	case Collect:
		id, _, _ := decodeAgree(s.Body, 64)
		return fmt.Sprintf(" %d", id.Seq)
	case Revoke:
		n, _ := DecodeRevoke(s.Body)
		return fmt.Sprintf(" ctx %d by %d", n.Key.Ctx, n.By)
	case Failed:
		r, _ := decodeFailed(s.Body, 64)
		return fmt.Sprintf(" %d", r)
	}
	return ""
}

func want(t *testing.T, step string, out *Out, lines ...string) {
	t.Helper()
	got := render(out)
	if !slices.Equal(got, lines) {
		t.Fatalf("%s:\ngot:\n  %s\nwant:\n  %s", step, strings.Join(got, "\n  "), strings.Join(lines, "\n  "))
	}
	out.Reset()
}

func TestHeartbeats(t *testing.T) {
	// Rank 0 of 4; ranks 2 and 3 run in other processes.
	cfg := Config{Rank: 0, Size: 4, Remote: []bool{false, false, true, true}, Period: 100 * time.Millisecond, Timeout: time.Second}
	m := New(cfg, t0)
	var out Out
	if m.Period() != 100*time.Millisecond || m.Timeout() != time.Second {
		t.Fatalf("period %v timeout %v", m.Period(), m.Timeout())
	}
	m.Start(t0, &out)
	want(t, "start", &out, "send 2 heartbeat", "send 3 heartbeat")
	now := t0
	for range 10 {
		now = now.Add(100 * time.Millisecond)
		m.Handle(2, Heartbeat, nil, now, &out)
		m.Tick(now, &out)
		want(t, "tick", &out, "send 2 heartbeat", "send 3 heartbeat")
	}
	// 3 was last heard at t0: past the timeout, it fails; 2 does not.
	now = now.Add(100 * time.Millisecond)
	m.Handle(2, Heartbeat, nil, now, &out)
	m.Tick(now, &out)
	if len(out.Failures) != 1 || !strings.Contains(out.Failures[0].Cause.Error(), "no heartbeat for 1.1s") {
		t.Fatalf("failures %+v", out.Failures)
	}
	want(t, "timeout", &out, "fail 3", "send 2 heartbeat", "send 3 heartbeat")
	// No more heartbeats to a failed rank, and no second failure.
	now = now.Add(100 * time.Millisecond)
	m.Handle(2, Heartbeat, nil, now, &out)
	m.Tick(now, &out)
	want(t, "after", &out, "send 2 heartbeat")
	if !m.Known(3) || m.Known(2) || !slices.Equal(m.FailedIn([]int{0, 1, 2, 3}), []int{3}) {
		t.Fatal("failed set wrong")
	}
}

// A tick long after the previous one is this process's own stall: the
// silence of the others does not count.
func TestHeartbeatsOwnStall(t *testing.T) {
	cfg := Config{Rank: 0, Size: 2, Remote: []bool{false, true}, Period: 100 * time.Millisecond, Timeout: time.Second}
	m := New(cfg, t0)
	var out Out
	m.Start(t0, &out)
	out.Reset()
	now := t0.Add(5 * time.Second) // stopped for 5 s
	m.Tick(now, &out)
	want(t, "stalled tick", &out, "send 1 heartbeat")
	for range 9 {
		now = now.Add(100 * time.Millisecond)
		m.Tick(now, &out)
		want(t, "tick", &out, "send 1 heartbeat")
	}
	now = now.Add(200 * time.Millisecond)
	m.Tick(now, &out)
	want(t, "timeout", &out, "fail 1", "send 1 heartbeat")
}

func TestHeartbeatsConfig(t *testing.T) {
	for _, tc := range []struct {
		remote          []bool
		period, timeout time.Duration
		wantP, wantT    time.Duration
	}{
		{nil, time.Second, time.Second, 0, 0},
		{[]bool{false, false}, time.Second, time.Second, 0, 0},
		{[]bool{false, true}, 0, 0, DefaultPeriod, DefaultTimeout},
		{[]bool{false, true}, time.Second, time.Second, time.Second, 2 * time.Second},
	} {
		m := New(Config{Size: 2, Remote: tc.remote, Period: tc.period, Timeout: tc.timeout}, t0)
		if m.Period() != tc.wantP || m.Timeout() != tc.wantT {
			t.Errorf("%v %v %v: period %v timeout %v, want %v %v", tc.remote, tc.period, tc.timeout, m.Period(), m.Timeout(), tc.wantP, tc.wantT)
		}
		var out Out
		m.Start(t0, &out)
		m.Tick(t0.Add(time.Hour), &out)
		m.Tick(t0.Add(time.Hour+time.Millisecond), &out)
		if tc.wantP == 0 && !out.Empty() {
			t.Errorf("%v: outputs without remote ranks: %v", tc.remote, render(&out))
		}
	}
}

func TestFail(t *testing.T) {
	m := New(Config{Rank: 1, Size: 4}, t0)
	var out Out
	for _, tc := range []struct {
		r    int
		news bool
	}{{2, true}, {2, false}, {1, false}, {-1, false}, {4, false}, {0, true}} {
		if got := m.Fail(tc.r, errors.New("x"), &out); got != tc.news {
			t.Errorf("Fail(%d) = %v, want %v", tc.r, got, tc.news)
		}
	}
	want(t, "fails", &out, "fail 2", "fail 0")
	if got := m.FailedIn([]int{0, 1, 2, 3}); !slices.Equal(got, []int{2, 0}) {
		t.Errorf("FailedIn = %v, want the order learnt [2 0]", got)
	}
	if got := m.CountFailedIn([]int{0, 3}); got != 1 {
		t.Errorf("CountFailedIn = %d", got)
	}
	// A Failed message from another process.
	m.Handle(0, Failed, encodeFailed(3), t0, &out)
	want(t, "failed msg", &out, "fail 3")
	for _, b := range [][]byte{nil, {1, 0, 0}, {9, 0, 0, 0}, {1, 0, 0, 0, 0}} {
		m := New(Config{Rank: 0, Size: 4}, t0)
		m.Handle(2, Failed, b, t0, &out)
		want(t, fmt.Sprintf("failed msg %x", b), &out)
	}
}

func TestDied(t *testing.T) {
	m := New(Config{Rank: 1, Size: 4, Remote: []bool{false, false, true, true}}, t0)
	var out Out
	m.Fail(3, errors.New("x"), &out)
	out.Reset()
	m.Died(&out)
	want(t, "died", &out, "send 2 failed 1")
}

func world(n int) []int {
	l := make([]int, n)
	for i := range l {
		l[i] = i
	}
	return l
}

func TestRevokeFlood(t *testing.T) {
	c := CommOf(10, world(4))
	made := true
	m := New(Config{Rank: 1, Size: 4, Comm: func(ctx uint32) (Comm, bool) {
		if ctx == 10 && made {
			return c, true
		}
		return Comm{}, false
	}}, t0)
	var out Out
	if !m.Revoke(c, &out) {
		t.Fatal("Revoke = false")
	}
	want(t, "revoke", &out, "revoke ctx 10 by 1", "send 0 revoke ctx 10 by 1", "send 2 revoke ctx 10 by 1", "send 3 revoke ctx 10 by 1")
	if m.Revoke(c, &out) || !m.IsRevoked(c.Key) {
		t.Fatal("second Revoke not a no-op")
	}
	m.Handle(2, Revoke, encodeRevoke(Notice{Key: c.Key, By: 2}), t0, &out)
	want(t, "notice after revoke", &out)

	// A notice from a peer: revoke and forward, once.
	m = New(m.cfg, t0)
	m.Fail(3, errors.New("x"), &out)
	out.Reset()
	m.Handle(2, Revoke, encodeRevoke(Notice{Key: c.Key, By: 0}), t0, &out)
	want(t, "notice", &out, "revoke ctx 10 by 0", "send 0 revoke ctx 10 by 0")
	m.Handle(0, Revoke, encodeRevoke(Notice{Key: c.Key, By: 0}), t0, &out)
	want(t, "second notice", &out)

	// Another communicator's notice on the same context, or a bad one.
	m = New(m.cfg, t0)
	m.Handle(2, Revoke, encodeRevoke(Notice{Key: Key{Ctx: 10, Group: 1}, By: 0}), t0, &out)
	m.Handle(2, Revoke, encodeRevoke(Notice{Key: c.Key, By: 0})[:15], t0, &out)
	want(t, "foreign notices", &out)

	// Before the communicator is made: kept, applied by Adopt.
	made = false
	m = New(m.cfg, t0)
	m.Handle(2, Revoke, encodeRevoke(Notice{Key: c.Key, By: 2}), t0, &out)
	want(t, "early notice", &out)
	made = true
	m.Adopt(c, &out)
	want(t, "adopt", &out, "revoke ctx 10 by 2", "send 0 revoke ctx 10 by 2", "send 2 revoke ctx 10 by 2", "send 3 revoke ctx 10 by 2")
	// A new communicator on the same context is not revoked.
	m.Adopt(c, &out)
	if m.IsRevoked(c.Key) {
		t.Fatal("Adopt left the old revocation")
	}
	want(t, "re-adopt", &out)
	// A communicator a notice cannot revoke (no members).
	m = New(Config{Rank: 1, Size: 4, Comm: func(uint32) (Comm, bool) { return Comm{}, true }}, t0)
	m.Handle(2, Revoke, encodeRevoke(Notice{Key: Key{}, By: 0}), t0, &out)
	want(t, "intercommunicator", &out)
}

func TestRevokeEarlyBound(t *testing.T) {
	m := New(Config{Rank: 0, Size: 2, Comm: func(uint32) (Comm, bool) { return Comm{}, false }}, t0)
	var out Out
	for i := range EarlyMax + 10 {
		m.Handle(1, Revoke, encodeRevoke(Notice{Key: Key{Ctx: uint32(i)}, By: 1}), t0, &out)
	}
	if len(m.early) != EarlyMax || len(m.earlyOrder) != EarlyMax {
		t.Fatalf("%d early notices kept, want %d", len(m.early), EarlyMax)
	}
	// The oldest went.
	m.Adopt(Comm{Key: Key{Ctx: 0}, Members: []int{0, 1}}, &out)
	want(t, "oldest", &out)
	m.Adopt(Comm{Key: Key{Ctx: EarlyMax + 9}, Members: []int{0, 1}}, &out)
	want(t, "newest", &out, fmt.Sprintf("revoke ctx %d by 1", EarlyMax+9), fmt.Sprintf("send 1 revoke ctx %d by 1", EarlyMax+9))
}

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func and(acc, in []byte) ([]byte, error) {
	if len(acc) != len(in) {
		return nil, errors.New("length")
	}
	for i := range acc {
		acc[i] &= in[i]
	}
	return acc, nil
}

// prop3 is a proposal of instance seq on key k as a message body.
func propBody(k Key, seq uint64, v uint64, failed ...int) []byte {
	return encodeAgree(AgreeID{Key: k, Seq: seq}, flagPropose, u64(v), failed)
}

func TestAgreeCoordinator(t *testing.T) {
	g := world(3)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 0, Size: 3}, t0)
	var out Out
	id, err := m.Enter(k, g, u64(0xff), and, &out)
	if err != nil || id.Seq != 1 {
		t.Fatalf("Enter = %v, %v", id, err)
	}
	want(t, "enter as coordinator", &out)
	m.Handle(1, Propose, propBody(k, 1, 0xf0f), t0, &out)
	want(t, "one of two proposals", &out)
	if m.Open() != 1 {
		t.Fatal("decided before every member proposed")
	}
	m.Handle(2, Propose, propBody(k, 1, 0x1ff, 1), t0, &out)
	want(t, "decide", &out, "fail 1", "decision 1 0f00000000000000 failed [1]", "send 2 decide 1 0f00000000000000 failed [1]")
	// A late proposal is answered with the decision.
	m.Handle(2, Propose, propBody(k, 1, 0x1ff), t0, &out)
	want(t, "late", &out, "send 2 decide 1 0f00000000000000 failed [1]")
	// So is a collect.
	m.Handle(2, Collect, encodeCollect(AgreeID{Key: k, Seq: 1}), t0, &out)
	want(t, "collect", &out, "send 2 decide 1 0f00000000000000 failed [1]")
}

func TestAgreeMember(t *testing.T) {
	g := world(3)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 2, Size: 3}, t0)
	var out Out
	m.Enter(k, g, u64(7), and, &out)
	want(t, "propose", &out, "send 0 propose 1 0700000000000000 failed []")
	// The coordinator fails: propose to the next one.
	m.Fail(0, errors.New("x"), &out)
	want(t, "coordinator fails", &out, "fail 0", "send 1 propose 1 0700000000000000 failed [0]")
	m.Handle(1, Decide, encodeAgree(AgreeID{Key: k, Seq: 1}, flagDecided, u64(3), []int{0}), t0, &out)
	want(t, "decided", &out, "decision 1 0300000000000000 failed [0]")
	m.Handle(1, Decide, encodeAgree(AgreeID{Key: k, Seq: 1}, flagDecided, u64(1), []int{0}), t0, &out)
	want(t, "second decide", &out)
}

func TestAgreeTakeOver(t *testing.T) {
	g := world(4)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 1, Size: 4}, t0)
	var out Out
	m.Enter(k, g, u64(7), and, &out)
	want(t, "propose", &out, "send 0 propose 1 0700000000000000 failed []")
	m.Fail(0, errors.New("x"), &out)
	want(t, "take over", &out, "fail 0", "send 2 collect 1", "send 3 collect 1")
	m.Handle(2, Propose, propBody(k, 1, 6), t0, &out)
	want(t, "one answer", &out)
	// Member 3 holds the failed coordinator's decision: it is adopted,
	// whatever the others proposed.
	m.Handle(3, Decide, encodeAgree(AgreeID{Key: k, Seq: 1}, flagDecided, u64(5), nil), t0, &out)
	want(t, "adopt", &out, "decision 1 0500000000000000 failed []", "send 2 decide 1 0500000000000000 failed []", "send 3 decide 1 0500000000000000 failed []")
}

// A member's proposal that carries a decision (as an older mpigo could
// send) is adopted too.
func TestAgreeProposalDecided(t *testing.T) {
	g := world(2)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 0, Size: 2}, t0)
	var out Out
	m.Enter(k, g, u64(7), and, &out)
	m.Handle(1, Propose, encodeAgree(AgreeID{Key: k, Seq: 1}, flagDecided, u64(2), nil), t0, &out)
	want(t, "adopt", &out, "decision 1 0200000000000000 failed []", "send 1 decide 1 0200000000000000 failed []")
}

func TestAgreeDecidedBeforeEnter(t *testing.T) {
	g := world(2)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 1, Size: 2}, t0)
	var out Out
	m.Handle(0, Decide, encodeAgree(AgreeID{Key: k, Seq: 1}, flagDecided, u64(9), nil), t0, &out)
	want(t, "placeholder", &out)
	m.Enter(k, g, u64(7), and, &out)
	want(t, "enter", &out, "decision 1 0900000000000000 failed []")
	// The next instance is a new one.
	m.Enter(k, g, u64(7), and, &out)
	want(t, "next", &out, "send 0 propose 2 0700000000000000 failed []")
}

func TestAgreeMalformedProposal(t *testing.T) {
	g := world(3)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 0, Size: 3}, t0)
	var out Out
	m.Enter(k, g, u64(0xff), and, &out)
	m.Handle(1, Propose, encodeAgree(AgreeID{Key: k, Seq: 1}, flagPropose, []byte{1}, nil), t0, &out) // 1 byte: counts for nothing
	m.Handle(2, Propose, propBody(k, 1, 0x0f), t0, &out)
	want(t, "decide", &out, "decision 1 0f00000000000000 failed []", "send 1 decide 1 0f00000000000000 failed []", "send 2 decide 1 0f00000000000000 failed []")
	// Garbage is dropped.
	for _, b := range [][]byte{nil, make([]byte, 19), make([]byte, 23), propBody(k, 1, 0)[:30]} {
		m.Handle(1, Propose, b, t0, &out)
		want(t, fmt.Sprintf("garbage %x", b), &out)
	}
}

func TestAgreeStop(t *testing.T) {
	g := world(2)
	k := CommOf(4, g).Key
	m := New(Config{Rank: 0, Size: 2}, t0)
	var out Out
	m.Enter(CommOf(6, g).Key, g, u64(1), and, &out)
	m.Enter(k, g, u64(1), and, &out)
	m.Stop(errors.New("gone"), &out)
	want(t, "stop", &out, "decision 1 err", "decision 1 err")
	if _, err := m.Enter(k, g, u64(1), and, &out); err == nil || m.Stopped() == nil {
		t.Fatal("Enter after Stop succeeded")
	}
	// The machine still answers the others: a proposal decides, but no
	// Decision comes again.
	m.Handle(1, Propose, propBody(k, 1, 1), t0, &out)
	want(t, "after stop", &out, "send 1 decide 1 0100000000000000 failed []")
}

// Decided instances are kept Keep deep, then forgotten.
func TestAgreeKeep(t *testing.T) {
	g := []int{0}
	k := CommOf(4, g).Key
	m := New(Config{Rank: 0, Size: 1}, t0)
	var out Out
	for i := range Keep + 3 {
		m.Enter(k, g, u64(uint64(i)), and, &out)
		if len(out.Decisions) != 1 {
			t.Fatalf("instance %d: %v", i, render(&out))
		}
		out.Reset()
	}
	if len(m.agrees) != Keep {
		t.Fatalf("%d instances kept, want %d", len(m.agrees), Keep)
	}
}

func TestDecodeAgree(t *testing.T) {
	id := AgreeID{Key: Key{Ctx: 7, Group: 99}, Seq: 3}
	b := encodeAgree(id, flagDecided, []byte("value"), []int{1, 3})
	gid, p, ok := decodeAgree(b, 4)
	if !ok || gid != id || !p.decided || !bytes.Equal(p.val, []byte("value")) || !slices.Equal(p.failed, []int{1, 3}) {
		t.Fatalf("round trip: %v %+v %v", gid, p, ok)
	}
	if _, _, ok := decodeAgree(b, 3); ok {
		t.Error("rank 3 accepted in a job of 3")
	}
	for n := range len(b) {
		if _, _, ok := decodeAgree(b[:n], 4); ok && n != agreeHdr {
			t.Errorf("truncated to %d bytes: accepted", n)
		}
	}
	huge := slices.Clone(b)
	binary.LittleEndian.PutUint32(huge[21:], 1<<31+5)
	if _, _, ok := decodeAgree(huge, 4); ok {
		t.Error("value length past the end accepted")
	}
	huge = encodeAgree(id, flagPropose, nil, nil)
	binary.LittleEndian.PutUint32(huge[25:], 1<<32-1)
	if _, _, ok := decodeAgree(huge, 4); ok {
		t.Error("failed count past the job accepted")
	}
	if n, ok := DecodeRevoke(encodeRevoke(Notice{Key: id.Key, By: 5})); !ok || n.Key != id.Key || n.By != 5 {
		t.Errorf("revoke round trip: %+v %v", n, ok)
	}
}

// The frame layout is the one mpigo has always sent: pinned byte by byte.
func TestWireLayout(t *testing.T) {
	id := AgreeID{Key: Key{Ctx: 0x01020304, Group: 0x1112131415161718}, Seq: 0x21}
	got := encodeAgree(id, flagDecided, []byte{0xaa}, []int{2})
	wantB := []byte{4, 3, 2, 1, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x21, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0xaa, 1, 0, 0, 0, 2, 0, 0, 0}
	if !bytes.Equal(got, wantB) {
		t.Errorf("agreement message\n got %x\nwant %x", got, wantB)
	}
	if got := encodeCollect(id); !bytes.Equal(got, wantB[:20]) {
		t.Errorf("collect %x", got)
	}
	if got := encodeRevoke(Notice{Key: id.Key, By: 3}); !bytes.Equal(got, append(slices.Clone(wantB[:12]), 3, 0, 0, 0)) {
		t.Errorf("revoke %x", got)
	}
	if got := encodeFailed(5); !bytes.Equal(got, []byte{5, 0, 0, 0}) {
		t.Errorf("failed %x", got)
	}
	if Heartbeat != 1 || Revoke != 2 || Propose != 3 || Decide != 4 || Collect != 5 || Failed != 6 {
		t.Error("the kinds (tags) moved")
	}
	// FNV-1a over the members as little-endian uint32s.
	if h := GroupHash([]int{0, 1, 2}); h != 0x756241e1be8c9396 {
		t.Errorf("GroupHash = %#x", h)
	}
}

// Regression (found by TestSim): a coordinator that takes over must not
// decide on a proposal a member sent before its collect reached it; the
// member may have learnt the failed coordinator's decision since, and
// answers the collect with it.
func TestAgreeTakeOverStaleProposal(t *testing.T) {
	g := world(4)
	k := CommOf(4, g).Key
	id := AgreeID{Key: k, Seq: 1}
	m := New(Config{Rank: 1, Size: 4}, t0)
	var out Out
	m.Enter(k, g, u64(0xff), and, &out)
	out.Reset()
	// Member 3 learnt first that 0 failed and proposed to us.
	m.Handle(3, Propose, propBody(k, 1, 0xf7, 0), t0, &out)
	m.Fail(0, errors.New("x"), &out)
	want(t, "take over", &out, "fail 0", "send 2 collect 1", "send 3 collect 1")
	m.Handle(2, Propose, encodeAgree(id, flagAnswer, u64(0xfb), []int{0}), t0, &out)
	want(t, "all proposed, one not an answer", &out)
	// 3 got 0's decision meanwhile, and answers with it.
	m.Handle(3, Decide, encodeAgree(id, flagDecided, u64(0xf0), nil), t0, &out)
	want(t, "answer", &out, "decision 1 f000000000000000 failed []", "send 2 decide 1 f000000000000000 failed []", "send 3 decide 1 f000000000000000 failed []")
}

// Regression (found by TestSim): a member that answered a new
// coordinator's collect takes no decision from the coordinator before
// it (that decision was still on its way; the new one decides without it).
func TestAgreePromise(t *testing.T) {
	g := world(4)
	k := CommOf(4, g).Key
	id := AgreeID{Key: k, Seq: 1}
	m := New(Config{Rank: 2, Size: 4}, t0)
	var out Out
	m.Enter(k, g, u64(0xfb), and, &out)
	want(t, "propose", &out, "send 0 propose 1 fb00000000000000 failed []")
	m.Handle(1, Collect, encodeCollect(id), t0, &out)
	want(t, "answer", &out, "send 1 propose 1 fb00000000000000 failed [] (answer)", "send 0 propose 1 fb00000000000000 failed []")
	m.Handle(0, Decide, encodeAgree(id, flagDecided, u64(0xf0), nil), t0, &out)
	want(t, "old coordinator's decision", &out)
	m.Handle(1, Decide, encodeAgree(id, flagDecided, u64(0xf1), []int{0}), t0, &out)
	want(t, "new coordinator's decision", &out, "fail 0", "decision 1 f100000000000000 failed [0]")
}

// Regression (found by TestSim): a rank that got a proposal while it was
// undecided (the member took it for its coordinator before it did) tells
// that member once it decides; and a collect that came before this rank
// entered is answered when it enters.
func TestAgreeAnswersLater(t *testing.T) {
	g := world(4)
	k := CommOf(4, g).Key
	id := AgreeID{Key: k, Seq: 1}
	m := New(Config{Rank: 1, Size: 4}, t0)
	var out Out
	m.Enter(k, g, u64(0xfd), and, &out)
	want(t, "propose", &out, "send 0 propose 1 fd00000000000000 failed []")
	m.Handle(3, Propose, propBody(k, 1, 0xf7, 0), t0, &out)
	want(t, "a member's proposal", &out)
	m.Handle(0, Decide, encodeAgree(id, flagDecided, u64(0xf0), nil), t0, &out)
	want(t, "decide", &out, "decision 1 f000000000000000 failed []", "send 3 decide 1 f000000000000000 failed []")

	m = New(Config{Rank: 2, Size: 4}, t0)
	m.Handle(1, Collect, encodeCollect(id), t0, &out)
	want(t, "collect before entering", &out)
	m.Enter(k, g, u64(0xfb), and, &out)
	want(t, "enter", &out, "send 1 propose 1 fb00000000000000 failed [] (answer)", "send 0 propose 1 fb00000000000000 failed []")

	m = New(Config{Rank: 2, Size: 4}, t0)
	m.Handle(1, Collect, encodeCollect(id), t0, &out)
	m.Handle(0, Decide, encodeAgree(id, flagDecided, u64(0xf0), nil), t0, &out)
	want(t, "collect and decision before entering", &out)
	m.Enter(k, g, u64(0xfb), and, &out)
	want(t, "enter decided", &out, "decision 1 f000000000000000 failed []", "send 1 decide 1 f000000000000000 failed []")
}

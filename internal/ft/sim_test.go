package ft

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

// sim is a deterministic network of machines: messages wait in per-link
// FIFO queues (what the transports give) until the test delivers them, one
// at a time, in an order a seeded random source chooses, between the
// other events: a rank entering an agreement, making or revoking the
// communicator, being killed, learning of a kill from its transport, and
// the ticks of a simulated clock. There are no goroutines and no clocks.
type sim struct {
	t     testing.TB
	rng   *rand.Rand
	n     int
	ms    []*Machine
	links map[[2]int][]simMsg
	now   time.Duration
	steps int
	log   []string // what happened, for failure reports

	opts simOpts

	dead      []bool // killed
	victims   []int  // to kill, in order
	killAt    int    // the step of the first kill (-1: at random)
	notified  [][]bool
	adopted   []bool
	comm      Comm
	entered   []int                 // agreements entered, per rank
	decisions []map[uint64]Decision // per rank, by sequence number
	revokes   []int                 // Revocations output, per rank
	revoker   int                   // the rank that revokes (-1: none)
	revoked   bool                  // the revoker did
	floods    map[[2]int]int        // Revoke messages per link
	hbDrops   map[[2]int]int        // heartbeats dropped in a row, per link
}

type simMsg struct {
	kind Kind
	body []byte
	sent time.Duration
}

type simOpts struct {
	n, agreements int
	iagree        bool // enter every agreement at once, without waiting
	clock         bool // failures are found by heartbeats, not only transports
	revoke        bool
	kills         int
}

const (
	simPeriod   = 100 * time.Millisecond
	simTimeout  = 8 * simPeriod
	simMaxDelay = 3 * simPeriod // no message waits longer (heartbeat timeouts are real ones)
)

func newSim(t testing.TB, seed uint64, o simOpts, killAt int, victims []int) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), n: o.n, opts: o,
		links: map[[2]int][]simMsg{}, floods: map[[2]int]int{}, hbDrops: map[[2]int]int{},
		dead: make([]bool, o.n), adopted: make([]bool, o.n), entered: make([]int, o.n),
		revokes: make([]int, o.n), revoker: -1, killAt: killAt}
	s.comm = CommOf(42, world(o.n))
	perm := s.rng.Perm(o.n)
	if victims == nil {
		victims = perm[:o.kills]
	}
	s.victims = victims
	if o.revoke {
		s.revoker = s.rng.IntN(o.n)
	}
	for r := range o.n {
		s.notified = append(s.notified, make([]bool, o.n))
		s.decisions = append(s.decisions, map[uint64]Decision{})
		cfg := Config{Rank: r, Size: o.n, Comm: func(ctx uint32) (Comm, bool) {
			if ctx == s.comm.Key.Ctx && s.adopted[r] {
				return s.comm, true
			}
			return Comm{}, false
		}}
		if o.clock {
			// Every rank in a process of its own.
			cfg.Remote = make([]bool, o.n)
			for x := range cfg.Remote {
				cfg.Remote[x] = x != r
			}
			cfg.Period, cfg.Timeout = simPeriod, simTimeout
		}
		s.ms = append(s.ms, New(cfg, s.at()))
	}
	for r, m := range s.ms {
		var out Out
		m.Start(s.at(), &out)
		s.flush(r, &out)
	}
	return s
}

func (s *sim) at() time.Time { return t0.Add(s.now) }

func (s *sim) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf("%5d %6v ", s.steps, s.now)+fmt.Sprintf(format, args...))
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	l := s.log
	if len(l) > 200 {
		l = l[len(l)-200:]
	}
	for _, x := range l {
		s.t.Log(x)
	}
	s.t.Fatalf(format, args...)
}

func agreeVal(r int) []byte { return u64(^uint64(1 << r)) }

// flush carries out rank r's outputs and checks them.
func (s *sim) flush(r int, out *Out) {
	s.t.Helper()
	for _, f := range out.Failures {
		s.logf("%d: failed %d (%v)", r, f.Rank, f.Cause)
		if !s.dead[f.Rank] {
			s.fatalf("rank %d declared live rank %d failed: %v", r, f.Rank, f.Cause)
		}
	}
	for _, rv := range out.Revokes {
		s.logf("%d: revoked by %d", r, rv.By)
		s.revokes[r]++
		if rv.Key != s.comm.Key || s.revokes[r] > 1 {
			s.fatalf("rank %d: revocation %+v (%d so far)", r, rv, s.revokes[r])
		}
	}
	for _, d := range out.Decisions {
		s.logf("%d: decided %d: %x failed %v", r, d.ID.Seq, d.Value, d.Failed)
		if d.Err != nil || d.ID.Key != s.comm.Key {
			s.fatalf("rank %d: decision %+v", r, d)
		}
		if _, dup := s.decisions[r][d.ID.Seq]; dup {
			s.fatalf("rank %d decided %d twice", r, d.ID.Seq)
		}
		if int(d.ID.Seq) > s.entered[r] {
			s.fatalf("rank %d: decision of %d, which it has not entered", r, d.ID.Seq)
		}
		// No decision before every live participant contributed: a rank
		// alive now and not agreed failed was alive when the coordinator
		// decided, so it must have entered and its value must be in.
		v := binary.LittleEndian.Uint64(d.Value)
		for x := range s.n {
			if s.dead[x] || slices.Contains(d.Failed, x) {
				continue
			}
			if s.entered[x] < int(d.ID.Seq) || v&(1<<x) != 0 {
				s.fatalf("rank %d decided %d (%x) without live rank %d (entered %d)", r, d.ID.Seq, d.Value, x, s.entered[x])
			}
		}
		s.decisions[r][d.ID.Seq] = d
	}
	for _, m := range out.Sends {
		if m.To == r || m.To < 0 || m.To >= s.n {
			s.fatalf("rank %d sends %v to %d", r, m.Kind, m.To)
		}
		if m.Kind == Revoke {
			k := [2]int{r, m.To}
			if s.floods[k]++; s.floods[k] > 1 {
				s.fatalf("rank %d sent a second revoke notice to %d", r, m.To)
			}
		}
		k := [2]int{r, m.To}
		s.links[k] = append(s.links[k], simMsg{kind: m.Kind, body: m.Body, sent: s.now})
	}
	out.Reset()
}

func (s *sim) live() []int {
	var l []int
	for r := range s.n {
		if !s.dead[r] {
			l = append(l, r)
		}
	}
	return l
}

// event is one thing that can happen next.
type simEvent struct {
	name string
	do   func()
}

func (s *sim) events() (evs []simEvent, ticks bool) {
	for a := range s.n {
		for b := range s.n {
			k := [2]int{a, b}
			if len(s.links[k]) > 0 {
				evs = append(evs, simEvent{"deliver", func() { s.deliver(k) }})
			}
		}
	}
	for _, r := range s.live() {
		m := s.ms[r]
		if !s.adopted[r] {
			evs = append(evs, simEvent{"adopt", func() {
				s.adopted[r] = true
				var out Out
				s.logf("%d: adopt", r)
				m.Adopt(s.comm, &out)
				s.flush(r, &out)
			}})
		}
		if s.entered[r] < s.opts.agreements && (s.opts.iagree || len(s.decisions[r]) == s.entered[r]) {
			evs = append(evs, simEvent{"enter", func() {
				var out Out
				s.entered[r]++
				s.logf("%d: enter %d", r, s.entered[r])
				id, err := m.Enter(s.comm.Key, s.comm.Members, agreeVal(r), and, &out)
				if err != nil || id.Seq != uint64(s.entered[r]) {
					s.fatalf("rank %d: Enter = %v, %v", r, id, err)
				}
				s.flush(r, &out)
			}})
		}
		if r == s.revoker && !s.revoked && s.adopted[r] {
			evs = append(evs, simEvent{"revoke", func() {
				s.revoked = true
				var out Out
				s.logf("%d: revoke", r)
				m.Revoke(s.comm, &out)
				s.flush(r, &out)
			}})
		}
		if !s.opts.clock || r%2 == 0 {
			// The transport tells (with the clock, to half the ranks).
			for x := range s.n {
				if s.dead[x] && !s.notified[r][x] {
					evs = append(evs, simEvent{"notify", func() {
						s.notified[r][x] = true
						var out Out
						s.logf("%d: transport: %d is gone", r, x)
						m.Fail(x, errors.New("transport"), &out)
						s.flush(r, &out)
					}})
				}
			}
		}
	}
	if len(s.victims) > 0 && (s.killAt < 0 || s.steps >= s.killAt) {
		k := 0
		for k < len(s.victims) && s.dead[s.victims[k]] {
			k++
		}
		if k < len(s.victims) {
			v := s.victims[k]
			kill := simEvent{"kill", func() { s.kill(v) }}
			if s.killAt >= 0 && k == 0 {
				return []simEvent{kill}, false // now, as asked
			}
			evs = append(evs, kill)
		}
	}
	if s.opts.clock {
		ticks = true
		for k, q := range s.links {
			if len(q) > 0 && !s.dead[k[1]] && s.now-q[0].sent >= simMaxDelay {
				ticks = false // deliver it first: delays stay below the timeout
			}
		}
	}
	return evs, ticks
}

func (s *sim) deliver(k [2]int) {
	q := s.links[k]
	msg := q[0]
	s.links[k] = q[1:]
	if s.dead[k[1]] {
		return
	}
	if msg.kind == Heartbeat && s.hbDrops[k] < 2 && s.rng.IntN(4) == 0 {
		// Heartbeats may be lost, a few in a row.
		s.hbDrops[k]++
		return
	}
	if msg.kind == Heartbeat {
		s.hbDrops[k] = 0
	} else {
		s.logf("%d -> %d: %v%s", k[0], k[1], msg.kind, describe(Send{Kind: msg.kind, Body: msg.body}))
	}
	var out Out
	s.ms[k[1]].Handle(k[0], msg.kind, msg.body, s.at(), &out)
	s.flush(k[1], &out)
}

// kill kills rank v: it takes no more input, and what it sent that is
// still on the way may be lost (a suffix of each link: a connection cut).
func (s *sim) kill(v int) {
	s.logf("kill %d", v)
	s.dead[v] = true
	for x := range s.n {
		k := [2]int{v, x}
		if q := s.links[k]; len(q) > 0 {
			s.links[k] = q[:s.rng.IntN(len(q)+1)]
		}
		delete(s.links, [2]int{x, v})
	}
}

func (s *sim) tick() {
	s.now += simPeriod
	for _, r := range s.rng.Perm(s.n) {
		if s.dead[r] {
			continue
		}
		var out Out
		s.ms[r].Tick(s.at(), &out)
		s.flush(r, &out)
	}
}

// done reports whether every survivor has decided everything and learnt
// every failure.
func (s *sim) done() bool {
	for _, r := range s.live() {
		if len(s.decisions[r]) < s.opts.agreements || !s.adopted[r] {
			return false
		}
		for _, v := range s.victims {
			if !s.dead[v] || !s.ms[r].Known(v) {
				return false
			}
		}
	}
	return true
}

// run runs the simulation to its end and checks the invariants.
func (s *sim) run() {
	const maxSteps = 200000
	for ; s.steps < maxSteps; s.steps++ {
		evs, ticks := s.events()
		if s.opts.clock && s.done() {
			// Only heartbeats are left to flow for ever: drain what else
			// is on the way and stop.
			evs = evs[:0]
			for k, q := range s.links {
				if len(q) > 0 && !s.dead[k[1]] {
					evs = append(evs, simEvent{"deliver", func() { s.deliver(k) }})
				}
			}
			if len(evs) == 0 {
				break
			}
			ticks = false
		}
		if len(evs) == 0 && !ticks {
			break
		}
		if ticks && (len(evs) == 0 || s.rng.IntN(8) == 0) {
			s.tick()
			continue
		}
		evs[s.rng.IntN(len(evs))].do()
	}
	if s.steps >= maxSteps {
		s.fatalf("no end after %d steps", maxSteps)
	}
	s.check()
}

func (s *sim) check() {
	live := s.live()
	for _, r := range live {
		if len(s.decisions[r]) != s.opts.agreements {
			s.fatalf("rank %d decided %d agreements of %d", r, len(s.decisions[r]), s.opts.agreements)
		}
	}
	for seq := uint64(1); seq <= uint64(s.opts.agreements); seq++ {
		d0 := s.decisions[live[0]][seq]
		for _, r := range live[1:] {
			d := s.decisions[r][seq]
			if !slices.Equal(d.Value, d0.Value) || !slices.Equal(d.Failed, d0.Failed) {
				s.fatalf("agreement %d: rank %d decided %x failed %v, rank %d %x failed %v", seq, live[0], d0.Value, d0.Failed, r, d.Value, d.Failed)
			}
		}
		v := binary.LittleEndian.Uint64(d0.Value)
		for r := range s.n {
			contributed := v&(1<<r) == 0
			if !s.dead[r] && !contributed {
				s.fatalf("agreement %d: %x lacks the value of survivor %d", seq, d0.Value, r)
			}
			if !s.dead[r] && slices.Contains(d0.Failed, r) {
				s.fatalf("agreement %d: survivor %d agreed failed", seq, r)
			}
		}
		if v>>s.n != 1<<(64-s.n)-1 {
			s.fatalf("agreement %d: value %x has bits nobody cleared", seq, d0.Value)
		}
	}
	// A revocation that reached one survivor reached every survivor.
	any := false
	for _, r := range live {
		any = any || s.ms[r].IsRevoked(s.comm.Key)
	}
	for _, r := range live {
		if any != s.ms[r].IsRevoked(s.comm.Key) || any != (s.revokes[r] == 1) {
			s.fatalf("revocation reached some survivors, not rank %d", r)
		}
	}
	if s.revoked && !s.dead[s.revoker] && !any {
		s.fatalf("rank %d revoked and survived, yet nobody is revoked", s.revoker)
	}
}

func simCases() []simOpts {
	return []simOpts{
		{n: 2, agreements: 2},
		{n: 3, agreements: 3, revoke: true},
		{n: 4, agreements: 3, kills: 1, revoke: true},
		{n: 5, agreements: 2, kills: 2, revoke: true},
		{n: 5, agreements: 4, kills: 2, iagree: true},
		{n: 6, agreements: 2, kills: 4, revoke: true, iagree: true},
		{n: 4, agreements: 2, kills: 1, clock: true, revoke: true},
		{n: 5, agreements: 2, kills: 2, clock: true, iagree: true},
	}
}

// simSeeds sets how many schedules TestSim runs per case: go test
// ./internal/ft -run TestSim -args -seeds=3000.
var simSeeds = flag.Int("seeds", 0, "schedules per case of TestSim (0: 40, or 200 with MPIGO_TEST_LONG)")

// TestSim runs every case over many seeded schedules (the default keeps
// the test short under the race detector).
func TestSim(t *testing.T) {
	seeds := 40
	if os.Getenv("MPIGO_TEST_LONG") != "" {
		seeds = 200
	}
	if *simSeeds > 0 {
		seeds = *simSeeds
	}
	for _, o := range simCases() {
		t.Run(fmt.Sprintf("n%d-a%d-k%d-iagree%v-clock%v-revoke%v", o.n, o.agreements, o.kills, o.iagree, o.clock, o.revoke), func(t *testing.T) {
			for seed := range uint64(seeds) {
				s := newSim(t, seed, o, -1, nil)
				s.run()
			}
		})
	}
}

// TestSimKillEverywhere kills a rank at every step of a run in turn: the
// coordinator (rank 0), the next one, and the last member, with and without
// the revoke.
func TestSimKillEverywhere(t *testing.T) {
	for _, o := range []simOpts{
		{n: 4, agreements: 2, revoke: true, kills: 1},
		{n: 4, agreements: 2, iagree: true, kills: 1},
		{n: 3, agreements: 1, clock: true, kills: 1},
	} {
		for _, v := range []int{0, 1, o.n - 1} {
			for seed := range uint64(3) {
				// How long does the run last without the kill?
				free := o
				free.kills = 0
				s := newSim(t, seed, free, -1, nil)
				s.run()
				for at := 0; at <= s.steps; at++ {
					k := newSim(t, seed, o, at, []int{v})
					k.run()
				}
			}
		}
	}
}

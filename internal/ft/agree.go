package ft

import (
	"cmp"
	"errors"
	"slices"
)

// agreement is one instance, as a rank sees it.
type agreement struct {
	id      AgreeID
	group   []int // members' world ranks; nil until this rank enters
	entered bool
	val     []byte
	combine Combine

	props     map[int]prop // proposals received (as coordinator)
	sentTo    int          // the coordinator our proposal went to (-1: none)
	collected bool         // we collected as a coordinator that took over
	promised  int          // group index of the latest coordinator that collected our state (-1: none)
	asked     []int        // ranks that collected before this rank entered

	decided bool
	dval    []byte
	dfailed []int
	closed  bool // the Decision was output (or the instance abandoned)
}

// get returns the instance id, making a placeholder for one this rank has
// not entered yet.
func (m *Machine) get(id AgreeID) *agreement {
	a := m.agrees[id]
	if a == nil {
		a = &agreement{id: id, sentTo: -1, promised: -1, props: map[int]prop{}}
		m.agrees[id] = a
	}
	return a
}

// Enter enters this rank, a member of group (world ranks, in rank order),
// in the next agreement on the communicator key, with value val (which the
// machine keeps: the caller must not change it) combined by combine. The
// calls are numbered in the order a rank makes them, as collectives are.
// The decision comes as a Decision with the returned id, maybe at once.
// It fails if the machine was stopped.
func (m *Machine) Enter(key Key, group []int, val []byte, combine Combine, out *Out) (AgreeID, error) {
	if m.dead != nil {
		return AgreeID{}, m.dead
	}
	m.seqs[key]++
	id := AgreeID{Key: key, Seq: m.seqs[key]}
	a := m.get(id)
	a.group, a.val, a.combine, a.entered, a.sentTo = group, val, combine, true, -1
	asked := a.asked
	a.asked = nil
	if a.decided {
		// Decided by the others before this rank came (and told it).
		a.closed = true
		out.Decisions = append(out.Decisions, Decision{ID: id, Value: a.dval, Failed: a.dfailed})
		for _, r := range asked {
			m.send(out, r, Decide, encodeAgree(id, flagDecided, a.dval, a.dfailed))
		}
		return id, nil
	}
	a.props[m.cfg.Rank] = prop{val: val}
	m.open[id] = a
	for _, r := range asked {
		m.answer(a, r, out)
	}
	m.step(a, out)
	m.stepAll(out) // a decision may have made failures known
	return id, nil
}

// answer answers the collect of coordinator from with this rank's
// proposal, and promises it to take no decision from a coordinator before
// it in the group (accepts).
func (m *Machine) answer(a *agreement, from int, out *Out) {
	a.promised = max(a.promised, slices.Index(a.group, from))
	a.sentTo = from
	m.send(out, from, Propose, encodeAgree(a.id, flagAnswer, a.val, m.FailedIn(a.group)))
}

// accepts reports whether a takes a decision sent by from. A rank that
// answered the collect of a coordinator that took over, or that collected
// itself, takes no decision from a coordinator before that one: such a
// decision was still on its way when the new coordinator asked, and the
// new coordinator decides without it (it learnt of no rank holding it);
// taking it would split the ranks. Under the crash-stop failures the
// protocol assumes, a rank before the new coordinator is dead, so it sends
// nothing else; the decision of a rank after it is the new coordinator's
// own or one it was told by a member it collected from.
func (a *agreement) accepts(from int) bool {
	return a.promised < 0 || slices.Index(a.group, from) >= a.promised
}

// Open returns how many agreements this rank entered are not decided.
func (m *Machine) Open() int { return len(m.open) }

// onAgree handles a proposal, decision or collect from another rank.
func (m *Machine) onAgree(from int, k Kind, b []byte, out *Out) {
	id, p, ok := decodeAgree(b, m.cfg.Size)
	if !ok {
		return
	}
	a := m.get(id)
	switch k {
	case Propose:
		switch {
		case a.decided:
			m.send(out, from, Decide, encodeAgree(id, flagDecided, a.dval, a.dfailed))
		case p.decided:
			if a.accepts(from) {
				m.decide(a, p.val, p.failed, out)
			}
		default:
			// A member that answered our collect keeps its promise: a
			// proposal it sends later (it learnt of more failures) is
			// still an answer.
			p.answer = p.answer || a.props[from].answer
			a.props[from] = p
		}
	case Decide:
		if !a.decided && a.accepts(from) {
			m.decide(a, p.val, p.failed, out)
		}
	case Collect:
		switch {
		case a.decided:
			m.send(out, from, Decide, encodeAgree(id, flagDecided, a.dval, a.dfailed))
		case a.entered:
			m.answer(a, from, out)
		case !slices.Contains(a.asked, from) && len(a.asked) < m.cfg.Size:
			// Answered when this rank enters: the coordinator waits for
			// it.
			a.asked = append(a.asked, from)
		}
	}
	m.step(a, out)
}

// stepAll moves every undecided instance on (failures may have changed
// coordinators), in the order of their ids, so that a run replays. A
// decision can make failures known, which can move other instances on:
// it goes round until no new failure comes.
func (m *Machine) stepAll(out *Out) {
	for {
		n := len(m.failed)
		if len(m.open) == 1 {
			for _, a := range m.open {
				m.step(a, out)
			}
		} else if len(m.open) > 1 {
			l := make([]*agreement, 0, len(m.open))
			for _, a := range m.open {
				l = append(l, a)
			}
			slices.SortFunc(l, byID)
			for _, a := range l {
				m.step(a, out)
			}
		}
		if len(m.failed) == n {
			return
		}
	}
}

func byID(x, y *agreement) int {
	return cmp.Or(cmp.Compare(x.id.Key.Ctx, y.id.Key.Ctx), cmp.Compare(x.id.Key.Group, y.id.Key.Group), cmp.Compare(x.id.Seq, y.id.Seq))
}

// live returns the members of a not known failed.
func (m *Machine) live(a *agreement) []int {
	var l []int
	for _, r := range a.group {
		if !m.Known(r) {
			l = append(l, r)
		}
	}
	return l
}

// step acts on instance a: propose to the coordinator, or decide as one.
func (m *Machine) step(a *agreement, out *Out) {
	if !a.entered || a.decided {
		return
	}
	live := m.live(a)
	if len(live) == 0 {
		return
	}
	coord := live[0]
	if coord != m.cfg.Rank {
		if a.sentTo != coord {
			a.sentTo = coord
			m.send(out, coord, Propose, encodeAgree(a.id, flagPropose, a.val, m.FailedIn(a.group)))
		}
		return
	}
	if !a.collected && coord != a.group[0] {
		// We take over from a failed coordinator: members that already
		// proposed (or decided) answered it, not us.
		a.collected = true
		a.promised = max(a.promised, slices.Index(a.group, coord))
		b := encodeCollect(a.id)
		for _, r := range live[1:] {
			m.send(out, r, Collect, b)
		}
	}
	for _, r := range live {
		p, ok := a.props[r]
		if !ok || a.collected && r != m.cfg.Rank && !p.answer {
			// A coordinator that took over counts only the answers to
			// its collect: a proposal sent before may come from a member
			// that has learnt a decision since.
			return
		}
	}
	val := slices.Clone(a.val)
	failed := make([]bool, m.cfg.Size)
	for _, r := range m.FailedIn(a.group) {
		failed[r] = true
	}
	for _, r := range live {
		p := a.props[r]
		if r != m.cfg.Rank {
			v, err := a.combine(val, slices.Clone(p.val))
			if err != nil {
				continue // a malformed proposal counts for nothing
			}
			val = v
		}
		for _, x := range p.failed {
			failed[x] = true
		}
	}
	var fl []int
	for _, r := range a.group {
		if failed[r] {
			fl = append(fl, r)
		}
	}
	m.decide(a, val, fl, out)
}

// decide records the decision of a; a coordinator passes it on to every
// live member.
func (m *Machine) decide(a *agreement, val []byte, failed []int, out *Out) {
	if a.decided {
		return
	}
	a.decided, a.dval, a.dfailed = true, val, failed
	// Members that proposed to this rank take it for their coordinator:
	// they are told, even if this rank does not (yet) see itself as one.
	var to []int
	for r := range a.props {
		if r != m.cfg.Rank {
			to = append(to, r)
		}
	}
	a.props = nil
	delete(m.open, a.id)
	// A live member is at most one instance behind the others (an
	// instance needs every live member's proposal), so old decisions can
	// go.
	if a.id.Seq > Keep {
		delete(m.agrees, AgreeID{Key: a.id.Key, Seq: a.id.Seq - Keep})
	}
	for _, r := range failed {
		m.fail(r, errAgreed, out)
	}
	if a.entered {
		if live := m.live(a); len(live) > 0 && live[0] == m.cfg.Rank {
			to = append(to, live[1:]...)
		}
	}
	if len(to) > 0 {
		slices.Sort(to)
		b := encodeAgree(a.id, flagDecided, val, failed)
		for _, r := range slices.Compact(to) {
			m.send(out, r, Decide, b)
		}
	}
	if a.entered && !a.closed {
		a.closed = true
		out.Decisions = append(out.Decisions, Decision{ID: a.id, Value: val, Failed: failed})
	}
}

var errAgreed = errors.New("the survivors agreed that it failed")

// Package diag explains hung MPI jobs: it holds what each rank was doing
// when the job stopped making progress (the call it waits in, its
// unmatched messages and receives), formats that as the hang report, and
// works out a diagnosis ("each waits for the other", "mismatched
// collectives", "returned from its function"). It is pure: the runtime
// (package mpi) and the launcher (cmd/mpigo) gather the states and print.
package diag

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Keys of the launcher's store under which a process of a job started by
// mpigo run puts the state of its ranks, as one line of JSON (a []Rank),
// after the process's first rank.
const (
	// KeyHang holds "blocked JSON" while every rank of the process has
	// been blocked for the threshold, "running" after.
	KeyHang = "mpigo.hang."
	// KeyState holds the state put on SIGQUIT.
	KeyState = "mpigo.state."
)

// Special values of Wait.Peer and Wait.Tag.
const (
	AnySource = -1
	AnyTag    = -1
	None      = -32766 // the call names no peer or tag
)

// Kinds of wait.
const (
	KindSend     = "send"     // a point-to-point send to Peer
	KindRecv     = "recv"     // a receive (or a probe) from Peer
	KindColl     = "coll"     // a collective on Comm
	KindFinalize = "finalize" // the rank returned and waits at the end of the job
	KindOther    = "other"    // anything else (WaitAny on several requests)
)

// Wait is one blocked call of a rank.
type Wait struct {
	Call      string `json:"call"`           // "Ssend", "Recv", "Allreduce"
	Kind      string `json:"kind"`           // one of the Kind constants
	Comm      string `json:"comm,omitempty"` // the communicator's name: WORLD
	Peer      int    `json:"peer"`           // rank in Comm, AnySource, or None
	PeerWorld int    `json:"peer_world"`     // world rank of Peer, or -1
	Tag       int    `json:"tag"`            // AnyTag or None possible
	Bytes     int    `json:"bytes"`
	Sync      bool   `json:"sync,omitempty"` // a synchronous send
	Root      int    `json:"root"`           // a rooted collective's root (check mode), else None
	File      string `json:"file,omitempty"` // the caller's file (base name) outside package mpi
	Line      int    `json:"line,omitempty"`
	Func      string `json:"func,omitempty"` // the caller's function
}

// Queued is an entry of a rank's matching queues.
type Queued struct {
	Comm      string `json:"comm"`
	Peer      int    `json:"peer"` // source (receives, arrived messages) or destination (sends)
	PeerWorld int    `json:"peer_world"`
	Tag       int    `json:"tag"`
	Bytes     int    `json:"bytes"`
	Sync      bool   `json:"sync,omitempty"`
}

// States of a rank.
const (
	Blocked  = "blocked"  // every call of the rank in MPI waits
	Returned = "returned" // its function returned; it waits for the others to finish
	Running  = "running"  // it is computing, or its state is unknown
)

// Rank is what one rank was doing.
type Rank struct {
	Rank       int      `json:"rank"`
	State      string   `json:"state"`
	Waits      []Wait   `json:"waits,omitempty"`
	Posted     []Queued `json:"posted,omitempty"`     // receives posted but not matched
	Unexpected []Queued `json:"unexpected,omitempty"` // messages arrived but not matched
	Sends      []Queued `json:"sends,omitempty"`      // sends waiting for their receiver
}

// Report is the state of a whole job.
type Report struct {
	Why   string // what triggered it: "every rank has been blocked for 10s"
	Ranks []Rank // sorted by rank
	// Title names the report on its first line; "" is "hang report".
	Title string
	// Scope, if set, says which ranks the report could see, when it is
	// not every rank of the job (a process that sees only its own).
	Scope string
	// Diagnosis, if not nil, replaces what Diagnose finds: a finding
	// that is certain (check mode's pairwise comparison).
	Diagnosis []string
}

// place is " at file:line" or "".
func (w *Wait) place() string {
	if w.File == "" {
		return ""
	}
	return " at " + w.File + ":" + strconv.Itoa(w.Line)
}

func peerName(p int) string {
	switch p {
	case AnySource:
		return "any source"
	case None:
		return "?"
	}
	return strconv.Itoa(p)
}

func tagName(t int) string {
	if t == AnyTag {
		return "any tag"
	}
	return "tag " + strconv.Itoa(t)
}

// onComm is " on NAME" unless the communicator is WORLD... it always names it.
func onComm(c string) string {
	if c == "" {
		return ""
	}
	return " on " + c
}

// What describes the call without its place: "Ssend to 1 tag 5",
// "Recv from any source tag 3", "Allreduce on WORLD".
func (w *Wait) What() string {
	switch w.Kind {
	case KindSend:
		if w.Peer == None {
			return w.Call + onComm(w.Comm)
		}
		s := w.Call + " to " + peerName(w.Peer)
		if w.Tag != None {
			s += " " + tagName(w.Tag)
		}
		return s + commUnlessWorld(w.Comm)
	case KindRecv:
		if w.Peer == None {
			return w.Call + onComm(w.Comm)
		}
		s := w.Call + " from " + peerName(w.Peer)
		if w.Tag != None {
			s += " " + tagName(w.Tag)
		}
		return s + commUnlessWorld(w.Comm)
	case KindColl:
		s := w.Call
		if w.Root != None {
			s += " root " + strconv.Itoa(w.Root)
		}
		return s + onComm(w.Comm)
	case KindFinalize:
		return "the end of the job (its function returned)"
	}
	return w.Call + onComm(w.Comm)
}

func commUnlessWorld(c string) string {
	if c == "" || c == "WORLD" {
		return ""
	}
	return " on " + c
}

// Format returns the report as a person reads it: why, one block per
// rank, then the diagnosis.
func (r *Report) Format() string {
	var b strings.Builder
	title := r.Title
	if title == "" {
		title = "hang report"
	}
	fmt.Fprintf(&b, "mpigo: %s: %s\n", title, r.Why)
	if r.Scope != "" {
		fmt.Fprintf(&b, "  (%s)\n", r.Scope)
	}
	for i := range r.Ranks {
		rk := &r.Ranks[i]
		switch {
		case rk.State == Returned && len(rk.Waits) == 0:
			fmt.Fprintf(&b, "  rank %d: returned from its function\n", rk.Rank)
		case len(rk.Waits) == 0:
			fmt.Fprintf(&b, "  rank %d: %s (not in a blocking MPI call)\n", rk.Rank, rk.State)
		default:
			for k, w := range rk.Waits {
				lead := fmt.Sprintf("  rank %d: ", rk.Rank)
				if k > 0 {
					lead = strings.Repeat(" ", len(lead)-5) + "and: "
				}
				extra := ""
				if w.Bytes > 0 || w.Kind == KindSend {
					extra = fmt.Sprintf(", %d bytes", w.Bytes)
				}
				if w.Sync {
					extra += ", synchronous"
				}
				fn := ""
				if w.Func != "" {
					fn = " (" + w.Func + ")"
				}
				fmt.Fprintf(&b, "%swaits in %s%s%s%s\n", lead, w.What(), extra, w.place(), fn)
			}
		}
		list := func(title string, qs []Queued, dir string) {
			if len(qs) == 0 {
				return
			}
			fmt.Fprintf(&b, "          %s:", title)
			for k, q := range qs {
				if k == 8 {
					fmt.Fprintf(&b, " ... (%d more)", len(qs)-k)
					break
				}
				sync := ""
				if q.Sync {
					sync = " sync"
				}
				fmt.Fprintf(&b, " [%s %s %s, %d bytes%s%s]", dir, peerName(q.Peer), tagName(q.Tag), q.Bytes, sync, commUnlessWorld(q.Comm))
			}
			b.WriteString("\n")
		}
		list("receives posted, not matched", rk.Posted, "from")
		list("messages arrived, not matched", rk.Unexpected, "from")
		list("sends waiting for their receiver", rk.Sends, "to")
	}
	lines, hints := r.Diagnosis, []string(nil)
	if lines == nil {
		lines, hints = r.diagnose()
	}
	for i, d := range lines {
		fmt.Fprintf(&b, "diagnosis: %s\n", d)
		if i < len(hints) && hints[i] != "" {
			fmt.Fprintf(&b, "  fix: %s\n", hints[i])
		}
	}
	return b.String()
}

// Hints for the diagnoses: what a person changes to fix each mistake.
const (
	hintSendFirst  = "every rank of the cycle sends first, and its send waits for the receiver: use Sendrecv, or post the receive first (Irecv, then Send, then Wait)"
	hintRecvFirst  = "every rank of the cycle receives first: have one side send first, or use Sendrecv, or Irecv then Send then Wait"
	hintTags       = "make the tags agree (a receive with AnyTag, or Probe(c, AnySource, AnyTag), shows what arrives)"
	hintSources    = "receive from the rank that sends (or from AnySource), and check the rank arithmetic of both calls"
	hintNoSend     = "the peer never sends this message: check the condition around its Send, and that source and tag agree with what it sends"
	hintNoRecv     = "the peer never posts the receive: check the condition around its Recv, and that tag and destination agree"
	hintReturned   = "the rank that returned never sent (or received) what the waiting rank needs: check the paths through its function that return early"
	hintSelf       = "a rank cannot wait for itself: use Isend or Sendrecv, or copy the data"
	hintColl       = "every rank of the communicator must call the same collectives, in the same order, with the same root"
	hintCheck      = "run with --check (MPIGO_CHECK=1) to compare each collective's name and root across the ranks"
	hintCollReturn = "the ranks that returned called fewer collectives on this communicator than the others, or called one with other arguments: " + hintCheck
)

// rooted reports whether call (a collective's name) takes a root.
func rooted(call string) bool {
	switch strings.TrimPrefix(call, "I") {
	case "Bcast", "Reduce", "Gather", "Gatherv", "Scatter", "Scatterv":
		return true
	}
	return false
}

// Ranges writes a set of ranks as "rank 3", "ranks 0-2" or "ranks 0,2,5".
func Ranges(rs []int) string {
	if len(rs) == 1 {
		return "rank " + strconv.Itoa(rs[0])
	}
	rs = append([]int(nil), rs...)
	sort.Ints(rs)
	var parts []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if j > i+1 {
			parts = append(parts, strconv.Itoa(rs[i])+"-"+strconv.Itoa(rs[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(rs[k]))
			}
		}
		i = j + 1
	}
	return "ranks " + strings.Join(parts, ",")
}

// verb is "is" or "are" for Ranges(rs).
func verb(rs []int) string {
	if len(rs) == 1 {
		return "is"
	}
	return "are"
}

// Diagnose explains the report: one line per problem it recognises, the
// likeliest cause first. Ranks it cannot explain get none. A line states
// only what the report shows: where the ranks' calls could have been
// matched otherwise (a returned rank may have called a rooted collective
// with another root), it says what is known and how to learn more.
func (r *Report) Diagnose() []string {
	if r.Diagnosis != nil {
		return r.Diagnosis
	}
	lines, _ := r.diagnose()
	return lines
}

// diagnose is Diagnose with, for each line, the fix to suggest ("": none).
func (r *Report) diagnose() (out, hints []string) {
	byRank := map[int]*Rank{}
	first := map[int]*Wait{} // each blocked rank's first wait
	for i := range r.Ranks {
		rk := &r.Ranks[i]
		byRank[rk.Rank] = rk
		if len(rk.Waits) > 0 {
			first[rk.Rank] = &rk.Waits[0]
		}
	}
	explained := map[int]bool{}
	hint := func(h string) {
		for len(hints) < len(out)-1 {
			hints = append(hints, "")
		}
		hints = append(hints, h)
	}
	returned := func(q int) bool {
		rk := byRank[q]
		return rk != nil && rk.State == Returned
	}
	ranks := make([]int, 0, len(first))
	for q := range first {
		ranks = append(ranks, q)
	}
	sort.Ints(ranks)

	// 1. Waiting for a rank that has returned.
	for _, q := range ranks {
		w := first[q]
		if (w.Kind == KindSend || w.Kind == KindRecv) && w.PeerWorld >= 0 && w.PeerWorld != q && returned(w.PeerWorld) {
			verbWait := "waits in " + w.What()
			if w.Kind == KindRecv {
				verbWait = "waits in " + w.Call + " from it"
				if w.Tag != None {
					verbWait += " (" + tagName(w.Tag) + ")"
				}
			}
			out = append(out, fmt.Sprintf("rank %d returned from its function while rank %d %s%s", w.PeerWorld, q, verbWait, w.place()))
			hint(hintReturned)
			explained[q] = true
		}
	}

	// 2. Point-to-point: self-sends, a message that arrived with the
	// wrong tag or from the wrong rank, two ranks waiting for each other.
	p2p := func(w *Wait) bool { return w != nil && (w.Kind == KindSend || w.Kind == KindRecv) }
	for phase := 0; phase < 2; phase++ {
		for _, q := range ranks {
			w := first[q]
			if explained[q] || !p2p(w) {
				continue
			}
			if w.PeerWorld == q && phase == 0 {
				if w.Kind == KindSend {
					out = append(out, fmt.Sprintf("rank %d waits in %s%s: a blocking %s to itself completes only when the rank itself receives it, which it cannot while it waits (use Isend, or Sendrecv)", q, w.What(), w.place(), w.Call))
					hint(hintSelf)
				} else {
					out = append(out, fmt.Sprintf("rank %d waits in %s%s: a receive from itself needs a send it has not started (use Irecv first, or Sendrecv)", q, w.What(), w.place()))
					hint(hintSelf)
				}
				explained[q] = true
				continue
			}
			if w.PeerWorld < 0 {
				continue
			}
			p := w.PeerWorld
			v := first[p]
			if w.Kind == KindRecv {
				rk := byRank[q]
				if m, ok := findMsg(rk.Unexpected, func(m Queued) bool { return m.PeerWorld == p && m.Comm == w.Comm && w.Tag != AnyTag && m.Tag != w.Tag }); ok {
					if p2p(v) && v.Kind == KindSend && v.PeerWorld == q && v.Tag == m.Tag {
						out = append(out, fmt.Sprintf("rank %d waits in %s%s but rank %d waits in %s%s: the tags differ", q, w.What(), w.place(), p, v.What(), v.place()))
						hint(hintTags)
						explained[p] = true
					} else {
						out = append(out, fmt.Sprintf("rank %d waits in %s%s, but the message that arrived from rank %d has %s (%d bytes): the tags differ", q, w.What(), w.place(), p, tagName(m.Tag), m.Bytes))
						hint(hintTags)
					}
					explained[q] = true
					continue
				}
				if m, ok := findMsg(rk.Unexpected, func(m Queued) bool {
					return m.PeerWorld != p && m.Comm == w.Comm && (w.Tag == AnyTag || m.Tag == w.Tag)
				}); ok {
					out = append(out, fmt.Sprintf("rank %d waits in %s%s, but the message that arrived with that tag is from rank %d: the sources differ", q, w.What(), w.place(), m.Peer))
					hint(hintSources)
					explained[q] = true
					if s := first[m.PeerWorld]; p2p(s) && s.Kind == KindSend && s.PeerWorld == q {
						explained[m.PeerWorld] = true
					}
					continue
				}
			}
			if phase == 0 {
				continue
			}
			if v != nil && !explained[p] && v.PeerWorld == q && p2p(v) {
				switch {
				case w.Kind == v.Kind:
					out = append(out, fmt.Sprintf("rank %d waits in %s%s while rank %d waits in %s%s: each waits for the other", q, w.What(), w.place(), p, v.What(), v.place()))
					hint(pairHint(w, v))
				case w.Kind == KindRecv && w.Tag != AnyTag && v.Tag != w.Tag:
					out = append(out, fmt.Sprintf("rank %d waits in %s%s but rank %d waits in %s%s: the tags differ", q, w.What(), w.place(), p, v.What(), v.place()))
					hint(hintTags)
				case w.Kind == KindSend && v.Tag != AnyTag && v.Tag != w.Tag:
					out = append(out, fmt.Sprintf("rank %d waits in %s%s but rank %d waits in %s%s: the tags differ", p, v.What(), v.place(), q, w.What(), w.place()))
					hint(hintTags)
				default:
					out = append(out, fmt.Sprintf("rank %d waits in %s%s while rank %d waits in %s%s", q, w.What(), w.place(), p, v.What(), v.place()))
					hint("")
				}
				explained[q], explained[p] = true, true
				continue
			}
			// A sender and a receiver that name each other's tag but not each
			// other.
			var rq, sq int = -1, -1
			if w.Kind == KindRecv {
				for _, s := range ranks {
					if x := first[s]; s != p && !explained[s] && p2p(x) && x.Kind == KindSend && x.PeerWorld == q && (w.Tag == AnyTag || x.Tag == w.Tag) && x.Comm == w.Comm {
						rq, sq = q, s
						break
					}
				}
			} else if v != nil && p2p(v) && v.Kind == KindRecv && v.PeerWorld >= 0 && v.PeerWorld != q && (v.Tag == AnyTag || v.Tag == w.Tag) && v.Comm == w.Comm && !explained[p] {
				rq, sq = p, q
			}
			if rq >= 0 {
				rw, sw := first[rq], first[sq]
				out = append(out, fmt.Sprintf("rank %d waits in %s%s while rank %d waits in %s%s: the sources differ", rq, rw.What(), rw.place(), sq, sw.What(), sw.place()))
				hint(hintSources)
				explained[rq], explained[sq] = true, true
			}
		}
	}

	// Longer cycles of point-to-point waits.
	for _, q := range ranks {
		if explained[q] {
			continue
		}
		path := []int{q}
		seen := map[int]int{q: 0}
		cur := q
		for {
			w := first[cur]
			if !p2p(w) || w.PeerWorld < 0 || explained[cur] {
				break
			}
			nxt := w.PeerWorld
			if i, ok := seen[nxt]; ok {
				cyc := path[i:]
				if len(cyc) > 2 {
					var parts []string
					for _, c := range cyc {
						parts = append(parts, fmt.Sprintf("rank %d waits in %s%s", c, first[c].What(), first[c].place()))
						explained[c] = true
					}
					out = append(out, strings.Join(parts, ", ")+": the ranks wait for each other in a cycle")
					hint(cycleHint(first, cyc))
				}
				break
			}
			seen[nxt] = len(path)
			path = append(path, nxt)
			cur = nxt
		}
	}

	// What is left: a wait whose peer does something else.
	for _, q := range ranks {
		w := first[q]
		if explained[q] || !p2p(w) || w.PeerWorld < 0 {
			continue
		}
		p := w.PeerWorld
		v := first[p]
		if v == nil {
			continue
		}
		if w.Kind == KindRecv {
			out = append(out, fmt.Sprintf("rank %d waits in %s%s, but rank %d is in %s%s and has sent nothing that matches", q, w.What(), w.place(), p, v.What(), v.place()))
			hint(hintNoSend)
		} else {
			out = append(out, fmt.Sprintf("rank %d waits in %s%s, but rank %d is in %s%s and has posted no matching receive", q, w.What(), w.place(), p, v.What(), v.place()))
			hint(hintNoRecv)
		}
		explained[q] = true
	}

	// 3. Collectives: per communicator, who is in which collective.
	colls := map[string]map[string][]int{} // comm -> call description -> ranks
	where := map[string]*Wait{}
	for _, q := range ranks {
		w := first[q]
		if w.Kind != KindColl {
			continue
		}
		d := w.Call
		if w.Root != None {
			d += " root " + strconv.Itoa(w.Root)
		}
		if colls[w.Comm] == nil {
			colls[w.Comm] = map[string][]int{}
		}
		colls[w.Comm][d] = append(colls[w.Comm][d], q)
		if where[w.Comm+"\x00"+d] == nil {
			where[w.Comm+"\x00"+d] = w
		}
	}
	comms := make([]string, 0, len(colls))
	for c := range colls {
		comms = append(comms, c)
	}
	sort.Strings(comms)
	for _, c := range comms {
		groups := colls[c]
		var ds []string
		for d := range groups {
			ds = append(ds, d)
		}
		// the biggest group first
		sort.Slice(ds, func(i, j int) bool {
			if len(groups[ds[i]]) != len(groups[ds[j]]) {
				return len(groups[ds[i]]) > len(groups[ds[j]])
			}
			return groups[ds[i]][0] < groups[ds[j]][0]
		})
		if len(ds) > 1 {
			calls := map[string]bool{}
			for _, d := range ds {
				calls[where[c+"\x00"+d].Call] = true
			}
			what := "mismatched collectives"
			if len(calls) == 1 {
				what = "different roots"
			}
			var parts []string
			for i, d := range ds {
				w := where[c+"\x00"+d]
				pl := ""
				if i > 0 {
					pl = w.place()
				}
				parts = append(parts, fmt.Sprintf("%s %s in %s on %s%s", Ranges(groups[d]), verb(groups[d]), d, c, pl))
				for _, q := range groups[d] {
					explained[q] = true
				}
			}
			out = append(out, strings.Join(parts, ", ")+": "+what)
			hint(collHint(what, where[c+"\x00"+ds[0]].Root != None))
			continue
		}
		d := ds[0]
		in := groups[d]
		w := where[c+"\x00"+d]
		// Members of the communicator not in the collective: known only
		// for WORLD (every rank of the report).
		if c != "WORLD" {
			continue
		}
		inSet := map[int]bool{}
		for _, q := range in {
			inSet[q] = true
		}
		// A rooted collective completes at a rank as soon as its own part
		// is done: a rank that called it with another root may have gone
		// on, and even returned. Without check mode's roots, the report
		// cannot tell that from a rank that never called it.
		unsure := rooted(w.Call)
		var gone []int
		for _, rk := range r.Ranks {
			q := rk.Rank
			if inSet[q] {
				continue
			}
			for _, x := range in {
				explained[x] = true
			}
			if rk.State == Returned {
				gone = append(gone, q)
				continue
			}
			v := first[q]
			if v == nil {
				continue
			}
			rq := "rank " + strconv.Itoa(q)
			if unsure {
				out = append(out, fmt.Sprintf("%s %s in %s on %s%s, %s is in %s%s: %s is not in this %s (it never called it, or called it with another root and went on)", Ranges(in), verb(in), d, c, w.place(), rq, v.What(), v.place(), rq, w.Call))
				hint(hintColl + "; " + hintCheck)
			} else {
				out = append(out, fmt.Sprintf("%s %s in %s on %s%s, %s is in %s%s: %s never called %s (missing on one rank?)", Ranges(in), verb(in), d, c, w.place(), rq, v.What(), v.place(), rq, w.Call))
				hint(hintColl)
			}
			explained[q] = true
		}
		if len(gone) > 0 {
			head := fmt.Sprintf("%s returned from %s function while %s %s in %s on %s%s", Ranges(gone), theirIts(gone), Ranges(in), verb(in), d, c, w.place())
			if unsure {
				head = fmt.Sprintf("%s returned from %s function while %s %s still in %s on %s%s", Ranges(gone), theirIts(gone), Ranges(in), verb(in), d, c, w.place())
				out = append(out, fmt.Sprintf("%s: %s either never called this %s or called it with another root (or count) and went on", head, Ranges(gone), w.Call))
				hint(hintCollReturn)
			} else {
				out = append(out, fmt.Sprintf("%s: %s never called %s", head, Ranges(gone), w.Call))
				hint(hintColl)
			}
		}
	}

	// 4. Ranks that returned while others wait for them in general.
	var ret, blocked []int
	for _, rk := range r.Ranks {
		if rk.State == Returned {
			ret = append(ret, rk.Rank)
		} else if len(rk.Waits) > 0 && !explained[rk.Rank] {
			blocked = append(blocked, rk.Rank)
		}
	}
	if len(ret) > 0 && len(blocked) > 0 && len(out) == 0 {
		out = append(out, fmt.Sprintf("%s returned from %s function while %s %s still blocked", Ranges(ret), theirIts(ret), Ranges(blocked), verb(blocked)))
		hint(hintReturned)
	}
	if len(out) == 0 && len(ranks) > 0 {
		out = append(out, "every rank waits and no message can complete any wait; see each rank's call above")
		hint("")
	}
	for len(hints) < len(out) {
		hints = append(hints, "")
	}
	return out, hints
}

// pairHint is the fix for two ranks that wait for each other.
func pairHint(w, v *Wait) string {
	switch {
	case w.Kind == KindSend && v.Kind == KindSend:
		return hintSendFirst
	case w.Kind == KindRecv && v.Kind == KindRecv:
		return hintRecvFirst
	}
	return ""
}

// cycleHint is the fix for the ranks cyc that wait for each other in a
// cycle.
func cycleHint(first map[int]*Wait, cyc []int) string {
	sends := 0
	for _, c := range cyc {
		if first[c].Kind == KindSend {
			sends++
		}
	}
	switch sends {
	case len(cyc):
		return hintSendFirst
	case 0:
		return hintRecvFirst
	}
	return ""
}

// collHint is the fix for ranks in different collectives (what is
// "mismatched collectives" or "different roots"); check says whether the
// roots were known (check mode on).
func collHint(what string, check bool) string {
	if what == "different roots" || check {
		return hintColl
	}
	return hintColl + "; " + hintCheck
}

func theirIts(rs []int) string {
	if len(rs) == 1 {
		return "its"
	}
	return "their"
}

func findMsg(qs []Queued, ok func(Queued) bool) (Queued, bool) {
	for _, q := range qs {
		if ok(q) {
			return q, true
		}
	}
	return Queued{}, false
}

package diag

import (
	"strings"
	"testing"
)

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{3}, "rank 3"},
		{[]int{0, 1, 2}, "ranks 0-2"},
		{[]int{0, 2, 5}, "ranks 0,2,5"},
		{[]int{5, 0, 1, 2, 7, 8}, "ranks 0-2,5,7,8"},
	} {
		if got := Ranges(tc.in); got != tc.want {
			t.Errorf("Ranges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func send(peer, tag int, file string, line int) Wait {
	return Wait{Call: "Ssend", Kind: KindSend, Comm: "WORLD", Peer: peer, PeerWorld: peer, Tag: tag, Root: None, File: file, Line: line, Sync: true}
}

func recv(peer, tag int) Wait {
	return Wait{Call: "Recv", Kind: KindRecv, Comm: "WORLD", Peer: peer, PeerWorld: peer, Tag: tag, Root: None, File: "a.go", Line: 1}
}

func coll(call string, root int) Wait {
	return Wait{Call: call, Kind: KindColl, Comm: "WORLD", Peer: None, PeerWorld: -1, Tag: None, Root: root, File: "m.go", Line: 88}
}

// TestDiagnose checks the diagnosis of hand-made states, including cases
// the runtime tests cannot make reliably.
func TestDiagnose(t *testing.T) {
	blocked := func(r int, ws ...Wait) Rank { return Rank{Rank: r, State: Blocked, Waits: ws} }
	for _, tc := range []struct {
		name  string
		ranks []Rank
		want  string
	}{
		{"pair", []Rank{blocked(0, send(1, 5, "solver.go", 42)), blocked(1, send(0, 5, "solver.go", 57))},
			"rank 0 waits in Ssend to 1 tag 5 at solver.go:42 while rank 1 waits in Ssend to 0 tag 5 at solver.go:57: each waits for the other"},
		{"mismatched", []Rank{blocked(0, coll("Allreduce", None)), blocked(1, coll("Allreduce", None)), blocked(2, coll("Allreduce", None)), blocked(3, coll("Bcast", None))},
			"ranks 0-2 are in Allreduce on WORLD, rank 3 is in Bcast on WORLD at m.go:88: mismatched collectives"},
		{"roots", []Rank{blocked(0, coll("Bcast", 0)), blocked(1, coll("Bcast", 0)), blocked(2, coll("Bcast", 1))},
			"ranks 0,1 are in Bcast root 0 on WORLD, rank 2 is in Bcast root 1 on WORLD at m.go:88: different roots"},
		{"returned", []Rank{blocked(0, recv(1, 0)), {Rank: 1, State: Returned}},
			"rank 1 returned from its function while rank 0 waits in Recv from it (tag 0) at a.go:1"},
		{"returned-coll", []Rank{blocked(0, coll("Barrier", None)), blocked(1, coll("Barrier", None)), {Rank: 2, State: Returned}},
			"rank 2 returned from its function while ranks 0,1 are in Barrier on WORLD at m.go:88: rank 2 never called Barrier"},
		{"anysource-tag", []Rank{{Rank: 0, State: Blocked, Waits: []Wait{recv(AnySource, 3)}, Unexpected: []Queued{{Comm: "WORLD", Peer: 1, PeerWorld: 1, Tag: 4, Bytes: 8}}}, {Rank: 1, State: Returned}},
			"1 returned from its function while rank 0 is still blocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Why: "test", Ranks: tc.ranks}
			d := r.Diagnose()
			for _, l := range d {
				if strings.Contains(l, tc.want) {
					if !strings.Contains(r.Format(), "diagnosis: "+l) {
						t.Errorf("Format lacks the diagnosis")
					}
					return
				}
			}
			t.Errorf("diagnosis %q lacks %q", d, tc.want)
		})
	}
}

// TestDiagnoseRootedReturned is issue 41's wrong blame: one rank calls
// Bcast with root 1, the others with root 0; ranks 0 and 1 complete
// their Bcast and return, ranks 2 and 3 wait. The report cannot know that
// ranks 0 and 1 called Bcast at all, so it must not say they never did:
// it says what it sees and how to learn more (--check).
func TestDiagnoseRootedReturned(t *testing.T) {
	ranks := []Rank{{Rank: 0, State: Returned}, {Rank: 1, State: Returned},
		{Rank: 2, State: Blocked, Waits: []Wait{coll("Bcast", None)}}, {Rank: 3, State: Blocked, Waits: []Wait{coll("Bcast", None)}}}
	r := &Report{Why: "test", Ranks: ranks}
	text := r.Format()
	if strings.Contains(text, "never called Bcast") {
		t.Errorf("the report says a rank never called Bcast, which it cannot know:\n%s", text)
	}
	for _, want := range []string{
		"diagnosis: ranks 0,1 returned from their function while ranks 2,3 are still in Bcast on WORLD at m.go:88: ranks 0,1 either never called this Bcast or called it with another root",
		"--check (MPIGO_CHECK=1)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	// A rank in another call is "not in this Bcast", not "never called it".
	ranks[1] = Rank{Rank: 1, State: Blocked, Waits: []Wait{recv(0, 1)}}
	text = (&Report{Why: "test", Ranks: ranks}).Format()
	if strings.Contains(text, "never called Bcast (") || !strings.Contains(text, "rank 1 is not in this Bcast (it never called it, or called it with another root and went on)") {
		t.Errorf("rank 1, in Recv, is blamed wrongly:\n%s", text)
	}
}

// TestDiagnoseHints checks that the diagnoses of issue 41 say how to fix
// the mistake, on a line of their own after the diagnosis.
func TestDiagnoseHints(t *testing.T) {
	blocked := func(r int, ws ...Wait) Rank { return Rank{Rank: r, State: Blocked, Waits: ws} }
	for _, tc := range []struct {
		name  string
		ranks []Rank
		want  string
	}{
		{"ssend", []Rank{blocked(0, send(1, 5, "a.go", 1)), blocked(1, send(0, 5, "a.go", 2))}, "fix: every rank of the cycle sends first, and its send waits for the receiver: use Sendrecv, or post the receive first"},
		{"recv", []Rank{blocked(0, recv(1, 5)), blocked(1, recv(0, 5))}, "fix: every rank of the cycle receives first"},
		{"tags", []Rank{blocked(0, send(1, 1, "a.go", 1)), blocked(1, recv(0, 2))}, "fix: make the tags agree"},
		{"returned", []Rank{blocked(0, recv(1, 0)), {Rank: 1, State: Returned}}, "fix: the rank that returned never sent"},
		{"mismatched", []Rank{blocked(0, coll("Allreduce", None)), blocked(1, coll("Bcast", None))}, "fix: every rank of the communicator must call the same collectives, in the same order, with the same root; run with --check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := (&Report{Why: "test", Ranks: tc.ranks}).Format()
			lines := strings.Split(text, "\n")
			for i, l := range lines {
				if strings.Contains(l, tc.want) {
					if i == 0 || !strings.HasPrefix(lines[i-1], "diagnosis: ") {
						t.Errorf("the fix does not follow its diagnosis:\n%s", text)
					}
					return
				}
			}
			t.Errorf("the report lacks %q:\n%s", tc.want, text)
		})
	}
}

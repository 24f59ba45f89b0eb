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

package trace

import (
	"bytes"
	"strings"
	"testing"
)

// TestMerge pairs the ends of messages across two parts whose clocks
// differ, and puts overlapping calls of one rank in lanes that nest.
func TestMerge(t *testing.T) {
	a := &Part{Offset: 1000, Ranks: []int{0},
		Spans: []Span{{Rank: 0, Name: "Send", Peer: 1, Tag: 7, Start: 0, End: 100},
			{Rank: 0, Name: "Recv", Peer: 1, Tag: None, Start: 50, End: 200}}, // another goroutine
		Sends: []Msg{{From: 0, To: 1, Tag: 7, Bytes: 8, T: 10}, {From: 0, To: 1, Tag: 7, Bytes: 16, T: 20}, {From: 0, To: 1, Tag: 9, Bytes: 4, T: 30}}}
	b := &Part{Offset: 500, Ranks: []int{1},
		Spans:    []Span{{Rank: 1, Name: "Recv", Peer: 0, Tag: 7, Start: 400, End: 700}},
		Arrivals: []Msg{{From: 0, To: 1, Tag: 7, Bytes: 8, T: 600}, {From: 0, To: 1, Tag: 7, Bytes: 16, T: 650}}} // tag 9 never arrived
	f := Merge([]*Part{a, b})
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewView(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Arrows) != 2 || v.Arrows[0].Bytes != 8 || v.Arrows[1].Bytes != 16 {
		t.Fatalf("arrows %+v", v.Arrows)
	}
	// Common clock: send at 1010 ns, arrival at 1100 ns; times count
	// from the first event (rank 1's Recv at 900 ns).
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if !near(v.Arrows[0].Start, 0.11) || !near(v.Arrows[0].End, 0.2) {
		t.Errorf("first arrow %v -> %v us, want 0.11 -> 0.2", v.Arrows[0].Start, v.Arrows[0].End)
	}
	lanes := map[int]bool{}
	for _, s := range v.Spans {
		if s.Rank == 0 {
			lanes[s.Lane] = true
		}
	}
	if len(lanes) != 2 {
		t.Errorf("rank 0's overlapping calls in lanes %v, want 2 lanes", lanes)
	}
	var sum strings.Builder
	v.Summary(&sum)
	if !strings.Contains(sum.String(), "2 ranks") || !strings.Contains(sum.String(), "late senders") {
		t.Errorf("summary:\n%s", sum.String())
	}
	var page strings.Builder
	if err := v.HTML(&page, "t"); err != nil || !strings.Contains(page.String(), "<canvas") {
		t.Errorf("HTML: %v", err)
	}
}

// TestNewViewRejectsHalfArrows: a file with an arrow that has one end is
// an error.
func TestNewViewRejectsHalfArrows(t *testing.T) {
	f := &File{TraceEvents: []Event{{Name: "message", Ph: "s", ID: 1, Tid: 0}}}
	if _, err := NewView(f); err == nil {
		t.Fatal("no error for an arrow without its end")
	}
}

// TestViewWork checks that the page opens on the program's own calls:
// start-up before the first call, and mpigo's own Barrier at the end of
// Main, are outside the window Work gives.
func TestViewWork(t *testing.T) {
	v := &View{End: 1000, Spans: []ViewSpan{
		{Name: "Send", Start: 400, Dur: 10},
		{Name: "Recv", Start: 420, Dur: 30},
		{Name: "Barrier (mpigo: end of Main)", Start: 900, Dur: 100, Internal: true},
	}}
	if s, e := v.Work(); s != 400 || e != 450 {
		t.Errorf("Work() = %v, %v; want 400, 450", s, e)
	}
	only := &View{End: 50, Spans: []ViewSpan{{Name: "Barrier", Start: 10, Dur: 40, Internal: true}}}
	if s, e := only.Work(); s != 0 || e != 50 {
		t.Errorf("Work() of a job with only mpigo's calls = %v, %v; want the whole job", s, e)
	}
	var b strings.Builder
	if err := v.HTML(&b, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"WorkStart":400`) || !strings.Contains(b.String(), "fit(D.WorkStart, D.WorkE)") {
		t.Errorf("the page does not open on the program's calls")
	}
}

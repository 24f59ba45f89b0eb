// Package trace holds mpigo's message timeline: the MPI calls of every
// rank as spans and every message as an arrow from its send to its
// arrival. Ranks record Parts (one per process), Merge aligns their clocks
// and pairs each message's two ends, and the result is written in the
// Chrome/Perfetto trace-event JSON format (docs/trace.md), which Read
// parses back for `mpigo trace` (Summary, HTML).
package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
)

// Span is one MPI call of one rank.
type Span struct {
	Rank  int    `json:"r"`
	Name  string `json:"n"`
	Comm  string `json:"c,omitempty"`
	Peer  int    `json:"p"` // rank in Comm, -1 any source, None: none
	Tag   int    `json:"t"` // -1 any tag, None: none
	Start int64  `json:"s"` // ns on the part's clock
	End   int64  `json:"e"`
	Err   string `json:"x,omitempty"`
	// Internal marks a call the library made itself, not the program
	// (the Barrier at the end of mpi.Main): category "internal" in the
	// timeline, and left out of the summary's calls.
	Internal bool `json:"i,omitempty"`
}

// None is Span.Peer or Tag when the call names none.
const None = -32766

// Msg is one end of a message: its send (in the sender's part) or its
// arrival (in the receiver's part).
type Msg struct {
	From  int    `json:"f"` // world ranks
	To    int    `json:"d"`
	Ctx   uint32 `json:"c"`
	Coll  bool   `json:"k,omitempty"` // collective traffic
	Tag   int    `json:"t"`
	Bytes int    `json:"b"`
	T     int64  `json:"s"`
}

// Part is what one process recorded.
type Part struct {
	// Offset is added to every time of the part to put it on the common
	// clock (the launcher's, or rank 0's): clock alignment.
	Offset   int64  `json:"offset"`
	Ranks    []int  `json:"ranks"`
	Spans    []Span `json:"spans"`
	Sends    []Msg  `json:"sends"`
	Arrivals []Msg  `json:"arrivals"`
}

// Recorder collects one rank's events; safe for concurrent use. It keeps
// them in chunks of records without pointers, so that a long trace costs
// the garbage collector nothing to scan and growing it copies nothing.
type Recorder struct {
	mu       sync.Mutex
	strs     map[string]uint32
	strList  []string
	spans    [][]spanRec
	internal map[int]bool // indexes (in record order) of internal spans
	sends    [][]Msg
	arrivals [][]Msg
}

type spanRec struct {
	name, comm, err uint32 // indexes into strList (err 0: none)
	rank, peer, tag int32
	start, end      int64
}

const chunk = 4096

func push[T any](cs [][]T, v T) [][]T {
	if n := len(cs); n == 0 || len(cs[n-1]) == cap(cs[n-1]) {
		cs = append(cs, make([]T, 0, chunk))
	}
	last := &cs[len(cs)-1]
	*last = append(*last, v)
	return cs
}

func (r *Recorder) intern(s string) uint32 {
	if i, ok := r.strs[s]; ok {
		return i
	}
	if r.strs == nil {
		r.strs = map[string]uint32{"": 0}
		r.strList = []string{""}
		if s == "" {
			return 0
		}
	}
	i := uint32(len(r.strList))
	r.strs[s] = i
	r.strList = append(r.strList, s)
	return i
}

// Span records a call.
func (r *Recorder) Span(s Span) {
	r.mu.Lock()
	if s.Internal {
		if r.internal == nil {
			r.internal = map[int]bool{}
		}
		n := 0
		for _, c := range r.spans {
			n += len(c)
		}
		r.internal[n] = true
	}
	r.spans = push(r.spans, spanRec{name: r.intern(s.Name), comm: r.intern(s.Comm), err: r.intern(s.Err),
		rank: int32(s.Rank), peer: int32(s.Peer), tag: int32(s.Tag), start: s.Start, end: s.End})
	r.mu.Unlock()
}

// Send records a message leaving.
func (r *Recorder) Send(m Msg) {
	r.mu.Lock()
	r.sends = push(r.sends, m)
	r.mu.Unlock()
}

// Arrive records a message arriving.
func (r *Recorder) Arrive(m Msg) {
	r.mu.Lock()
	r.arrivals = push(r.arrivals, m)
	r.mu.Unlock()
}

// AddTo appends the recorder's events to p.
func (r *Recorder) AddTo(p *Part) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := 0
	for _, c := range r.spans {
		for _, x := range c {
			p.Spans = append(p.Spans, Span{Rank: int(x.rank), Name: r.strList[x.name], Comm: r.strList[x.comm], Err: r.strList[x.err],
				Peer: int(x.peer), Tag: int(x.tag), Start: x.start, End: x.end, Internal: r.internal[i]})
			i++
		}
	}
	for _, c := range r.sends {
		p.Sends = append(p.Sends, c...)
	}
	for _, c := range r.arrivals {
		p.Arrivals = append(p.Arrivals, c...)
	}
}

// WritePart writes p as JSON to file.
func WritePart(file string, p *Part) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// maxPart bounds the size of a part file the launcher reads.
const maxPart = 1 << 30

// ReadPart reads a part written by WritePart.
func ReadPart(file string) (*Part, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var p Part
	if err := json.NewDecoder(io.LimitReader(f, maxPart)).Decode(&p); err != nil {
		return nil, fmt.Errorf("trace part %s: %w", file, err)
	}
	return &p, nil
}

// Event is a Chrome trace event.
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"` // microseconds
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   int            `json:"id,omitempty"`
	Bp   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// File is a Chrome trace file.
type File struct {
	TraceEvents     []Event `json:"traceEvents"`
	DisplayTimeUnit string  `json:"displayTimeUnit,omitempty"`
}

// laneTid is the thread id of lane k of rank r: spans of one rank that
// overlap without nesting (calls from several goroutines) go to lanes of
// their own so that every track nests.
func laneTid(r, k int) int { return r + 100000*k }

// Merge aligns the parts' clocks, pairs every send with its arrival (the
// n-th message from a rank to another on one context and tag arrives n-th:
// MPI's non-overtaking rule) and returns the Chrome trace. Messages with
// one end only (the job stopped) have no arrow.
func Merge(parts []*Part) *File {
	var spans []Span
	var sends, arrs []Msg
	ranks := map[int]bool{}
	for _, p := range parts {
		for _, s := range p.Spans {
			s.Start += p.Offset
			s.End += p.Offset
			spans = append(spans, s)
		}
		for _, m := range p.Sends {
			m.T += p.Offset
			sends = append(sends, m)
		}
		for _, m := range p.Arrivals {
			m.T += p.Offset
			arrs = append(arrs, m)
		}
		for _, r := range p.Ranks {
			ranks[r] = true
		}
	}
	t0 := int64(1<<63 - 1)
	for _, s := range spans {
		t0 = min(t0, s.Start)
	}
	for _, m := range sends {
		t0 = min(t0, m.T)
	}
	for _, m := range arrs {
		t0 = min(t0, m.T)
	}
	us := func(t int64) float64 { return float64(t-t0) / 1e3 }
	f := &File{DisplayTimeUnit: "ns"}
	rs := make([]int, 0, len(ranks))
	for r := range ranks {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	f.TraceEvents = append(f.TraceEvents, Event{Name: "process_name", Ph: "M", Pid: 0, Args: map[string]any{"name": "mpigo job"}})
	// Spans, by rank, into lanes that nest.
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].Rank != spans[j].Rank {
			return spans[i].Rank < spans[j].Rank
		}
		if spans[i].Start != spans[j].Start {
			return spans[i].Start < spans[j].Start
		}
		return spans[i].End > spans[j].End
	})
	type lane struct{ open []int64 } // ends of the spans open on the lane
	lanesOf := map[int][]*lane{}
	named := map[int]bool{}
	for _, s := range spans {
		ls := lanesOf[s.Rank]
		k := -1
		for i, l := range ls {
			for len(l.open) > 0 && l.open[len(l.open)-1] <= s.Start {
				l.open = l.open[:len(l.open)-1]
			}
			if len(l.open) == 0 || l.open[len(l.open)-1] >= s.End {
				k = i
				break
			}
		}
		if k < 0 {
			ls = append(ls, &lane{})
			lanesOf[s.Rank] = ls
			k = len(ls) - 1
		}
		ls[k].open = append(ls[k].open, s.End)
		tid := laneTid(s.Rank, k)
		if !named[tid] {
			named[tid] = true
			name := fmt.Sprintf("rank %d", s.Rank)
			if k > 0 {
				name = fmt.Sprintf("rank %d (%d)", s.Rank, k+1)
			}
			f.TraceEvents = append(f.TraceEvents, Event{Name: "thread_name", Ph: "M", Pid: 0, Tid: tid, Args: map[string]any{"name": name}},
				Event{Name: "thread_sort_index", Ph: "M", Pid: 0, Tid: tid, Args: map[string]any{"sort_index": tid}})
		}
		args := map[string]any{}
		if s.Comm != "" {
			args["comm"] = s.Comm
		}
		if s.Peer != None {
			args["peer"] = s.Peer
		}
		if s.Tag != None {
			args["tag"] = s.Tag
		}
		if s.Err != "" {
			args["error"] = s.Err
		}
		cat := "mpi"
		if s.Internal {
			cat = "internal"
			args["note"] = "called by mpigo, not by the program"
		}
		f.TraceEvents = append(f.TraceEvents, Event{Name: s.Name, Cat: cat, Ph: "X", Ts: us(s.Start), Dur: us(s.End) - us(s.Start), Pid: 0, Tid: tid, Args: args})
	}
	for _, r := range rs {
		if !named[laneTid(r, 0)] {
			f.TraceEvents = append(f.TraceEvents, Event{Name: "thread_name", Ph: "M", Pid: 0, Tid: laneTid(r, 0), Args: map[string]any{"name": fmt.Sprintf("rank %d", r)}})
		}
	}
	// Arrows.
	type key struct {
		from, to int
		ctx      uint32
		tag      int
	}
	sort.SliceStable(sends, func(i, j int) bool { return sends[i].T < sends[j].T })
	sort.SliceStable(arrs, func(i, j int) bool { return arrs[i].T < arrs[j].T })
	queue := map[key][]Msg{}
	for _, m := range sends {
		k := key{m.From, m.To, m.Ctx, m.Tag}
		queue[k] = append(queue[k], m)
	}
	id := 0
	for _, a := range arrs {
		k := key{a.From, a.To, a.Ctx, a.Tag}
		q := queue[k]
		if len(q) == 0 {
			continue
		}
		s := q[0]
		queue[k] = q[1:]
		id++
		end := a.T
		if end < s.T { // clocks of two processes disagree by more than the estimate
			end = s.T
		}
		cat := "msg"
		if a.Coll {
			cat = "coll"
		}
		args := map[string]any{"bytes": s.Bytes, "tag": s.Tag, "from": s.From, "to": s.To}
		f.TraceEvents = append(f.TraceEvents,
			Event{Name: "message", Cat: cat, Ph: "s", Ts: us(s.T), Pid: 0, Tid: laneTid(s.From, 0), ID: id, Args: args},
			Event{Name: "message", Cat: cat, Ph: "f", Bp: "e", Ts: us(end), Pid: 0, Tid: laneTid(a.To, 0), ID: id, Args: args})
	}
	return f
}

// Write writes f as JSON.
func (f *File) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	return enc.Encode(f)
}

// WriteFile writes f to file.
func (f *File) WriteFile(file string) error {
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := f.Write(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Read parses a Chrome trace file.
func Read(r io.Reader) (*File, error) {
	var f File
	if err := json.NewDecoder(io.LimitReader(r, maxPart)).Decode(&f); err != nil {
		return nil, fmt.Errorf("not a Chrome trace file: %w", err)
	}
	return &f, nil
}

package trace

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
)

// View is a trace file read back: spans per rank and arrows.
type View struct {
	Ranks  []int        // world ranks, sorted
	Spans  []ViewSpan   // sorted by start
	Arrows []ViewArrow  // sorted by start
	End    float64      // last time, us
	lanes  map[int]bool // tids seen
}

// ViewSpan is a call as the file has it (times in microseconds).
type ViewSpan struct {
	Rank, Lane int
	Name       string
	Comm       string
	Peer, Tag  int
	Start, Dur float64
	Internal   bool // called by mpigo itself (category "internal")
}

// ViewArrow is a message.
type ViewArrow struct {
	From, To   int
	Tag, Bytes int
	Coll       bool
	Start, End float64
}

func num(v any) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return None
}

// NewView reads f's spans and arrows; it checks that every arrow has both
// ends.
func NewView(f *File) (*View, error) {
	v := &View{lanes: map[int]bool{}}
	ranks := map[int]bool{}
	starts := map[int]Event{}
	ends := map[int]Event{}
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "X":
			r, lane := e.Tid%100000, e.Tid/100000
			ranks[r] = true
			s := ViewSpan{Rank: r, Lane: lane, Name: e.Name, Peer: None, Tag: None, Start: e.Ts, Dur: e.Dur, Internal: e.Cat == "internal"}
			if e.Args != nil {
				s.Comm, _ = e.Args["comm"].(string)
				if p, ok := e.Args["peer"]; ok {
					s.Peer = num(p)
				}
				if t, ok := e.Args["tag"]; ok {
					s.Tag = num(t)
				}
			}
			v.Spans = append(v.Spans, s)
			v.End = max(v.End, e.Ts+e.Dur)
		case "M":
			if e.Name == "thread_name" {
				ranks[e.Tid%100000] = true
			}
		case "s":
			if _, dup := starts[e.ID]; dup {
				return nil, fmt.Errorf("message arrow %d starts twice", e.ID)
			}
			starts[e.ID] = e
		case "f":
			if _, dup := ends[e.ID]; dup {
				return nil, fmt.Errorf("message arrow %d ends twice", e.ID)
			}
			ends[e.ID] = e
		}
	}
	for id, s := range starts {
		e, ok := ends[id]
		if !ok {
			return nil, fmt.Errorf("message arrow %d has no end", id)
		}
		a := ViewArrow{From: s.Tid % 100000, To: e.Tid % 100000, Start: s.Ts, End: e.Ts, Coll: s.Cat == "coll"}
		if s.Args != nil {
			a.Tag, a.Bytes = num(s.Args["tag"]), num(s.Args["bytes"])
		}
		v.Arrows = append(v.Arrows, a)
		v.End = max(v.End, e.Ts)
	}
	for id := range ends {
		if _, ok := starts[id]; !ok {
			return nil, fmt.Errorf("message arrow %d has no start", id)
		}
	}
	for r := range ranks {
		v.Ranks = append(v.Ranks, r)
	}
	sort.Ints(v.Ranks)
	sort.SliceStable(v.Spans, func(i, j int) bool { return v.Spans[i].Start < v.Spans[j].Start })
	sort.SliceStable(v.Arrows, func(i, j int) bool { return v.Arrows[i].Start < v.Arrows[j].Start })
	return v, nil
}

// spanAt returns the outermost lane-0 span of rank r that contains t.
func (v *View) spanAt(r int, t float64) *ViewSpan {
	var best *ViewSpan
	for i := range v.Spans {
		s := &v.Spans[i]
		if s.Start > t {
			break
		}
		if s.Rank == r && s.Start <= t && t <= s.Start+s.Dur {
			if best == nil || s.Dur > best.Dur {
				best = s
			}
		}
	}
	return best
}

func isRecv(name string) bool {
	n := strings.TrimPrefix(name, "Comm.")
	return strings.Contains(n, "Recv") || strings.HasPrefix(n, "Wait") || strings.Contains(n, "Probe") || strings.HasSuffix(n, ".Wait") || n == "Sendrecv"
}

func isSend(name string) bool {
	n := strings.TrimPrefix(name, "Comm.")
	return n == "Send" || n == "Ssend" || n == "Rsend" || n == "Bsend" || strings.HasPrefix(n, "Send") && !strings.Contains(n, "Init")
}

func dur(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2f ms", us/1e3)
	}
	return fmt.Sprintf("%.1f us", us)
}

func size(b int) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// wait is a late sender or late receiver finding.
type wait struct {
	rank  int
	call  string
	at    float64
	wait  float64
	other int
	tag   int
}

// Summary writes what `mpigo trace FILE` prints.
func (v *View) Summary(w io.Writer) {
	msgs := 0
	for _, a := range v.Arrows {
		if !a.Coll {
			msgs++
		}
	}
	internal := 0
	for _, s := range v.Spans {
		if s.Internal {
			internal++
		}
	}
	calls := fmt.Sprintf("%d MPI calls", len(v.Spans)-internal)
	if internal > 0 {
		calls += fmt.Sprintf(" (and %d by mpigo itself, category \"internal\")", internal)
	}
	fmt.Fprintf(w, "%d ranks, %s, %d messages (%d inside collectives), %s from first to last event\n",
		len(v.Ranks), calls, msgs, len(v.Arrows)-msgs, dur(v.End))
	// Time in MPI per rank: the union of its spans.
	fmt.Fprintf(w, "\ntime in MPI per rank:\n")
	for _, r := range v.Ranks {
		var total, end float64 = 0, -1
		for _, s := range v.Spans {
			if s.Rank != r {
				continue
			}
			a, b := s.Start, s.Start+s.Dur
			if b <= end {
				continue
			}
			if a < end {
				a = end
			}
			total += b - a
			end = b
		}
		pct := 0.0
		if v.End > 0 {
			pct = 100 * total / v.End
		}
		fmt.Fprintf(w, "  rank %-4d %10s  %5.1f%%\n", r, dur(total), pct)
	}
	type agg struct {
		name     string
		n        int
		total    float64
		longest  float64
		longRank int
	}
	by := map[string]*agg{}
	for _, s := range v.Spans {
		a := by[s.Name]
		if a == nil {
			a = &agg{name: s.Name}
			by[s.Name] = a
		}
		a.n++
		a.total += s.Dur
		if s.Dur > a.longest {
			a.longest, a.longRank = s.Dur, s.Rank
		}
	}
	var aggs []*agg
	for _, a := range by {
		aggs = append(aggs, a)
	}
	sort.Slice(aggs, func(i, j int) bool { return aggs[i].total > aggs[j].total })
	fmt.Fprintf(w, "\ntime in MPI per call (all ranks):\n  %-22s %8s %12s %12s %12s\n", "call", "calls", "total", "mean", "longest")
	for _, a := range aggs {
		fmt.Fprintf(w, "  %-22s %8d %12s %12s %12s (rank %d)\n", a.name, a.n, dur(a.total), dur(a.total/float64(a.n)), dur(a.longest), a.longRank)
	}
	// Late senders: a receive that was waiting when the message was sent.
	// Late receivers: a send still waiting when the receive began.
	var lateS, lateR []wait
	for _, a := range v.Arrows {
		if a.Coll {
			continue
		}
		if rs := v.spanAt(a.To, a.End); rs != nil && isRecv(rs.Name) && a.Start > rs.Start {
			lateS = append(lateS, wait{rank: a.To, call: rs.Name, at: rs.Start, wait: a.Start - rs.Start, other: a.From, tag: a.Tag})
		}
		if ss := v.spanAt(a.From, a.Start); ss != nil && isSend(ss.Name) {
			if rs := v.spanAt(a.To, a.End); rs != nil && rs.Start > ss.Start && rs.Start < ss.Start+ss.Dur {
				lateR = append(lateR, wait{rank: a.From, call: ss.Name, at: ss.Start, wait: rs.Start - ss.Start, other: a.To, tag: a.Tag})
			}
		}
	}
	list := func(title, verb string, ws []wait) {
		total := 0.0
		for _, x := range ws {
			total += x.wait
		}
		fmt.Fprintf(w, "\n%s: %d, %s waited in all\n", title, len(ws), dur(total))
		sort.Slice(ws, func(i, j int) bool { return ws[i].wait > ws[j].wait })
		for i, x := range ws {
			if i == 5 {
				break
			}
			fmt.Fprintf(w, "  rank %d waited %s in %s at %s %s rank %d (tag %d)\n", x.rank, dur(x.wait), x.call, dur(x.at), verb, x.other, x.tag)
		}
	}
	list("late senders (a receive waited for its message to be sent)", "for a message from", lateS)
	list("late receivers (a send waited for its receive to be posted)", "for", lateR)
	as := append([]ViewArrow(nil), v.Arrows...)
	sort.SliceStable(as, func(i, j int) bool { return as[i].Bytes > as[j].Bytes })
	fmt.Fprintf(w, "\nlargest messages:\n")
	for i, a := range as {
		if i == 5 {
			break
		}
		kind := ""
		if a.Coll {
			kind = " (inside a collective)"
		}
		fmt.Fprintf(w, "  %10s  rank %d -> rank %d tag %d at %s, in flight %s%s\n", size(a.Bytes), a.From, a.To, a.Tag, dur(a.Start), dur(a.End-a.Start), kind)
	}
}

// Work returns when the program's own calls start and end: the first
// start and the last end of the spans that are not mpigo's own
// (Internal). Start-up (connecting, agreeing on the world) comes before
// it, and the Barrier of the end of Main after it. With no such span it
// is the whole timeline.
func (v *View) Work() (start, end float64) {
	first := true
	for _, s := range v.Spans {
		if s.Internal {
			continue
		}
		if first || s.Start < start {
			start = s.Start
		}
		if first || s.Start+s.Dur > end {
			end = s.Start + s.Dur
		}
		first = false
	}
	if first || end <= start {
		return 0, v.End
	}
	return start, end
}

// HTML writes one self-contained page that draws the timeline: a track
// per rank (lanes of a rank share its track colour), calls as boxes
// coloured by name, messages as lines. It needs no network.
func (v *View) HTML(w io.Writer, title string) error {
	type jspan struct {
		R, L int
		N    string
		C    string
		P, T int
		S, D float64
	}
	type jarrow struct {
		F, D, T, B int
		K          bool
		S, E       float64
	}
	ws, we := v.Work()
	data := struct {
		Ranks            []int
		End              float64
		WorkStart, WorkE float64 // the view opens on the program's calls (Work)
		Spans            []jspan
		Arrows           []jarrow
	}{Ranks: v.Ranks, End: v.End, WorkStart: ws, WorkE: we}
	for _, s := range v.Spans {
		data.Spans = append(data.Spans, jspan{s.Rank, s.Lane, s.Name, s.Comm, s.Peer, s.Tag, s.Start, s.Dur})
	}
	for _, a := range v.Arrows {
		data.Arrows = append(data.Arrows, jarrow{a.From, a.To, a.Tag, a.Bytes, a.Coll, a.Start, a.End})
	}
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var sum strings.Builder
	v.Summary(&sum)
	return page.Execute(w, map[string]any{"Title": title, "Data": template.JS(b), "Summary": sum.String()})
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>mpigo trace: {{.Title}}</title>
<style>
body { font: 13px sans-serif; margin: 0; background: #fff; color: #222; }
header { padding: 6px 10px; background: #263238; color: #eceff1; }
#wrap { position: relative; }
canvas { display: block; }
#tip { position: fixed; pointer-events: none; background: #fffde7; border: 1px solid #999; padding: 3px 6px; display: none; font-size: 12px; }
pre { margin: 10px; font-size: 12px; }
</style></head>
<body>
<header><b>mpigo trace</b> {{.Title}} &mdash; opens on your program's calls; drag to scroll, wheel to zoom, hover for details, 0 for the whole job (start-up included), 1 for your calls again</header>
<div id="wrap"><canvas id="c"></canvas></div>
<div id="tip"></div>
<pre>{{.Summary}}</pre>
<script>
"use strict";
const D = {{.Data}};
const cv = document.getElementById("c"), ctx = cv.getContext("2d"), tip = document.getElementById("tip");
const LEFT = 90, TRACK = 46, TOP = 24;
const bands = ["#dfe9f5", "#f5e6d6", "#dff2e1", "#f2dde9", "#e8e2f5", "#f5f1d2", "#d9f0f0", "#f0dcdc"];
const row = {}; D.Ranks.forEach((r, i) => row[r] = i);
const lanes = {}; D.Spans.forEach(s => lanes[s.R] = Math.max(lanes[s.R] || 0, s.L));
let t0 = 0, scale = 1;
// fit shows the times a..b, with a little room on both sides.
function fit(a, b) {
  const pad = Math.max(1, (b - a) * 0.02);
  t0 = Math.max(0, a - pad);
  scale = (cv.width - LEFT - 10) / Math.max(1, b + pad - t0);
  draw();
}
function resize() {
  cv.width = Math.max(600, window.innerWidth);
  cv.height = TOP + TRACK * Math.max(1, D.Ranks.length) + 10;
  fit(D.WorkStart, D.WorkE);
}
window.addEventListener("keydown", e => {
  if (e.key === "0") fit(0, D.End);
  if (e.key === "1") fit(D.WorkStart, D.WorkE);
});
function hue(name) { let h = 0; for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0; return "hsl(" + (h % 360) + ",65%,50%)"; }
function x(t) { return LEFT + (t - t0) * scale; }
function draw() {
  ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, cv.width, cv.height);
  D.Ranks.forEach((r, i) => {
    ctx.fillStyle = bands[i % bands.length];
    ctx.fillRect(0, TOP + i * TRACK, cv.width, TRACK - 2);
    ctx.fillStyle = "#222"; ctx.font = "12px sans-serif";
    ctx.fillText("rank " + r, 8, TOP + i * TRACK + TRACK / 2 + 4);
  });
  ctx.fillStyle = "#555"; ctx.font = "11px sans-serif";
  for (let k = 0; k <= 10; k++) {
    const t = t0 + k * (cv.width - LEFT - 10) / scale / 10;
    ctx.fillText(fmt(t), x(t), 14);
  }
  ctx.save(); ctx.beginPath(); ctx.rect(LEFT, 0, cv.width - LEFT, cv.height); ctx.clip();
  for (const s of D.Spans) {
    const i = row[s.R], n = (lanes[s.R] || 0) + 1, h = (TRACK - 10) / n;
    const y = TOP + i * TRACK + 4 + s.L * h;
    const x0 = x(s.S), w = Math.max(1, s.D * scale);
    if (x0 > cv.width || x0 + w < LEFT) continue;
    ctx.fillStyle = hue(s.N); ctx.fillRect(x0, y, w, h - 1);
    if (w > 40) { ctx.fillStyle = "#fff"; ctx.font = "11px sans-serif"; ctx.fillText(s.N, x0 + 3, y + h / 2 + 4, w - 6); }
  }
  ctx.lineWidth = 1;
  for (const a of D.Arrows) {
    const y0 = TOP + row[a.F] * TRACK + TRACK / 2, y1 = TOP + row[a.D] * TRACK + TRACK / 2;
    ctx.strokeStyle = a.K ? "rgba(90,90,90,0.35)" : "rgba(20,20,20,0.85)";
    ctx.beginPath(); ctx.moveTo(x(a.S), y0); ctx.lineTo(x(a.E), y1); ctx.stroke();
    ctx.beginPath(); ctx.arc(x(a.E), y1, 2, 0, 6.3); ctx.fillStyle = ctx.strokeStyle; ctx.fill();
  }
  ctx.restore();
}
function fmt(t) { return t >= 1e6 ? (t / 1e6).toFixed(3) + " s" : t >= 1e3 ? (t / 1e3).toFixed(3) + " ms" : t.toFixed(1) + " us"; }
let drag = null;
cv.addEventListener("mousedown", e => drag = e.clientX);
window.addEventListener("mouseup", () => drag = null);
cv.addEventListener("mousemove", e => {
  if (drag !== null) { t0 -= (e.clientX - drag) / scale; drag = e.clientX; draw(); return; }
  const r = cv.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
  const i = Math.floor((my - TOP) / TRACK), t = t0 + (mx - LEFT) / scale;
  let hit = null;
  for (const s of D.Spans) if (row[s.R] === i && s.S <= t && t <= s.S + s.D) hit = s;
  if (!hit) { tip.style.display = "none"; return; }
  tip.textContent = "rank " + hit.R + ": " + hit.N + (hit.C ? " on " + hit.C : "") + (hit.P !== -32766 ? " peer " + hit.P : "") + (hit.T !== -32766 ? " tag " + hit.T : "") + ", " + fmt(hit.D) + " at " + fmt(hit.S);
  tip.style.left = (e.clientX + 12) + "px"; tip.style.top = (e.clientY + 12) + "px"; tip.style.display = "block";
});
cv.addEventListener("wheel", e => {
  e.preventDefault();
  const r = cv.getBoundingClientRect(), t = t0 + (e.clientX - r.left - LEFT) / scale;
  scale *= e.deltaY < 0 ? 1.25 : 0.8; t0 = t - (e.clientX - r.left - LEFT) / scale; draw();
}, { passive: false });
window.addEventListener("resize", resize);
resize();
</script>
</body></html>
`))

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// benchRun is one test's results with what they were measured on: the
// document of -format json, and the rows of -format csv.
type benchRun struct {
	Test        string       `json:"test"`
	Quantity    string       `json:"quantity"` // latency or bandwidth
	Unit        string       `json:"unit"`     // us or MB/s
	Transport   string       `json:"transport"`
	Ranks       int          `json:"ranks"`
	API         string       `json:"api"`
	Repetitions int          `json:"repetitions"`
	Mpigo       string       `json:"mpigo_version,omitempty"`
	Go          string       `json:"go_version,omitempty"`
	GOMAXPROCS  int          `json:"gomaxprocs,omitempty"`
	CPUs        int          `json:"cpus,omitempty"`
	Date        string       `json:"date,omitempty"` // start, RFC 3339, UTC
	Results     []benchPoint `json:"results"`
}

// benchPoint is the result of one message size.
type benchPoint struct {
	Size       int     `json:"size"`
	Median     float64 `json:"median"` // of the repetitions: the value of the text output
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	Iterations int     `json:"iterations"` // timed iterations of each repetition
	// Non-blocking collectives: the medians of the other columns.
	NB *nbColumns `json:"nonblocking,omitempty"`
	// I/O tests: the median time of one operation of all ranks (us).
	OpUS float64 `json:"op_us,omitempty"`
	// The partitioned test: the median time of the plain form, one Send
	// after the goroutines joined (us).
	JoinSendUS float64 `json:"join_send_us,omitempty"`
}

// nbColumns are the further columns of the non-blocking tests.
type nbColumns struct {
	Compute float64 `json:"compute_us"`
	Pure    float64 `json:"pure_us"`
	Overlap float64 `json:"overlap_pct"`
}

// summarize turns the repetitions of one size of test into a point.
func summarize(test string, size, iters int, vals []float64, extras [][]float64) benchPoint {
	p := benchPoint{Size: size, Iterations: iters, Median: median(vals), Min: slices.Min(vals), Max: slices.Max(vals)}
	if len(extras) > 0 && len(extras[0]) == 3 {
		col := func(i int) float64 {
			v := make([]float64, len(extras))
			for j, e := range extras {
				v[j] = e[i]
			}
			return median(v)
		}
		p.NB = &nbColumns{Compute: col(0), Pure: col(1), Overlap: col(2)}
	}
	if len(extras) > 0 && len(extras[0]) == 1 {
		v := make([]float64, len(extras))
		for j, e := range extras {
			v[j] = e[0]
		}
		if test == "partitioned" {
			p.JoinSendUS = median(v)
		} else {
			p.OpUS = median(v)
		}
	}
	return p
}

// median of vals (the mean of the middle two for an even count).
func median(vals []float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// columnHeader is the OSU-style name of the value column.
func (r *benchRun) columnHeader() string {
	switch r.Quantity {
	case "bandwidth":
		return "Bandwidth (MB/s)"
	case "rate":
		return "Rate (tasks/s)"
	case "utilisation":
		return "Utilisation (%)"
	}
	if strings.HasPrefix(r.Test, "i") {
		return "Overall(us)  Compute(us)  Pure(us)  Overlap(%)"
	}
	return "Latency (us)"
}

// writeTextHeader writes the '#' lines that start the text output.
func (r *benchRun) writeTextHeader(w io.Writer) {
	fmt.Fprintf(w, "# mpigo bench %s\n", r.Test)
	fmt.Fprintf(w, "# mpigo %s, transport %s, %d ranks, api %s, %s, GOMAXPROCS %d\n", r.Mpigo, r.Transport, r.Ranks, r.API, r.Go, r.GOMAXPROCS)
	fmt.Fprintf(w, "# median of %d repetitions of each size; min and max over them\n", r.Repetitions)
	if strings.HasPrefix(r.Test, "i") && r.Quantity == "latency" {
		fmt.Fprintf(w, "# %-10s %s %10s %10s\n", "Size", r.columnHeader(), "Min", "Max")
		return
	}
	if isIOTest(r.Test) {
		fmt.Fprintf(w, "# %-10s %-16s %10s %10s %12s\n", "Size", r.columnHeader(), "Min", "Max", "Time/op(us)")
		return
	}
	if r.Test == "partitioned" {
		fmt.Fprintf(w, "# %-10s %-16s %10s %10s %14s\n", "Size", "Partitioned(us)", "Min", "Max", "Join+send(us)")
		return
	}
	fmt.Fprintf(w, "# %-10s %-16s %10s %10s\n", "Size", r.columnHeader(), "Min", "Max")
}

// writeTextLine writes one size's line of the text output.
func writeTextLine(w io.Writer, p benchPoint) {
	if p.NB != nil {
		fmt.Fprintf(w, "%-12d %.2f %12.2f %9.2f %10.1f %10.2f %10.2f\n", p.Size, p.Median, p.NB.Compute, p.NB.Pure, p.NB.Overlap, p.Min, p.Max)
		return
	}
	if p.OpUS > 0 {
		fmt.Fprintf(w, "%-12d %-16.2f %10.2f %10.2f %12.1f\n", p.Size, p.Median, p.Min, p.Max, p.OpUS)
		return
	}
	if p.JoinSendUS > 0 {
		fmt.Fprintf(w, "%-12d %-16.2f %10.2f %10.2f %14.2f\n", p.Size, p.Median, p.Min, p.Max, p.JoinSendUS)
		return
	}
	fmt.Fprintf(w, "%-12d %-16.2f %10.2f %10.2f\n", p.Size, p.Median, p.Min, p.Max)
}

// writeText writes r as "mpigo bench TEST" prints it.
func (r *benchRun) writeText(w io.Writer) {
	r.writeTextHeader(w)
	for _, p := range r.Results {
		writeTextLine(w, p)
	}
}

// csvHeader names the columns of -format csv.
var csvHeader = []string{"test", "transport", "ranks", "api", "size", "median", "min", "max", "unit", "iterations", "repetitions", "compute_us", "pure_us", "overlap_pct"}

// writeCSV writes the runs as one table with a header row.
func writeCSV(w io.Writer, runs []*benchRun) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range runs {
		for _, p := range r.Results {
			row := []string{r.Test, r.Transport, strconv.Itoa(r.Ranks), r.API, strconv.Itoa(p.Size), f(p.Median), f(p.Min), f(p.Max),
				r.Unit, strconv.Itoa(p.Iterations), strconv.Itoa(r.Repetitions), "", "", ""}
			if p.NB != nil {
				row[11], row[12], row[13] = f(p.NB.Compute), f(p.NB.Pure), f(p.NB.Overlap)
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// readCSV reads what writeCSV wrote: consecutive rows of one test,
// transport, ranks and api make one run.
func readCSV(rd io.Reader) ([]*benchRun, error) {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = len(csvHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	if !slices.Equal(head, csvHeader) {
		return nil, fmt.Errorf("csv: header %q is not mpigo bench's", strings.Join(head, ","))
	}
	var runs []*benchRun
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return runs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		var errs []error
		num := func(s string) int {
			v, err := strconv.Atoi(s)
			errs = append(errs, err)
			return v
		}
		fl := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			errs = append(errs, err)
			return v
		}
		ranks, reps := num(row[2]), num(row[10])
		p := benchPoint{Size: num(row[4]), Median: fl(row[5]), Min: fl(row[6]), Max: fl(row[7]), Iterations: num(row[9])}
		if row[11] != "" || row[12] != "" || row[13] != "" {
			p.NB = &nbColumns{Compute: fl(row[11]), Pure: fl(row[12]), Overlap: fl(row[13])}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("csv line %d: %w", line, err)
		}
		var r *benchRun
		if n := len(runs); n > 0 {
			last := runs[n-1]
			if last.Test == row[0] && last.Transport == row[1] && last.Ranks == ranks && last.API == row[3] {
				r = last
			}
		}
		if r == nil {
			quantity := "latency"
			if row[8] == "MB/s" {
				quantity = "bandwidth"
			}
			r = &benchRun{Test: row[0], Transport: row[1], Ranks: ranks, API: row[3], Unit: row[8], Quantity: quantity, Repetitions: reps}
			runs = append(runs, r)
		}
		r.Results = append(r.Results, p)
	}
}

// writeJSON writes the runs as an array, or, for mpigo bench TEST
// (one run, array false), that run as an object.
func writeJSON(w io.Writer, runs []*benchRun, array bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(runs) == 1 && !array {
		return enc.Encode(runs[0])
	}
	return enc.Encode(runs)
}

// readJSON reads what writeJSON wrote.
func readJSON(data []byte) ([]*benchRun, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var runs []*benchRun
		if err := json.Unmarshal(data, &runs); err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
		return runs, nil
	}
	var r benchRun
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	return []*benchRun{&r}, nil
}

// benchOutput receives the results of "mpigo bench TEST": the text lines
// go out as they come, as OSU's do; csv and json when all is measured.
type benchOutput struct {
	cfg     *benchConfig
	run     *benchRun
	prog    *progress
	started bool
}

func (o *benchOutput) start(index, size int) {
	if o.cfg.format == "text" && !o.started {
		o.started = true
		o.run.writeTextHeader(o.cfg.out)
	}
	o.prog.size(index, len(o.cfg.sizes), size)
}

func (o *benchOutput) point(p benchPoint) {
	o.run.Results = append(o.run.Results, p)
	if o.cfg.format != "text" {
		return
	}
	o.prog.clear()
	writeTextLine(o.cfg.out, p)
}

// finish writes what is written at the end.
func (o *benchOutput) finish() error {
	switch o.cfg.format {
	case "csv":
		return writeCSV(o.cfg.out, []*benchRun{o.run})
	case "json":
		return writeJSON(o.cfg.out, []*benchRun{o.run}, false)
	}
	if !o.started {
		o.run.writeTextHeader(o.cfg.out)
	}
	return nil
}

// The rank processes of a shm or tcp benchmark report to the mpigo bench
// that started them through rank 0's standard output, a line per event:
// childPrefix, then "start INDEX SIZE" or "point JSON".
const childPrefix = "@mpigo-bench "

type childEncoder struct{ w io.Writer }

func (e *childEncoder) start(index, size int) {
	fmt.Fprintf(e.w, "%sstart %d %d\n", childPrefix, index, size)
}

func (e *childEncoder) point(p benchPoint) {
	b, _ := json.Marshal(p) // a benchPoint always encodes
	fmt.Fprintf(e.w, "%spoint %s\n", childPrefix, b)
}

// childDecoder is the job's standard output as the parent sees it: it
// turns the events back into calls of ev and passes any other line on to
// other.
type childDecoder struct {
	mu    sync.Mutex
	ev    benchEvents
	other io.Writer
	buf   []byte
	err   error
}

func (d *childDecoder) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.buf = append(d.buf, b...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			break
		}
		d.line(string(d.buf[:i]))
		d.buf = d.buf[i+1:]
	}
	if len(d.buf) > maxOutLine { // launch never sends longer lines; stay bounded anyway
		d.line(string(d.buf))
		d.buf = d.buf[:0]
	}
	return len(b), nil
}

func (d *childDecoder) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.buf) > 0 {
		d.line(string(d.buf))
		d.buf = nil
	}
}

func (d *childDecoder) line(s string) {
	ev, ok := strings.CutPrefix(s, childPrefix)
	if !ok {
		fmt.Fprintln(d.other, s)
		return
	}
	kind, arg, _ := strings.Cut(ev, " ")
	switch kind {
	case "start":
		var index, size int
		if _, err := fmt.Sscanf(arg, "%d %d", &index, &size); err == nil {
			d.ev.start(index, size)
			return
		}
	case "point":
		var p benchPoint
		if err := json.Unmarshal([]byte(arg), &p); err == nil {
			d.ev.point(p)
			return
		}
	}
	if d.err == nil {
		d.err = fmt.Errorf("a rank process sent a report this mpigo cannot read: %.80q", s)
	}
}

// coresWarning returns a line for a person when the ranks outnumber the
// processors they can run on, or "". runtime.NumCPU counts the
// processors of this process's CPU affinity mask; goroutine ranks also
// share GOMAXPROCS (which follows a cgroup CPU limit).
func coresWarning(n int, transport string) string {
	cores := runtime.NumCPU()
	what := "cores"
	if transport == "inproc" && runtime.GOMAXPROCS(0) < cores {
		cores = runtime.GOMAXPROCS(0)
		what = "processors (GOMAXPROCS)"
	}
	if n <= cores {
		return ""
	}
	return fmt.Sprintf("mpigo bench: warning: %d ranks on %d %s: ranks take turns on the processors, so the times measure the waits for a time slice more than the messages (use -n %d or fewer for meaningful numbers)", n, cores, what, cores)
}

// progress tells a person on stderr which size is being measured: one
// line rewritten in place when stderr is a terminal, or a line per size.
type progress struct {
	w      io.Writer
	tty    bool   // rewrite one line
	lines  bool   // a line per size
	prefix string // what is being measured, for the report
	shown  bool   // the terminal line holds text
}

// newProgress decides how progress is shown for mode: auto (an updating
// line when w is a terminal, nothing otherwise), lines or off.
func newProgress(w io.Writer, mode string) *progress {
	p := &progress{w: w}
	switch mode {
	case "lines":
		p.lines = true
	case "auto":
		p.tty = isTerminal(w)
	}
	return p
}

// isTerminal tells whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) size(index, count, size int) {
	if count < 2 && p.prefix == "" {
		return // one size: nothing to count
	}
	msg := fmt.Sprintf("size %d (%d/%d)...", size, index+1, count)
	if p.prefix != "" {
		msg = p.prefix + ": " + msg
	}
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s", msg)
		p.shown = true
	case p.lines:
		fmt.Fprintf(p.w, "mpigo bench: %s\n", msg)
	}
}

// clear removes the terminal line before other output.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

func (p *progress) done() { p.clear() }

package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/cmd/mpigo/internal/benchplot"
)

const reportUsage = `Usage: mpigo bench report [flags]

Runs a set of benchmarks over several transports and writes a picture
(-plot: the value against message size on log axes, one chart per test,
one line per transport, error bars from the min to the max of the
repetitions) and a self-contained HTML page (-html: the picture inline,
the tables of numbers, how they were measured; it needs no network to
view). With -ref, another MPI's results are drawn as dashed lines: the
OSU-style text of bench/ref/run.sh or bench/compare.sh (Open MPI, MPICH,
the OSU suite itself) or mpigo bench -format csv/json of an earlier run.
The results also go to stdout (-format).

Flags:
`

const reportUsageTail = `
Example:
  mpigo bench report -transports inproc,shm -ref bench/ref/results-2026-11-22.txt
  xdg-open mpigo-bench-report.html
`

// reportConfig is what mpigo bench report was asked to do.
type reportConfig struct {
	tests, transports string
	n                 int
	api               string
	sizes             string
	iters, reps       int
	refs              refList
	html, plot        string
	format, progress  string
	width, height     int
}

func benchReport(args []string, stdout, stderr io.Writer) int {
	rc := &reportConfig{}
	fs := flag.NewFlagSet("bench report", flag.ContinueOnError)
	usage := func(w io.Writer) {
		fmt.Fprint(w, reportUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		fmt.Fprint(w, reportUsageTail)
	}
	fs.Usage = func() { usage(stderr) }
	fs.StringVar(&rc.tests, "tests", "latency,bw", "the tests to run, comma-separated (any of mpigo bench's tests that measure several sizes)")
	fs.StringVar(&rc.transports, "transports", "inproc,shm,tcp", "the transports to compare, comma-separated")
	fs.IntVar(&rc.n, "n", 2, "number of ranks")
	fs.StringVar(&rc.api, "api", "typed", "API to measure: raw, typed, set or object (see mpigo bench -h)")
	fs.StringVar(&rc.sizes, "sizes", "", "message sizes (default: each test's own, see mpigo bench -h)")
	fs.IntVar(&rc.iters, "iters", 0, "iterations per repetition of a size (0: chosen by size)")
	fs.IntVar(&rc.reps, "reps", 3, "repetitions of each size (the median is drawn; error bars span min to max)")
	fs.Var(&rc.refs, "ref", "a reference series from `FILE` (LABEL=FILE names it); may be repeated")
	fs.StringVar(&rc.html, "html", "mpigo-bench-report.html", "write the HTML page here (empty: none)")
	fs.StringVar(&rc.plot, "plot", "mpigo-bench-report.svg", "write the picture here, FILE.svg or FILE.png (empty: none); the HTML page embeds the same format")
	fs.StringVar(&rc.format, "format", "text", "results on stdout: text (OSU style), csv or json")
	fs.StringVar(&rc.progress, "progress", "auto", "progress on stderr: auto (an updating line on a terminal, a line per run otherwise), lines (a line per size) or off")
	fs.IntVar(&rc.width, "width", 640, "width of one chart in pixels")
	fs.IntVar(&rc.height, "height", 440, "height of a chart in pixels")
	if len(args) > 0 && isHelp(args[0]) {
		usage(stdout)
		return 0
	}
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mpigo bench report: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	code, err := rc.run(stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo bench report: %v\n", err)
	}
	return code
}

// reportRun is one test over one transport, for the page.
type reportRun struct {
	test, transport string
	run             *benchRun
	err             error
}

func (rc *reportConfig) run(stdout, stderr io.Writer) (int, error) {
	tests, transports := splitList(rc.tests), splitList(rc.transports)
	if len(tests) == 0 || len(transports) == 0 {
		return 2, errors.New("-tests and -transports need at least one name each")
	}
	if rc.width < 100 || rc.height < 100 || rc.width > 10000 || rc.height > 10000 {
		return 2, fmt.Errorf("-width %d -height %d: want 100 to 10000 pixels each", rc.width, rc.height)
	}
	if rc.html == "" && rc.plot == "" {
		return 2, errors.New("nothing to write: give -html FILE or -plot FILE")
	}
	imgFormat := "svg"
	if rc.plot != "" {
		f, err := plotFormat(rc.plot)
		if err != nil {
			return 2, fmt.Errorf("-plot: %v", err)
		}
		imgFormat = f
	}
	// Check every flag before measuring anything: a mistake should not
	// cost minutes.
	var cfgs []*benchConfig
	for _, test := range tests {
		if test == "barrier" || test == "ibarrier" {
			return 2, fmt.Errorf("-tests: %s measures one size (0), there is nothing to draw against message size", test)
		}
		for _, tr := range transports {
			cfg := &benchConfig{test: test, n: rc.n, transport: tr, api: rc.api, sizeSpec: rc.sizes, iters: rc.iters,
				reps: rc.reps, format: rc.format, progress: rc.progress, errOut: stderr, out: io.Discard}
			if err := cfg.check(); err != nil {
				return 2, err
			}
			if _, _, err := cfg.prepare(); err != nil {
				return 2, err
			}
			cfgs = append(cfgs, cfg)
		}
	}
	refs, err := rc.refs.load()
	if err != nil {
		return 2, err
	}
	warning := coresWarning(rc.n, "inproc")
	if w := coresWarning(rc.n, "tcp"); w != "" {
		warning = w
	}
	if warning != "" {
		fmt.Fprintln(stderr, warning)
	}
	started := time.Now()
	prog := newProgress(stderr, rc.progress)
	runLines := rc.progress == "auto" && !prog.tty
	var runs []reportRun
	failed := 0
	for i, cfg := range cfgs {
		what := fmt.Sprintf("%s over %s (%d/%d)", cfg.test, cfg.transport, i+1, len(cfgs))
		prog.prefix = what
		if runLines {
			fmt.Fprintf(stderr, "mpigo bench report: %s...\n", what)
		}
		body, run, _ := cfg.prepare()
		col := &collector{run: run, prog: prog, count: len(cfg.sizes)}
		err := cfg.runBench(body, col)
		prog.clear()
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "mpigo bench report: %s failed, left out of the report: %v\n", what, err)
		}
		runs = append(runs, reportRun{test: cfg.test, transport: cfg.transport, run: run, err: err})
	}
	prog.done()
	var done []*benchRun
	for _, r := range runs {
		if r.err == nil {
			done = append(done, r.run)
		}
	}
	switch rc.format {
	case "csv":
		err = writeCSV(stdout, done)
	case "json":
		err = writeJSON(stdout, done, true)
	default:
		for i, r := range done {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			r.writeText(stdout)
		}
	}
	if err != nil {
		return 1, err
	}
	if len(done) == 0 {
		return 1, errors.New("every run failed: no report written")
	}
	charts := buildCharts(done, refs)
	var img bytes.Buffer
	if err := benchplot.Render(&img, imgFormat, charts, rc.width, rc.height); err != nil {
		return 1, err
	}
	if rc.plot != "" {
		if err := os.WriteFile(rc.plot, img.Bytes(), 0o644); err != nil {
			return 1, err
		}
		fmt.Fprintf(stderr, "mpigo bench report: wrote %s\n", rc.plot)
	}
	if rc.html != "" {
		page := &reportPage{cfg: rc, runs: runs, refs: refs, warning: warning, started: started, took: time.Since(started)}
		var buf bytes.Buffer
		if err := page.write(&buf, imgFormat, img.Bytes()); err != nil {
			return 1, err
		}
		if err := os.WriteFile(rc.html, buf.Bytes(), 0o644); err != nil {
			return 1, err
		}
		fmt.Fprintf(stderr, "mpigo bench report: wrote %s\n", rc.html)
	}
	if failed > 0 {
		return 1, fmt.Errorf("%d of %d runs failed (see above)", failed, len(runs))
	}
	return 0, nil
}

// collector keeps a run's points and shows progress.
type collector struct {
	run   *benchRun
	prog  *progress
	count int
}

func (c *collector) start(index, size int) { c.prog.size(index, c.count, size) }
func (c *collector) point(p benchPoint)    { c.run.Results = append(c.run.Results, p) }

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// plotFormat is the picture format a file name asks for.
func plotFormat(file string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	if slices.Contains(benchplot.Formats, ext) {
		return ext, nil
	}
	return "", fmt.Errorf("%q: the name must end in .svg or .png", file)
}

// transportColors keeps a transport's colour the same in every chart.
var transportColors = map[string]color.RGBA{"inproc": benchplot.Palette[0], "shm": benchplot.Palette[1], "tcp": benchplot.Palette[2]}

// refColors are for the reference series (dashed).
var refColors = []color.RGBA{benchplot.Palette[7], benchplot.Palette[3], benchplot.Palette[4], benchplot.Palette[5], benchplot.Palette[6]}

// buildCharts makes one chart per test, one series per run, then the
// reference series of that test.
func buildCharts(runs []*benchRun, refs []refSeries) []benchplot.Chart {
	var charts []benchplot.Chart
	index := map[string]int{}
	apis := map[string]bool{}
	for _, r := range runs {
		apis[r.API] = true
	}
	refColor := map[string]color.RGBA{}
	var first []*benchRun // each chart's first run
	for _, r := range runs {
		i, ok := index[r.Test]
		if !ok {
			i = len(charts)
			index[r.Test] = i
			first = append(first, r)
			ylabel := "time (us)"
			switch {
			case r.Quantity == "bandwidth":
				ylabel = "bandwidth (MB/s)"
			case r.Test == "latency":
				ylabel = "latency (us)"
			}
			charts = append(charts, benchplot.Chart{Title: fmt.Sprintf("%s, %d ranks", r.Test, r.Ranks), YLabel: ylabel,
				LegendBottomRight: r.Quantity == "bandwidth"})
		}
		name := "mpigo " + r.Transport
		if len(apis) > 1 {
			name += " (" + r.API + ")"
		}
		c, ok := transportColors[r.Transport]
		if !ok {
			c = benchplot.Palette[len(charts[i].Series)%len(benchplot.Palette)]
		}
		s := benchplot.Series{Name: name, Color: c}
		for _, p := range r.Results {
			s.X, s.Y = append(s.X, float64(p.Size)), append(s.Y, p.Median)
			s.Lo, s.Hi = append(s.Lo, p.Min), append(s.Hi, p.Max)
		}
		charts[i].Series = append(charts[i].Series, s)
	}
	for i, r := range first {
		for _, ref := range refsFor(refs, r.Test, r.Ranks) {
			name := ref.name()
			c, ok := refColor[name]
			if !ok {
				c = refColors[len(refColor)%len(refColors)]
				refColor[name] = c
			}
			s := benchplot.Series{Name: name, Color: c, Dashed: true}
			for k := range ref.Sizes {
				s.X, s.Y = append(s.X, float64(ref.Sizes[k])), append(s.Y, ref.Values[k])
			}
			charts[i].Series = append(charts[i].Series, s)
		}
	}
	return charts
}

// writePlot draws runs (and matching references) into file.
func writePlot(file string, runs []*benchRun, refs []refSeries) error {
	format, err := plotFormat(file)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := benchplot.Render(&buf, format, buildCharts(runs, refs), 640, 440); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// reportPage is the HTML page of a report.
type reportPage struct {
	cfg     *reportConfig
	runs    []reportRun
	refs    []refSeries
	warning string
	started time.Time
	took    time.Duration
}

// svgProlog is what precedes the <svg> element in a file of its own.
var svgProlog = regexp.MustCompile(`(?s)^.*?(<svg\b)`)

func (pg *reportPage) write(w io.Writer, format string, img []byte) error {
	var figure template.HTML
	if format == "svg" {
		figure = template.HTML(svgProlog.ReplaceAllString(string(img), "$1"))
	} else {
		figure = template.HTML(`<img alt="benchmark plot" src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(img) + `">`)
	}
	host, _ := os.Hostname()
	type cell struct{ Median, Range string }
	type row struct {
		Size  int
		Cells []cell
	}
	type table struct {
		Test, Unit string
		Columns    []string
		Rows       []row
	}
	var tables []table
	byTest := map[string]int{}
	for _, r := range pg.runs {
		if r.err != nil {
			continue
		}
		i, ok := byTest[r.test]
		if !ok {
			i = len(tables)
			byTest[r.test] = i
			tables = append(tables, table{Test: r.test, Unit: r.run.Unit})
		}
		t := &tables[i]
		col := len(t.Columns)
		t.Columns = append(t.Columns, r.transport)
		for _, p := range r.run.Results {
			k := slices.IndexFunc(t.Rows, func(rw row) bool { return rw.Size == p.Size })
			if k < 0 {
				t.Rows = append(t.Rows, row{Size: p.Size})
				k = len(t.Rows) - 1
			}
			for len(t.Rows[k].Cells) <= col {
				t.Rows[k].Cells = append(t.Rows[k].Cells, cell{})
			}
			t.Rows[k].Cells[col] = cell{fmt.Sprintf("%.2f", p.Median), fmt.Sprintf("%.2f – %.2f", p.Min, p.Max)}
		}
	}
	for i := range tables {
		for k := range tables[i].Rows {
			for len(tables[i].Rows[k].Cells) < len(tables[i].Columns) {
				tables[i].Rows[k].Cells = append(tables[i].Rows[k].Cells, cell{})
			}
		}
	}
	var failures []string
	for _, r := range pg.runs {
		if r.err != nil {
			failures = append(failures, fmt.Sprintf("%s over %s: %v", r.test, r.transport, r.err))
		}
	}
	var refNames []string // those drawn
	for _, t := range tables {
		ranks := pg.cfg.n
		for _, r := range refsFor(pg.refs, t.Test, ranks) {
			refNames = append(refNames, fmt.Sprintf("%s for %s (%d sizes)", r.name(), r.Test, len(r.Sizes)))
		}
	}
	return reportTemplate.Execute(w, map[string]any{
		"Figure": figure, "Tables": tables, "Warning": pg.warning, "Failures": failures, "Refs": refNames,
		"RefFiles": strings.Join(pg.cfg.refs, ", "),
		"Date":     pg.started.UTC().Format("2006-01-02 15:04 MST"), "Took": pg.took.Round(time.Second).String(),
		"Host": host, "Version": mpi.Version, "Go": runtime.Version(), "OS": runtime.GOOS + "/" + runtime.GOARCH,
		"CPUs": runtime.NumCPU(), "Procs": runtime.GOMAXPROCS(0), "N": pg.cfg.n, "API": pg.cfg.api, "Reps": pg.cfg.reps,
	})
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mpigo bench report</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
.meta { color: #555; margin: 0 0 1em; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: .5em .8em; }
figure { margin: 0; }
figure svg, figure img { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: .9em; margin: .3em 1.5em 1em 0; display: inline-table; vertical-align: top; }
th, td { border: 1px solid #ccc; padding: .2em .6em; text-align: right; }
th { background: #f2f2f2; }
td small { color: #777; }
</style>
</head>
<body>
<h1>mpigo bench report</h1>
<p class="meta">{{.Date}} on {{.Host}} ({{.OS}}, {{.CPUs}} CPUs, GOMAXPROCS {{.Procs}}), mpigo {{.Version}}, {{.Go}};
{{.N}} ranks, api {{.API}}, median of {{.Reps}} repetitions per size (error bars: min to max); took {{.Took}}.</p>
{{with .Warning}}<p class="warn">{{.}}</p>{{end}}
{{range .Failures}}<p class="warn">Failed, left out: {{.}}</p>{{end}}
<figure>{{.Figure}}</figure>
{{with .Refs}}<p class="meta">Reference series (dashed), from {{$.RefFiles}}: {{range $i, $r := .}}{{if $i}}; {{end}}{{$r}}{{end}}.</p>{{end}}
{{range .Tables}}
<h2>{{.Test}} ({{.Unit}})</h2>
<table>
<tr><th>size (bytes)</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Size}}</td>{{range .Cells}}<td>{{.Median}}{{with .Range}} <small>({{.}})</small>{{end}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
<p class="meta">Made by <code>mpigo bench report</code>. Numbers from a machine shared with other work are noise;
compare transports and libraries only within one report, and see docs/bench.md for the method.</p>
</body>
</html>
`))

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// refSeries is a reference series for a plot: one test's values against
// message size, read from a file (another MPI's OSU-style output, or an
// earlier mpigo bench run).
type refSeries struct {
	Test     string // latency, bw, ... ("" if the file does not say)
	Quantity string // latency or bandwidth
	Ranks    int    // 0 if the file does not say
	Label    string // the library, e.g. "Open MPI 4.1.4"
	Variant  string // e.g. "rbuf per window slot"
	Sizes    []int
	Values   []float64
	col      int // while parsing: the field holding the value (0: the second)
}

// name is the legend entry.
func (r *refSeries) name() string {
	if r.Variant != "" {
		return r.Label + " (" + r.Variant + ")"
	}
	return r.Label
}

// refList is the -ref flag: files, each optionally LABEL=FILE.
type refList []string

func (l *refList) String() string { return strings.Join(*l, ",") }

func (l *refList) Set(s string) error {
	if s == "" {
		return errors.New("want FILE or LABEL=FILE")
	}
	*l = append(*l, s)
	return nil
}

// maxRefFile bounds what is read of a reference file.
const maxRefFile = 16 << 20

// load reads every reference file.
func (l refList) load() ([]refSeries, error) {
	var all []refSeries
	for _, arg := range l {
		label, path := "", arg
		if _, err := os.Stat(arg); err != nil {
			if lab, p, ok := strings.Cut(arg, "="); ok {
				label, path = lab, p
			}
		}
		data, err := readBounded(path, maxRefFile)
		if err != nil {
			return nil, fmt.Errorf("-ref: %v", err)
		}
		series, err := parseRef(data, filepath.Base(path))
		if err != nil {
			return nil, fmt.Errorf("-ref %s: %v", path, err)
		}
		if len(series) == 0 {
			return nil, fmt.Errorf("-ref %s: no results in it (want the OSU-style text of bench/ref/run.sh or bench/compare.sh, or mpigo bench -format csv or json)", path)
		}
		if label != "" {
			for i := range series {
				series[i].Label = label
			}
		}
		all = append(all, series...)
	}
	return all, nil
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, limit>>20)
	}
	return data, nil
}

// parseRef reads reference series from mpigo bench csv or json output,
// or from OSU-style text; name labels series whose text names no library.
func parseRef(data []byte, name string) ([]refSeries, error) {
	trimmed := bytes.TrimSpace(data)
	var runs []*benchRun
	var err error
	switch {
	case len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '['):
		runs, err = readJSON(trimmed)
	case bytes.HasPrefix(trimmed, []byte(strings.Join(csvHeader[:3], ","))):
		runs, err = readCSV(bytes.NewReader(trimmed))
	default:
		return parseOSU(data, name)
	}
	if err != nil {
		return nil, err
	}
	var out []refSeries
	for _, r := range runs {
		s := refSeries{Test: r.Test, Quantity: r.Quantity, Ranks: r.Ranks, Label: name + ": mpigo " + r.Transport}
		for _, p := range r.Results {
			s.Sizes, s.Values = append(s.Sizes, p.Size), append(s.Values, p.Median)
		}
		out = append(out, s)
	}
	return out, nil
}

var (
	// "## bench/ref/run.sh -n 4 allreduce -sizes ...": a section of collect.sh.
	reRunSh = regexp.MustCompile(`run\.sh\s+(?:-n\s*(\d+)\s+)?([a-z_]+)`)
	// "# latency, 2 ranks: mpigo (transport inproc, api typed) vs Open MPI
	// vader, run back to back": bench/compare.sh's title.
	reCompare = regexp.MustCompile(`^([a-z_]+), (\d+) ranks: mpigo .* vs (.+?), run back to back`)
	// "# osu_like bw" or "# mpigo bench latency": the test.
	reTestLine = regexp.MustCompile(`^(?:osu_like|mpigo bench)\s+([a-z_]+)\s*$`)
	// "# Open MPI 4.1.4, 2 ranks, one rbuf": library, ranks, variant.
	reRanks = regexp.MustCompile(`^(.*?),?\s+(\d+) ranks?(?:,\s*(.*))?$`)
	// "# mpigo 0.9.0, transport shm, 2 ranks, api typed, ...".
	reMpigo = regexp.MustCompile(`^mpigo \S+, transport (\S+), (\d+) ranks`)
)

// osuTitles maps words of OSU's own titles ("# OSU MPI Bi-Directional
// Bandwidth Test v7.3") to tests, most specific first.
var osuTitles = []struct{ words, test string }{
	{"bi-directional bandwidth", "bibw"},
	{"bandwidth", "bw"},
	{"allreduce", "allreduce"},
	{"reduce_scatter", "reduce_scatter"},
	{"reduce scatter", "reduce_scatter"},
	{"reduce", "reduce"},
	{"allgather", "allgather"},
	{"all-to-all", "alltoall"},
	{"alltoall", "alltoall"},
	{"broadcast", "bcast"},
	{"bcast", "bcast"},
	{"barrier", "barrier"},
	{"scan", "scan"},
	{"latency", "latency"},
}

// parseOSU reads OSU-style text: sections of '#' comment lines (the test,
// the library and ranks, the column header "# Size ...") followed by
// "SIZE VALUE ..." lines; the first value column is taken. Other lines
// (NetPIPE's, notes) are skipped.
func parseOSU(data []byte, name string) ([]refSeries, error) {
	var out []refSeries
	var cur refSeries
	inData := false
	flush := func() {
		if len(cur.Sizes) > 0 {
			if cur.Quantity == "" {
				cur.Quantity = quantityOf(cur.Test)
			}
			if cur.Test == "" {
				cur.Test = map[string]string{"latency": "latency", "bandwidth": "bw"}[cur.Quantity]
			}
			if cur.Label == "" {
				cur.Label = name
			}
			out = append(out, cur)
		}
		cur = refSeries{}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			if inData {
				flush()
				inData = false
			}
			osuComment(&cur, strings.TrimSpace(strings.TrimLeft(line, "#")))
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		col := max(cur.col, 1)
		if len(f) <= col {
			continue
		}
		size, err1 := strconv.Atoi(f[0])
		v, err2 := strconv.ParseFloat(f[col], 64)
		if err1 != nil || err2 != nil || size < 0 {
			continue
		}
		cur.Sizes, cur.Values = append(cur.Sizes, size), append(cur.Values, v)
		inData = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	return out, nil
}

// osuComment takes what a comment line says about the section.
func osuComment(cur *refSeries, c string) {
	low := strings.ToLower(c)
	if m := reRunSh.FindStringSubmatch(c); m != nil {
		cur.Test = m[2]
		cur.Ranks = 2
		if m[1] != "" {
			cur.Ranks, _ = strconv.Atoi(m[1])
		}
		return
	}
	if m := reCompare.FindStringSubmatch(c); m != nil {
		cur.Test, cur.Label = m[1], m[3]
		cur.Ranks, _ = strconv.Atoi(m[2])
		return
	}
	if m := reTestLine.FindStringSubmatch(c); m != nil {
		cur.Test = m[1]
		if strings.HasPrefix(c, "mpigo") {
			cur.Label = "mpigo"
		}
		return
	}
	if m := reMpigo.FindStringSubmatch(c); m != nil {
		cur.Label = "mpigo " + m[1]
		cur.Ranks, _ = strconv.Atoi(m[2])
		return
	}
	if strings.HasPrefix(low, "size") {
		if f := strings.Fields(low); len(f) >= 4 && f[1] == "mpigo" && f[2] == "open" {
			cur.col = 2 // bench/compare.sh: Size, mpigo, Open MPI, ratio
		}
		switch {
		case strings.Contains(low, "bandwidth"):
			cur.Quantity = "bandwidth"
		case strings.Contains(low, "latency"), strings.Contains(low, "(us)"):
			cur.Quantity = "latency"
		}
		return
	}
	if strings.HasPrefix(low, "osu ") {
		for _, t := range osuTitles {
			if strings.Contains(low, t.words) {
				cur.Test = t.test
				break
			}
		}
		if cur.Label == "" {
			cur.Label = "OSU"
		}
		return
	}
	if m := reRanks.FindStringSubmatch(c); m != nil && !strings.Contains(low, "cmd:") && !strings.Contains(low, "idle") {
		cur.Label = strings.TrimSpace(m[1])
		cur.Ranks, _ = strconv.Atoi(m[2])
		cur.Variant = strings.TrimSpace(m[3])
	}
}

// quantityOf tells what a test measures.
func quantityOf(test string) string {
	if test == "bw" || test == "bibw" {
		return "bandwidth"
	}
	return "latency"
}

// refsFor picks the reference series for a chart of test on ranks: of
// the series of one name, the one with the most points (the full run
// rather than a repeat of a few sizes).
func refsFor(refs []refSeries, test string, ranks int) []refSeries {
	var out []refSeries
	index := map[string]int{}
	for _, r := range refs {
		if r.Test != test || (r.Ranks != 0 && r.Ranks != ranks) {
			continue
		}
		if i, ok := index[r.name()]; ok {
			if len(r.Sizes) > len(out[i].Sizes) {
				out[i] = r
			}
			continue
		}
		index[r.name()] = len(out)
		out = append(out, r)
	}
	return out
}

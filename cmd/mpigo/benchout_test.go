package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi/cmd/mpigo/internal/benchplot"
)

// refFile is the Open MPI reference output kept in the repository.
const refFile = "../../bench/ref/results-2026-11-22.txt"

// sampleRuns are results as a report holds them, one with the columns of
// a non-blocking test.
func sampleRuns() []*benchRun {
	return []*benchRun{
		{Test: "latency", Quantity: "latency", Unit: "us", Transport: "inproc", Ranks: 2, API: "typed", Repetitions: 3,
			Results: []benchPoint{{Size: 1, Median: 0.31, Min: 0.3, Max: 0.4, Iterations: 10000}, {Size: 4194304, Median: 410.125, Min: 400, Max: 1e3 / 3, Iterations: 250}}},
		{Test: "latency", Quantity: "latency", Unit: "us", Transport: "tcp", Ranks: 2, API: "typed", Repetitions: 3,
			Results: []benchPoint{{Size: 1, Median: 12.5, Min: 11, Max: 30, Iterations: 10000}}},
		{Test: "iallreduce", Quantity: "latency", Unit: "us", Transport: "inproc", Ranks: 4, API: "raw", Repetitions: 5,
			Results: []benchPoint{{Size: 8, Median: 20, Min: 18, Max: 25, Iterations: 200, NB: &nbColumns{Compute: 19.5, Pure: 10, Overlap: 0}}}},
		{Test: "bw", Quantity: "bandwidth", Unit: "MB/s", Transport: "shm", Ranks: 2, API: "object", Repetitions: 1,
			Results: []benchPoint{{Size: 65536, Median: 5432.1, Min: 5432.1, Max: 5432.1, Iterations: 20}}},
	}
}

func TestCSVJSONRoundTrip(t *testing.T) {
	all := sampleRuns()
	for _, tc := range []struct {
		name string
		runs []*benchRun
	}{
		{"one run", all[:1]},
		{"non-blocking", all[2:3]},
		{"several", all},
	} {
		var buf bytes.Buffer
		if err := writeCSV(&buf, tc.runs); err != nil {
			t.Fatal(err)
		}
		got, err := readCSV(&buf)
		if err != nil {
			t.Fatalf("%s: csv: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, tc.runs) {
			t.Errorf("%s: csv round trip:\n got %+v\nwant %+v", tc.name, got, tc.runs)
		}
		buf.Reset()
		full := make([]*benchRun, len(tc.runs))
		for i, r := range tc.runs {
			c := *r
			c.Mpigo, c.Go, c.GOMAXPROCS, c.CPUs, c.Date = "0.1.0", "go1.26", 2, 2, "2026-11-23T12:00:00Z"
			full[i] = &c
		}
		if err := writeJSON(&buf, full, false); err != nil {
			t.Fatal(err)
		}
		if single := len(full) == 1; single != strings.HasPrefix(buf.String(), "{") {
			t.Errorf("%s: one run should be a JSON object, several an array: %.40q", tc.name, buf.String())
		}
		got, err = readJSON(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: json: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, full) {
			t.Errorf("%s: json round trip:\n got %+v\nwant %+v", tc.name, got, full)
		}
		buf.Reset()
		writeJSON(&buf, full, true) // as mpigo bench report writes: always an array
		if got, err = readJSON(buf.Bytes()); err != nil || !strings.HasPrefix(buf.String(), "[") || !reflect.DeepEqual(got, full) {
			t.Errorf("%s: json array round trip: %v\n%s", tc.name, err, buf.String())
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	head := strings.Join(csvHeader, ",") + "\n"
	for _, tc := range []struct{ in, want string }{
		{"", "EOF"},
		{"size,value\n1,2\n", "wrong number of fields"},
		{strings.Replace(head, "median", "mean", 1), "not mpigo bench's"},
		{head + "latency,inproc,2,typed,eight,1,1,1,us,10,3,,,\n", "line 2"},
	} {
		if _, err := readCSV(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readCSV(%q): %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	p := summarize("allreduce", 64, 100, []float64{3, 1, 2, 10}, nil)
	if p.Median != 2.5 || p.Min != 1 || p.Max != 10 || p.Size != 64 || p.Iterations != 100 || p.NB != nil {
		t.Errorf("summarize: %+v", p)
	}
	p = summarize("iallreduce", 8, 5, []float64{5, 4, 6}, [][]float64{{1, 2, 30}, {3, 4, 10}, {2, 3, 20}})
	if p.Median != 5 || p.NB == nil || *p.NB != (nbColumns{Compute: 2, Pure: 3, Overlap: 20}) {
		t.Errorf("summarize non-blocking: %+v %+v", p, p.NB)
	}
}

// Each format of a real run: the sizes asked for, min <= median <= max,
// the repetitions said, and no progress or warning on stdout.
func TestBenchFormats(t *testing.T) {
	for _, tc := range []struct {
		format, transport string
	}{{"text", "inproc"}, {"csv", "inproc"}, {"json", "inproc"}, {"json", "shm"}, {"csv", "tcp"}} {
		var out, errb bytes.Buffer
		args := []string{"bench", "latency", "-sizes", "8,1024", "-iters", "20", "-reps", "3", "-format", tc.format, "-transport", tc.transport, "-progress", "lines"}
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		var runs []*benchRun
		var err error
		switch tc.format {
		case "csv":
			runs, err = readCSV(&out)
		case "json":
			runs, err = readJSON(out.Bytes())
		default:
			var refs []refSeries
			refs, err = parseOSU(out.Bytes(), "out")
			if err == nil && len(refs) == 1 {
				r := refs[0]
				if r.Label != "mpigo "+tc.transport || r.Test != "latency" || r.Ranks != 2 {
					t.Errorf("text header read back as %+v", r)
				}
				run := &benchRun{Test: r.Test, Transport: tc.transport, Ranks: r.Ranks, Repetitions: 3}
				for i, f := range strings.Split(strings.TrimSpace(out.String()), "\n")[4:] {
					var size int
					var med, lo, hi float64
					if _, err := fmt.Sscan(f, &size, &med, &lo, &hi); err != nil || size != r.Sizes[i] {
						t.Fatalf("bad line %q", f)
					}
					run.Results = append(run.Results, benchPoint{Size: size, Median: med, Min: lo, Max: hi})
				}
				runs = []*benchRun{run}
			}
			if !strings.Contains(out.String(), "# median of 3 repetitions") {
				t.Errorf("the text does not say how many repetitions:\n%s", out.String())
			}
		}
		if err != nil || len(runs) != 1 {
			t.Fatalf("%s over %s: %d runs, %v\n%s", tc.format, tc.transport, len(runs), err, out.String())
		}
		r := runs[0]
		if r.Test != "latency" || r.Transport != tc.transport || r.Repetitions != 3 || len(r.Results) != 2 {
			t.Fatalf("%s over %s: %+v", tc.format, tc.transport, r)
		}
		for i, p := range r.Results {
			if p.Size != []int{8, 1024}[i] || !(p.Min > 0 && p.Min <= p.Median && p.Median <= p.Max) {
				t.Errorf("%s over %s: point %+v", tc.format, tc.transport, p)
			}
			if tc.format != "text" && p.Iterations != 20 {
				t.Errorf("%s over %s: %d iterations, want 20", tc.format, tc.transport, p.Iterations)
			}
		}
		if strings.Contains(out.String(), "size 8 (1/2)") || strings.Contains(out.String(), childPrefix) {
			t.Errorf("%s over %s: progress or rank reports on stdout:\n%s", tc.format, tc.transport, out.String())
		}
		for _, want := range []string{"size 8 (1/2)...", "size 1024 (2/2)..."} {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%s over %s: no progress %q on stderr: %q", tc.format, tc.transport, want, errb.String())
			}
		}
	}
}

// mpigo bench started by a launcher (here mpigo run) prints from rank 0.
func TestBenchUnderRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	args := []string{"run", "-n", "2", exe, "bench", "latency", "-sizes", "8,64", "-iters", "10", "-reps", "2", "-format", "json"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	runs, err := readJSON(out.Bytes())
	if err != nil || len(runs) != 1 || runs[0].Ranks != 2 || len(runs[0].Results) != 2 || runs[0].Repetitions != 2 {
		t.Fatalf("%v: %s", err, out.String())
	}
}

func TestBenchFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "latency", "-format", "xml"}, `-format "xml": want text, csv or json`},
		{[]string{"bench", "latency", "-reps", "0"}, "want at least 1 repetition"},
		{[]string{"bench", "latency", "-plot", "x.gif"}, "must end in .svg or .png"},
		{[]string{"bench", "latency", "-ref", refFile}, "give -plot FILE.svg"},
		{[]string{"bench", "latency", "-progress", "loud"}, "want auto, lines or off"},
		{[]string{"bench", "report", "-tests", "barrier"}, "one size"},
		{[]string{"bench", "report", "-tests", "nosuch"}, `unknown test "nosuch"`},
		{[]string{"bench", "report", "-html", "", "-plot", ""}, "nothing to write"},
		{[]string{"bench", "report", "-ref", "/no/such/file"}, "no such file"},
		{[]string{"bench", "report", "-width", "5"}, "want 100 to 10000 pixels"},
		{[]string{"bench", "report", "extra"}, `unexpected argument "extra"`},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"bench", "-h"}, []string{"-format", "-plot", "-ref FILE", "-reps", "-progress", "mpigo bench report"}},
		{[]string{"bench", "report", "--help"}, []string{"Usage: mpigo bench report", "-transports", "-html", "self-contained"}},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errb.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: help lacks %q", tc.args, w)
			}
		}
	}
}

func TestCoresWarning(t *testing.T) {
	if w := coresWarning(1, "tcp"); w != "" {
		t.Errorf("1 rank: warning %q", w)
	}
	n := runtime.NumCPU() + 2
	w := coresWarning(n, "shm")
	if !strings.Contains(w, fmt.Sprintf("%d ranks on %d cores", n, runtime.NumCPU())) || strings.Contains(w, "\n") {
		t.Errorf("%d ranks: warning %q, want one line naming ranks and cores", n, w)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "barrier", "-n", fmt.Sprint(n), "-iters", "2", "-reps", "1"}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if !strings.Contains(errb.String(), "warning: ") || strings.Contains(out.String(), "warning") {
		t.Errorf("oversubscribed run: stderr %q, stdout %q", errb.String(), out.String())
	}
}

func TestProgressTerminal(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, tty: true}
	p.size(0, 3, 8)
	p.size(1, 3, 16)
	p.clear()
	p.done()
	if got, want := b.String(), "\r\033[Ksize 8 (1/3)...\r\033[Ksize 16 (2/3)...\r\033[K"; got != want {
		t.Errorf("terminal progress %q, want %q", got, want)
	}
	b.Reset()
	p = newProgress(&b, "auto") // not a terminal: silent
	p.size(0, 3, 8)
	p.done()
	if b.Len() != 0 {
		t.Errorf("progress to a buffer under auto: %q", b.String())
	}
}

func TestParseRef(t *testing.T) {
	data, err := os.ReadFile(refFile)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := parseRef(data, "results.txt")
	if err != nil {
		t.Fatal(err)
	}
	lat := refsFor(refs, "latency", 2)
	if len(lat) != 1 || lat[0].Label != "Open MPI 4.1.4" || len(lat[0].Sizes) != 23 || lat[0].Values[0] != 0.43 || lat[0].Quantity != "latency" {
		t.Errorf("latency, 2 ranks: %+v", lat)
	}
	bw := refsFor(refs, "bw", 2)
	if len(bw) != 2 || bw[0].Variant != "one rbuf" || bw[1].Variant != "rbuf per window slot" || len(bw[0].Sizes) != 23 || bw[0].Quantity != "bandwidth" {
		t.Errorf("bw, 2 ranks: %+v", bw)
	}
	if ar := refsFor(refs, "allreduce", 4); len(ar) != 1 || len(ar[0].Sizes) != 18 || ar[0].Ranks != 4 {
		t.Errorf("allreduce, 4 ranks: %+v", ar)
	}
	if got := refsFor(refs, "latency", 3); len(got) != 0 {
		t.Errorf("latency, 3 ranks: %+v, want none", got)
	}

	for _, tc := range []struct {
		name, text string
		want       refSeries
	}{
		{"OSU 7", "# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)\n1                       0.21\n2                       0.22\n",
			refSeries{Test: "latency", Quantity: "latency", Label: "OSU", Sizes: []int{1, 2}, Values: []float64{0.21, 0.22}}},
		{"OSU bibw", "# OSU MPI Bi-Directional Bandwidth Test v5.8\n# Size      Bandwidth (MB/s)\n1024 3000.5\n",
			refSeries{Test: "bibw", Quantity: "bandwidth", Label: "OSU", Sizes: []int{1024}, Values: []float64{3000.5}}},
		{"osu_like MPICH", "# osu_like bw\n# MPICH Version:\t4.0 (MPI 4.0), 2 ranks\n# Size       Bandwidth (MB/s)\n8            64.66\n",
			refSeries{Test: "bw", Quantity: "bandwidth", Label: "MPICH Version:\t4.0 (MPI 4.0)", Ranks: 2, Sizes: []int{8}, Values: []float64{64.66}}},
		{"compare.sh", "# latency, 2 ranks: mpigo (transport shm, api typed) vs Open MPI vader, run back to back\n" +
			"# Size                mpigo       Open MPI    ratio   (Latency (us), lower is better)\n8      0.30     0.42     0.71\n16     0.31     0.50     0.62\n",
			refSeries{Test: "latency", Quantity: "latency", Label: "Open MPI vader", Ranks: 2, Sizes: []int{8, 16}, Values: []float64{0.42, 0.50}, col: 2}},
		{"no header", "1 2.5\n4 3.5\n",
			refSeries{Test: "latency", Quantity: "latency", Label: "f.txt", Sizes: []int{1, 4}, Values: []float64{2.5, 3.5}}},
	} {
		got, err := parseRef([]byte(tc.text), "f.txt")
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%s: %+v, %v\nwant %+v", tc.name, got, err, tc.want)
		}
	}
	// mpigo's own csv and json are references too.
	var buf bytes.Buffer
	writeCSV(&buf, sampleRuns()[:2])
	got, err := parseRef(buf.Bytes(), "old.csv")
	if err != nil || len(got) != 2 || got[1].Label != "old.csv: mpigo tcp" || got[0].Values[1] != 410.125 {
		t.Errorf("csv reference: %+v %v", got, err)
	}
}

// countNear counts the pixels of img within tol of c in every channel.
func countNear(img image.Image, r image.Rectangle, c color.RGBA, tol int) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if abs(int(cr>>8)-int(c.R)) <= tol && abs(int(cg>>8)-int(c.G)) <= tol && abs(int(cb>>8)-int(c.B)) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(x int) int { return max(x, -x) }

// nonWhite counts the pixels of a region that are not (nearly) white.
func nonWhite(img image.Image, r image.Rectangle) int {
	return r.Intersect(img.Bounds()).Dx()*r.Intersect(img.Bounds()).Dy() - countNear(img, r, color.RGBA{255, 255, 255, 255}, 8)
}

func TestBenchPlotPNG(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lat.png")
	var out, errb bytes.Buffer
	args := []string{"bench", "latency", "-sizes", "1:4096", "-iters", "20", "-reps", "2", "-plot", file, "-ref", "Open MPI=" + refFile}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	all := img.Bounds()
	if n := countNear(img, all, benchplot.Palette[0], 10); n < 150 {
		t.Errorf("%d pixels of inproc's blue: no line drawn", n)
	}
	if n := countNear(img, all, benchplot.Palette[7], 10); n < 150 {
		t.Errorf("%d pixels of the reference's grey: no line drawn", n)
	}
	if n := nonWhite(img, all); n < all.Dx()*all.Dy()/50 {
		t.Errorf("only %d pixels are not white: the picture is blank", n)
	}
}

// The report over two transports with a reference: the picture file, and
// an HTML page that holds it (no outside resource), which headless
// Chromium then shows with the plot drawn.
func TestBenchReportHTML(t *testing.T) {
	dir := t.TempDir()
	page, svgFile := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.svg")
	var out, errb bytes.Buffer
	args := []string{"bench", "report", "-transports", "inproc,tcp", "-sizes", "1:65536", "-iters", "20", "-reps", "2",
		"-ref", refFile, "-html", page, "-plot", svgFile, "-format", "json", "-progress", "off"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	runs, err := readJSON(out.Bytes())
	if err != nil || len(runs) != 4 {
		t.Fatalf("stdout: %d runs, %v", len(runs), err)
	}
	for i, want := range []string{"latency inproc", "latency tcp", "bw inproc", "bw tcp"} {
		if got := runs[i].Test + " " + runs[i].Transport; got != want || len(runs[i].Results) != 17 {
			t.Errorf("run %d: %s with %d sizes, want %s with 17", i, got, len(runs[i].Results), want)
		}
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?i)(src|href)\s*=\s*"(https?:)?//`, `(?i)@import`, `(?i)url\(\s*["']?https?:`} {
		if m := regexp.MustCompile(re).Find(html); m != nil {
			t.Errorf("the page loads %q from outside", m)
		}
	}
	svg := html[bytes.Index(html, []byte("<svg")) : bytes.Index(html, []byte("</svg>"))+len("</svg>")]
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Errorf("the inline SVG does not parse: %v", err)
	}
	for _, want := range []string{"latency, 2 ranks", "bw, 2 ranks", "mpigo inproc", "mpigo tcp", "Open MPI 4.1.4 (one rbuf)", "<th>tcp</th>", "median of 2 repetitions"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if file, _ := os.ReadFile(svgFile); !bytes.Contains(file, svg[:200]) {
		t.Errorf("the page's SVG is not the -plot file's")
	}

	shot := screenshot(t, page)
	b := shot.Bounds()
	// The charts sit below the title, in the upper part of the window.
	plot := image.Rect(0, 100, b.Dx(), 600)
	if n := nonWhite(shot, plot); n < plot.Dx()*plot.Dy()/50 {
		t.Errorf("only %d drawn pixels where the plot should be: blank", n)
	}
	for _, c := range []struct {
		name string
		col  color.RGBA
	}{{"inproc", benchplot.Palette[0]}, {"tcp", benchplot.Palette[2]}, {"Open MPI", benchplot.Palette[7]}} {
		left := countNear(shot, image.Rect(0, 100, b.Dx()/2, 600), c.col, 16)
		right := countNear(shot, image.Rect(b.Dx()/2, 100, b.Dx(), 600), c.col, 16)
		if left < 100 || right < 100 {
			t.Errorf("%s's colour: %d pixels in the left chart, %d in the right; want a line in each", c.name, left, right)
		}
	}
}

// The page with a PNG picture holds it as a data URI.
func TestBenchReportPNG(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	var out, errb bytes.Buffer
	args := []string{"bench", "report", "-tests", "bibw", "-transports", "inproc", "-sizes", "64,4096,65536", "-iters", "5", "-reps", "1",
		"-html", page, "-plot", filepath.Join(dir, "r.png"), "-progress", "lines"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "bibw over inproc (1/1): size 4096 (2/3)...") {
		t.Errorf("no progress lines: %q", errb.String())
	}
	if !strings.HasPrefix(out.String(), "# mpigo bench bibw") {
		t.Errorf("stdout: %q", out.String())
	}
	html, _ := os.ReadFile(page)
	m := regexp.MustCompile(`src="data:image/png;base64,([A-Za-z0-9+/=]+)"`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no PNG data URI in the page")
	}
	raw, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if n := countNear(img, img.Bounds(), benchplot.Palette[0], 10); n < 100 {
		t.Errorf("%d pixels of inproc's colour in the embedded PNG", n)
	}
	file, _ := os.ReadFile(filepath.Join(dir, "r.png"))
	if !bytes.Equal(file, raw) {
		t.Errorf("the embedded PNG is not the -plot file")
	}
}

// screenshot opens file in headless Chromium and returns what it shows
// in a 1200x900 window; it skips when Chromium is missing, unless
// MPIGO_REQUIRE_INTEGRATION=1.
func screenshot(t *testing.T, file string) image.Image {
	t.Helper()
	chromium := needLauncher(t, "chromium", "apt-get install chromium")
	dir := t.TempDir()
	out := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+out, "--window-size=1200,900", "file://"+file)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(log.String(), 2000))
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v\n%s", err, tail(log.String(), 2000))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("MPIGO_KEEP_SCREENSHOT") != "" {
		f.Seek(0, io.SeekStart)
		data, _ := io.ReadAll(f)
		os.WriteFile(os.Getenv("MPIGO_KEEP_SCREENSHOT"), data, 0o644)
	}
	return img
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// -persistent measures AllreduceInit/BcastInit's Start and Wait, in every
// API that has the form and over processes too, and says so in the api
// column; tests without a persistent form refuse it.
func TestBenchPersistent(t *testing.T) {
	for _, tc := range []struct {
		test, api, transport string
	}{
		{"allreduce", "typed", "inproc"},
		{"allreduce", "raw", "inproc"},
		{"bcast", "typed", "inproc"},
		{"bcast", "raw", "inproc"},
		{"allreduce", "typed", "shm"},
	} {
		var out, errb bytes.Buffer
		args := []string{"bench", tc.test, "-persistent", "-api", tc.api, "-transport", tc.transport, "-n", "3",
			"-sizes", "8,4096", "-iters", "10", "-reps", "1", "-format", "json", "-progress", "off"}
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		runs, err := readJSON(out.Bytes())
		if err != nil || len(runs) != 1 {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		r := runs[0]
		if r.API != tc.api+"+persistent" || r.Test != tc.test || len(r.Results) != 2 {
			t.Errorf("%v: run %+v", args, r)
		}
		for _, p := range r.Results {
			if !(p.Median > 0) {
				t.Errorf("%v: point %+v", args, p)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "barrier", "-persistent"}, "-persistent applies to allreduce and bcast, not barrier"},
		{[]string{"bench", "latency", "-persistent"}, "-persistent applies to allreduce and bcast, not latency"},
		{[]string{"bench", "allreduce", "-persistent", "-api", "set"}, "-api set has no persistent form"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error saying %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// The partitioned test measures both forms in every repetition, over
// goroutine ranks and processes, and prints the plain form's time in its
// own column (text) and field (json); it needs two ranks.
func TestBenchPartitioned(t *testing.T) {
	for _, transport := range []string{"inproc", "shm"} {
		var out, errb bytes.Buffer
		args := []string{"bench", "partitioned", "-transport", transport, "-n", "3",
			"-sizes", "6,65536", "-iters", "5", "-reps", "1", "-format", "json", "-progress", "off"}
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		runs, err := readJSON(out.Bytes())
		if err != nil || len(runs) != 1 {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		r := runs[0]
		if r.Test != "partitioned" || r.Unit != "us" || len(r.Results) != 2 {
			t.Fatalf("%v: run %+v", args, r)
		}
		for _, p := range r.Results {
			if !(p.Median > 0) || !(p.JoinSendUS > 0) || p.OpUS != 0 || p.NB != nil {
				t.Errorf("%v: point %+v", args, p)
			}
		}
	}
	var out, errb bytes.Buffer
	args := []string{"bench", "partitioned", "-sizes", "1024", "-iters", "3", "-reps", "1", "-progress", "off"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.Contains(out.String(), "Partitioned(us)") || !strings.Contains(out.String(), "Join+send(us)") || len(strings.Fields(lines[len(lines)-1])) != 5 {
		t.Errorf("%v: text output\n%s", args, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"bench", "partitioned", "-n", "1"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "partitioned needs at least 2 ranks") {
		t.Errorf("-n 1: exit %d, stderr %q", code, errb.String())
	}
}

package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestBenchIO: mpigo bench io measures every I/O test, in every output
// format, into -dir, and leaves nothing there.
func TestBenchIO(t *testing.T) {
	for _, format := range []string{"text", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			args := []string{"bench", "io", "-sizes", "512,4096", "-iters", "2", "-reps", "2", "-format", format, "-progress", "off", "-dir", dir}
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errb.String())
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("files left in -dir: %v", left)
			}
			var runs []*benchRun
			var err error
			switch format {
			case "csv":
				runs, err = readCSV(&out)
			case "json":
				runs, err = readJSON(out.Bytes())
			default:
				blocks := strings.Split(out.String(), "# mpigo bench ")[1:]
				if len(blocks) != len(ioTests) {
					t.Fatalf("%d text blocks, want %d:\n%s", len(blocks), len(ioTests), out.String())
				}
				for i, blk := range blocks {
					lines := strings.Split(strings.TrimSpace(blk), "\n")
					if lines[0] != ioTests[i] || !strings.Contains(lines[3], "Time/op(us)") || len(lines) != 6 {
						t.Fatalf("block %d:\n%s", i, blk)
					}
					for _, l := range lines[4:] {
						if f := strings.Fields(l); len(f) != 5 {
							t.Errorf("%s: line %q: want size, MB/s, min, max, time per op", ioTests[i], l)
						}
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			var tests []string
			for _, r := range runs {
				tests = append(tests, r.Test)
				if r.Unit != "MB/s" || len(r.Results) != 2 || r.Ranks != 2 {
					t.Errorf("%s: %+v", r.Test, r)
				}
				for i, p := range r.Results {
					if p.Size != []int{512, 4096}[i] || !(p.Min > 0 && p.Min <= p.Median && p.Median <= p.Max) || p.Iterations != 2 {
						t.Errorf("%s: point %+v", r.Test, p)
					}
					if format == "json" && p.OpUS <= 0 {
						t.Errorf("%s: no time per operation: %+v", r.Test, p)
					}
				}
			}
			if !slices.Equal(tests, ioTests) {
				t.Errorf("tests %v, want %v", tests, ioTests)
			}
		})
	}
}

// TestBenchIOShm: an I/O test with ranks as processes (the -dir flag
// reaches them).
func TestBenchIOShm(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"bench", "io_strided_write_coll", "-transport", "shm", "-sizes", "1024", "-iters", "2", "-reps", "1", "-format", "json", "-progress", "off", "-dir", dir}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	runs, err := readJSON(out.Bytes())
	if err != nil || len(runs) != 1 || len(runs[0].Results) != 1 || runs[0].Results[0].OpUS <= 0 {
		t.Fatalf("%v: %s", err, out.String())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left in -dir: %v", left)
	}
}

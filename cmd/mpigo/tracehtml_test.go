package main

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// chromium returns the headless browser, or skips (fails under
// MPIGO_REQUIRE_INTEGRATION=1) when it is not installed.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
		t.Fatal("chromium is not installed (apt-get install chromium), and MPIGO_REQUIRE_INTEGRATION=1")
	}
	t.Skip("chromium is not installed (apt-get install chromium): not checking the HTML timeline in a browser")
	return ""
}

// TestTraceHTML records a 4-rank job, writes the page with mpigo trace
// -html, opens it in headless Chromium and checks the screenshot: one
// coloured track band per rank, and calls drawn on them.
func TestTraceHTML(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "job.json")
	cfg := mpi.DefaultConfig()
	cfg.Trace = file
	const n = 4
	err := mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
		r := c.Rank()
		for i := 0; i < 20; i++ {
			if _, _, err := mpi.Sendrecv[[]float64](c, make([]float64, 64), (r+1)%n, i, (r+n-1)%n, i); err != nil {
				return err
			}
			if _, err := mpi.Allreduce(c, float64(r), mpi.Sum[float64]()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "job.html")
	var out strings.Builder
	if code := run([]string{"trace", file, "-html", page}, &out, &out); code != 0 {
		t.Fatalf("mpigo trace -html: %d\n%s", code, out.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://", "https://", "<link", "src="} {
		if strings.Contains(string(html), bad) {
			t.Errorf("the page is not self-contained: it has %q", bad)
		}
	}
	shot := filepath.Join(dir, "out.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,800", "file://"+page)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	fh, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	bands, drawn := tracks(img)
	if bands != n {
		t.Errorf("the screenshot shows %d track bands, want %d (one per rank)", bands, n)
	}
	if drawn < 500 {
		t.Errorf("only %d pixels of calls drawn: the timeline is blank", drawn)
	}
}

// tracks counts the distinct coloured bands down the page's left margin
// (where only the track backgrounds are drawn), and the strongly coloured
// pixels to the right of the labels (calls).
func tracks(img image.Image) (bands, drawn int) {
	b := img.Bounds()
	seen := map[[3]uint32]bool{}
	var prev [3]uint32
	for y := b.Min.Y; y < b.Max.Y; y++ {
		r, g, bl, _ := img.At(b.Min.X+3, y).RGBA()
		c := [3]uint32{r >> 8, g >> 8, bl >> 8}
		white := c[0] > 250 && c[1] > 250 && c[2] > 250
		if !white && c != prev && !seen[c] {
			// A band is at least a few pixels tall of one colour.
			same := 0
			for k := 0; k < 10 && y+k < b.Max.Y; k++ {
				r2, g2, b2, _ := img.At(b.Min.X+3, y+k).RGBA()
				if [3]uint32{r2 >> 8, g2 >> 8, b2 >> 8} == c {
					same++
				}
			}
			if same == 10 {
				seen[c] = true
			}
		}
		prev = c
	}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X + 100; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl)>>8, min(r, g, bl)>>8
			if hi-lo > 80 { // saturated: a call's colour, not a pale band
				drawn++
			}
		}
	}
	// The header bar is dark grey, not a band.
	return len(seen) - countDark(seen), drawn
}

func countDark(seen map[[3]uint32]bool) int {
	n := 0
	for c := range seen {
		if c[0] < 128 && c[1] < 128 && c[2] < 128 {
			n++
		}
	}
	return n
}

package benchplot

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

// sample returns two charts like a report's: latency and bandwidth of
// two transports, and a dashed reference series.
func sample() []Chart {
	var sizes []float64
	for s := 1.0; s <= 1<<22; s *= 2 {
		sizes = append(sizes, s)
	}
	curve := func(base, per float64) (y, lo, hi []float64) {
		for _, s := range sizes {
			v := base + s*per
			y, lo, hi = append(y, v), append(lo, v*0.9), append(hi, v*1.2)
		}
		return
	}
	y1, l1, h1 := curve(0.3, 1e-4)
	y2, l2, h2 := curve(2, 3e-4)
	y3, _, _ := curve(0.5, 1e-4)
	bw := func(lat []float64) []float64 {
		out := make([]float64, len(lat))
		for i := range lat {
			out[i] = sizes[i] / lat[i]
		}
		return out
	}
	return []Chart{
		{Title: "latency", YLabel: "latency (us)", Series: []Series{
			{Name: "inproc", X: sizes, Y: y1, Lo: l1, Hi: h1, Color: Palette[0]},
			{Name: "tcp", X: sizes, Y: y2, Lo: l2, Hi: h2, Color: Palette[1]},
			{Name: "Open MPI", X: sizes, Y: y3, Color: Palette[7], Dashed: true},
		}},
		{Title: "bandwidth", YLabel: "bandwidth (MB/s)", Series: []Series{
			{Name: "inproc", X: sizes, Y: bw(y1), Color: Palette[0]},
			{Name: "tcp", X: sizes, Y: bw(y2), Color: Palette[1]},
		}},
	}
}

// near tells whether two colours differ by at most tol in every channel.
func near(c color.Color, want color.RGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(x uint32, y uint8) bool { return math.Abs(float64(int(x>>8)-int(y))) <= float64(tol) }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// ColourCount counts the pixels of img near each of the colours.
func colourCount(img image.Image, cols []color.RGBA) []int {
	n := make([]int, len(cols))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			for i, c := range cols {
				if near(img.At(x, y), c, 12) {
					n[i]++
				}
			}
		}
	}
	return n
}

func TestRenderPNG(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "png", sample(), 600, 420); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 420 {
		t.Fatalf("picture is %v, want 1200x420", b)
	}
	if os.Getenv("BENCHPLOT_KEEP") != "" {
		var out bytes.Buffer
		png.Encode(&out, img)
		os.WriteFile(os.Getenv("BENCHPLOT_KEEP"), out.Bytes(), 0o644)
	}
	distinct := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			distinct[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
		}
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct colours: the picture is (nearly) blank", len(distinct))
	}
	white := colourCount(img, []color.RGBA{{255, 255, 255, 255}})[0]
	if white < b.Dx()*b.Dy()/2 {
		t.Errorf("only %d white pixels of %d: no white background", white, b.Dx()*b.Dy())
	}
	// Each series' colour covers line pixels in its own half of the
	// picture: inproc and tcp in both charts, the reference in the left.
	left := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(0, 0, 600, 420))
	right := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(600, 0, 1200, 420))
	cols := []color.RGBA{Palette[0], Palette[1], Palette[7]}
	l, r := colourCount(left, cols), colourCount(right, cols)
	for i, name := range []string{"inproc", "tcp", "reference"} {
		if l[i] < 200 {
			t.Errorf("left chart: %d pixels of %s's colour, want a drawn line (>= 200)", l[i], name)
		}
	}
	for i, name := range []string{"inproc", "tcp"} {
		if r[i] < 200 {
			t.Errorf("right chart: %d pixels of %s's colour, want a drawn line (>= 200)", r[i], name)
		}
	}
	if r[2] > 50 { // grey text is near palette grey; the line is not there
		t.Logf("right chart: %d pixels near the reference grey (text anti-aliasing)", r[2])
	}
}

func TestRenderSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "svg", sample(), 600, 420); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	var root string
	strokes := map[string]int{}
	texts := map[string]bool{}
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			inText = el.Name.Local == "text"
			for _, a := range el.Attr {
				if a.Name.Local == "style" {
					for _, decl := range strings.Split(a.Value, ";") {
						if v, ok := strings.CutPrefix(strings.TrimSpace(decl), "stroke:"); ok {
							strokes[strings.ToLower(v)]++
						}
					}
				}
			}
		case xml.CharData:
			if inText {
				texts[strings.TrimSpace(string(el))] = true
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	for _, c := range []string{"#1f77b4", "#ff7f0e", "#7f7f7f"} {
		if strokes[c] == 0 {
			t.Errorf("no path stroked in %s; strokes: %v", c, strokes)
		}
	}
	for _, want := range []string{"latency", "bandwidth", "inproc", "tcp", "Open MPI", "1K", "4M", "message size (bytes)"} {
		if !texts[want] {
			t.Errorf("no text %q in the SVG", want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format string
		charts []Chart
		w, h   int
		want   string
	}{
		{"no charts", "svg", nil, 600, 400, "nothing to draw"},
		{"bad format", "gif", sample(), 600, 400, `"gif"`},
		{"too small", "png", sample(), 10, 400, "picture size"},
		{"only size 0", "svg", []Chart{{Title: "barrier", Series: []Series{{Name: "x", X: []float64{0}, Y: []float64{3}}}}}, 600, 400, "no point to draw"},
		{"negative and NaN", "png", []Chart{{Title: "t", Series: []Series{{Name: "x", X: []float64{-1, math.NaN()}, Y: []float64{1, 2}}}}}, 600, 400, "no point to draw"},
	} {
		err := Render(io.Discard, tc.format, tc.charts, tc.w, tc.h)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// One point, or equal values, still draws.
	one := []Chart{{Title: "one", Series: []Series{{Name: "x", X: []float64{8}, Y: []float64{2}}}}}
	if err := Render(io.Discard, "png", one, 300, 200); err != nil {
		t.Errorf("one point: %v", err)
	}
}

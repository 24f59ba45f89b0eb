// Package benchplot draws mpigo bench results: values against message
// size on log axes, one line per series, charts side by side, as SVG or
// PNG. It uses gonum.org/v1/plot and is imported by cmd/mpigo only, so
// programs using the mpi package never compile it (see docs/bench.md).
package benchplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line of a chart.
type Series struct {
	Name string
	// X holds message sizes in bytes, Y the values; points where either
	// is not positive cannot be placed on log axes and are left out.
	X, Y []float64
	// Lo and Hi, if set, are the lowest and highest value of each point
	// (over repetitions), drawn as error bars.
	Lo, Hi []float64
	Color  color.RGBA
	Dashed bool // reference series: a dashed line
}

// Chart is one panel: Y against message size.
type Chart struct {
	Title  string
	YLabel string // with its unit, e.g. "latency (us)"
	Series []Series
	// LegendBottomRight moves the legend from the top left corner (empty
	// when values grow with size from a low start, as latencies do) to
	// the bottom right one (empty when they level off high, as
	// bandwidths do).
	LegendBottomRight bool
}

// Palette holds well distinguishable colours (those of matplotlib's
// tab10), for the series of a chart.
var Palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
}

// Formats are the picture formats Render writes.
var Formats = []string{"svg", "png"}

// Render draws the charts side by side, each width x height pixels
// (at 96 pixels per inch), and writes the picture to w as format "svg"
// or "png".
func Render(w io.Writer, format string, charts []Chart, width, height int) (err error) {
	if len(charts) == 0 {
		return errors.New("nothing to draw")
	}
	if width < 100 || height < 100 || width > 10000 || height > 10000 {
		return fmt.Errorf("picture size %dx%d: want 100 to 10000 pixels each way", width, height)
	}
	defer func() {
		// gonum/plot panics on some degenerate input; a picture that
		// cannot be drawn is an error for the caller, not a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing the plot: %v", r)
		}
	}()
	row := make([]*plot.Plot, len(charts))
	for i, c := range charts {
		if row[i], err = build(c); err != nil {
			return err
		}
	}
	const dpi = 96
	pw := vg.Length(width*len(charts)) * vg.Inch / dpi
	ph := vg.Length(height) * vg.Inch / dpi
	var canvas vg.CanvasWriterTo
	var dc draw.Canvas
	switch format {
	case "svg":
		c := vgsvg.New(pw, ph)
		canvas, dc = c, draw.New(c)
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(pw, ph), vgimg.UseDPI(dpi))
		canvas, dc = vgimg.PngCanvas{Canvas: c}, draw.New(c)
	default:
		return fmt.Errorf("picture format %q: want svg or png", format)
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(charts), PadX: vg.Points(10), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	_, err = canvas.WriteTo(w)
	return err
}

// build makes the plot of one chart.
func build(c Chart) (*plot.Plot, error) {
	p := plot.New()
	sans := func(s *font.Font) { s.Typeface, s.Variant = "Liberation", "Sans" }
	sans(&p.Title.TextStyle.Font)
	sans(&p.X.Label.TextStyle.Font)
	sans(&p.Y.Label.TextStyle.Font)
	sans(&p.X.Tick.Label.Font)
	sans(&p.Y.Tick.Label.Font)
	sans(&p.Legend.TextStyle.Font)
	p.Title.Text = c.Title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = "message size (bytes)"
	p.Y.Label.Text = c.YLabel
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.Y.Tick.Marker = valueTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(12), vg.Points(-4)
	if c.LegendBottomRight {
		p.Legend.Top, p.Legend.Left = false, false
		p.Legend.XOffs, p.Legend.YOffs = vg.Points(-8), vg.Points(6)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	drawn := 0
	for _, s := range c.Series {
		xys, lo, hi := points(s)
		if len(xys) == 0 {
			continue
		}
		drawn++
		line, dots, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("series %q: %v", s.Name, err)
		}
		line.Color, line.Width = s.Color, vg.Points(1.6)
		dots.Color, dots.Radius = s.Color, vg.Points(2)
		dots.Shape = draw.CircleGlyph{}
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			dots.Shape = draw.SquareGlyph{}
		}
		p.Add(line, dots)
		if lo != nil {
			bars, err := plotter.NewYErrorBars(errorBars{xys, lo, hi})
			if err != nil {
				return nil, fmt.Errorf("series %q: %v", s.Name, err)
			}
			bars.Color, bars.Width, bars.CapWidth = s.Color, vg.Points(1), vg.Points(5)
			p.Add(bars)
		}
		p.Legend.Add(s.Name, line, dots)
	}
	if drawn == 0 {
		return nil, fmt.Errorf("%s: no point to draw (log axes need sizes and values above 0)", c.Title)
	}
	// Keep the axes' ends positive and apart: one point, or equal
	// values, would give an empty log range.
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	if p.Y.Min == p.Y.Max {
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	}
	return p, nil
}

// points returns the placeable points of s, with their error bars (as
// offsets below and above) when s has Lo and Hi.
func points(s Series) (xys plotter.XYs, lo, hi []float64) {
	bars := len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X)
	for i := range min(len(s.X), len(s.Y)) {
		x, y := s.X[i], s.Y[i]
		if !(x > 0 && y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
		if bars {
			l, h := s.Lo[i], s.Hi[i]
			if !(l > 0 && l <= y) {
				l = y
			}
			if !(h >= y) || math.IsInf(h, 0) {
				h = y
			}
			lo, hi = append(lo, y-l), append(hi, h-y)
		}
	}
	return xys, lo, hi
}

// errorBars presents points with their offsets to plotter.YErrorBars.
type errorBars struct {
	plotter.XYs
	lo, hi []float64
}

func (e errorBars) YError(i int) (float64, float64) { return e.lo[i], e.hi[i] }

// sizeTicks marks powers of two on a size axis, labelled in bytes with
// K and M suffixes (K = 1024), every 4x when they fit.
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	a := int(math.Floor(math.Log2(lo)))
	b := int(math.Ceil(math.Log2(hi)))
	step := 2 // label every 4x
	if b-a > 24 {
		step = 4
	}
	var ticks []plot.Tick
	for e := a; e <= b; e++ {
		v := math.Exp2(float64(e))
		t := plot.Tick{Value: v}
		if e%step == 0 || b-a <= 4 {
			t.Label = sizeLabel(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func sizeLabel(v float64) string {
	switch {
	case v >= 1<<30:
		return strconv.FormatFloat(v/(1<<30), 'g', 4, 64) + "G"
	case v >= 1<<20:
		return strconv.FormatFloat(v/(1<<20), 'g', 4, 64) + "M"
	case v >= 1<<10:
		return strconv.FormatFloat(v/(1<<10), 'g', 4, 64) + "K"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// valueTicks marks 1, 2 and 5 times the powers of ten on a log value
// axis; all three are labelled over up to three decades, only the powers
// of ten beyond.
type valueTicks struct{}

func (valueTicks) Ticks(lo, hi float64) []plot.Tick {
	a := int(math.Floor(math.Log10(lo)))
	b := int(math.Ceil(math.Log10(hi)))
	all := b-a <= 3
	var ticks []plot.Tick
	for e := a; e <= b; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow10(e)
			t := plot.Tick{Value: v}
			if m == 1 || all {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

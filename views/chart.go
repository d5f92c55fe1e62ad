package views

import (
	"context"
	"io"
	"math"
	"strconv"

	"github.com/a-h/templ"
)

// Chart is an inline SVG line chart of a member's score over recent
// periods, laid out on the server so that it needs no script.
type Chart struct {
	Width, Height int
	Title         string // accessible name
	Line          string // polyline points "x,y x,y"; empty with fewer than 2 present points
	Dots          []ChartDot
	Ticks         []ChartTick // y axis
	XLabels       []ChartTick // first and last period
	Empty         bool        // no point has a score
	Note          string      // how to read it, e.g. "Lower is better: drawn higher."
}

// ChartDot is one period with a score.
type ChartDot struct {
	X, Y  string
	Label string // "2026-11-16: 105"
}

// ChartTick is an axis label at a position.
type ChartTick struct {
	X, Y   string
	Label  string
	Anchor string // SVG text-anchor: start, middle or end
}

// ChartPoint is one period's input to NewChart.
type ChartPoint struct {
	Period  string // the period's id
	Label   string // the period in words for the axis ("16 Nov"); the id when empty
	Value   float64
	Score   string // formatted
	Present bool
}

// ChartOptions shape a chart.
type ChartOptions struct {
	Integer       bool // whole-number ticks (a board without decimals, ranks)
	LowerIsBetter bool // the axis is flipped so that better is up
	NoZero        bool // do not stretch the axis to zero (ranks start at 1)
}

func (p ChartPoint) label() string {
	if p.Label != "" {
		return p.Label
	}
	return p.Period
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 560, 180
	padL, padR, padT, padB = 56, 12, 12, 28
)

// NewChart lays out points (oldest first). Absent periods break the line
// into what is present; the y axis includes zero when all values share a
// sign (unless NoZero), so small changes are not magnified into cliffs.
// LowerIsBetter flips the axis, so that better is always up.
func NewChart(title string, points []ChartPoint, opt ChartOptions) Chart {
	c := Chart{Width: chartW, Height: chartH, Title: title, Empty: true}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		if p.Present {
			c.Empty = false
			lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		}
	}
	if c.Empty || len(points) == 0 {
		return c
	}
	if !opt.NoZero {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if opt.Integer {
		lo, hi = math.Floor(lo), math.Ceil(hi)
	}
	if hi == lo {
		hi = lo + 1
	}
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(i int) float64 {
		if len(points) == 1 {
			return padL + plotW/2
		}
		return padL + plotW*float64(i)/float64(len(points)-1)
	}
	y := func(v float64) float64 { return padT + plotH*(hi-v)/(hi-lo) }
	if opt.LowerIsBetter {
		y = func(v float64) float64 { return padT + plotH*(v-lo)/(hi-lo) }
		c.Note = "Lower is better: lower values are drawn higher."
	}
	// The line's "x,y x,y" is written once, and each dot's x and y are
	// slices of it: one string for every position on the chart.
	var buf [24 * 16]byte
	line := buf[:0]
	var atBuf [16][4]int
	at := atBuf[:0] // each dot's x and y, as offsets in line
	c.Dots = make([]ChartDot, 0, len(points))
	for i, p := range points {
		if !p.Present {
			continue
		}
		if len(at) > 0 {
			line = append(line, ' ')
		}
		x0 := len(line)
		line = appendNum(line, x(i))
		x1 := len(line)
		line = append(line, ',')
		line = appendNum(line, y(p.Value))
		at = append(at, [4]int{x0, x1, x1 + 1, len(line)})
		c.Dots = append(c.Dots, ChartDot{Label: p.label() + ": " + p.Score})
	}
	ls := string(line)
	for i, o := range at {
		c.Dots[i].X, c.Dots[i].Y = ls[o[0]:o[1]], ls[o[2]:o[3]]
	}
	if len(at) >= 2 {
		c.Line = ls
	}
	mid := (hi + lo) / 2
	if opt.Integer {
		mid = math.Round(mid)
	}
	seen := map[float64]bool{}
	for _, v := range []float64{hi, mid, lo} {
		if seen[v] {
			continue
		}
		seen[v] = true
		c.Ticks = append(c.Ticks, ChartTick{X: num(padL - 6), Y: num(y(v) + 4), Label: shortNumber(v, opt.Integer), Anchor: "end"})
	}
	// The first label starts at its point and the last ends at its own,
	// so neither is cut by the chart's edge.
	c.XLabels = append(c.XLabels, ChartTick{X: num(x(0)), Y: num(chartH - 8), Label: points[0].label(), Anchor: "start"})
	if len(points) > 1 {
		c.XLabels = append(c.XLabels, ChartTick{X: num(x(len(points) - 1)), Y: num(chartH - 8), Label: points[len(points)-1].label(), Anchor: "end"})
	}
	if len(points) == 1 {
		c.XLabels[0].Anchor = "middle"
	}
	return c
}

func num(f float64) string { return string(appendNum(nil, f)) }

// appendNum appends a chart position, to a tenth of a unit.
func appendNum(b []byte, f float64) []byte {
	return strconv.AppendFloat(b, math.Round(f*10)/10, 'f', -1, 64)
}

// shortNumber writes an axis value compactly: 1234567 -> 1.2M; whole
// numbers only when integer.
func shortNumber(v float64, integer bool) string {
	if integer {
		v = math.Round(v)
	}
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "B"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// chart draws a Chart; id and test name the svg (score or rank chart),
// and empty is said when no period has a score. It is written in Go for
// the reason standingsRows is: every rank card draws two charts of up to
// 24 labelled dots, and templ formats each { expression } through
// fmt.Sprint. The markup is that of the reference component chartTempl
// (chart_ref.templ), byte for byte: TestChartMatchesTempl checks it.
func chart(c Chart, id, test, empty string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		sw, ok := w.(io.StringWriter)
		if !ok {
			sw = stringWriter{w}
		}
		h := htmlWriter{w: sw}
		if c.Empty {
			h.raw(`<p class="muted">`)
			h.esc(empty)
			h.raw(`</p>`)
			return h.err
		}
		h.raw(`<figure class="chart"><svg id="`)
		h.esc(id)
		h.raw(`" data-testid="`)
		h.esc(test)
		h.raw(`" role="img" aria-label="`)
		h.esc(c.Title)
		h.raw(`" viewBox="0 0 `)
		h.raw(strconv.Itoa(c.Width))
		h.raw(` `)
		h.raw(strconv.Itoa(c.Height))
		h.raw(`" preserveAspectRatio="xMidYMid meet"><title>`)
		h.esc(c.Title)
		h.raw(`</title>`)
		for _, ticks := range [2][]ChartTick{c.Ticks, c.XLabels} {
			for _, t := range ticks {
				h.raw(`<text class="tick" x="`)
				h.esc(t.X)
				h.raw(`" y="`)
				h.esc(t.Y)
				h.raw(`" text-anchor="`)
				h.esc(t.Anchor)
				h.raw(`">`)
				h.esc(t.Label)
				h.raw(`</text> `)
			}
		}
		if c.Line != "" {
			h.raw(`<polyline class="line" points="`)
			h.esc(c.Line)
			h.raw(`" fill="none"></polyline> `)
		}
		for _, d := range c.Dots {
			h.raw(`<circle class="dot" cx="`)
			h.esc(d.X)
			h.raw(`" cy="`)
			h.esc(d.Y)
			h.raw(`" r="3.5"><title>`)
			h.esc(d.Label)
			h.raw(`</title></circle>`)
		}
		h.raw(`</svg> `)
		if c.Note != "" {
			h.raw(`<figcaption class="muted small" data-testid="` + TestChartNote + `">`)
			h.esc(c.Note)
			h.raw(`</figcaption>`)
		}
		h.raw(`</figure>`)
		return h.err
	})
}

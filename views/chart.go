package views

import (
	"math"
	"strconv"
	"strings"
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
}

// ChartDot is one period with a score.
type ChartDot struct {
	X, Y  string
	Label string // "2026-11-16: 105"
}

// ChartTick is an axis label at a position.
type ChartTick struct {
	X, Y  string
	Label string
}

// ChartPoint is one period's input to NewChart.
type ChartPoint struct {
	Period  string
	Value   float64
	Score   string // formatted
	Present bool
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 560, 180
	padL, padR, padT, padB = 56, 12, 12, 28
)

// NewChart lays out points (oldest first). Absent periods break the line
// into what is present; the y axis always includes zero when all values
// share a sign, so small changes are not magnified into cliffs.
func NewChart(title string, points []ChartPoint) Chart {
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
	if lo > 0 {
		lo = 0
	}
	if hi < 0 {
		hi = 0
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
	var line []string
	present := 0
	for i, p := range points {
		if !p.Present {
			continue
		}
		present++
		xs, ys := num(x(i)), num(y(p.Value))
		line = append(line, xs+","+ys)
		c.Dots = append(c.Dots, ChartDot{X: xs, Y: ys, Label: p.Period + ": " + p.Score})
	}
	if present >= 2 {
		c.Line = strings.Join(line, " ")
	}
	for _, v := range []float64{hi, (hi + lo) / 2, lo} {
		c.Ticks = append(c.Ticks, ChartTick{X: num(padL - 6), Y: num(y(v) + 4), Label: shortNumber(v)})
	}
	c.XLabels = append(c.XLabels, ChartTick{X: num(x(0)), Y: num(chartH - 8), Label: points[0].Period})
	if len(points) > 1 {
		c.XLabels = append(c.XLabels, ChartTick{X: num(x(len(points) - 1)), Y: num(chartH - 8), Label: points[len(points)-1].Period})
	}
	return c
}

func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

// shortNumber writes an axis value compactly: 1234567 -> 1.2M.
func shortNumber(v float64) string {
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
	return strconv.FormatFloat(v, 'f', 2, 64)
}

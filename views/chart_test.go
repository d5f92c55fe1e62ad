package views_test

import (
	"strings"
	"testing"

	"github.com/standings/standings/views"
)

func TestNewChart(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		if c := views.NewChart("t", []views.ChartPoint{{Period: "a"}}, views.ChartOptions{}); !c.Empty || len(c.Dots) != 0 {
			t.Errorf("%+v", c)
		}
	})
	t.Run("gaps and zero baseline", func(t *testing.T) {
		c := views.NewChart("t", []views.ChartPoint{
			{Period: "w1", Value: 10, Score: "10", Present: true},
			{Period: "w2"},
			{Period: "w3", Value: 20, Score: "20", Present: true},
		}, views.ChartOptions{})
		if c.Empty || len(c.Dots) != 2 || c.Line == "" {
			t.Fatalf("%+v", c)
		}
		// 20 is at the top of the plot, 10 halfway down (zero is the floor).
		if c.Dots[1].Y != "12" || c.Dots[0].Y != "82" {
			t.Errorf("y positions %s %s", c.Dots[0].Y, c.Dots[1].Y)
		}
		if c.Dots[0].X != "56" || c.Dots[1].X != "548" {
			t.Errorf("x positions %s %s", c.Dots[0].X, c.Dots[1].X)
		}
		if c.Ticks[0].Label != "20" || c.Ticks[2].Label != "0" || c.XLabels[0].Label != "w1" || c.XLabels[1].Label != "w3" {
			t.Errorf("labels %+v %+v", c.Ticks, c.XLabels)
		}
		if c.Dots[1].Label != "w3: 20" {
			t.Errorf("dot label %q", c.Dots[1].Label)
		}
	})
	t.Run("single point, negative", func(t *testing.T) {
		c := views.NewChart("t", []views.ChartPoint{{Period: "all", Value: -5, Score: "-5", Present: true}}, views.ChartOptions{})
		if c.Line != "" || len(c.Dots) != 1 || c.Dots[0].Y != "152" {
			t.Errorf("%+v", c)
		}
	})
	t.Run("whole numbers, human labels, nothing cut at the edges", func(t *testing.T) {
		c := views.NewChart("t", []views.ChartPoint{
			{Period: "2026-11-16", Label: "16 Nov", Value: 447, Score: "447", Present: true},
			{Period: "2026-11-23", Label: "23 Nov", Value: 450, Score: "450", Present: true},
		}, views.ChartOptions{Integer: true})
		var ticks []string
		for _, tk := range c.Ticks {
			ticks = append(ticks, tk.Label)
		}
		if strings.Join(ticks, " ") != "450 225 0" {
			t.Errorf("ticks %v", ticks)
		}
		if c.XLabels[0].Label != "16 Nov" || c.XLabels[0].Anchor != "start" || c.XLabels[1].Label != "23 Nov" || c.XLabels[1].Anchor != "end" {
			t.Errorf("x labels %+v", c.XLabels)
		}
		if c.Dots[1].Label != "23 Nov: 450" {
			t.Errorf("dot %q", c.Dots[1].Label)
		}
	})
	t.Run("lower is better is drawn up", func(t *testing.T) {
		c := views.NewChart("t", []views.ChartPoint{
			{Period: "a", Value: 1, Score: "#1", Present: true},
			{Period: "b", Value: 5, Score: "#5", Present: true},
		}, views.ChartOptions{Integer: true, LowerIsBetter: true, NoZero: true})
		if c.Dots[0].Y != "12" || c.Dots[1].Y != "152" {
			t.Errorf("rank 1 must be at the top: %s %s", c.Dots[0].Y, c.Dots[1].Y)
		}
		if c.Ticks[len(c.Ticks)-1].Label != "1" || c.Ticks[len(c.Ticks)-1].Y != "16" || c.Ticks[0].Label != "5" || c.Note == "" {
			t.Errorf("ticks %+v note %q", c.Ticks, c.Note)
		}
	})
}

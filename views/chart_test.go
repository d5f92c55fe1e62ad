package views_test

import (
	"testing"

	"github.com/standings/standings/views"
)

func TestNewChart(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		if c := views.NewChart("t", []views.ChartPoint{{Period: "a"}}); !c.Empty || len(c.Dots) != 0 {
			t.Errorf("%+v", c)
		}
	})
	t.Run("gaps and zero baseline", func(t *testing.T) {
		c := views.NewChart("t", []views.ChartPoint{
			{Period: "w1", Value: 10, Score: "10", Present: true},
			{Period: "w2"},
			{Period: "w3", Value: 20, Score: "20", Present: true},
		})
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
		c := views.NewChart("t", []views.ChartPoint{{Period: "all", Value: -5, Score: "-5", Present: true}})
		if c.Line != "" || len(c.Dots) != 1 || c.Dots[0].Y != "152" {
			t.Errorf("%+v", c)
		}
	})
}

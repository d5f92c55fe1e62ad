package views

import (
	"context"
	"math/rand/v2"
	"testing"
)

// TestChartMatchesTempl: chart, the Go writer rank cards use, writes
// exactly the markup of the templ reference chartTempl, on random charts
// laid out by NewChart (gaps, one point, none, every option, labels and
// scores with every character HTML escapes), on either writer path.
func TestChartMatchesTempl(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0xc4a27))
	for i := range 500 {
		points := make([]ChartPoint, rng.IntN(14))
		for j := range points {
			points[j] = ChartPoint{Period: randomText(rng, 1+rng.IntN(6)), Value: float64(rng.Int64N(20000)-2000) / float64(1+rng.IntN(100)), Score: randomScore(rng), Present: rng.IntN(5) != 0}
			if rng.IntN(2) == 0 {
				points[j].Label = randomText(rng, rng.IntN(8))
			}
		}
		opt := ChartOptions{Integer: rng.IntN(2) == 0, LowerIsBetter: rng.IntN(2) == 0, NoZero: rng.IntN(2) == 0}
		c := NewChart(randomText(rng, rng.IntN(30)), points, opt)
		if rng.IntN(10) == 0 {
			c.Note = "" // a rank chart says nothing of its flipped axis
		}
		id, test, empty := randomText(rng, 5), randomText(rng, 5), randomText(rng, 10)
		want := render(t, chartTempl(c, id, test, empty), false)
		for _, plain := range []bool{false, true} {
			if got := render(t, chart(c, id, test, empty), plain); got != want {
				t.Fatalf("seed %d chart %d (plain writer %v): %#v\nGo writer:\n%s\ntempl:\n%s", seed, i, plain, c, got, want)
			}
		}
	}
}

// TestChartWriteError: a failing writer's error is returned.
func TestChartWriteError(t *testing.T) {
	c := NewChart("t", []ChartPoint{{Period: "a", Value: 1, Present: true}, {Period: "b", Value: 2, Present: true}}, ChartOptions{})
	if err := chart(c, "id", "test", "none").Render(context.Background(), failWriter{}); err == nil {
		t.Error("want the writer's error")
	}
}

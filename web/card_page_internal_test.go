package web

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/standings/standings/ranking"
)

// TestScoreFloatIsItsText: a chart draws a score at the double its
// decimal text parses to, for every number of decimals and any score a
// board may hold.
func TestScoreFloatIsItsText(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 28))
	for d := range 7 {
		b := &ranking.Board{Decimals: d}
		for range 20000 {
			v := rng.Int64N(1<<53) - 1<<52
			if rng.IntN(2) == 0 {
				v = rng.Int64N(2_000_001) - 1_000_000
			}
			want, err := strconv.ParseFloat(b.FormatScore(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := scoreFloat(b, v); got != want {
				t.Fatalf("decimals %d, score %d: %v, its text %q parses to %v", d, v, got, b.FormatScore(v), want)
			}
		}
	}
}

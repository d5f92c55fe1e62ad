package web

import (
	"fmt"
	"strings"

	"github.com/standings/standings/ranking"
)

// scoreText is a scaled score as pages show it: the board's decimals, or
// for format: duration a time (a score in seconds: 1:02.250, 1:02:03).
// The API and CSV keep plain numbers.
func scoreText(b *ranking.Board, v int64) string {
	if b.Format != "duration" {
		return b.FormatScore(v)
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	scale := int64(1)
	for range b.Decimals {
		scale *= 10
	}
	secs, frac := v/scale, v%scale
	h, m, s := secs/3600, secs%3600/60, secs%60
	out := fmt.Sprintf("%d:%02d", m, s)
	if h > 0 {
		out = fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	if b.Decimals > 0 {
		out += fmt.Sprintf(".%0*d", b.Decimals, frac)
	}
	return sign + out
}

// scoreHeader heads a table's score column: the board's unit, or Score.
func scoreHeader(b *ranking.Board) string {
	if b.Unit == "" {
		if b.Format == "duration" {
			return "Time"
		}
		return "Score"
	}
	return strings.ToUpper(b.Unit[:1]) + b.Unit[1:]
}

// unitWords are the nouns of a gap ("12 points to pass #4"): the board's
// unit (its singular without a final s), else point/points.
func unitWords(b *ranking.Board) (one, many string) {
	if b.Unit == "" {
		return "point", "points"
	}
	return strings.TrimSuffix(b.Unit, "s"), b.Unit
}

// resultScore is a recorded result's score (exact number text) as pages
// show it; text that does not parse is shown as it is.
func resultScore(b *ranking.Board, raw []byte) string {
	v, err := b.ParseScore(string(raw))
	if err != nil {
		return string(raw)
	}
	return scoreText(b, v)
}

// withUnit is a shown score with the board's unit: "1024 reads"; a
// duration or a unitless score stays as it is.
func withUnit(b *ranking.Board, score string) string {
	if b.Unit == "" || b.Format == "duration" {
		return score
	}
	return score + " " + b.Unit
}

// gapText is a difference of two scores as a person reads it: "36
// points", "1 point", "4.915 s" (a lap time under a minute), "1:02.250",
// "level" when there is none.
func gapText(b *ranking.Board, d int64) string {
	if d == 0 {
		return "level"
	}
	if b.Format == "duration" {
		scale := int64(1)
		for range b.Decimals {
			scale *= 10
		}
		if d < 60*scale {
			return b.FormatScore(d) + " s"
		}
		return scoreText(b, d)
	}
	one, many := unitWords(b)
	if b.FormatScore(d) == "1" {
		return "1 " + one
	}
	return b.FormatScore(d) + " " + many
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

package web

import (
	"fmt"
	"time"

	"github.com/standings/standings/ranking"
)

// facts are what the plain-language lines of a rank card are chosen from.
type facts struct {
	rank, total int64
	topPercent  float64
	period      string // "this week", "in the week of 16 Nov 2026"
	asc         bool
	unit        int64 // the smallest score step (scaled)
	format      func(int64) string
	one, many   string // the gap's noun: point/points, or the board's unit

	above     *ranking.Entry // nearest member with a strictly better rank
	below     *ranking.Entry // the next member down
	score     int64
	prevKnown bool   // the previous period could be read (not for all)
	prevRank  int64  // 0: not on the board then
	prevName  string // "last week"
	past      bool   // the period has ended: the card speaks in the past tense
}

// cardFacts gathers the facts of a card.
func cardFacts(b *ranking.Board, v ranking.View, card *ranking.Card, hist *ranking.History, current bool, loc *time.Location) facts {
	f := facts{
		rank: card.Rank, total: card.Total, topPercent: card.TopPercent, score: card.Score,
		period: periodPhrase(v, card.Period, current, loc), asc: b.Order == ranking.Asc,
		past: !current && v.Kind != ranking.All,
		unit: 1, format: func(v int64) string { return scoreText(b, v) },
	}
	f.one, f.many = unitWords(b)
	pos := -1
	for i, e := range card.Around {
		if e.Member == card.Member {
			pos = i
		}
	}
	for i := pos - 1; i >= 0; i-- {
		if card.Around[i].Rank < card.Rank {
			f.above = &card.Around[i]
			break
		}
	}
	if pos >= 0 && pos+1 < len(card.Around) {
		f.below = &card.Around[pos+1]
	}
	if v.Kind != ranking.All && len(hist.Points) >= 2 {
		prev := hist.Points[len(hist.Points)-2]
		f.prevKnown = true
		f.prevRank = prev.Rank
		if current {
			f.prevName = previousPhrase(v)
		} else {
			f.prevName = "the period before"
		}
	}
	return f
}

// gap is how much the member needs to pass the next better rank: strictly
// better, since an equal score reached later ranks lower (ties: first) or
// shares the rank (ties: shared).
func (f facts) gap() (int64, bool) {
	if f.above == nil {
		return 0, false
	}
	d := f.above.Score - f.score
	if f.asc {
		d = f.score - f.above.Score
	}
	return d + f.unit, true
}

func (f facts) gapLine() string {
	d, ok := f.gap()
	if f.past {
		// A finished period: what it came to, not what is left to do.
		switch {
		case f.rank == 1:
			return "Won " + f.period
		case !ok:
			return fmt.Sprintf("Finished #%d %s", f.rank, f.period)
		}
		word := f.many
		if d-f.unit == f.unit && f.unit == 1 {
			word = f.one
		}
		if f.asc {
			return fmt.Sprintf("Finished #%d, %s behind #%d", f.rank, f.format(d-f.unit), f.above.Rank)
		}
		return fmt.Sprintf("Finished #%d, %s %s behind #%d", f.rank, f.format(d-f.unit), word, f.above.Rank)
	}
	if !ok {
		return ""
	}
	if f.asc {
		return fmt.Sprintf("%s lower to pass #%d", f.format(d), f.above.Rank)
	}
	word := f.many
	if d == f.unit && f.unit == 1 {
		word = f.one
	}
	return fmt.Sprintf("%s %s to pass #%d", f.format(d), word, f.above.Rank)
}

// lead says #1's margin over #2: "Leading this week by 12", "Won … by 12",
// or level with #2 but there first.
func (f facts) lead(verb string) string {
	d := f.score - f.below.Score
	if f.asc {
		d = f.below.Score - f.score
	}
	if d == 0 {
		return fmt.Sprintf("%s %s, level with #2 but there first", verb, f.period)
	}
	return fmt.Sprintf("%s %s by %s", verb, f.period, f.format(d))
}

// rule is one candidate line: when it applies and what it says.
type rule struct {
	when func(f facts) bool
	say  func(f facts) string
}

// lineRules are ordered lists; in each list the first rule that applies
// gives the line, so a card says at most one thing about each topic: its
// race with the neighbours, its standing in the field, its trend.
var lineRules = [][]rule{
	{ // the race
		{func(f facts) bool { return f.past && f.rank == 1 && f.below != nil }, func(f facts) string { return f.lead("Won") }},
		{func(f facts) bool { return f.past && f.rank > 1 }, func(f facts) string { return fmt.Sprintf("Finished #%d of %d %s", f.rank, f.total, f.period) }},
		{func(f facts) bool { return f.rank == 1 && f.below != nil }, func(f facts) string { return f.lead("Leading") }},
		{func(f facts) bool { return f.rank == 1 }, func(f facts) string { return "The only one on the board " + f.period }},
		// Below #1 the headline's "Next rank" says the gap: no line repeats it.
	},
	{ // the field: said only where it flatters, and not of #1 (its rank says more)
		{func(f facts) bool { return f.rank > 1 && f.total >= 100 && f.topPercent <= 1 }, func(f facts) string { return "Top 1% " + f.period }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 20 && f.topPercent <= 5 }, func(f facts) string { return "Top 5% " + f.period }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 10 && f.topPercent <= 10 }, func(f facts) string { return "Top 10% " + f.period }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 4 && f.topPercent <= 25 }, func(f facts) string { return "In the top quarter " + f.period }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 2 && f.topPercent <= 50 }, func(f facts) string { return "In the top half " + f.period }},
	},
	{ // the trend
		{func(f facts) bool { return f.prevKnown && f.prevRank == 0 }, func(f facts) string { return "New " + f.period }},
		{func(f facts) bool { return f.prevKnown && f.prevRank > f.rank }, func(f facts) string {
			return fmt.Sprintf("Up %d %s since %s (#%d)", f.prevRank-f.rank, placeWord(f.prevRank-f.rank), f.prevName, f.prevRank)
		}},
		{func(f facts) bool { return f.prevKnown && f.prevRank < f.rank }, func(f facts) string {
			return fmt.Sprintf("Down %d %s since %s (#%d)", f.rank-f.prevRank, placeWord(f.rank-f.prevRank), f.prevName, f.prevRank)
		}},
		{func(f facts) bool { return f.prevKnown }, func(f facts) string { return fmt.Sprintf("Same rank as %s", f.prevName) }},
	},
}

func placeWord(n int64) string {
	if n == 1 {
		return "place"
	}
	return "places"
}

// insights picks the card's lines: the first matching rule of each list.
func insights(f facts) []string {
	var out []string
	for _, list := range lineRules {
		for _, r := range list {
			if r.when(f) {
				out = append(out, r.say(f))
				break
			}
		}
	}
	return out
}

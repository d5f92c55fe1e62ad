package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/standings/standings/ranking"
)

// facts are what the plain-language lines of a rank card are chosen from.
type facts struct {
	rank, total int64
	topPercent  float64
	period      string // "this week", "on Wednesday 25 Nov", "in the week of 16 Nov"
	of          string // the field's period: "this week", "of Wednesday 25 Nov"
	asc         bool
	duration    bool  // scores are times: a smaller gap reads "0.409 s faster"
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
	final     bool   // no late score can change it any more
}

// cardFacts gathers the facts of a card.
func cardFacts(b *ranking.Board, v ranking.View, card *ranking.Card, hist *ranking.History, current bool, loc *time.Location) facts {
	f := facts{
		rank: card.Rank, total: card.Total, topPercent: card.TopPercent, score: card.Score,
		period: periodPhrase(v, card.Period, current, loc), asc: b.Order == ranking.Asc,
		duration: b.Format == "duration",
		past:     !current && v.Kind != ranking.All, final: card.Final,
		unit: 1, format: func(v int64) string { return scoreText(b, v) },
	}
	f.of = f.period
	if f.past {
		f.period, f.of = pastPeriod(v, card.Period, card.Now, loc)
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
	if f.past && !f.final {
		// Ended, but late scores may still move it: where it stands, not
		// how it finished.
		if !ok {
			return fmt.Sprintf("#%d so far", f.rank)
		}
		return fmt.Sprintf("#%d, %s behind #%d", f.rank, f.amount(d-f.unit), f.above.Rank)
	}
	if f.past {
		// A finished period: what it came to, not what is left to do.
		switch {
		case f.rank == 1:
			return "Won " + f.period
		case !ok:
			return fmt.Sprintf("Finished #%d %s", f.rank, f.period)
		}
		return fmt.Sprintf("Finished #%d, %s behind #%d", f.rank, f.amount(d-f.unit), f.above.Rank)
	}
	if !ok {
		return ""
	}
	switch {
	case f.asc && f.duration:
		return fmt.Sprintf("%s faster to pass #%d", f.amount(d), f.above.Rank)
	case f.asc:
		return fmt.Sprintf("%s lower to pass #%d", f.amount(d), f.above.Rank)
	}
	return fmt.Sprintf("%s to pass #%d", f.amount(d), f.above.Rank)
}

// amount says a difference of scores as a person would: "0.409 s" on a
// board of times (a clock reading such as 0:00.409 reads as a time of
// day), "36 points" or "1 point" on others, in the board's unit.
func (f facts) amount(d int64) string {
	if f.duration {
		if t := f.format(d); strings.HasPrefix(t, "0:") {
			t = strings.TrimPrefix(t, "0:")
			if len(t) > 1 && t[0] == '0' && t[1] != '.' {
				t = t[1:]
			}
			return t + " s"
		}
		return f.format(d)
	}
	if d == f.unit && f.unit == 1 && f.format(d) == "1" {
		return f.format(d) + " " + f.one
	}
	return f.format(d) + " " + f.many
}

// pastPeriod names a finished period in a card's sentences: in ("on
// Wednesday 25 Nov", "in the week of 16 Nov") and of ("Top 5% of
// Wednesday 25 Nov"), with the year only when it is not now's.
func pastPeriod(v ranking.View, p ranking.Period, now time.Time, loc *time.Location) (in, of string) {
	start, last := p.Start.In(loc), p.End.In(loc).Add(-time.Second)
	day := func(t time.Time) string {
		if t.Year() != now.In(loc).Year() {
			return t.Format("Monday 2 Jan 2006")
		}
		return t.Format("Monday 2 Jan")
	}
	short := func(t time.Time) string {
		if t.Year() != now.In(loc).Year() {
			return t.Format("2 Jan 2006")
		}
		return t.Format("2 Jan")
	}
	switch v.Kind {
	case ranking.Hour:
		at := start.Format("15:04") + "–" + p.End.In(loc).Format("15:04") + " on " + day(start)
		return "from " + strings.Replace(at, "–", " to ", 1), "of " + at
	case ranking.Day:
		return "on " + day(start), "of " + day(start)
	case ranking.Week:
		return "in the week of " + short(start), "of the week of " + short(start)
	case ranking.Month:
		m := start.Format("January")
		if start.Year() != now.In(loc).Year() {
			m = start.Format("January 2006")
		}
		return "in " + m, "of " + m
	case ranking.Window:
		w := fmt.Sprintf("the %d days to %s", v.Days, short(last))
		return "in " + w, "of " + w
	}
	return "of all time", "of all time"
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

// field names the period a member's place in the field is of ("Top 5%
// of Wednesday 25 Nov"): the period itself when it is current.
func (f facts) field() string {
	if f.of == "" {
		return f.period
	}
	return f.of
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
		// A period still taking late scores has no result yet: its
		// headline says so, and no line says "won" or "finished".
		{func(f facts) bool { return f.past && !f.final }, func(f facts) string { return "" }},
		{func(f facts) bool { return f.past && f.rank == 1 && f.below != nil }, func(f facts) string { return f.lead("Won") }},
		{func(f facts) bool { return f.past && f.rank > 1 }, func(f facts) string { return fmt.Sprintf("Finished #%d of %d %s", f.rank, f.total, f.period) }},
		{func(f facts) bool { return f.rank == 1 && f.below != nil }, func(f facts) string { return f.lead("Leading") }},
		{func(f facts) bool { return f.rank == 1 }, func(f facts) string { return "The only one on the board " + f.period }},
		// Below #1 the headline's "Next rank" says the gap: no line repeats it.
	},
	{ // the field: said only where it flatters, and not of #1 (its rank says more)
		{func(f facts) bool { return f.rank > 1 && f.total >= 100 && f.topPercent <= 1 }, func(f facts) string { return "Top 1% " + f.field() }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 20 && f.topPercent <= 5 }, func(f facts) string { return "Top 5% " + f.field() }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 10 && f.topPercent <= 10 }, func(f facts) string { return "Top 10% " + f.field() }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 4 && f.topPercent <= 25 }, func(f facts) string { return "In the top quarter " + f.field() }},
		{func(f facts) bool { return f.rank > 1 && f.total >= 2 && f.topPercent <= 50 }, func(f facts) string { return "In the top half " + f.field() }},
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
				if line := r.say(f); line != "" {
					out = append(out, line)
				}
				break
			}
		}
	}
	return out
}

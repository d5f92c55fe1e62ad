package web

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/standings/standings/ranking"
)

func TestInsightsRules(t *testing.T) {
	format := func(v int64) string { return strconv.FormatInt(v, 10) }
	entry := func(rank, score int64) *ranking.Entry { return &ranking.Entry{Rank: rank, Score: score} }
	for _, tc := range []struct {
		name string
		f    facts
		want []string
	}{
		{"leader ahead, top 1%, new", facts{rank: 1, total: 500, topPercent: 0.2, score: 90, below: entry(2, 78), prevKnown: true}, []string{
			"Leading this week by 12", "New this week"}}, // #1 says more than "top 1%"
		{"leader level with #2", facts{rank: 1, total: 2, topPercent: 50, score: 5, below: entry(2, 5)}, []string{
			"Leading this week, level with #2 but there first"}},
		{"alone", facts{rank: 1, total: 1, topPercent: 100, score: 5}, []string{"The only one on the board this week"}},
		{"chaser, climbing", facts{rank: 5, total: 40, topPercent: 12.5, score: 88, above: entry(4, 99), prevKnown: true, prevRank: 9, prevName: "last week"}, []string{
			"In the top quarter this week", "Up 4 places since last week (#9)"}}, // the headline says the gap
		{"one point, falling one place", facts{rank: 3, total: 3, topPercent: 100, score: 7, above: entry(2, 7), prevKnown: true, prevRank: 2, prevName: "yesterday"}, []string{
			"Down 1 place since yesterday (#2)"}},
		{"ascending board", facts{rank: 2, total: 10, topPercent: 20, score: 61, asc: true, above: entry(1, 60), prevKnown: true, prevRank: 2, prevName: "last week"}, []string{
			"In the top quarter this week", "Same rank as last week"}},
		{"top 5%", facts{rank: 2, total: 40, topPercent: 5, score: 1, above: entry(1, 2)}, []string{"Top 5% this week"}},
		{"top 10%", facts{rank: 2, total: 20, topPercent: 10, score: 1, above: entry(1, 2)}, []string{"Top 10% this week"}},
		{"shared rank, nobody better in reach", facts{rank: 7, total: 8, topPercent: 87.5, score: 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.unit, f.format = 1, format
			if f.period == "" {
				f.period = "this week"
			}
			if got := insights(f); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{"": "", "alice": "alice", "=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@x": "'@x", "\tx": "'\tx", "\rx": "'\rx", "a=b": "a=b"} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

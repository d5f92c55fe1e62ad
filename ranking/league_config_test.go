package ranking_test

import (
	"strings"
	"testing"

	"github.com/standings/standings/ranking"
)

func TestLeagueConfig(t *testing.T) {
	cfg := mustBoardsFile(t, `
boards:
  - id: points
    zones: [{title: Prize, top: 3}, {title: Final, top: 10}]
    league:
      cycle: week
      tiers: [bronze, silver, gold, {id: diamond, title: Diamond League}, {id: x-1}]
      cohort_size: 30
      promote: 7
      demote: 5
`)
	b := cfg.Boards[0]
	l := b.League
	if l == nil {
		t.Fatal("no league")
	}
	if l.Cycle.Name != "week" || l.Cycle.Kind != ranking.Week || l.CohortSize != 30 || l.Promote != 7 || l.Demote != 5 {
		t.Errorf("league %+v", l)
	}
	var titles []string
	for _, tr := range l.Tiers {
		titles = append(titles, tr.ID+"="+tr.Title)
	}
	if got := strings.Join(titles, ","); got != "bronze=Bronze,silver=Silver,gold=Gold,diamond=Diamond League,x-1=X-1" {
		t.Errorf("tiers %s", got)
	}
	if len(b.Zones) != 2 || b.Zones[0] != (ranking.Zone{Title: "Prize", Top: 3}) || b.Zones[1] != (ranking.Zone{Title: "Final", Top: 10}) {
		t.Errorf("zones %+v", b.Zones)
	}
	// The board need not show the cycle view: the default views have no hour.
	cfg = mustBoardsFile(t, "boards: [{id: p, league: {cycle: hour, tiers: [a, b], cohort_size: 5, promote: 2, demote: 0}}]\n")
	if l := cfg.Boards[0].League; l == nil || l.Cycle.Kind != ranking.Hour {
		t.Errorf("hour league %+v", l)
	}
	if cfg.Boards[0].League != nil && cfg.Boards[0].Zones != nil {
		t.Error("zones without the field")
	}
}

func TestLeagueZones(t *testing.T) {
	l := &ranking.League{Tiers: make([]ranking.Tier, 3), Promote: 7, Demote: 5}
	tests := []struct{ level, n, p, d int }{
		{1, 30, 7, 0}, {2, 30, 7, 5}, {3, 30, 0, 5}, {2, 1, 0, 0}, {2, 2, 1, 1}, {2, 9, 4, 4}, {2, 11, 5, 5},
	}
	for _, tc := range tests {
		if p, d := l.Zones(tc.level, tc.n); p != tc.p || d != tc.d {
			t.Errorf("Zones(%d, %d) = %d, %d; want %d, %d", tc.level, tc.n, p, d, tc.p, tc.d)
		}
	}
}

func TestLeagueConfigRejects(t *testing.T) {
	const ok = "cycle: week, tiers: [a, b], cohort_size: 10, promote: 2, demote: 2"
	board := func(league string) string { return "boards: [{id: points, league: {" + league + "}}]\n" }
	tests := []struct {
		name string
		file string
		want []string
	}{
		{"not a mapping", "boards: [{id: points, league: week}]\n", []string{`field "league"`, "mapping"}},
		{"unknown key", board(ok + ", size: 3"), []string{`field "league"`, `unknown key "size"`}},
		{"key twice", board(ok + ", promote: 3"), []string{`field "league"`, "twice"}},
		{"missing cycle", board("tiers: [a, b], cohort_size: 10, promote: 2, demote: 2"), []string{`field "league"`, "cycle is required"}},
		{"missing tiers", board("cycle: week, cohort_size: 10, promote: 2, demote: 2"), []string{"tiers is required"}},
		{"missing cohort_size", board("cycle: week, tiers: [a, b], promote: 2, demote: 2"), []string{"cohort_size is required"}},
		{"missing promote and demote", board("cycle: week, tiers: [a, b], cohort_size: 10"), []string{"promote is required", "demote is required"}},
		{"all cycle", board(strings.Replace(ok, "week", "all", 1)), []string{`field "league.cycle"`, "hour, day, week, month"}},
		{"window cycle", board(strings.Replace(ok, "week", "7d", 1)), []string{`field "league.cycle"`}},
		{"one tier", board(strings.Replace(ok, "[a, b]", "[a]", 1)), []string{`field "league.tiers"`, "2 to 20"}},
		{"21 tiers", board(strings.Replace(ok, "[a, b]", "[a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u]", 1)), []string{`field "league.tiers"`, "2 to 20"}},
		{"bad tier id", board(strings.Replace(ok, "[a, b]", "[a, Gold]", 1)), []string{`field "league.tiers"`, `"Gold"`, "[a-z0-9]"}},
		{"tier twice", board(strings.Replace(ok, "[a, b]", "[a, a]", 1)), []string{`tier "a" is listed twice`}},
		{"tier members", board(strings.Replace(ok, "[a, b]", "[a, members]", 1)), []string{`tier id "members" is reserved`}},
		{"tier without id", board(strings.Replace(ok, "[a, b]", "[a, {title: B}]", 1)), []string{"needs an id"}},
		{"tier with unknown key", board(strings.Replace(ok, "[a, b]", "[a, {id: b, colour: red}]", 1)), []string{`unknown key "colour"`}},
		{"tier as a list", board(strings.Replace(ok, "[a, b]", "[a, [b]]", 1)), []string{`field "league.tiers"`}},
		{"cohort of 4", board(strings.Replace(ok, "10", "4", 1)), []string{`field "league.cohort_size"`, "5 to 1000"}},
		{"cohort of 1001", board(strings.Replace(ok, "10", "1001", 1)), []string{`field "league.cohort_size"`}},
		{"negative promote", board(strings.Replace(ok, "promote: 2", "promote: -1", 1)), []string{`field "league.promote"`, "0 to 5"}},
		{"promote over half", board(strings.Replace(ok, "promote: 2", "promote: 6", 1)), []string{`field "league.promote"`, "half"}},
		{"demote not a number", board(strings.Replace(ok, "demote: 2", "demote: many", 1)), []string{`field "league.demote"`}},
		{"zones not a list", "boards: [{id: points, zones: 3}]\n", []string{`field "zones"`}},
		{"six zones", "boards: [{id: points, zones: [{title: a, top: 1}, {title: b, top: 2}, {title: c, top: 3}, {title: d, top: 4}, {title: e, top: 5}, {title: f, top: 6}]}]\n", []string{`field "zones"`, "1 to 5"}},
		{"zone without title", "boards: [{id: points, zones: [{top: 3}]}]\n", []string{`field "zones"`, "title"}},
		{"zone without top", "boards: [{id: points, zones: [{title: Prize}]}]\n", []string{`zone "Prize" needs top`}},
		{"zone top 0", "boards: [{id: points, zones: [{title: Prize, top: 0}]}]\n", []string{`field "zones"`, "1 to 1000"}},
		{"zone top 1001", "boards: [{id: points, zones: [{title: Prize, top: 1001}]}]\n", []string{`field "zones"`, "1 to 1000"}},
		{"zones not increasing", "boards: [{id: points, zones: [{title: A, top: 3}, {title: B, top: 3}]}]\n", []string{`zone "B" ends at rank 3`, "increasing"}},
		{"zone unknown key", "boards: [{id: points, zones: [{title: A, top: 3, colour: red}]}]\n", []string{`unknown key "colour"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := mustConfigProblems(t, tc.file)
			joined := strings.Join(problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Errorf("problems %q lack %q", problems, w)
				}
			}
		})
	}
}

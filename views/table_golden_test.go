package views

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestStandingsTableGolden: a standings table renders as
// testdata/standings_table.html, the markup templ rendered for these rows
// before the rows were written in Go (standingsRows). Pages, live frames
// and the browser tests depend on it.
func TestStandingsTableGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/standings_table.html")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := StandingsTable(goldenTable()).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
}

// TestStandingsRowsWriteError: a failing writer's error is returned.
func TestStandingsRowsWriteError(t *testing.T) {
	if err := standingsRows(goldenTable().Rows).Render(context.Background(), failWriter{}); err == nil {
		t.Error("want the writer's error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// goldenTable is a table with every kind of row: medals, ties, the card's
// own member, each move, names that differ from ids or need escaping.
func goldenTable() Table {
	return Table{ID: "standings", Caption: "Week of 16 Nov 2026", Period: "2026-11-16", ScoreHeader: "points", Rows: []Row{
		{Rank: 1, Member: "ana", Name: "Ana <b>&amp;</b> \"Co\"", Score: "1,204", CardURL: "/boards/p/week/members/ana", Initials: "A&", Hue: 3, Move: Move{Kind: "up", Text: "▲2", Label: "up 2 places since last week"}},
		{Rank: 1, Member: "bo", Name: "bo", Score: "1,204", CardURL: "/boards/p/week/members/bo", Initials: "BO", Hue: 0, Self: true, Move: Move{Kind: "new", Text: "new", Label: "new this week"}},
		{Rank: 3, Member: "cé'd", Name: "Cé'd", Score: "900.5", CardURL: "/boards/p/week/members/c%C3%A9%27d", Initials: "C", Hue: 11, Move: Move{Kind: "down", Text: "▼1", Label: "down 1 place since last week"}},
		{Rank: 4, Member: "d", Name: "Dee", Score: "12", CardURL: "/boards/p/week/members/d", Initials: "D", Hue: 7, Self: true, Move: Move{Kind: "same", Text: "–", Label: "same place as last week"}},
		{Rank: 5, Member: "e", Name: "e", Score: "0", CardURL: "/boards/p/week/members/e?x=1&y=2", Initials: "E", Hue: 1},
	}}
}

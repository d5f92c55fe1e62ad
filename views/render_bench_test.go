package views

import (
	"context"
	"io"
	"strconv"
	"testing"
)

// BenchmarkStandingsTable renders a board page's table of 100 rows, the
// unit of every board page, live fragment and rank card.
func BenchmarkStandingsTable(b *testing.B) {
	t := Table{ID: "standings", Caption: "Week", Period: "2026-11-23", ScoreHeader: "points"}
	for i := range 100 {
		m := "u" + strconv.Itoa(i)
		t.Rows = append(t.Rows, Row{Rank: int64(i + 1), Member: m, Name: "Player " + m, Score: strconv.Itoa(100000 - i),
			CardURL: "/boards/bench/week/members/" + m, Initials: "PU", Hue: int64(i % 12),
			Move: Move{Kind: "up", Text: "▲2", Label: "up 2 places since last week"}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := StandingsTable(t).Render(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

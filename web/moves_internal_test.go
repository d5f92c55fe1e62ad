package web

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// sharedMoves answers the same list to every caller, as the page cache
// does for the pages of one tick.
type sharedMoves []ranking.Move

func (m sharedMoves) Moves(context.Context, string, string, int) ([]ranking.Move, ranking.Period, error) {
	return m, ranking.Period{}, nil
}

// The ticker orders a copy: the list it was handed is shared by every page
// of the tick, and sorting it in place raced between two pages' renders.
func TestTickerLeavesSharedMovesAlone(t *testing.T) {
	cfg, err := ranking.ParseConfig([]byte("boards:\n  - {id: b, views: [week]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cfg.Board("b")
	v, _ := b.View("week")
	now := time.Now()
	shared := sharedMoves{
		{Member: "c", Passed: "d", Rank: 7, At: now},
		{Member: "a", Passed: "b", Rank: 1, At: now.Add(-time.Minute)},
	}
	before := slices.Clone(shared)
	var s Server
	got, err := s.ticker(context.Background(), shared, b, v, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Member != "a" {
		t.Fatalf("ticker order: got %+v, want the lead change first", got)
	}
	if !slices.Equal(shared, before) {
		t.Fatalf("ticker reordered the shared list: %+v, was %+v", shared, before)
	}
}

package ranking_test

import (
	"testing"

	"github.com/standings/standings/ranking"
)

func TestZoneOf(t *testing.T) {
	b := &ranking.Board{Zones: []ranking.Zone{{Title: "Prize", Top: 3}, {Title: "Top 10", Top: 10}}}
	for _, tc := range []struct {
		rank        int64
		in, above   string
		inOK, aboOK bool
	}{
		{rank: 1, in: "Prize", inOK: true},
		{rank: 3, in: "Prize", inOK: true},
		{rank: 4, in: "Top 10", inOK: true, above: "Prize", aboOK: true},
		{rank: 10, in: "Top 10", inOK: true, above: "Prize", aboOK: true},
		{rank: 11, above: "Top 10", aboOK: true},
		{rank: 5000, above: "Top 10", aboOK: true},
	} {
		z, ok := b.ZoneOf(tc.rank)
		if ok != tc.inOK || z.Title != tc.in {
			t.Errorf("ZoneOf(%d) = %q, %v; want %q, %v", tc.rank, z.Title, ok, tc.in, tc.inOK)
		}
		z, ok = b.ZoneAbove(tc.rank)
		if ok != tc.aboOK || z.Title != tc.above {
			t.Errorf("ZoneAbove(%d) = %q, %v; want %q, %v", tc.rank, z.Title, ok, tc.above, tc.aboOK)
		}
	}
	var plain ranking.Board
	if _, ok := plain.ZoneOf(1); ok {
		t.Error("a board without zones has a zone")
	}
	if _, ok := plain.ZoneAbove(9); ok {
		t.Error("a board without zones has a zone above")
	}
}

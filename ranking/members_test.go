package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/standings/standings/ranking"
)

// TestMembers: a member list answers the ranked ones among the ids, in
// rank order, with the ranks and scores the whole list gives them (ties
// first and shared, a segment board too); unranked and repeated ids are
// left out or counted once; bad lists are refused.
func TestMembers(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends()[:2] {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			s := newStore(t, be.Client(t), MustConfig(t, `
boards:
  - {id: first, segments: [team], views: [day, all]}
  - {id: shared, ties: shared, order: asc, views: [all]}
  - {id: round, ties: shared, order: asc, decimals: 3, min_score: -100000, max_score: 1000000, views: [all]}
`), nil)
			r := rand.New(rand.NewPCG(7, 9))
			for _, board := range []string{"first", "shared"} {
				var evs []ranking.Event
				for i := range 300 {
					ev := ranking.Event{Member: fmt.Sprintf("m%03d", r.IntN(150)), Value: int64(r.IntN(6))}
					if board == "first" && i%2 == 0 {
						ev.Segments = map[string]string{"team": []string{"red", "blue"}[r.IntN(2)]}
					}
					evs = append(evs, ev)
				}
				if _, err := s.Apply(ctx, board, evs, ranking.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Codes of one significant digit (2e8: the score 100000.000 on
			// this board), which miniredis answers in exponent form and
			// its Lua's tonumber does not read.
			var evs []ranking.Event
			for i := range 40 {
				evs = append(evs, ranking.Event{Member: fmt.Sprintf("m%03d", i), Value: []int64{100_000_000, 200_000_000, 900_000_000, 123_456}[i%4]})
			}
			if _, err := s.Apply(ctx, "round", evs, ranking.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				board string
				seg   ranking.Segment
			}{{"first", ranking.Segment{}}, {"first", ranking.Segment{Name: "team", Value: "red"}}, {"shared", ranking.Segment{}}, {"round", ranking.Segment{}}} {
				full, err := s.Page(ctx, c.board, "all", ranking.PageQuery{Segment: c.seg, Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]ranking.Entry{}
				for _, e := range full.Entries {
					want[e.Member] = e
				}
				for round := range 20 {
					var ids []string
					for range 1 + r.IntN(30) {
						ids = append(ids, fmt.Sprintf("m%03d", r.IntN(170))) // some never scored
					}
					ids = append(ids, ids[0]) // a repeat
					pg, err := s.Members(ctx, c.board, "all", ids, ranking.MembersQuery{Segment: c.seg})
					if err != nil {
						t.Fatal(err)
					}
					if pg.Total != full.Total {
						t.Fatalf("total %d, want %d", pg.Total, full.Total)
					}
					var expect []ranking.Entry
					seen := map[string]bool{}
					for _, e := range full.Entries { // the list's order is rank order
						for _, id := range ids {
							if e.Member == id && !seen[id] {
								seen[id] = true
								expect = append(expect, e)
							}
						}
					}
					if fmt.Sprint(pg.Entries) != fmt.Sprint(expect) {
						t.Fatalf("%s %v round %d: %v\nwant %v", c.board, c.seg, round, pg.Entries, expect)
					}
				}
			}
			for _, bad := range [][]string{nil, make([]string, 101), {""}, {"ok", "bad\x01"}} {
				if _, err := s.Members(ctx, "first", "all", bad, ranking.MembersQuery{}); ranking.ErrorCode(err) != ranking.EINVALID {
					t.Errorf("%q: %v", bad, err)
				}
			}
		})
	}
}

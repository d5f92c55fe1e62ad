package ranking_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

const historyBoards = `
boards:
  - id: first
    views: [hour, day, all, 2d]
    lateness: 30h
    min_score: -1000
  - id: shared
    order: asc
    ties: shared
    decimals: 2
    views: [hour, day, all]
    lateness: 30h
`

// TestRankCardHistoryAndViews checks a rank card's history against a
// brute-force sum of the events in each period (ties shared: rank = 1 +
// members strictly better), and its history and views against Member,
// period by period, on every backend.
func TestRankCardHistoryAndViews(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			cfg := MustConfig(t, historyBoards)
			store := newStore(t, be.Client(t), cfg, nil)
			now, err := store.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(be.Name))))
			members := []string{"ann", "bo", "cy", "di", "ed", "fay"}
			sums := map[sumKey]int64{}
			for _, boardID := range []string{"first", "shared"} {
				b, _ := cfg.Board(boardID)
				var events []ranking.Event
				for range 150 {
					at := now.Add(-time.Duration(rng.Int64N(int64(29 * time.Hour))))
					ev := ranking.Event{Member: members[rng.IntN(len(members))], Value: int64(1 + rng.IntN(4)), At: at}
					if boardID == "shared" {
						ev.Value *= 25 // steps of 0.25 with two decimals: plenty of ties
					}
					events = append(events, ev)
				}
				res, err := store.Apply(ctx, boardID, events, ranking.ApplyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					if r.Err != nil {
						t.Fatalf("event %d: %v", i, r.Err)
					}
					if boardID != "shared" {
						continue
					}
					for _, v := range b.Views {
						p := cfg.Calendar.PeriodAt(v, events[i].At)
						sums[sumKey{v.Name, p.ID, events[i].Member}] += events[i].Value
					}
				}
			}
			for _, boardID := range []string{"first", "shared"} {
				b, _ := cfg.Board(boardID)
				for _, v := range b.Views {
					for _, m := range append(members, "nobody") {
						rc, err := store.RankCard(ctx, boardID, v.Name, m, ranking.RankCardQuery{History: 12})
						if ranking.ErrorCode(err) == ranking.ENOTFOUND {
							if _, err := store.Member(ctx, boardID, v.Name, m, ranking.MemberQuery{}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
								t.Errorf("%s %s %s: card not found, member %v", boardID, v.Name, m, err)
							}
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						h := rc.History
						want := 12
						if v.Kind == ranking.All {
							want = 1
						}
						if len(h.Points) != want {
							t.Fatalf("%s %s: %d points, want %d", boardID, v.Name, len(h.Points), want)
						}
						for i, pt := range h.Points {
							if i > 0 && pt.Period.ID != cfg.Calendar.Next(v, h.Points[i-1].Period).ID {
								t.Fatalf("%s %s: periods not consecutive: %s after %s", boardID, v.Name, pt.Period.ID, h.Points[i-1].Period.ID)
							}
							if v.Kind == ranking.Window && !pt.Present && i < len(h.Points)-1 {
								// A past window nobody built reads as absent;
								// Member would build it, so there is nothing to compare.
								continue
							}
							card, err := store.Member(ctx, boardID, v.Name, m, ranking.MemberQuery{Period: pt.Period.ID})
							if ranking.ErrorCode(err) == ranking.ENOTFOUND {
								if pt.Present {
									t.Errorf("%s %s %s %s: history present, member absent", boardID, v.Name, pt.Period.ID, m)
								}
								continue
							}
							if err != nil {
								t.Fatal(err)
							}
							if !pt.Present || pt.Score != card.Score || pt.Rank != card.Rank || pt.Total != card.Total {
								t.Errorf("%s %s %s %s: history %+v, member %d/%d/%d", boardID, v.Name, pt.Period.ID, m, pt, card.Rank, card.Score, card.Total)
							}
							if boardID == "shared" {
								checkShared(t, sums, v.Name, pt.Period.ID, m, pt.Score, pt.Rank)
							}
						}
					}
				}
				for _, m := range members {
					rc, err := store.RankCard(ctx, boardID, "all", m, ranking.RankCardQuery{History: 1})
					if ranking.ErrorCode(err) == ranking.ENOTFOUND {
						continue // no event of m on this board
					}
					if err != nil {
						t.Fatal(err)
					}
					vs := rc.Views
					if len(vs) != len(b.Views) {
						t.Fatalf("%d views", len(vs))
					}
					for i, s := range vs {
						if s.View.Name != b.Views[i].Name {
							t.Errorf("view order: %s at %d", s.View.Name, i)
						}
						card, err := store.Member(ctx, boardID, s.View.Name, m, ranking.MemberQuery{})
						if ranking.ErrorCode(err) == ranking.ENOTFOUND {
							if s.Present {
								t.Errorf("%s %s %s: present, member absent", boardID, s.View.Name, m)
							}
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						if !s.Present || s.Period.ID != card.Period.ID || s.Score != card.Score || s.Rank != card.Rank || s.Total != card.Total {
							t.Errorf("%s %s %s: views %+v, member %s %d/%d/%d", boardID, s.View.Name, m, s, card.Period.ID, card.Rank, card.Score, card.Total)
						}
					}
				}
			}
		})
	}
}

// sumKey names one member's sum in one period of one view.
type sumKey struct{ view, period, member string }

// checkShared compares a ties-shared rank on an ascending board with the
// brute-force sums: rank = 1 + members with a strictly lower score.
func checkShared(t *testing.T, sums map[sumKey]int64, view, period, member string, score, rank int64) {
	t.Helper()
	mine, ok := sums[sumKey{view, period, member}]
	if !ok || mine != score {
		t.Errorf("%s %s %s: score %d, brute force %d (%v)", view, period, member, score, mine, ok)
		return
	}
	want := int64(1)
	for k, v := range sums {
		if k.view == view && k.period == period && v < mine {
			want++
		}
	}
	if rank != want {
		t.Errorf("%s %s %s: rank %d, brute force %d", view, period, member, rank, want)
	}
}

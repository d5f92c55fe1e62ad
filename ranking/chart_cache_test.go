package ranking_test

import (
	"context"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// TestRankCardKeptPoints: a rank card keeps its chart's final points and
// does not read them again; a removal through another store, and a flushed
// database written anew, are seen by the next card all the same. On a
// board of one shard and one of three.
func TestRankCardKeptPoints(t *testing.T) {
	for _, board := range []string{"one", "three"} {
		t.Run(board, func(t *testing.T) {
			t.Parallel() // its own miniredis
			day := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
			clock := day
			m, rdb := MustMiniredis(t, clock)
			cfg := MustConfig(t, `
timezone: UTC
boards:
  - {id: one, lateness: 0s, views: [day]}
  - {id: three, lateness: 0s, shards: 3, views: [day]}
`)
			opts := ranking.Options{Prefix: redistest.Namespace(t) + ":", Clock: func() time.Time { return clock }}
			s := rankingtest.MustStore(t, rdb, cfg, opts)
			other := rankingtest.MustStore(t, rdb, cfg, opts)
			ctx := context.Background()
			at := func(tm time.Time) { clock = tm; m.SetTime(tm) }
			apply := func(evs ...ranking.Event) {
				t.Helper()
				res, err := s.Apply(ctx, board, evs, ranking.ApplyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if r.Err != nil {
						t.Fatal(r.Err)
					}
				}
			}
			// point is the member's chart point of the first day, read
			// two days later (the chart's oldest of three).
			point := func(member string) ranking.HistoryPoint {
				t.Helper()
				rc, err := s.RankCard(ctx, board, "day", member, ranking.RankCardQuery{History: 3})
				if err != nil {
					t.Fatal(err)
				}
				return rc.History.Points[0]
			}
			want := func(member string, rank, total int64) {
				t.Helper()
				for range 2 { // read, then kept
					if pt := point(member); pt.Rank != rank || pt.Total != total || !pt.Present {
						t.Fatalf("%s's first day: rank %d of %d (present %v), want %d of %d", member, pt.Rank, pt.Total, pt.Present, rank, total)
					}
				}
			}

			at(day)
			apply(ranking.Event{Member: "a", Value: 5}, ranking.Event{Member: "b", Value: 10}, ranking.Event{Member: "c", Value: 1})
			at(day.Add(48 * time.Hour))
			apply(ranking.Event{Member: "a", Value: 1}, ranking.Event{Member: "c", Value: 1})
			// The first card finds no version yet and keeps nothing; the
			// second keeps the point, the third reads it from the store.
			point("a")
			want("a", 2, 3)
			if ranking.KeptChartPoints(s) == 0 {
				t.Fatal("no chart point kept")
			}

			// Changed behind the store's back (no removal): the kept
			// point stands, so it is not read again.
			keys, err := rdb.Keys(ctx, opts.Prefix+"*:z:day:2026-11-02").Result()
			if err != nil || len(keys) == 0 {
				t.Fatalf("keys of the first day: %v %v", keys, err)
			}
			for _, k := range keys {
				if err := rdb.ZRem(ctx, k, "b").Err(); err != nil {
					t.Fatal(err)
				}
			}
			want("a", 2, 3)

			// A removal through another store moves the version: c goes,
			// and a's point is read again (b's disappearance with it).
			if ok, err := other.RemoveMember(ctx, board, "c"); err != nil || !ok {
				t.Fatalf("remove c: %v %v", ok, err)
			}
			want("a", 1, 1)

			// A flushed database written anew: nothing kept before counts.
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			at(day)
			apply(ranking.Event{Member: "a", Value: 5}, ranking.Event{Member: "d", Value: 50}, ranking.Event{Member: "e", Value: 40})
			at(day.Add(48 * time.Hour))
			apply(ranking.Event{Member: "a", Value: 1})
			want("a", 3, 3)
			point("a")
			want("a", 3, 3)
		})
	}
}

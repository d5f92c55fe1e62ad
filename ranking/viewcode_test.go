package ranking_test

import (
	"context"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

// TestViewCodeIsWhatApplyWrites: for every view of desc, asc and
// shared-ties boards in a zone with a DST change, ViewCode names the key
// Store.Apply writes and the code it writes there, and refuses a sharded
// board.
func TestViewCodeIsWhatApplyWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, rdb := MustMiniredis(t, time.Now())
	cfg := MustConfig(t, `
timezone: Europe/Berlin
boards:
  - {id: desc, views: [hour, day, week, month, all]}
  - {id: asc, order: asc, min_score: -1000, max_score: 1000, decimals: 2, views: [hour, day, week, month, all]}
  - {id: shared, ties: shared, views: [day, all]}
  - {id: split, shards: 2, views: [day]}
`)
	s := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: "vc:"})
	for _, at := range []time.Time{
		time.Date(2026, 3, 29, 0, 59, 59, 999e6, time.UTC), // the last ms before Berlin's clocks go forward
		time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 27, 18, 31, 7, 123e6, time.UTC),
	} {
		m.SetTime(at)
		for _, board := range []string{"desc", "asc", "shared"} {
			b, _ := cfg.Board(board)
			member, value := "m"+at.Format("150405.000"), int64(-3)
			if b.Order == ranking.Desc {
				value = 42
			}
			res, err := s.Apply(ctx, board, []ranking.Event{{Member: member, Value: value}}, ranking.ApplyOptions{NoRanks: true})
			if err != nil || res[0].Err != nil {
				t.Fatalf("%s at %s: %v %v", board, at, err, res)
			}
			for _, v := range b.Views {
				vc, err := s.ViewCode(board, v.Name, at)
				if err != nil {
					t.Fatal(err)
				}
				got, err := rdb.ZScore(ctx, vc.Key, member).Result()
				if err != nil {
					t.Fatalf("%s %s at %s: %s: %v", board, v.Name, at, vc.Key, err)
				}
				if want := vc.Code(value, at); int64(got) != want {
					t.Errorf("%s %s at %s: code %d, ViewCode gives %d", board, v.Name, at, int64(got), want)
				}
			}
		}
	}
	if _, err := s.ViewCode("split", "day", time.Now()); err == nil {
		t.Error("a sharded board has a ViewCode")
	}
	if _, err := s.ViewCode("desc", "year", time.Now()); err == nil {
		t.Error("a view the board lacks has a ViewCode")
	}
}

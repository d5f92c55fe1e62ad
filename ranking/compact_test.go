package ranking_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

// TestCompactIndex: a compaction call moves at most its count of ni's
// first entries and nothing while ni is small; a pass of CompactIndex
// makes at most IndexCompactCallsPerPass calls per board, reaches a board
// with an all view (which the sweep skips), and searches answer the same
// before and after.
func TestCompactIndex(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			s := newStore(t, rdb, MustConfig(t, "boards: [{id: g, views: [all, day]}, {id: d, views: [day]}]\n"), nil)
			ni := s.Prefix() + "{g}:ni"
			card := func() int64 {
				t.Helper()
				n, err := rdb.ZCard(ctx, ni).Result()
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			var evs []ranking.Event
			for i := range 50 {
				evs = append(evs, ranking.Event{Member: fmt.Sprintf("m%03d", i), Name: fmt.Sprintf("Player %03d", 49-i), Value: 1})
			}
			if _, err := s.Apply(ctx, "g", evs, ranking.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			before := mustSearchIn(t, s, "g", "p")
			// 100 entries: below the threshold, the pass leaves them.
			if rep, err := s.CompactIndex(ctx); err != nil || rep.Moved != 0 || card() != 100 {
				t.Fatalf("small ni: %+v, %v, %d left", rep, err, card())
			}
			// One call moves at most its count, the first entries.
			if moved, left, err := ranking.CompactIndexStep(ctx, s, "g", 0, 30, 0, 1024); err != nil || moved != 30 || left != 70 || card() != 70 {
				t.Fatalf("a call of 30: moved %d, left %d, %v", moved, left, err)
			}
			if first, err := rdb.ZRange(ctx, ni, 0, 0).Result(); err != nil || first[0] != "m030\x00m030" {
				t.Fatalf("ni's first entry after the call: %q, %v", first, err)
			}
			if got := mustSearchIn(t, s, "g", "p"); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Fatalf("half compacted:\n got %v\nwant %v", got, before)
			}

			// A pass is bounded: more entries than its calls move.
			n := ranking.IndexCompactCallsPerPass*ranking.IndexCompactCount + 1000
			var zs []redis.Z
			for i := range n {
				e := fmt.Sprintf("x%05d", i)
				zs = append(zs, redis.Z{Member: e + "\x00" + e})
			}
			if err := rdb.ZAdd(ctx, ni, zs...).Err(); err != nil {
				t.Fatal(err)
			}
			rep, err := s.CompactIndex(ctx)
			if err != nil {
				t.Fatal(err)
			}
			moved := ranking.IndexCompactCallsPerPass * ranking.IndexCompactCount
			if rep.Moved != moved || int(card()) != n+70-moved {
				t.Fatalf("a pass over %d: %+v, %d left", n+70, rep, card())
			}
			// The next pass moves the rest, its last call a remainder below
			// the threshold with its count: ni goes.
			if _, err := s.CompactIndex(ctx); err != nil || card() != 0 {
				t.Fatalf("second pass: %v, %d left", err, card())
			}
			if got := mustSearchIn(t, s, "g", "p"); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Fatalf("compacted:\n got %v\nwant %v", got, before)
			}
			got := mustSearchIn(t, s, "g", "x010")
			if len(got) != 20 || got[0].Member != "x01000" || got[19].Member != "x01019" {
				t.Fatalf("x010: %v", got)
			}
		})
	}
}

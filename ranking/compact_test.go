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
			if moved, left, err := ranking.CompactIndexStep(ctx, s, "g", 0, 30, 0, 1024, 64); err != nil || moved != 30 || left != 70 || card() != 70 {
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
			// The next pass stops while ni holds fewer than
			// IndexCompactPerBlock entries per block (each block a call
			// writes would take fewer).
			if _, err := s.CompactIndex(ctx); err != nil {
				t.Fatal(err)
			}
			blocks, err := rdb.HLen(ctx, s.Prefix()+"{g}:nb").Result()
			if err != nil {
				t.Fatal(err)
			}
			if left := card(); left == 0 || left >= ranking.IndexCompactPerBlock*blocks {
				t.Fatalf("second pass: %d left in ni, %d blocks", left, blocks)
			}
			if rep, err := s.CompactIndex(ctx); err != nil || rep.Moved != 0 {
				t.Fatalf("third pass: %+v, %v", rep, err)
			}
			// Calls that move any number per block take the rest, the last
			// a remainder below the threshold with its count: ni goes.
			for card() > 0 {
				if moved, _, err := ranking.CompactIndexStep(ctx, s, "g", 0, ranking.IndexCompactCount, 128, 1024, 64); err != nil || moved == 0 {
					t.Fatalf("drain: moved %d, %v, %d left", moved, err, card())
				}
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

// TestCompactIndexBlocksBound: a compaction call writes at most its
// blocks: new entries scattered among packed ones, one per block, move
// that many per call, in order from the last one moved (round to ni's
// first past its end), and searches find them all.
func TestCompactIndexBlocksBound(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			s := newStore(t, rdb, MustConfig(t, "boards: [{id: g, views: [all]}]\n"), nil)
			ni := s.Prefix() + "{g}:ni"
			add := func(ids ...string) {
				t.Helper()
				var zs []redis.Z
				for _, id := range ids {
					zs = append(zs, redis.Z{Member: id + "\x00" + id})
				}
				if err := rdb.ZAdd(ctx, ni, zs...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			var packed []string
			for i := range 400 {
				packed = append(packed, fmt.Sprintf("p%04d", i*10))
			}
			add(packed...)
			// Blocks of at most 64 bytes: about 5 entries each.
			for {
				moved, _, err := ranking.CompactIndexStep(ctx, s, "g", 0, 500, 0, 64, 1000)
				if err != nil {
					t.Fatal(err)
				}
				if moved == 0 {
					break
				}
			}
			// Ten new ids, each between two packed ones 200 apart, so in
			// ten different blocks.
			var fresh []string
			for i := range 10 {
				fresh = append(fresh, fmt.Sprintf("p%04d", i*200+5))
			}
			add(fresh...)
			moved, left, err := ranking.CompactIndexStep(ctx, s, "g", 0, 4, 0, 64, 3)
			if err != nil || moved != 3 || left != 7 {
				t.Fatalf("a call of 3 blocks: moved %d, left %d, %v", moved, left, err)
			}
			if first, err := rdb.ZRange(ctx, ni, 0, 0).Result(); err != nil || first[0] != "p0605\x00p0605" {
				t.Fatalf("ni's first entry after the call: %q, %v", first, err)
			}
			// The next call goes on after the last entry moved, not from
			// ni's first: an entry before it waits for the walk to come
			// round.
			add("p0001")
			fresh = append(fresh, "p0001")
			if _, _, err := ranking.CompactIndexStep(ctx, s, "g", 0, 4, 0, 64, 3); err != nil {
				t.Fatal(err)
			}
			if got, err := rdb.ZRange(ctx, ni, 0, -1).Result(); err != nil || len(got) != 5 || got[0] != "p0001\x00p0001" || got[1] != "p1205\x00p1205" {
				t.Fatalf("ni after the second call: %q, %v", got, err)
			}
			for range 3 {
				if _, _, err := ranking.CompactIndexStep(ctx, s, "g", 0, 4, 0, 64, 3); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := rdb.ZCard(ctx, ni).Result(); err != nil || n != 0 {
				t.Fatalf("ni after 5 calls: %d, %v", n, err)
			}
			for _, id := range fresh {
				if got := mustSearchIn(t, s, "g", id); len(got) != 1 || got[0].Member != id {
					t.Fatalf("search %s: %v", id, got)
				}
			}
		})
	}
}

package main

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestFloorsWriteExactCodes holds both floor scripts to what they stand
// for. The exact floor writes the board's own keys in turns with
// Store.Apply: afterwards the board reads every member at the sum of both
// streams' values in every view, best first, and equal sums share one code
// in the all view (whose tie unit is the hour). The incr floor's own keys
// hold every member at the sum of its values, in codes of the same shape.
func TestFloorsWriteExactCodes(t *testing.T) {
	if err := redistest.Available(); err != nil {
		if redistest.Required() {
			t.Fatal(err)
		}
		t.Skipf("skipping: %v", err)
	}
	ctx := context.Background()
	srv, err := redistest.StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rdb := newClient(srv.Addr, 1)
	cfg, err := ranking.ParseConfig([]byte(benchConfig))
	if err != nil {
		t.Fatal(err)
	}
	store, err := ranking.Open(ctx, cfg, ranking.Options{RedisURL: "redis://" + srv.Addr, Prefix: benchPrefix})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	members := memberIDs(50)
	for attempt := 0; ; attempt++ {
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		exact := floorWork(rdb, store, benchBoard, "", 0)(newEventGen(members, 3))
		apply := applyWork(store, benchBoard, ranking.ApplyOptions{NoRanks: true})(newEventGen(members, 4))
		incr := incrFloorWork(rdb)(newEventGen(members, 3))
		board, own := map[string]int64{}, map[string]int64{}
		gf, ga := newEventGen(members, 3), newEventGen(members, 4) // the contenders' own event streams
		for range 20 {
			for range ingestBatch {
				m, v := gf.next()
				board[m] += v
				own[m] += v
				m, v = ga.next()
				board[m] += v
			}
			for _, w := range []work{exact, apply, incr} {
				if _, err := w(ctx); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(2 * time.Millisecond) // later events, later tie parts
		}
		keys := newViewKeys("")
		if ks := keys.at(time.Now()); !slices.Equal(ks, newViewKeys("").at(start)) {
			if attempt == 0 {
				continue // the run crossed an hour: its events are in two hour keys
			}
			t.Fatal("two runs crossed an hour")
		}
		for _, view := range benchViews {
			pg, err := store.Page(ctx, benchBoard, view, ranking.PageQuery{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(pg.Entries) != len(board) {
				t.Fatalf("%s holds %d members, want %d", view, len(pg.Entries), len(board))
			}
			for j, e := range pg.Entries {
				if e.Score != board[e.Member] {
					t.Errorf("%s %s: score %d, want %d", view, e.Member, e.Score, board[e.Member])
				}
				if j > 0 && e.Score > pg.Entries[j-1].Score {
					t.Errorf("%s: %s (%d) after %s", view, e.Member, e.Score, pg.Entries[j-1].Member)
				}
			}
		}
		// The all view's tie part is the hour: a score's code is the same
		// for every member that holds it.
		vc, err := store.ViewCode(benchBoard, "all", start)
		if err != nil {
			t.Fatal(err)
		}
		zs, err := rdb.ZRangeWithScores(ctx, vc.Key, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j < len(zs); j++ {
			if board[zs[j].Member.(string)] == board[zs[j-1].Member.(string)] && zs[j].Score != zs[j-1].Score {
				t.Errorf("all: equal scores of %s and %s have codes %v and %v", zs[j-1].Member, zs[j].Member, zs[j-1].Score, zs[j].Score)
			}
		}
		for i, k := range keys.at(start) {
			zs, err := rdb.ZRangeWithScores(ctx, "incrfloor:"+k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(zs) != len(own) {
				t.Fatalf("incrfloor:%s holds %d members, want %d", k, len(zs), len(own))
			}
			const span, top = 1 << 22, 1 << 30
			for j, z := range zs {
				m := z.Member.(string)
				if got := top - int64(math.Floor(z.Score/span)); got != own[m] {
					t.Errorf("incrfloor:%s %s: score %d, want %d", k, m, got, own[m])
				}
				if j > 0 && own[m] > own[zs[j-1].Member.(string)] {
					t.Errorf("incrfloor:%s: %s (%d) after %s", k, m, own[m], zs[j-1].Member)
				}
				if j > 0 && tieUnits()[i] == time.Hour && own[m] == own[zs[j-1].Member.(string)] && z.Score != zs[j-1].Score {
					t.Errorf("incrfloor:%s: equal scores of %s and %s have codes %v and %v", k, zs[j-1].Member, m, zs[j-1].Score, z.Score)
				}
			}
		}
		return
	}
}

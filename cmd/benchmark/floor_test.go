package main

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/standings/standings/ranking/redistest"
)

// TestFloorsWriteExactCodes holds both floor scripts to what they stand
// for: after the same events, every view of each holds every member at
// the sum of its values, in codes of the board's shape, ordered best
// first, with a tie part that counts the view's tie unit (the all view's
// hour, so members whose sums are equal tie there exactly).
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
	members := memberIDs(50)
	for attempt := 0; ; attempt++ {
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		exact := floorWork(rdb, 0)(newEventGen(members, 3))
		incr := incrFloorWork(rdb)(newEventGen(members, 3))
		want := map[string]int64{}
		g := newEventGen(members, 3) // the floors' own event stream
		for range 20 {
			for range ingestBatch {
				m, v := g.next()
				want[m] += v
			}
			for _, w := range []work{exact, incr} {
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
		for _, prefix := range []string{"floor0:", "incrfloor:"} {
			for i, k := range keys.at(start) {
				zs, err := rdb.ZRangeWithScores(ctx, prefix+k, 0, -1).Result()
				if err != nil {
					t.Fatal(err)
				}
				if len(zs) != len(want) {
					t.Fatalf("%s%s holds %d members, want %d", prefix, k, len(zs), len(want))
				}
				const span, top = 1 << 22, 1 << 30
				for j, z := range zs {
					m := z.Member.(string)
					if got := top - int64(math.Floor(z.Score/span)); got != want[m] {
						t.Errorf("%s%s %s: score %d, want %d", prefix, k, m, got, want[m])
					}
					if j > 0 && want[m] > want[zs[j-1].Member.(string)] {
						t.Errorf("%s%s: %s (%d) after %s", prefix, k, m, want[m], zs[j-1].Member)
					}
				}
				// The all view's tie part is the hour: a score's code is
				// the same for every member that holds it.
				if tieUnits()[i] == time.Hour {
					for j := 1; j < len(zs); j++ {
						if want[zs[j].Member.(string)] == want[zs[j-1].Member.(string)] && zs[j].Score != zs[j-1].Score {
							t.Errorf("%s%s: equal scores of %s and %s have codes %v and %v", prefix, k, zs[j-1].Member, zs[j].Member, zs[j-1].Score, zs[j].Score)
						}
					}
				}
			}
		}
		return
	}
}

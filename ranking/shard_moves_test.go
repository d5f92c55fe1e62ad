package ranking_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// Overtakes on a sharded board (contract 17): found by comparing the
// merged top once per tick, recorded once whatever the instances reading,
// and the same as the board with one shard keeps for a single climb.

const shardMovesConfig = `
boards:
  - {id: mv1, views: [all, hour]}
  - {id: mv3, shards: 3, views: [all, hour]}
`

// movesOf reads a view's overtakes as "member>passed#rank (name)".
func movesOf(t *testing.T, s *ranking.Store, board, view string) []string {
	t.Helper()
	ms, _, err := s.Moves(context.Background(), board, view, ranking.MaxMoves)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s>%s#%d (%s)", m.Member, m.Passed, m.Rank, m.Name))
	}
	return out
}

// runShardMoves plays climbs into the top 100 of both boards; tick lets a
// tick pass. Reads of the sharded board come from two stores at once.
func runShardMoves(t *testing.T, rdb redis.UniversalClient, clock func() time.Time, tick func()) {
	ctx := context.Background()
	cfg := MustConfig(t, shardMovesConfig)
	a := newStore(t, rdb, cfg, clock)
	b := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: a.Prefix(), Clock: clock})
	write := func(evs ...ranking.Event) {
		t.Helper()
		for _, board := range []string{"mv1", "mv3"} {
			if _, err := a.Apply(ctx, board, evs, ranking.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var evs []ranking.Event
	for i := range 120 {
		evs = append(evs, ranking.Event{Member: fmt.Sprintf("m%03d", i), Value: int64(10 * (1000 - i))})
	}
	write(evs...)
	both := func(view string) []string {
		t.Helper()
		var wg sync.WaitGroup
		got := make([][]string, 2)
		for i, s := range []*ranking.Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = movesOf(t, s, "mv3", view)
			}()
		}
		wg.Wait()
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("%s: two instances read %v and %v", view, got[0], got[1])
		}
		return got[0]
	}
	for _, view := range []string{"all", "hour"} {
		if got := both(view); len(got) != 0 {
			t.Fatalf("%s: overtakes before any climb: %v", view, got)
		}
	}
	// m119 climbs from #120 to #51, past m050; m118 then from #119 to #1.
	tick()
	write(ranking.Event{Member: "m119", Value: 695, Name: "Nineteen"})
	tick()
	want := []string{"m119>m050#51 (Nineteen)"}
	for _, view := range []string{"all", "hour"} {
		if got, one := both(view), movesOf(t, a, "mv1", view); !slices.Equal(got, want) || !slices.Equal(one, want) {
			t.Fatalf("%s: sharded %v, one shard %v; want %v", view, got, one, want)
		}
		if got := both(view); !slices.Equal(got, want) {
			t.Fatalf("%s: read again: %v, want %v", view, got, want)
		}
	}
	write(ranking.Event{Member: "m118", Value: 1185})
	want = append([]string{"m118>m000#1 ()"}, want...)
	tick()
	for _, view := range []string{"all", "hour"} {
		if got, one := both(view), movesOf(t, a, "mv1", view); !slices.Equal(got, want) || !slices.Equal(one, want) {
			t.Fatalf("%s: sharded %v, one shard %v; want %v", view, got, one, want)
		}
	}
}

// TestShardMovesMiniredis: a climb shows after a tick, once.
func TestShardMovesMiniredis(t *testing.T) {
	clock := time.Date(2026, 11, 2, 9, 10, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	runShardMoves(t, rdb, func() time.Time { return clock }, func() {
		clock = clock.Add(ranking.ShardMovesTick)
		m.SetTime(clock)
	})
}

// TestShardMovesWithinATick: a climb made within a tick of the last
// comparison waits for the next.
func TestShardMovesWithinATick(t *testing.T) {
	clock := time.Date(2026, 11, 2, 9, 10, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	s := newStore(t, rdb, MustConfig(t, shardMovesConfig), func() time.Time { return clock })
	ctx := context.Background()
	if _, err := s.Apply(ctx, "mv3", []ranking.Event{{Member: "a", Value: 3}, {Member: "b", Value: 2}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := movesOf(t, s, "mv3", "all"); len(got) != 0 {
		t.Fatal(got)
	}
	if _, err := s.Apply(ctx, "mv3", []ranking.Event{{Member: "b", Value: 2}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := movesOf(t, s, "mv3", "all"); len(got) != 0 {
		t.Fatalf("compared again within the tick: %v", got)
	}
	clock = clock.Add(ranking.ShardMovesTick)
	m.SetTime(clock)
	if got, want := movesOf(t, s, "mv3", "all"), []string{"b>a#1 ()"}; !slices.Equal(got, want) {
		t.Fatalf("after the tick: %v, want %v", got, want)
	}
}

// TestShardMovesRedis is the climb on a real Redis and on the cluster,
// where a tick is waited for.
func TestShardMovesRedis(t *testing.T) {
	for _, tc := range []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.ClusterClient(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runShardMoves(t, tc.rdb(t), nil, func() { time.Sleep(ranking.ShardMovesTick + 50*time.Millisecond) })
		})
	}
}

// TestRemovalForgetsOvertakes: a removed member leaves the overtakes it
// made and those that passed it, on one shard and on three, and one it
// makes once back on the board stays; a removal adds no overtake.
func TestRemovalForgetsOvertakes(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		clock := time.Date(2026, 11, 2, 9, 10, 0, 0, time.UTC)
		m, rdb := MustMiniredis(t, clock)
		removalForgetsOvertakes(t, rdb, func() time.Time { return clock }, func() {
			clock = clock.Add(ranking.ShardMovesTick)
			m.SetTime(clock)
		})
	})
	for _, be := range backends()[1:] { // Redis and the cluster, a tick waited for
		t.Run(be.Name, func(t *testing.T) {
			removalForgetsOvertakes(t, be.Client(t), nil, func() { time.Sleep(ranking.ShardMovesTick + 50*time.Millisecond) })
		})
	}
}

func removalForgetsOvertakes(t *testing.T, rdb redis.UniversalClient, clock func() time.Time, tick func()) {
	ctx := context.Background()
	s := newStore(t, rdb, MustConfig(t, shardMovesConfig), clock)
	write := func(evs ...ranking.Event) {
		t.Helper()
		for _, board := range []string{"mv1", "mv3"} {
			if _, err := s.Apply(ctx, board, evs, ranking.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(member string) {
		t.Helper()
		for _, board := range []string{"mv1", "mv3"} {
			if ok, err := s.RemoveMember(ctx, board, member); err != nil || !ok {
				t.Fatalf("remove %s from %s: %v %v", member, board, ok, err)
			}
		}
	}
	check := func(step string, want ...string) {
		t.Helper()
		tick()
		for _, board := range []string{"mv1", "mv3"} {
			for _, view := range []string{"all", "hour"} {
				if got := movesOf(t, s, board, view); !slices.Equal(got, want) {
					t.Fatalf("%s: %s/%s overtakes %q, want %q", step, board, view, got, want)
				}
			}
		}
	}
	var evs []ranking.Event
	for i := range 120 {
		evs = append(evs, ranking.Event{Member: fmt.Sprintf("m%03d", i), Value: int64(10 * (1000 - i))})
	}
	write(evs...)
	check("start")
	write(ranking.Event{Member: "m119", Value: 695})
	check("m119 climbs", "m119>m050#51 ()")
	write(ranking.Event{Member: "m118", Value: 1185})
	check("m118 climbs", "m118>m000#1 ()", "m119>m050#51 ()")
	remove("m119")
	check("m119 removed", "m118>m000#1 ()")
	remove("m000")
	check("m000 removed")
	write(ranking.Event{Member: "m119", Value: 1})
	check("m119 back, last")
	write(ranking.Event{Member: "m119", Value: 9994})
	check("m119 climbs again", "m119>m001#2 ()")
}

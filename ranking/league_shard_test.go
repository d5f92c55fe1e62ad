package ranking_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// Leagues on sharded boards (contract 17): each shard fills its own
// cohorts, numbered as the league model numbers them; league.final is
// written once per round on the board's outbox.

// leagueShardConfig is leagueModelConfig with each board spread over a
// different number of shards: 16 shards of a 93-member pool leave shards
// with one cohort beside shards with two, so cohort numbers have gaps.
func leagueShardConfig() string {
	c := leagueModelConfig
	for id, n := range map[string]string{"l5-inc": "3", "l30-best": "2", "l5-shared": "16", "l30-first": "5"} {
		c = strings.Replace(c, "{id: "+id+",", "{id: "+id+", shards: "+n+",", 1)
	}
	return c
}

// finals reads the league.final results of the results stream, by board
// and round.
func leagueFinals(t *testing.T, s *ranking.Store, rdb redis.UniversalClient) map[[2]string][]string {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), s.ResultsStream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]string][]string{}
	for _, m := range msgs {
		if m.Values["type"] != "league.final" {
			continue
		}
		b, _ := m.Values["board"].(string)
		r, _ := m.Values["round"].(string)
		res, _ := m.Values["result"].(string)
		out[[2]string{b, r}] = append(out[[2]string{b, r}], res)
	}
	return out
}

// verifyFinals checks one league.final per round anyone was placed in,
// with the model's counts: cohorts of every shard, members, promotions
// and demotions of each tier.
func (w *leagueWorkload) verifyFinals(rdb redis.UniversalClient) {
	t := w.t
	t.Helper()
	got := leagueFinals(t, w.store, rdb)
	want := 0
	for id, lm := range w.models {
		for rid, r := range lm.rounds {
			if len(r.placed) == 0 {
				continue
			}
			want++
			finals := got[[2]string{id, rid}]
			if len(finals) != 1 {
				t.Fatalf("%s round %s: %d league.final, want 1", id, rid, len(finals))
			}
			var f struct {
				Board, Round string
				Tiers        []struct {
					Tier                                string
					Cohorts, Members, Promoted, Demoted int
				}
			}
			if err := json.Unmarshal([]byte(finals[0]), &f); err != nil {
				t.Fatal(err)
			}
			for li, tier := range f.Tiers {
				level := li + 1
				numbers, _ := lm.cohorts(r, level)
				members, up, down := 0, 0, 0
				for m, seat := range r.placed {
					if seat.level != level {
						continue
					}
					members++
					switch r.outcome[m] {
					case 1:
						up++
					case -1:
						down++
					}
				}
				if tier.Tier != lm.b.League.Tiers[li].ID || tier.Cohorts != len(numbers) || tier.Members != members || tier.Promoted != up || tier.Demoted != down {
					t.Fatalf("%s round %s league.final tier %+v; model cohorts %d members %d promoted %d demoted %d", id, rid, tier, len(numbers), members, up, down)
				}
			}
		}
	}
	if len(got) != want {
		t.Fatalf("%d rounds have a league.final, want %d", len(got), want)
	}
}

// TestLeagueShardModelMiniredis plays the league model's rounds into
// sharded boards: placements, cohorts, outcomes, tiers and numbering as
// the model's shards fill them; then two stores close the rounds at once
// and each round's league.final is out once.
func TestLeagueShardModelMiniredis(t *testing.T) {
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	w := newLeagueWorkloadOf(t, rdb, func() time.Time { return clock }, 3, leagueShardConfig())
	now := func() time.Time { return clock }
	for i, hour := range []int{9, 10, 11, 13, 14} {
		clock = time.Date(2026, 11, 2, hour, 0, 1, 0, time.UTC)
		m.SetTime(clock)
		w.round(120, now, func() {
			clock = clock.Add(time.Duration(w.rng.IntN(40)) * time.Second)
			m.SetTime(clock)
		})
		if i%2 == 1 {
			w.decide(clock.UnixMilli())
		}
	}
	w.verify()
	clock = clock.Add(2 * time.Hour)
	m.SetTime(clock)
	other := rankingtest.MustStore(t, rdb, w.store.Config(), ranking.Options{Prefix: w.store.Prefix(), Clock: now})
	closeLeagues(t, w, other)
	w.verify()
	w.verifyFinals(rdb)
}

// closeLeagues runs the recorder on w's store and other at once, then on
// w's store until a pass decides nothing, relaying the outboxes.
func closeLeagues(t *testing.T, w *leagueWorkload, other *ranking.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, s := range []*ranking.Store{w.store, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.DecideLeagues(ctx); err != nil {
				t.Error(err)
			}
			if _, err := s.RelayResults(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for range 3 {
		w.decide(time.Now().Add(24 * time.Hour).UnixMilli())
		for _, s := range []*ranking.Store{w.store, other} {
			if _, err := s.RelayResults(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLeagueShardModelRedis is a shorter run on a real Redis and on the
// cluster, where each shard's keys sit on their own slot.
func TestLeagueShardModelRedis(t *testing.T) {
	for _, tc := range []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.ClusterClient(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := tc.rdb(t)
			w := newLeagueWorkloadOf(t, rdb, nil, 4, leagueShardConfig())
			now := func() time.Time {
				n, err := w.store.Now(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			w.round(120, now, func() {})
			w.decide(now().UnixMilli())
			w.verify()
		})
	}
}

// TestLeagueShardNumbers: a sharded board's cohort numbers interleave its
// shards' (shard i's cohort c is (c-1)×shards + i + 1), a member's league
// and its cohort's recorded result carry that number, and a number no
// shard gave is no cohort.
func TestLeagueShardNumbers(t *testing.T) {
	clock := time.Date(2026, 11, 2, 10, 0, 1, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	cfg := MustConfig(t, `
boards:
  - {id: lg, shards: 3, views: [hour], lateness: 3h,
     league: {cycle: hour, tiers: [bronze, silver], cohort_size: 5, promote: 2, demote: 2}}
`)
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	var events []ranking.Event
	for i := range 40 {
		events = append(events, ranking.Event{Member: "m" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Value: int64(i + 1)})
	}
	if _, err := s.Apply(ctx, "lg", events, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	seats := map[int]int{}
	want := map[string]int{} // member -> cohort number
	for _, ev := range events {
		sh := ranking.ShardOf(ev.Member, 3)
		seats[sh]++
		want[ev.Member] = ((seats[sh]-1)/5)*3 + sh + 1
	}
	for mem, n := range want {
		st, err := s.LeagueMember(ctx, "lg", "", mem)
		if err != nil || st.Number != n || st.Tier.ID != "bronze" {
			t.Fatalf("%s: %+v %v, want cohort %d", mem, st, err, n)
		}
	}
	ov, err := s.League(ctx, "lg", "")
	if err != nil {
		t.Fatal(err)
	}
	var listed []int
	for _, c := range ov.Tiers[0].Cohorts {
		listed = append(listed, c.Number)
		co, err := s.Cohort(ctx, "lg", "", "bronze", c.Number)
		if err != nil || len(co.Entries) != c.Members || co.Number != c.Number {
			t.Fatalf("cohort %d: %v %v", c.Number, co, err)
		}
		for _, e := range co.Entries {
			if want[e.Member] != c.Number {
				t.Fatalf("cohort %d lists %s of cohort %d", c.Number, e.Member, want[e.Member])
			}
		}
	}
	if ov.Tiers[0].Seats != 40 || ov.Tiers[0].Members != 40 || ov.Tiers[0].NCohorts != len(listed) || !slices.IsSorted(listed) {
		t.Fatalf("overview %+v, cohorts %v", ov.Tiers[0], listed)
	}
	if _, err := s.Cohort(ctx, "lg", "", "bronze", listed[len(listed)-1]+3); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("a number past every shard's: %v", err)
	}
	clock = clock.Add(time.Hour)
	m.SetTime(clock)
	for range 2 {
		if _, err := s.DecideLeagues(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range listed {
		raw, err := s.LeagueCohortResult(ctx, "lg", "2026-11-02T10", "bronze", n)
		if err != nil {
			t.Fatalf("cohort %d: %v", n, err)
		}
		var r ranking.CohortResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if r.Cohort != n || r.Digest != r.ComputeDigest() {
			t.Fatalf("cohort %d's result: %s", n, raw)
		}
		for _, e := range r.Entries {
			if want[e.Member] != n {
				t.Fatalf("cohort %d's result lists %s of cohort %d", n, e.Member, want[e.Member])
			}
		}
	}
	// An amendment (after a removal) finds the result through the
	// member's listing on its shard and keeps the cohort's number.
	gone := events[7].Member
	if n, err := s.AmendLeagueCohorts(ctx, "lg", gone, clock.UnixMilli()); err != nil || n != 1 {
		t.Fatalf("amend %s: %d %v", gone, n, err)
	}
	if n, err := s.AmendLeagueCohorts(ctx, "lg", gone, clock.UnixMilli()); err != nil || n != 0 {
		t.Fatalf("amend %s again: %d %v", gone, n, err)
	}
	raw, err := s.LeagueCohortResult(ctx, "lg", "2026-11-02T10", "bronze", want[gone])
	if err != nil {
		t.Fatal(err)
	}
	var r ranking.CohortResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Cohort != want[gone] || r.AmendedAt == "" || r.Digest != r.ComputeDigest() || slices.ContainsFunc(r.Entries, func(e ranking.CohortResultEntry) bool { return e.Member == gone }) {
		t.Fatalf("amended result of cohort %d: %s", want[gone], raw)
	}
}

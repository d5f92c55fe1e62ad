package ranking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
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

const leagueBoards = `
boards:
  - id: lg
    views: [hour, day, all]
    lateness: 3h
    league: {cycle: hour, tiers: [bronze, silver, gold], cohort_size: 5, promote: 2, demote: 2}
`

// mustApply writes events that must all apply.
func mustApply(tb testing.TB, s *ranking.Store, board string, events ...ranking.Event) {
	tb.Helper()
	res, err := s.Apply(context.Background(), board, events, ranking.ApplyOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			tb.Fatalf("event %d (%+v): %v", i, events[i], r.Err)
		}
	}
}

// cohortLine renders a cohort as "member:score:zone:outcome ..." in rank
// order.
func cohortLine(c *ranking.Cohort) string {
	out := ""
	for _, e := range c.Entries {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("%s:%d:%d:%s", e.Member, e.Rank, e.Score, e.Zone)
		if e.Outcome != "" {
			out += ":" + e.Outcome
		}
	}
	return out
}

func TestLeagueRoundTrip(t *testing.T) {
	ranking.GuardKeys(t)
	clock := time.Date(2026, 11, 2, 10, 0, 30, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	cfg := MustConfig(t, leagueBoards)
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	for i := 1; i <= 7; i++ {
		mustApply(t, s, "lg", ranking.Event{Member: fmt.Sprintf("m%d", i), Value: int64(10 - i)})
	}
	ov, err := s.League(ctx, "lg", "")
	if err != nil {
		t.Fatal(err)
	}
	if ov.Round.ID != "2026-11-02T10" || ov.Closed || len(ov.Tiers) != 3 || ov.Tiers[0].Seats != 7 || ov.Tiers[0].Members != 7 ||
		ov.Tiers[0].NCohorts != 2 || len(ov.Tiers[0].Cohorts) != 2 || ov.Tiers[0].Cohorts[1].Members != 2 || ov.Tiers[1].Seats != 0 {
		t.Fatalf("overview %+v", ov)
	}
	c, err := s.Cohort(ctx, "lg", "", "bronze", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cohortLine(c), "m1:1:9:promotion m2:2:8:promotion m3:3:7:safe m4:4:6:safe m5:5:5:safe"; got != want {
		t.Errorf("cohort\n got %s\nwant %s", got, want)
	}
	// The next round: m1's placement decides bronze 1.
	clock = clock.Add(time.Hour)
	m.SetTime(clock)
	mustApply(t, s, "lg", ranking.Event{Member: "m1", Value: 1}, ranking.Event{Member: "m3", Value: 1})
	c, err = s.Cohort(ctx, "lg", "2026-11-02T10", "bronze", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cohortLine(c), "m1:1:9:promotion:promoted m2:2:8:promotion:promoted m3:3:7:safe:stayed m4:4:6:safe:stayed m5:5:5:safe:stayed"; got != want || !c.Decided || !c.Closed {
		t.Errorf("decided cohort %v %v\n got %s\nwant %s", c.Decided, c.Closed, got, want)
	}
	st, err := s.LeagueMember(ctx, "lg", "", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Tier.ID != "silver" || st.Number != 1 || st.Rank != 1 || st.CohortSize != 1 || st.Zone != ranking.ZoneSafe || st.Outcome != "" {
		t.Errorf("m1 now %+v", st)
	}
	// Bronze 2 (m6, m7) was not decided by anyone: the recorder does it.
	if n, err := s.DecideLeagues(ctx); err != nil || n != 1 {
		t.Fatalf("DecideLeagues = %d, %v; want 1 (bronze 2)", n, err)
	}
	c, err = s.Cohort(ctx, "lg", "2026-11-02T10", "bronze", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cohortLine(c), "m6:1:4:promotion:promoted m7:2:3:safe:stayed"; got != want {
		t.Errorf("bronze 2\n got %s\nwant %s", got, want)
	}
	if n, err := s.DecideLeagues(ctx); err != nil || n != 0 {
		t.Fatalf("second DecideLeagues = %d, %v", n, err)
	}
	// m6 skips a round and keeps the tier it earned.
	clock = clock.Add(2 * time.Hour)
	m.SetTime(clock)
	mustApply(t, s, "lg", ranking.Event{Member: "m6", Value: 1}, ranking.Event{Member: "m4", Value: 1})
	for member, tier := range map[string]string{"m6": "silver", "m4": "bronze"} {
		st, err := s.LeagueMember(ctx, "lg", "", member)
		if err != nil || st.Tier.ID != tier {
			t.Errorf("%s: %+v %v; want tier %s", member, st, err, tier)
		}
	}
	if _, err := s.LeagueMember(ctx, "lg", "", "m2"); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Errorf("m2 did not play: %v", err)
	}
}

// leagueAt is a league test's store on miniredis at a clock it moves.
type leagueAt struct {
	t     *testing.T
	rdb   *redis.Client
	m     interface{ SetTime(time.Time) }
	s     *ranking.Store
	clock time.Time
}

func newLeagueAt(t *testing.T, boards string, at time.Time) *leagueAt {
	ranking.GuardKeys(t)
	m, rdb := MustMiniredis(t, at)
	la := &leagueAt{t: t, m: m, rdb: rdb, clock: at}
	la.s = newStore(t, rdb, MustConfig(t, boards), func() time.Time { return la.clock })
	return la
}

func (la *leagueAt) at(t time.Time) {
	la.clock = t
	la.m.SetTime(t)
}

// cohort reads a cohort's line (see cohortLine).
func (la *leagueAt) cohort(round, tier string, n int) string {
	la.t.Helper()
	c, err := la.s.Cohort(context.Background(), "lg", round, tier, n)
	if err != nil {
		la.t.Fatalf("cohort %s %s %d: %v", round, tier, n, err)
	}
	return cohortLine(c)
}

// tierOf is a member's tier in a round, or "-" when it did not play.
func (la *leagueAt) tierOf(round, member string) string {
	la.t.Helper()
	st, err := la.s.LeagueMember(context.Background(), "lg", round, member)
	if ranking.ErrorCode(err) == ranking.ENOTFOUND {
		return "-"
	}
	if err != nil {
		la.t.Fatal(err)
	}
	return fmt.Sprintf("%s/%d", st.Tier.ID, st.Number)
}

func (la *leagueAt) write(events ...ranking.Event) {
	la.t.Helper()
	mustApply(la.t, la.s, "lg", events...)
}

func scores(values map[string]int64) []ranking.Event {
	var out []ranking.Event
	for _, m := range slices.Sorted(maps.Keys(values)) {
		out = append(out, ranking.Event{Member: m, Value: values[m]})
	}
	return out
}

var (
	hour10 = time.Date(2026, 11, 2, 10, 0, 5, 0, time.UTC)
	hour11 = hour10.Add(time.Hour)
	hour12 = hour10.Add(2 * time.Hour)
)

// TestLeagueSkippingRoundsKeepsTheTier: a member that skips rounds keeps
// the tier it earned for as long as it has a score in some retained
// period of the board: on a board with an all view, however long it is
// away; on a board with only an hour view (12 kept), for about 12 hours,
// after which nothing of it is left and it starts again in the lowest
// tier.
func TestLeagueSkippingRoundsKeepsTheTier(t *testing.T) {
	for _, c := range []struct {
		views string
		away  time.Duration
		tier  string
	}{
		{"[hour, day, all]", 30 * 24 * time.Hour, "silver/1"},
		{"[hour, day, all]", 2 * time.Hour, "silver/1"},
		{"[hour]", 5 * time.Hour, "silver/1"},
		{"[hour]", 30 * time.Hour, "bronze/1"},
	} {
		t.Run(fmt.Sprintf("%s away %v", c.views, c.away), func(t *testing.T) {
			la := newLeagueAt(t, strings.Replace(leagueBoards, "[hour, day, all]", c.views, 1), hour10)
			la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 7, "d": 6, "e": 5})...)
			la.at(hour11)
			la.write(ranking.Event{Member: "e", Value: 1}) // decides bronze 1: a is promoted
			if _, err := la.s.RecordLeagueCohorts(context.Background(), "lg", "2026-11-02T10", 10); err != nil {
				t.Fatal(err)
			}
			back := hour11.Add(c.away)
			la.at(back)
			la.write(ranking.Event{Member: "a", Value: 1})
			if got := la.tierOf("", "a"); got != c.tier {
				t.Errorf("a, back after %v: %s, want %s", c.away, got, c.tier)
			}
		})
	}
}

// TestLeagueCohortsOfOneAndTwo: a cohort of 1 has no zone at all; a
// middle-tier cohort of 2 promotes its first and demotes its second.
func TestLeagueCohortsOfOneAndTwo(t *testing.T) {
	la := newLeagueAt(t, leagueBoards, hour10)
	la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 7, "d": 6, "e": 5, "f": 4})...)
	if got, want := la.cohort("", "bronze", 2), "f:1:4:safe"; got != want {
		t.Errorf("cohort of 1: %s, want %s", got, want)
	}
	la.at(hour11)
	la.write(scores(map[string]int64{"a": 1, "b": 2, "f": 1})...)
	if got, want := la.cohort("2026-11-02T10", "bronze", 2), "f:1:4:safe:stayed"; got != want {
		t.Errorf("decided cohort of 1: %s, want %s", got, want)
	}
	if got, want := la.cohort("", "silver", 1), "b:1:2:promotion a:2:1:demotion"; got != want {
		t.Errorf("silver cohort of 2: %s, want %s", got, want)
	}
	la.at(hour12)
	la.write(scores(map[string]int64{"a": 1, "b": 1})...)
	if got := la.tierOf("", "b") + " " + la.tierOf("", "a"); got != "gold/1 bronze/1" {
		t.Errorf("after the cohort of 2: b, a in %s", got)
	}
}

// TestLeagueTopNeverPromotesLowestNeverDemotes: with two tiers, the lowest
// cohort has no demotion zone and the top one no promotion zone.
func TestLeagueTopNeverPromotesLowestNeverDemotes(t *testing.T) {
	la := newLeagueAt(t, strings.Replace(leagueBoards, "[bronze, silver, gold]", "[low, top]", 1), hour10)
	la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 7, "d": 6, "e": 5})...)
	if got, want := la.cohort("", "low", 1), "a:1:9:promotion b:2:8:promotion c:3:7:safe d:4:6:safe e:5:5:safe"; got != want {
		t.Errorf("lowest tier: %s, want %s", got, want)
	}
	la.at(hour11)
	la.write(scores(map[string]int64{"a": 5, "b": 4, "c": 3, "d": 2, "e": 1})...)
	if got, want := la.cohort("2026-11-02T10", "low", 1), "a:1:9:promotion:promoted b:2:8:promotion:promoted c:3:7:safe:stayed d:4:6:safe:stayed e:5:5:safe:stayed"; got != want {
		t.Errorf("lowest tier decided: %s, want %s", got, want)
	}
	if got, want := la.cohort("", "top", 1), "a:1:5:safe b:2:4:demotion"; got != want {
		t.Errorf("top tier: %s, want %s", got, want)
	}
	la.at(hour12)
	if _, err := la.s.DecideLeagues(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := la.cohort("2026-11-02T11", "top", 1), "a:1:5:safe:stayed b:2:4:demotion:demoted"; got != want {
		t.Errorf("top tier decided: %s, want %s", got, want)
	}
}

// TestLeagueEventAtAClosedRound: an event dated in a closed round counts
// in the board's views (within lateness) and in no round.
func TestLeagueEventAtAClosedRound(t *testing.T) {
	la := newLeagueAt(t, leagueBoards, hour10)
	ctx := context.Background()
	la.write(ranking.Event{Member: "a", Value: 5})
	la.at(hour11)
	late := hour11.Add(-time.Minute)
	la.write(ranking.Event{Member: "a", Value: 3, At: late}, ranking.Event{Member: "b", Value: 4, At: late})
	if got, want := la.cohort("2026-11-02T10", "bronze", 1), "a:1:5:safe"; got != want {
		t.Errorf("closed round: %s, want %s", got, want)
	}
	if got := la.tierOf("", "a") + " " + la.tierOf("", "b") + " " + la.tierOf("2026-11-02T10", "b"); got != "- - -" {
		t.Errorf("late events placed someone: %s", got)
	}
	p, err := la.s.Page(ctx, "lg", "hour", ranking.PageQuery{Period: "2026-11-02T10", Limit: 10})
	if err != nil || len(p.Entries) != 2 || p.Entries[0].Member != "a" || p.Entries[0].Score != 8 || p.Entries[1].Score != 4 {
		t.Errorf("the hour view misses the late events: %+v %v", p, err)
	}
	// One at Redis's now in the same batch counts in the open round.
	la.write(ranking.Event{Member: "b", Value: 1, At: late}, ranking.Event{Member: "b", Value: 2})
	if got, want := la.cohort("", "bronze", 1), "b:1:2:safe"; got != want {
		t.Errorf("open round: %s, want %s", got, want)
	}
}

// TestLeagueRemoval: a member removed before its cohort is decided is left
// out of the decision; one removed after leaves the others' outcomes as
// they were, and comes back as a newcomer.
func TestLeagueRemoval(t *testing.T) {
	la := newLeagueAt(t, leagueBoards, hour10)
	ctx := context.Background()
	la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 7, "d": 6, "e": 5})...)
	la.at(hour11)
	if ok, err := la.s.RemoveMember(ctx, "lg", "a"); err != nil || !ok {
		t.Fatalf("remove a: %v %v", ok, err)
	}
	if _, err := la.s.DecideLeagues(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := la.cohort("2026-11-02T10", "bronze", 1), "b:1:8:promotion:promoted c:2:7:promotion:promoted d:3:6:safe:stayed e:4:5:safe:stayed"; got != want {
		t.Errorf("removed before: %s, want %s", got, want)
	}
	if ok, err := la.s.RemoveMember(ctx, "lg", "b"); err != nil || !ok {
		t.Fatalf("remove b: %v %v", ok, err)
	}
	if got, want := la.cohort("2026-11-02T10", "bronze", 1), "c:1:7:promotion:promoted d:2:6:safe:stayed e:3:5:safe:stayed"; got != want {
		t.Errorf("removed after: %s, want %s", got, want)
	}
	// The recorded result never listed a; b's removal amended it.
	if r, got, _ := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1); got != "c:1:7:promoted d:2:6:stayed e:3:5:stayed" || r.AmendedAt == "" {
		t.Errorf("recorded result after the removals: %s", got)
	}
	ov, err := la.s.League(ctx, "lg", "2026-11-02T10")
	if err != nil || ov.Tiers[0].Seats != 5 || ov.Tiers[0].Members != 3 || ov.Tiers[0].Cohorts[0].Members != 3 || !ov.Tiers[0].Cohorts[0].Decided || !ov.Closed {
		t.Errorf("overview after removals: %+v %v", ov, err)
	}
	la.write(scores(map[string]int64{"b": 1, "c": 1})...)
	if got := la.tierOf("", "b") + " " + la.tierOf("", "c"); got != "bronze/1 silver/1" {
		t.Errorf("b (removed) and c (promoted) now in %s", got)
	}
}

// TestLeagueRoundWithoutEvents: nobody plays a round; it reads empty, the
// recorder has nothing to do, and members keep the tier they earned.
func TestLeagueRoundWithoutEvents(t *testing.T) {
	la := newLeagueAt(t, leagueBoards, hour10)
	ctx := context.Background()
	la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 7, "d": 6, "e": 5})...)
	la.at(hour12.Add(30 * time.Minute))
	ov, err := la.s.League(ctx, "lg", "2026-11-02T11")
	if err != nil || !ov.Closed || len(ov.Tiers) != 3 || ov.Tiers[0].Seats != 0 || ov.Tiers[0].NCohorts != 0 || len(ov.Tiers[0].Cohorts) != 0 {
		t.Errorf("empty round: %+v %v", ov, err)
	}
	if _, err := la.s.Cohort(ctx, "lg", "2026-11-02T11", "bronze", 1); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Errorf("a cohort of the empty round: %v", err)
	}
	if n, err := la.s.DecideLeagues(ctx); err != nil || n != 1 {
		t.Errorf("DecideLeagues = %d, %v; want the one cohort of 10:00", n, err)
	}
	la.write(scores(map[string]int64{"a": 1, "e": 1})...)
	if got := la.tierOf("", "a") + " " + la.tierOf("", "e"); got != "silver/1 bronze/1" {
		t.Errorf("after an empty round: a, e in %s", got)
	}
}

// TestLeagueConcurrentPlacement: two stores place the first events of a
// round at the same moment; every member gets one seat, no cohort goes
// over cohort_size.
func TestLeagueConcurrentPlacement(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, leagueBoards)
			prefix := redistest.Namespace(t) + ":"
			stores := []*ranking.Store{
				rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix}),
				rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix}),
			}
			ctx := context.Background()
			var members []string
			for i := range 48 {
				members = append(members, fmt.Sprintf("m%02d", i))
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for k, s := range stores {
				order := slices.Clone(members)
				rand.New(rand.NewPCG(uint64(k), 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				wg.Add(1)
				go func() {
					defer wg.Done()
					for len(order) > 0 {
						n := min(len(order), 1+len(order)%3)
						var batch []ranking.Event
						for _, m := range order[:n] {
							batch = append(batch, ranking.Event{Member: m, Value: 1})
						}
						order = order[n:]
						if _, err := s.Apply(ctx, "lg", batch, ranking.ApplyOptions{}); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			ov, err := stores[0].League(ctx, "lg", "")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]string{}
			for _, tier := range ov.Tiers {
				for _, c := range tier.Cohorts {
					co, err := stores[1].Cohort(ctx, "lg", ov.Round.ID, tier.ID, c.Number)
					if err != nil {
						t.Fatal(err)
					}
					if len(co.Entries) > 5 || len(co.Entries) != c.Members {
						t.Errorf("cohort %s %d holds %d (overview %d)", tier.ID, c.Number, len(co.Entries), c.Members)
					}
					for _, e := range co.Entries {
						where := fmt.Sprintf("%s/%d", tier.ID, c.Number)
						if prev, dup := seen[e.Member]; dup {
							t.Errorf("%s in %s and %s", e.Member, prev, where)
						}
						seen[e.Member] = where
					}
				}
			}
			if len(seen) != len(members) || ov.Tiers[0].Seats != len(members) {
				t.Errorf("%d members seated, %d seats; want %d", len(seen), ov.Tiers[0].Seats, len(members))
			}
		})
	}
}

// TestLeagueLatest: a latest board keeps each round's newest value by
// event time, exact times and all.
func TestLeagueLatest(t *testing.T) {
	la := newLeagueAt(t, strings.Replace(leagueBoards, "lateness: 3h", "lateness: 3h\n    update: latest\n    ties: shared", 1), hour10.Add(30*time.Minute))
	la.write(ranking.Event{Member: "a", Value: 5}, ranking.Event{Member: "a", Value: 2, At: hour10.Add(10 * time.Minute)},
		ranking.Event{Member: "b", Value: 5}, ranking.Event{Member: "c", Value: 1})
	if got, want := la.cohort("", "bronze", 1), "a:1:5:promotion b:1:5:promotion c:3:1:safe"; got != want {
		t.Errorf("latest: %s, want %s", got, want)
	}
}

// TestLeagueResultsRecordedOnce: each closed cohort's result is recorded
// once with its digest, and league.final reaches the results stream once,
// after every cohort, also when a pass stops halfway and two instances
// carry on at once.
func TestLeagueResultsRecordedOnce(t *testing.T) {
	la := newLeagueAt(t, leagueBoards, hour10)
	ctx := context.Background()
	values := map[string]int64{}
	for i := range 12 {
		values[fmt.Sprintf("m%02d", i)] = int64(20 - i)
	}
	la.write(scores(values)...)
	la.write(ranking.Event{Member: "m00", Value: 1, Name: "Zoë"})
	la.at(hour11)
	la.write(ranking.Event{Member: "m00", Value: 1}) // decides bronze 1
	// A pass that decides everything but stops after one record.
	other := rankingtest.MustStore(t, la.rdb, la.s.Config(), ranking.Options{Prefix: la.s.Prefix(), Clock: func() time.Time { return la.clock }})
	if done, err := la.s.RecordLeagueCohorts(ctx, "lg", "2026-11-02T10", 1); err != nil || done {
		t.Fatalf("first record: %v %v", done, err)
	}
	if _, err := la.s.LeagueCohortResult(ctx, "lg", "2026-11-02T10", "bronze", 1); err != nil {
		t.Fatalf("bronze 1 not recorded: %v", err)
	}
	if _, err := la.s.LeagueCohortResult(ctx, "lg", "2026-11-02T10", "bronze", 3); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("bronze 3 (undecided) recorded: %v", err)
	}
	var wg sync.WaitGroup
	for _, s := range []*ranking.Store{la.s, other} {
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
	if _, err := la.s.DecideLeagues(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := la.s.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[int]string{1: "m00:1:21:promoted m01:2:19:promoted m02:3:18:stayed m03:4:17:stayed m04:5:16:stayed",
		2: "m05:1:15:promoted m06:2:14:promoted m07:3:13:stayed m08:4:12:stayed m09:5:11:stayed", 3: "m10:1:10:promoted m11:2:9:stayed"} {
		raw, err := la.s.LeagueCohortResult(ctx, "lg", "2026-11-02T10", "bronze", c)
		if err != nil {
			t.Fatalf("cohort %d: %v", c, err)
		}
		var r ranking.CohortResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range r.Entries {
			got = append(got, fmt.Sprintf("%s:%d:%s:%s", e.Member, e.Rank, e.Score, e.Outcome))
		}
		if strings.Join(got, " ") != want || r.Digest != r.ComputeDigest() || r.Tier != "bronze" || r.Cohort != c || r.Round != "2026-11-02T10" {
			t.Errorf("cohort %d: %s (digest %s, recomputed %s)\nwant %s", c, raw, r.Digest, r.ComputeDigest(), want)
		}
		if c == 1 && (r.Entries[0].Name == nil || *r.Entries[0].Name != "Zoë") {
			t.Errorf("cohort 1 lacks m00's name: %s", raw)
		}
	}
	msgs, err := la.rdb.XRange(ctx, la.s.ResultsStream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	finals := 0
	for _, m := range msgs {
		if m.Values["type"] == "league.final" {
			finals++
			want := `{"board":"lg","round":"2026-11-02T10","start":"2026-11-02T10:00:00Z","end":"2026-11-02T11:00:00Z","tiers":[` +
				`{"tier":"bronze","cohorts":3,"members":12,"promoted":5,"demoted":0},{"tier":"silver","cohorts":0,"members":0,"promoted":0,"demoted":0},` +
				`{"tier":"gold","cohorts":0,"members":0,"promoted":0,"demoted":0}]}`
			if m.Values["result"] != want || m.Values["board"] != "lg" || m.Values["round"] != "2026-11-02T10" {
				t.Errorf("league.final %v\nwant result %s", m.Values, want)
			}
		}
	}
	if finals != 1 {
		t.Errorf("%d league.final entries, want 1", finals)
	}
}

// TestLeagueReadsRefuseBadInput: each read says what is wrong with its
// input, in the domain's codes.
func TestLeagueReadsRefuseBadInput(t *testing.T) {
	la := newLeagueAt(t, leagueBoards+"  - {id: plain}\n", hour10)
	ctx := context.Background()
	la.write(ranking.Event{Member: "a", Value: 1})
	errOf := func(_ any, err error) error { return err }
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"no league", errOf(la.s.League(ctx, "plain", "")), ranking.ENOTFOUND},
		{"no board", errOf(la.s.League(ctx, "nope", "")), ranking.ENOTFOUND},
		{"coarser round", errOf(la.s.League(ctx, "lg", "2026-11-02")), ranking.EINVALID},
		{"bad round", errOf(la.s.Cohort(ctx, "lg", "yesterday", "bronze", 1)), ranking.EINVALID},
		{"unknown tier", errOf(la.s.Cohort(ctx, "lg", "", "wood", 1)), ranking.ENOTFOUND},
		{"cohort 0", errOf(la.s.Cohort(ctx, "lg", "", "bronze", 0)), ranking.EINVALID},
		{"cohort too large", errOf(la.s.Cohort(ctx, "lg", "", "bronze", 1<<40)), ranking.EINVALID},
		{"empty cohort", errOf(la.s.Cohort(ctx, "lg", "", "bronze", 2)), ranking.ENOTFOUND},
		{"bad member", errOf(la.s.LeagueMember(ctx, "lg", "", "")), ranking.EINVALID},
		{"result cohort 0", errOf(la.s.LeagueCohortResult(ctx, "lg", "", "bronze", 0)), ranking.EINVALID},
		{"no result yet", errOf(la.s.LeagueCohortResult(ctx, "lg", "", "bronze", 1)), ranking.ENOTFOUND},
	} {
		if got := ranking.ErrorCode(tc.err); got != tc.code {
			t.Errorf("%s: %v (%s), want %s", tc.name, tc.err, got, tc.code)
		}
	}
}

// cohortResult reads a recorded cohort result, its digest checked against
// the canonical JSON by the tests' own routine, and its rows as
// "member:rank:score:outcome".
func cohortResult(t *testing.T, s *ranking.Store, round, tier string, n int) (ranking.CohortResult, string, string) {
	t.Helper()
	raw, err := s.LeagueCohortResult(context.Background(), "lg", round, tier, n)
	if err != nil {
		t.Fatalf("result of %s %d: %v", tier, n, err)
	}
	var r ranking.CohortResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if d := independentDigestOf(t, raw, "board", "cohort", "entries", "round", "tier"); r.Digest != d || r.ComputeDigest() != d {
		t.Fatalf("result of %s %d: stored digest %s, recomputed %s", tier, n, r.Digest, d)
	}
	var rows []string
	for _, e := range r.Entries {
		rows = append(rows, fmt.Sprintf("%s:%d:%s:%s", e.Member, e.Rank, e.Score, e.Outcome))
	}
	return r, strings.Join(rows, " "), string(raw)
}

// amendedCohorts lists the results stream's result.amended entries of
// cohorts as "round tier cohort", checking that each carries its result.
func amendedCohorts(t *testing.T, rdb redis.UniversalClient, s *ranking.Store) []string {
	t.Helper()
	var out []string
	for _, m := range rdb.XRange(context.Background(), s.ResultsStream(), "-", "+").Val() {
		if m.Values["type"] != "result.amended" || m.Values["round"] == nil {
			continue
		}
		var r ranking.CohortResult
		if err := json.Unmarshal([]byte(fmt.Sprint(m.Values["result"])), &r); err != nil || r.Digest != m.Values["digest"] || m.Values["board"] != "lg" {
			t.Errorf("result.amended entry %v: %v", m.Values, err)
		}
		out = append(out, fmt.Sprint(m.Values["round"], " ", m.Values["tier"], " ", m.Values["cohort"]))
	}
	return out
}

// TestLeagueRemovalAmendsRecordedCohort: removing a member after its
// cohort's result is recorded amends that result at once: its entry gone,
// the ranks after it up by one (a shared rank stays shared), the others'
// outcomes as decided, recorded_at kept, amended_at set, a new digest true
// to the canonical JSON, and one result.amended in standings:results. The
// cohort's page and the member read agree with it; the relay's second run
// of the amendment changes nothing.
func TestLeagueRemovalAmendsRecordedCohort(t *testing.T) {
	la := newLeagueAt(t, strings.Replace(leagueBoards, "lateness: 3h", "lateness: 3h\n    ties: shared", 1), hour10)
	ctx := context.Background()
	la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 8, "d": 6, "e": 5, "f": 4})...)
	la.at(hour11)
	if _, err := la.s.DecideLeagues(ctx); err != nil {
		t.Fatal(err)
	}
	before, rows, _ := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1)
	if want := "a:1:9:promoted b:2:8:promoted c:2:8:promoted d:4:6:stayed e:5:5:stayed"; rows != want || before.AmendedAt != "" {
		t.Fatalf("recorded %s, want %s", rows, want)
	}
	la.at(hour11.Add(10 * time.Minute))
	for _, m := range []string{"b", "a"} {
		if ok, err := la.s.RemoveMember(ctx, "lg", m); err != nil || !ok {
			t.Fatalf("remove %s: %v %v", m, ok, err)
		}
	}
	r, rows, raw := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1)
	if want := "c:1:8:promoted d:2:6:stayed e:3:5:stayed"; rows != want {
		t.Errorf("amended %s, want %s", rows, want)
	}
	if r.RecordedAt != before.RecordedAt || r.AmendedAt != "2026-11-02T11:10:05.000Z" || r.Digest == before.Digest {
		t.Errorf("amended %s (recorded %s before)", raw, before.RecordedAt)
	}
	if _, other, _ := cohortResult(t, la.s, "2026-11-02T10", "bronze", 2); other != "f:1:4:stayed" {
		t.Errorf("cohort 2 changed: %s", other)
	}
	// The cohort read and the member read agree with the amended result.
	c, err := la.s.Cohort(ctx, "lg", "2026-11-02T10", "bronze", 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range c.Entries {
		if got := fmt.Sprintf("%s:%d:%s", e.Member, e.Rank, e.Outcome); i >= len(r.Entries) ||
			got != fmt.Sprintf("%s:%d:%s", r.Entries[i].Member, r.Entries[i].Rank, r.Entries[i].Outcome) {
			t.Errorf("cohort read %s, result %s", cohortLine(c), rows)
		}
	}
	if len(c.Entries) != len(r.Entries) {
		t.Errorf("cohort read %s, result %s", cohortLine(c), rows)
	}
	if got := la.tierOf("2026-11-02T10", "b"); got != "-" {
		t.Errorf("removed b still plays the round: %s", got)
	}
	// The relay runs each member.removed amendment again: nothing changes.
	for range 2 {
		if _, err := la.s.RelayResults(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, again := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1); again != raw {
		t.Errorf("amended twice:\n%s\n%s", raw, again)
	}
	if got := amendedCohorts(t, la.rdb, la.s); !slices.Equal(got, []string{"2026-11-02T10 bronze 1", "2026-11-02T10 bronze 1"}) {
		t.Errorf("result.amended entries %q, want one per removal", got)
	}
	last := la.rdb.XRevRangeN(ctx, la.s.ResultsStream(), "+", "-", 10).Val()
	found := false
	for _, m := range last {
		found = found || (m.Values["type"] == "result.amended" && m.Values["result"] == raw)
	}
	if !found {
		t.Errorf("the amended result is not in standings:results as served")
	}
	for _, m := range []string{"a", "b"} {
		if n := la.rdb.ZCard(ctx, la.s.Prefix()+"{lg}:lc:"+m).Val(); n != 0 {
			t.Errorf("lc:%s still lists %d results", m, n)
		}
	}
	if l := la.rdb.ZRange(ctx, la.s.Prefix()+"{lg}:lc:c", 0, -1).Val(); !slices.Equal(l, []string{"2026-11-02T10\n1\n1"}) {
		t.Errorf("lc:c %q", l)
	}
}

// TestLeagueAmendsAfterACrash: the removal script ran but the process died
// before amending; the cohort result still lists the member until the
// relay handles the member.removed outbox entry, which amends it once.
func TestLeagueAmendsAfterACrash(t *testing.T) {
	la := newLeagueAt(t, leagueBoards, hour10)
	ctx := context.Background()
	la.write(scores(map[string]int64{"a": 9, "b": 8, "c": 7})...)
	la.at(hour11)
	if _, err := la.s.DecideLeagues(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := la.s.RemoveMemberOnly(ctx, "lg", "a"); err != nil || !ok {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if r, rows, _ := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1); r.AmendedAt != "" || rows != "a:1:9:promoted b:2:8:stayed c:3:7:stayed" {
		t.Fatalf("amended without the relay: %s", rows)
	}
	la.at(hour11.Add(time.Minute))
	if _, err := la.s.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
	r, rows, raw := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1)
	if rows != "b:1:8:stayed c:2:7:stayed" || r.AmendedAt != "2026-11-02T11:01:05.000Z" {
		t.Fatalf("after the relay: %s", raw)
	}
	if _, err := la.s.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
	if got := amendedCohorts(t, la.rdb, la.s); !slices.Equal(got, []string{"2026-11-02T10 bronze 1"}) {
		t.Errorf("result.amended entries %q", got)
	}
	if _, _, again := cohortResult(t, la.s, "2026-11-02T10", "bronze", 1); again != raw {
		t.Errorf("amended twice:\n%s\n%s", raw, again)
	}
}

// TestLeagueAmendsOnEveryBackend: on miniredis, real Redis and the
// cluster, with every script's keys guarded, a cohort result is recorded,
// a member removed, and the result amended once; the relay copies
// result.amended. On a real clock the current round is open, so the test
// gives the previous round the current round's standings, seats and
// counters (and lists it to decide) by hand.
func TestLeagueAmendsOnEveryBackend(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			cfg := MustConfig(t, leagueBoards)
			s := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: redistest.Namespace(t) + ":"})
			mustApply(t, s, "lg", scores(map[string]int64{"a": 9, "b": 8, "c": 7})...)
			st, err := s.LeagueMember(ctx, "lg", "", "a")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := cfg.Board("lg")
			v, _ := b.View("hour")
			cur := st.Cohort.Round
			prev := cfg.Calendar.Prev(v, cur)
			pre := s.Prefix() + "{lg}:"
			for _, suffix := range []string{"z:~lg:%s", "lg:%s:m"} {
				from, to := pre+fmt.Sprintf(suffix, cur.ID), pre+fmt.Sprintf(suffix, prev.ID)
				zs, err := rdb.ZRangeWithScores(ctx, from, 0, -1).Result()
				if err != nil || len(zs) != 3 {
					t.Fatalf("%s: %v %v", from, zs, err)
				}
				if err := rdb.ZAdd(ctx, to, zs...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			f, err := rdb.HGetAll(ctx, pre+"lg:"+cur.ID+":f").Result()
			if err != nil || len(f) == 0 {
				t.Fatalf("counters %v %v", f, err)
			}
			if err := rdb.HSet(ctx, pre+"lg:"+prev.ID+":f", f).Err(); err != nil {
				t.Fatal(err)
			}
			exp := rdb.ZScore(ctx, pre+"k", "~lg:"+cur.ID).Val()
			if err := rdb.ZAdd(ctx, pre+"k", redis.Z{Score: exp, Member: "~lg:" + prev.ID}).Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.ZAdd(ctx, pre+"lr", redis.Z{Score: float64(prev.End.UnixMilli()), Member: prev.ID}).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.DecideLeagues(ctx); err != nil {
				t.Fatal(err)
			}
			if _, rows, _ := cohortResult(t, s, prev.ID, "bronze", 1); rows != "a:1:9:promoted b:2:8:stayed c:3:7:stayed" {
				t.Fatalf("recorded %s", rows)
			}
			if ok, err := s.RemoveMember(ctx, "lg", "a"); err != nil || !ok {
				t.Fatalf("remove: %v %v", ok, err)
			}
			r, rows, raw := cohortResult(t, s, prev.ID, "bronze", 1)
			if rows != "b:1:8:stayed c:2:7:stayed" || r.AmendedAt == "" {
				t.Fatalf("amended %s", raw)
			}
			for range 2 {
				if _, err := s.RelayResults(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, again := cohortResult(t, s, prev.ID, "bronze", 1); again != raw {
				t.Errorf("amended twice:\n%s\n%s", raw, again)
			}
			if got := amendedCohorts(t, rdb, s); !slices.Equal(got, []string{prev.ID + " bronze 1"}) {
				t.Errorf("result.amended entries %q", got)
			}
		})
	}
}

// TestLeagueLargeCohortsDecidedInBoundedCalls: cohorts larger than one
// decide.lua call's budget, and a write whose members' last cohorts are
// all undecided, get the same outcomes whether the write or the recorder
// decides them first.
func TestLeagueLargeCohortsDecidedInBoundedCalls(t *testing.T) {
	const boards = `
boards:
  - id: lg
    views: [hour, all]
    league: {cycle: hour, tiers: [low, mid, top], cohort_size: 300, promote: 100, demote: 100}
`
	const n = 650 // cohorts of 300, 300 and 50
	var first, next []ranking.Event
	for i := range n {
		first = append(first, ranking.Event{Member: fmt.Sprintf("u%03d", i), Value: int64(i*919%1000) + 1})
	}
	// The next round's first batch names members of every cohort.
	for k := range 300 {
		for i := k; i < n; i += 300 {
			next = append(next, ranking.Event{Member: fmt.Sprintf("u%03d", i), Value: 1})
		}
	}
	run := func(recorderFirst bool) (lines []string, tiers map[string]string) {
		la := newLeagueAt(t, boards, hour10)
		la.write(first...)
		la.at(hour11)
		if recorderFirst {
			if _, err := la.s.DecideLeagues(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		la.write(next...)
		la.at(hour12)
		if _, err := la.s.DecideLeagues(context.Background()); err != nil {
			t.Fatal(err)
		}
		for c := 1; c <= 3; c++ {
			lines = append(lines, la.cohort("2026-11-02T10", "low", c))
		}
		tiers = map[string]string{}
		for _, e := range next {
			tiers[e.Member] = la.tierOf("2026-11-02T11", e.Member)
		}
		return lines, tiers
	}
	byWrite, tiersByWrite := run(false)
	byRecorder, tiersByRecorder := run(true)
	for c, want := range []int{100, 100, 25} {
		if got := strings.Count(byWrite[c], ":promoted"); got != want {
			t.Errorf("cohort %d promoted %d, want %d", c+1, got, want)
		}
		if got := strings.Count(byWrite[c], ":stayed"); got != []int{300, 300, 50}[c]-want {
			t.Errorf("cohort %d: %d stayed", c+1, got)
		}
		if byWrite[c] != byRecorder[c] {
			t.Errorf("cohort %d decided by the write:\n%s\nby the recorder:\n%s", c+1, byWrite[c], byRecorder[c])
		}
	}
	if !maps.Equal(tiersByWrite, tiersByRecorder) {
		t.Errorf("next round's tiers differ: by the write %v, by the recorder %v", tiersByWrite, tiersByRecorder)
	}
	if got := tiersByWrite["u000"]; !strings.HasPrefix(got, "low/") && !strings.HasPrefix(got, "mid/") {
		t.Errorf("u000 in %s", got)
	}
}

package ranking_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
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

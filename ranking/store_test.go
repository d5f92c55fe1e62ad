package ranking_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// MustConfig parses a boards file or fails the test.
func MustConfig(tb testing.TB, text string) *ranking.Config {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(text))
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// MustMiniredis starts a miniredis whose clock is set to at, with TTLs that
// follow that clock.
func MustMiniredis(tb testing.TB, at time.Time) (*miniredis.Miniredis, *redis.Client) {
	tb.Helper()
	m := miniredis.RunT(tb)
	m.SetTime(at)
	m.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	tb.Cleanup(func() { rdb.Close() })
	return m, rdb
}

// backends lists the Redis flavours every store test runs against; its
// miniredis runs on the wall clock, with TTLs that follow it.
func backends() []redistest.Backend {
	return redistest.Backends(func(t *testing.T) redis.UniversalClient {
		_, rdb := MustMiniredis(t, time.Now())
		return rdb
	})
}

func newStore(t *testing.T, rdb redis.UniversalClient, cfg *ranking.Config, clock func() time.Time) *ranking.Store {
	return rankingtest.MustStore(t, rdb, cfg, ranking.Options{Clock: clock})
}

// sharedStore is a store on rdb itself, for tests that watch or steer the
// store's own commands or connections (hooks on rdb, warmed connections).
func sharedStore(t *testing.T, rdb redis.UniversalClient, cfg *ranking.Config, clock func() time.Time) *ranking.Store {
	return ranking.StoreOnClient(rdb, cfg, ranking.Options{Prefix: redistest.Namespace(t) + ":", Clock: clock})
}

func periodsOf(res ranking.WriteResult) map[string]string {
	out := map[string]string{}
	for _, v := range res.Views {
		out[v.View] = v.Period
	}
	return out
}

// TestSkewedWritersAgreeOnTheWeek: two app servers whose clocks are minutes
// off either side of a week boundary put events into the week Redis's clock
// says, before and after Redis's midnight.
func TestSkewedWritersAgreeOnTheWeek(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	redisNow := time.Date(2026, 11, 22, 23, 59, 58, 0, sh) // Sunday; weeks start Monday
	m, rdb := MustMiniredis(t, redisNow)
	cfg := MustConfig(t, "timezone: Asia/Shanghai\nboards: [{id: points, views: [hour, day, week, month, all]}]\n")
	prefix := redistest.Namespace(t) + ":"
	ahead := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix, Clock: func() time.Time { return redisNow.Add(5 * time.Minute) }})
	behind := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix, Clock: func() time.Time { return redisNow.Add(-5 * time.Minute) }})
	ctx := context.Background()
	for _, tc := range []struct {
		at   time.Time
		week string
		day  string
	}{
		{redisNow, "2026-11-16", "2026-11-22"},
		{redisNow.Add(3 * time.Second), "2026-11-23", "2026-11-23"},
	} {
		m.SetTime(tc.at)
		for name, s := range map[string]*ranking.Store{"ahead": ahead, "behind": behind} {
			res, err := s.Write(ctx, "points", ranking.Event{Member: name, Value: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := periodsOf(res)
			if got["week"] != tc.week || got["day"] != tc.day {
				t.Errorf("%s writer at Redis %v: week %s day %s, want %s %s", name, tc.at, got["week"], got["day"], tc.week, tc.day)
			}
			if !res.At.Equal(tc.at) {
				t.Errorf("%s writer: event time %v, want Redis's %v", name, res.At, tc.at)
			}
		}
	}
	pg, err := ahead.Page(ctx, "points", "week", ranking.PageQuery{Period: "2026-11-16", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Total != 2 {
		t.Errorf("week 2026-11-16 has %d members, want both writers", pg.Total)
	}
}

// TestClockJumpRetries: when the local clock jumps after the store learned
// Redis's, the script answers with Redis's now and the store retries with
// the right periods.
func TestClockJumpRetries(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: points, views: [hour, day, week, month, all]}]\n")
			var mu sync.Mutex
			shift := time.Duration(0)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(shift) }
			s := newStore(t, rdb, cfg, clock)
			ctx := context.Background()
			if _, err := s.Write(ctx, "points", ranking.Event{Member: "a", Value: 1}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			shift = 72 * time.Hour // the app server's clock jumps three days
			mu.Unlock()
			before, err := rdb.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Write(ctx, "points", ranking.Event{Member: "b", Value: 1})
			if err != nil {
				t.Fatal(err)
			}
			after, _ := rdb.Time(ctx).Result()
			for _, v := range res.Views {
				view, _ := cfg.Boards[0].View(v.View)
				want1 := cfg.Calendar.PeriodAt(view, before).ID
				want2 := cfg.Calendar.PeriodAt(view, after).ID
				if v.Period != want1 && v.Period != want2 {
					t.Errorf("view %s: period %s, want Redis's %s", v.View, v.Period, want1)
				}
			}
			pg, err := s.Page(ctx, "points", "day", ranking.PageQuery{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if pg.Period.ID != cfg.Calendar.PeriodAt(ranking.View{Name: "day", Kind: ranking.Day}, after).ID {
				t.Errorf("current day read as %s", pg.Period.ID)
			}
		})
	}
}

// TestRetention: a finished period stays readable for keep periods after
// its end, never expires before it is final, and then expires by itself.
func TestRetention(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		board   string
		view    string
		period  string
		expires time.Time
	}{
		// hour 10 ends 11:00; keep 2 hours -> 13:00; final at 11:30
		{"keep decides", "{id: b, views: [hour], keep: 2, lateness: 30m}", "hour", "2026-11-22T10", time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)},
		// keep 0, no results: readable until final, 11:00 + 2h
		{"lateness decides", "{id: b, views: [hour], keep: 0, lateness: 2h, results_keep: 0}", "hour", "2026-11-22T10", time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)},
		// keep 0, results recorded: final at 13:00, then an hour for the recorder
		{"results outlast lateness", "{id: b, views: [hour], keep: 0, lateness: 2h}", "hour", "2026-11-22T10", time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)},
		// month: November ends Dec 1; keep 1 month -> Jan 1
		{"month", "{id: b, views: [month], keep: 1}", "month", "2026-11", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		// week starting Monday 2026-11-16 ends 11-23; keep 3 weeks -> 12-14
		{"week", "{id: b, views: [week], keep: 3}", "week", "2026-11-16", time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, rdb := MustMiniredis(t, start)
			cfg := MustConfig(t, "boards: ["+tc.board+"]\n")
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			if _, err := s.Write(ctx, "b", ranking.Event{Member: "alice", Value: 3}); err != nil {
				t.Fatal(err)
			}
			total := func() int64 {
				t.Helper()
				pg, err := s.Page(ctx, "b", tc.view, ranking.PageQuery{Period: tc.period, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				return pg.Total
			}
			m.SetTime(tc.expires.Add(-time.Second))
			if total() != 1 {
				t.Fatalf("period %s gone before %v", tc.period, tc.expires)
			}
			m.SetTime(tc.expires.Add(time.Second))
			if total() != 0 {
				t.Fatalf("period %s still there after %v", tc.period, tc.expires)
			}
		})
	}
}

// TestRetentionRealRedis checks the expiry Redis itself holds.
func TestRetentionRealRedis(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := MustConfig(t, "boards: [{id: b, views: [hour, all], keep: 2, lateness: 30m}]\n")
	prefix := redistest.Namespace(t) + ":"
	s := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix})
	ctx := context.Background()
	res, err := s.Write(ctx, "b", ranking.Event{Member: "alice", Value: 3})
	if err != nil {
		t.Fatal(err)
	}
	hour := res.Views[0].Period
	p, _ := cfg.Calendar.ParsePeriod(ranking.View{Name: "hour", Kind: ranking.Hour}, hour)
	want := p.End.Add(2 * time.Hour)
	got, err := rdb.Do(ctx, "PEXPIRETIME", prefix+"{b}:z:hour:"+hour).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if got != want.UnixMilli() {
		t.Errorf("hour key expires at %v, want %v", time.UnixMilli(got), want)
	}
	if ttl, _ := rdb.PTTL(ctx, prefix+"{b}:z:all:all").Result(); ttl != -1 {
		t.Errorf("the all view must never expire, ttl %v", ttl)
	}
}

// TestRemoveMember removes a member from every view and retained period.
func TestRemoveMember(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: b, views: [hour, day, week, month, all], lateness: 72h}]\n")
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			now, err := s.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var periods []ranking.WriteResult
			for i, back := range []time.Duration{0, 2 * time.Hour, 30 * time.Hour, 60 * time.Hour} {
				for _, m := range []string{"cheater", "honest"} {
					res, err := s.Write(ctx, "b", ranking.Event{Member: m, Value: int64(10 + i), Name: "N " + m, At: now.Add(-back)})
					if err != nil {
						t.Fatal(err)
					}
					if m == "cheater" {
						periods = append(periods, res)
					}
				}
			}
			removed, err := s.RemoveMember(ctx, "b", "cheater")
			if err != nil || !removed {
				t.Fatalf("remove: %v %v", removed, err)
			}
			for _, res := range periods {
				for _, v := range res.Views {
					if _, err := s.Member(ctx, "b", v.View, "cheater", ranking.MemberQuery{Period: v.Period}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
						t.Errorf("%s %s: cheater still there (%v)", v.View, v.Period, err)
					}
					c, err := s.Member(ctx, "b", v.View, "honest", ranking.MemberQuery{Period: v.Period})
					if err != nil || c.Rank != 1 || c.Name != "N honest" {
						t.Errorf("%s %s: honest member disturbed: %+v %v", v.View, v.Period, c, err)
					}
				}
			}
			removed, err = s.RemoveMember(ctx, "b", "cheater")
			if err != nil || removed {
				t.Fatalf("second remove: %v %v, want false", removed, err)
			}
			if _, err := s.RemoveMember(ctx, "nope", "x"); ranking.ErrorCode(err) != ranking.ENOTFOUND {
				t.Errorf("unknown board: %v", err)
			}
		})
	}
}

// TestChangeFeed: every write publishes the changed view periods to every
// subscriber, on a cluster too.
func TestChangeFeed(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: alpha, views: [day, all]}, {id: beta, views: [week]}]\n")
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			sub, err := s.Subscribe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			for _, board := range []string{"alpha", "beta"} {
				res, err := s.Write(ctx, board, ranking.Event{Member: "m", Value: 1})
				if err != nil {
					t.Fatal(err)
				}
				var want []ranking.ViewPeriod
				for _, v := range res.Views {
					want = append(want, ranking.ViewPeriod{View: v.View, Period: v.Period})
				}
				select {
				case ch := <-sub.C():
					if ch.Board != board || !slices.Equal(ch.Periods, want) {
						t.Errorf("change %+v, want board %s %+v", ch, board, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("no change received for %s", board)
				}
			}
			// A refused event publishes nothing.
			if _, err := s.Write(ctx, "alpha", ranking.Event{Member: "m", Value: -5}); err == nil {
				t.Fatal("a score below min_score must be refused")
			}
			select {
			case ch := <-sub.C():
				t.Errorf("refused write published %+v", ch)
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}

// TestReadErrors: query values are validated before anything is looked up.
func TestReadErrors(t *testing.T) {
	_, rdb := MustMiniredis(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	cfg := MustConfig(t, "boards: [{id: b, views: [hour, week, all]}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name                string
		board, view, period string
		offset, limit       int
		code                string
	}{
		{"unknown board", "x", "week", "", 0, 10, ranking.ENOTFOUND},
		{"unknown view", "b", "day", "", 0, 10, ranking.ENOTFOUND},
		{"limit 0", "b", "week", "", 0, 0, ranking.EINVALID},
		{"limit 1001", "b", "week", "", 0, 1001, ranking.EINVALID},
		{"negative offset", "b", "week", "", -1, 10, ranking.EINVALID},
		{"month for a week", "b", "week", "2026-11", 0, 10, ranking.EINVALID},
		{"date for an hour", "b", "hour", "2026-11-22", 0, 10, ranking.EINVALID},
		{"garbage", "b", "week", "last week", 0, 10, ranking.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Page(ctx, tc.board, tc.view, ranking.PageQuery{Period: tc.period, Offset: tc.offset, Limit: tc.limit})
			if ranking.ErrorCode(err) != tc.code {
				t.Errorf("got %v, want code %s", err, tc.code)
			}
		})
	}
	// future and long-gone periods are empty, not errors
	for _, p := range []string{"2027-01-04", "2001-01-01", "all"} {
		view := "week"
		if p == "all" {
			view = "all"
		}
		pg, err := s.Page(ctx, "b", view, ranking.PageQuery{Period: p, Limit: 10})
		if err != nil || pg.Total != 0 {
			t.Errorf("period %s: %+v %v", p, pg, err)
		}
	}
	if _, err := s.Member(ctx, "b", "week", "nobody", ranking.MemberQuery{Around: 5}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Errorf("absent member: %v", err)
	}
}

// TestFinal: a period is final once now >= end + lateness.
func TestFinal(t *testing.T) {
	m, rdb := MustMiniredis(t, time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC))
	cfg := MustConfig(t, "boards: [{id: b, views: [hour, all], lateness: 15m}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		now   time.Time
		final bool
	}{
		{time.Date(2026, 11, 22, 11, 14, 59, 0, time.UTC), false},
		{time.Date(2026, 11, 22, 11, 15, 0, 0, time.UTC), true},
	} {
		m.SetTime(tc.now)
		pg, err := s.Page(ctx, "b", "hour", ranking.PageQuery{Period: "2026-11-22T10", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if pg.Final != tc.final || pg.Total != 1 {
			t.Errorf("at %v: final %v total %d, want %v 1", tc.now, pg.Final, pg.Total, tc.final)
		}
		all, _ := s.Page(ctx, "b", "all", ranking.PageQuery{Limit: 10})
		if all.Final {
			t.Error("the all view is never final")
		}
	}
}

// TestWriteValidation: every refusal is a typed error and writes nothing.
func TestWriteValidation(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	_, rdb := MustMiniredis(t, now)
	cfg := MustConfig(t, `
boards:
  - {id: inc, decimals: 1, min_score: -10, max_score: 10, views: [day, all], lateness: 1h}
  - {id: best, update: best, max_score: 100, views: [day, all]}
  - {id: step, decimals: 1, min_score: -100, max_score: 100, max_step: 2.5, views: [day, all]}
`)
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	if _, err := s.Write(ctx, "inc", ranking.Event{Member: "a", Value: 95, ID: "e1"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		board string
		ev    ranking.Event
		code  string
	}{
		{"empty member", "inc", ranking.Event{Member: "", Value: 1}, ranking.EINVALID},
		{"long member", "inc", ranking.Event{Member: string(make([]byte, 129)), Value: 1}, ranking.EINVALID},
		{"control char", "inc", ranking.Event{Member: "a\tb", Value: 1}, ranking.EINVALID},
		{"bidi override", "inc", ranking.Event{Member: "a\u202eb", Value: 1}, ranking.EINVALID},
		{"bad utf8", "inc", ranking.Event{Member: "a\xffb", Value: 1}, ranking.EINVALID},
		{"long name", "inc", ranking.Event{Member: "a", Value: 1, Name: string(make([]rune, 65))}, ranking.EINVALID},
		{"increment leaves range", "inc", ranking.Event{Member: "a", Value: 6}, ranking.EINVALID},
		{"increment can never fit", "inc", ranking.Event{Member: "a", Value: 201}, ranking.EINVALID},
		{"best above max", "best", ranking.Event{Member: "a", Value: 101}, ranking.EINVALID},
		{"best below min", "best", ranking.Event{Member: "a", Value: -1}, ranking.EINVALID},
		{"too late", "inc", ranking.Event{Member: "a", Value: 1, At: now.Add(-61 * time.Minute)}, ranking.EINVALID},
		{"too early", "inc", ranking.Event{Member: "a", Value: 1, At: now.Add(6 * time.Second)}, ranking.EINVALID},
		{"reused id", "inc", ranking.Event{Member: "a", Value: 1, ID: "e1"}, ranking.ECONFLICT},
		{"above max_step", "step", ranking.Event{Member: "a", Value: 26}, ranking.EINVALID},
		{"below -max_step", "step", ranking.Event{Member: "a", Value: -26}, ranking.EINVALID},
		{"unknown board", "nope", ranking.Event{Member: "a", Value: 1}, ranking.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Write(ctx, tc.board, tc.ev)
			var e *ranking.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Message == "" {
				t.Fatalf("got %v, want a %s error", err, tc.code)
			}
		})
	}
	c, err := s.Member(ctx, "inc", "all", "a", ranking.MemberQuery{})
	if err != nil || c.Score != 95 {
		t.Fatalf("refused writes changed the board: %+v %v", c, err)
	}
	if _, err := s.Member(ctx, "step", "all", "a", ranking.MemberQuery{}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Fatalf("a step above max_step changed the board: %v", err)
	}
	if _, err := s.Write(ctx, "step", ranking.Event{Member: "a", Value: -25}); err != nil {
		t.Fatalf("a step of exactly max_step: %v", err)
	}
	if _, err := s.Write(ctx, "step", ranking.Event{Member: "a", Value: 26}); err == nil || !strings.Contains(err.Error(), "max_step 2.5") {
		t.Fatalf("the refusal does not name max_step 2.5: %v", err)
	}
	// A duplicate answers the original periods with the current state.
	res, err := s.Write(ctx, "inc", ranking.Event{Member: "a", Value: 95, ID: "e1"})
	if err != nil || !res.Duplicate || res.Views[1].Score != 95 {
		t.Fatalf("duplicate: %+v %v", res, err)
	}
	// A batch: bad events do not stop good ones; too many events is refused.
	results, err := s.Apply(ctx, "inc", []ranking.Event{{Member: "x", Value: 1}, {Member: "", Value: 1}, {Member: "y", Value: 2}}, ranking.ApplyOptions{})
	if err != nil || results[0].Err != nil || results[1].Err == nil || results[2].Err != nil {
		t.Fatalf("batch: %+v %v", results, err)
	}
	if _, err := s.Apply(ctx, "inc", make([]ranking.Event, ranking.MaxBatch+1), ranking.ApplyOptions{}); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Fatalf("oversized batch: %v", err)
	}
}

// TestConcurrentDuplicates: copies of one event sent at the same moment
// count once.
func TestConcurrentDuplicates(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := MustConfig(t, "boards: [{id: b, views: [day, all]}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	dups := make(chan bool, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 7, ID: "same"})
			if err != nil {
				t.Error(err)
				return
			}
			dups <- res.Duplicate
		}()
	}
	wg.Wait()
	close(dups)
	fresh := 0
	for d := range dups {
		if !d {
			fresh++
		}
	}
	c, err := s.Member(ctx, "b", "all", "a", ranking.MemberQuery{})
	if fresh != 1 || err != nil || c.Score != 7 {
		t.Fatalf("%d fresh writes, score %+v %v; want exactly one", fresh, c, err)
	}
}

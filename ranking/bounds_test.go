package ranking_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// TestWindowDriftsOutOfRange: a window is the sum of its days, so when a
// negative day leaves it the sum can exceed max_score; it reads back
// exactly, and events may bring it back but not further out.
func TestWindowDriftsOutOfRange(t *testing.T) {
	day1 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, day1)
	cfg := MustConfig(t, "boards: [{id: b, min_score: -100, max_score: 100, views: [3d], lateness: 0s}]\n")
	clock := day1
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	for d, v := range []int64{-100, 100, 100} {
		clock = day1.AddDate(0, 0, d)
		m.SetTime(clock)
		if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: v}); err != nil {
			t.Fatalf("day %d, %d: %v", d+1, v, err)
		}
	}
	clock = day1.AddDate(0, 0, 3)
	m.SetTime(clock)
	score := func() int64 {
		t.Helper()
		pg, err := s.Page(ctx, "b", "3d", "", 0, 10)
		if err != nil || len(pg.Entries) != 1 {
			t.Fatalf("page %+v %v", pg, err)
		}
		return pg.Entries[0].Score
	}
	if got := score(); got != 200 {
		t.Fatalf("day 4: the 3d window reads %d, want the true sum 200", got)
	}
	// Further out is refused; back towards the range is accepted.
	_, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 1})
	if ranking.ErrorCode(err) != ranking.EINVALID || !strings.Contains(err.Error(), "3d") || !strings.Contains(err.Error(), "201") {
		t.Fatalf("+1 on a window at 200 > max 100: %v", err)
	}
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: -30}); err != nil {
		t.Fatalf("-30 on a window at 200: %v", err)
	}
	if got := score(); got != 170 {
		t.Fatalf("after -30 the window reads %d, want 170", got)
	}
}

// TestWindowOutOfRangeRealRedis: a window built from late day totals whose
// sum exceeds max_score reads back exactly on a real Redis.
func TestWindowOutOfRangeRealRedis(t *testing.T) {
	for _, be := range backends()[1:] {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: b, max_score: 100, views: [3d, day], lateness: 240h}]\n")
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			now, err := s.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, back := range []int{5, 4} {
				if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 100, At: now.AddDate(0, 0, -back)}); err != nil {
					t.Fatal(err)
				}
			}
			w := cfg.Calendar.PeriodAt(ranking.View{Name: "3d", Kind: ranking.Window, Days: 3}, now.AddDate(0, 0, -4))
			pg, err := s.Page(ctx, "b", "3d", w.ID, 0, 10)
			if err != nil || len(pg.Entries) != 1 || pg.Entries[0].Score != 200 {
				t.Fatalf("window %s: %+v %v; want a at 200", w.ID, pg, err)
			}
		})
	}
}

// TestDayTotalsBoundedByS: the hidden day totals are bounded by ±S only,
// never by [min, max], and a refusal speaks of the member's net change on
// a date, never of the hidden view.
func TestDayTotalsBoundedByS(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, now)
	cfg := MustConfig(t, `
boards:
  - {id: b, min_score: 0, views: [7d, all], lateness: 48h}
  - {id: c, min_score: -10, max_score: 10, views: [3d], lateness: 0s}
`)
	clock := now
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 10, At: now.Add(-30 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: -3})
	if err != nil || res.Views[0].Score != 7 || res.Views[1].Score != 7 {
		t.Fatalf("-3 today after +10 yesterday: %+v %v; want 7 in every view", res, err)
	}

	// S = 20 on [-10, 10]. Day 1 +10, day 2 -10 twice (day total -20):
	// on day 4 the window starts at -20 (day 1 left it) and may climb back,
	// but a third +10 makes day 4's total 30, beyond what windows can hold,
	// although the window itself would read 10.
	for _, st := range []struct {
		day   int
		value int64
	}{{0, 10}, {1, -10}, {1, -10}, {3, 10}, {3, 10}} {
		clock = now.AddDate(0, 0, st.day)
		m.SetTime(clock)
		if _, err := s.Write(ctx, "c", ranking.Event{Member: "a", Value: st.value}); err != nil {
			t.Fatalf("day %d, %d: %v", st.day+1, st.value, err)
		}
	}
	_, err = s.Write(ctx, "c", ranking.Event{Member: "a", Value: 10})
	if ranking.ErrorCode(err) != ranking.EINVALID || strings.Contains(err.Error(), "~d") ||
		!strings.Contains(err.Error(), "net change on 2026-11-25 would be 30") || !strings.Contains(err.Error(), "±20") {
		t.Fatalf("a day total of 30 with S = 20: %v", err)
	}
	pg, err := s.Page(ctx, "c", "3d", "", 0, 10)
	if err != nil || len(pg.Entries) != 1 || pg.Entries[0].Score != 0 {
		t.Fatalf("the refused event changed the window: %+v %v", pg, err)
	}
}

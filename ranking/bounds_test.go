package ranking_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestWindowDriftsOutOfRange: a window is the sum of its days, so when a
// negative day leaves it the sum can exceed max_score; it reads back
// exactly, and events may bring it back but not further out. (Every event
// is checked on tomorrow's window too, so the +200 of day 2 was within
// bounds in every window that held it then; the window ending on day 4
// drifts when day 1 leaves it.)
func TestWindowDriftsOutOfRange(t *testing.T) {
	day1 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, day1)
	cfg := MustConfig(t, "boards: [{id: b, min_score: -100, max_score: 100, views: [3d], lateness: 0s}]\n")
	clock := day1
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	for _, st := range []struct{ d, v int64 }{{0, -100}, {1, 100}, {1, 100}} {
		d, v := st.d, st.v
		clock = day1.AddDate(0, 0, int(d))
		m.SetTime(clock)
		if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: v}); err != nil {
			t.Fatalf("day %d, %d: %v", d+1, v, err)
		}
	}
	clock = day1.AddDate(0, 0, 3)
	m.SetTime(clock)
	score := func() int64 {
		t.Helper()
		pg, err := s.Page(ctx, "b", "3d", ranking.PageQuery{Limit: 10})
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

// lateWindowBoard is the board of the late-event scenario below.
const lateWindowBoard = "boards: [{id: b, min_score: 0, max_score: 10, views: [3d], lateness: 100h}]\n"

// lateEventRefused plays the scenario on store s at now (day D): +10 at
// D-2 unless it was written then, optionally a read of the window ending
// D-1, then +10 at D-3, which puts the windows ending D-2 and D-1 at 20.
// It returns the late event's error; the windows must not have changed.
func lateEventRefused(t *testing.T, s *ranking.Store, cfg *ranking.Config, now time.Time, writeD2, read bool) error {
	t.Helper()
	ctx := context.Background()
	v := ranking.View{Name: "3d", Kind: ranking.Window, Days: 3}
	if writeD2 {
		if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 10, At: now.AddDate(0, 0, -2)}); err != nil {
			t.Fatal(err)
		}
	}
	windows := func() []int64 {
		var out []int64
		for back := 3; back >= 0; back-- {
			pg, err := s.Page(ctx, "b", "3d", ranking.PageQuery{Period: cfg.Calendar.PeriodAt(v, now.AddDate(0, 0, -back)).ID, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var score int64
			if len(pg.Entries) == 1 {
				score = pg.Entries[0].Score
			}
			out = append(out, score)
		}
		return out
	}
	if read {
		if _, err := s.Page(ctx, "b", "3d", ranking.PageQuery{Period: cfg.Calendar.PeriodAt(v, now.AddDate(0, 0, -1)).ID, Limit: 10}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 10, At: now.AddDate(0, 0, -3)})
	if got := windows(); !slices.Equal(got, []int64{0, 10, 10, 10}) {
		t.Fatalf("windows ending D-3 .. D read %v after the late event (%v), want [0 10 10 10]", got, err)
	}
	return err
}

// lateWant is the refusal of the late event: the window ending D-2 is
// the first that would leave [0, 10], whether it was built or not.
const lateWant = "the score in view 3d would be 20, outside [0, 10]"

// TestLateEventUnreadWindow: a late event is checked on every window that
// holds its day, built (read, or today's when it was written) or not, so
// the answer never depends on what was read.
func TestLateEventUnreadWindow(t *testing.T) {
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		timeTravel bool // +10 written on day D-2 itself, building that day's window
		read       bool
	}{{"late-unread", false, false}, {"late-read", false, true}, {"ontime-unread", true, false}, {"ontime-read", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m, rdb := MustMiniredis(t, day)
			cfg := MustConfig(t, lateWindowBoard)
			clock := day
			s := newStore(t, rdb, cfg, func() time.Time { return clock })
			if tc.timeTravel {
				clock = day.AddDate(0, 0, -2)
				m.SetTime(clock)
				if _, err := s.Write(context.Background(), "b", ranking.Event{Member: "a", Value: 10}); err != nil {
					t.Fatal(err)
				}
				clock = day
				m.SetTime(clock)
			}
			err := lateEventRefused(t, s, cfg, day, !tc.timeTravel, tc.read)
			if ranking.ErrorCode(err) != ranking.EINVALID || err.Error() != lateWant {
				t.Fatalf("late +10 at D-3: %v; want %q", err, lateWant)
			}
		})
	}
}

// TestLateEventUnreadWindowRealRedis is the late-event scenario on a real
// Redis and a cluster, with the window ending D-1 unread and read.
func TestLateEventUnreadWindowRealRedis(t *testing.T) {
	for _, be := range backends()[1:] {
		for _, read := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/read=%v", be.Name, read), func(t *testing.T) {
				rdb := be.Client(t)
				cfg := MustConfig(t, lateWindowBoard)
				s := newStore(t, rdb, cfg, nil)
				now, err := s.Now(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				err = lateEventRefused(t, s, cfg, now, true, read)
				if ranking.ErrorCode(err) != ranking.EINVALID || err.Error() != lateWant {
					t.Fatalf("late +10 at D-3: %v; want %q", err, lateWant)
				}
			})
		}
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
  - {id: c, min_score: -10, max_score: 10, views: [3d], lateness: 96h}
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

	// S = 20 on [-10, 10]. On day 5, late events: day 2 +10, day 4 -10
	// twice and day 5 +10 twice, interleaved so that every window holding
	// each day stays within [-10, 10]; a third +10 on day 5 keeps the
	// windows ending on days 5 and 6 at 10 but makes day 5's total 30,
	// beyond what windows can hold.
	clock = now.AddDate(0, 0, 4)
	m.SetTime(clock)
	for _, st := range []struct {
		day   int
		value int64
	}{{1, 10}, {3, -10}, {4, 10}, {3, -10}, {4, 10}} {
		at := now.AddDate(0, 0, st.day)
		if _, err := s.Write(ctx, "c", ranking.Event{Member: "a", Value: st.value, At: at}); err != nil {
			t.Fatalf("day %d, %d: %v", st.day+1, st.value, err)
		}
	}
	_, err = s.Write(ctx, "c", ranking.Event{Member: "a", Value: 10})
	if ranking.ErrorCode(err) != ranking.EINVALID || strings.Contains(err.Error(), "~d") ||
		!strings.Contains(err.Error(), "net change on 2026-11-26 would be 30") || !strings.Contains(err.Error(), "±20") {
		t.Fatalf("a day total of 30 with S = 20: %v", err)
	}
	pg, err := s.Page(ctx, "c", "3d", ranking.PageQuery{Limit: 10})
	if err != nil || len(pg.Entries) != 1 || pg.Entries[0].Score != 0 {
		t.Fatalf("the refused event changed the window: %+v %v", pg, err)
	}
}

// TestLateEventUnreadSegmentWindow: an event with segments is checked on
// its segment boards' windows too, built or not. The board's windows stay
// within bounds (an event without the segment offsets it); the segment
// board's window ending D-2 would read 20.
func TestLateEventUnreadSegmentWindow(t *testing.T) {
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	v := ranking.View{Name: "3d", Kind: ranking.Window, Days: 3}
	fr := ranking.Segment{Name: "country", Value: "FR"}
	for _, read := range []bool{false, true} {
		t.Run(fmt.Sprintf("read=%v", read), func(t *testing.T) {
			_, rdb := MustMiniredis(t, day)
			cfg := MustConfig(t, "boards: [{id: b, segments: [country], min_score: -10, max_score: 10, views: [3d], lateness: 100h}]\n")
			s := newStore(t, rdb, cfg, func() time.Time { return day })
			ctx := context.Background()
			for _, ev := range []ranking.Event{
				{Member: "a", Value: 10, At: day.AddDate(0, 0, -2), Segments: map[string]string{"country": "FR"}},
				{Member: "a", Value: -10, At: day.AddDate(0, 0, -3)},
			} {
				if _, err := s.Write(ctx, "b", ev); err != nil {
					t.Fatal(err)
				}
			}
			if read {
				for back := 3; back >= 1; back-- {
					if _, err := s.Page(ctx, "b", "3d", ranking.PageQuery{Segment: fr, Period: cfg.Calendar.PeriodAt(v, day.AddDate(0, 0, -back)).ID, Limit: 10}); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 10, At: day.AddDate(0, 0, -3), Segments: map[string]string{"country": "FR"}})
			want := "the score in view 3d would be 20, outside [-10, 10]"
			if ranking.ErrorCode(err) != ranking.EINVALID || err.Error() != want {
				t.Fatalf("late +10 at D-3 in FR: %v; want %q", err, want)
			}
			pg, err := s.Page(ctx, "b", "3d", ranking.PageQuery{Segment: fr, Period: cfg.Calendar.PeriodAt(v, day.AddDate(0, 0, -2)).ID, Limit: 10})
			if err != nil || len(pg.Entries) != 1 || pg.Entries[0].Score != 10 {
				t.Fatalf("FR window ending D-2: %+v %v; want a at 10", pg, err)
			}
		})
	}
}

// TestRunRefusesPastBounds: a run of plain events (no id, no time, ranks
// not asked for), which apply.lua applies view by view when no event of
// it can be refused, still refuses an event that would take a member past
// the board's bounds, on a desc board as on an asc one, and applies the
// rest; a run that stays within them (scores reaching max_score and
// min_score) is applied view by view. On miniredis the desc check once swapped its two
// bounds by multiple assignment, which its Lua does not do as Redis's
// does (TestScriptsAssignPortably).
func TestRunRefusesPastBounds(t *testing.T) {
	for _, be := range backends() {
		for _, order := range []string{"desc", "asc"} {
			t.Run(be.Name+"/"+order, func(t *testing.T) {
				rdb := be.Client(t)
				cfg := MustConfig(t, "boards:\n  - {id: b, order: "+order+", min_score: -20, max_score: 20, views: [day, all]}\n")
				s := newStore(t, rdb, cfg, nil)
				counter := ""
				if be.Name != "cluster" { // the counter is a key the script does not declare
					counter = redistest.Namespace(t) + ":runs"
					ranking.CountApplyRuns(s, counter)
				}
				ctx := context.Background()
				run := func(events ...ranking.Event) []ranking.WriteResult {
					t.Helper()
					res, err := s.Apply(ctx, "b", events, ranking.ApplyOptions{NoRanks: true})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				ev := func(member string, value int64) ranking.Event { return ranking.Event{Member: member, Value: value} }
				score := func(member string, want int64) {
					t.Helper()
					for _, view := range []string{"day", "all"} {
						e, err := s.Member(ctx, "b", view, member, ranking.MemberQuery{})
						if err != nil || e.Score != want {
							t.Fatalf("%s in %s: %+v %v; want score %d", member, view, e, err, want)
						}
					}
				}
				run(ev("x", 15), ev("y", -15), ev("w", 1))
				// Past max_score, then past min_score, each in a run of its own
				// with members below and above.
				for _, events := range [][]ranking.Event{
					{ev("a", 1), ev("w", 1), ev("x", 10), ev("c", 1)},
					{ev("a", 1), ev("w", 1), ev("y", -10), ev("c", 1)},
				} {
					for i, r := range run(events...) {
						refused := i == 2
						if refused != (ranking.ErrorCode(r.Err) == ranking.EINVALID) || (!refused && r.Err != nil) {
							t.Fatalf("event %d (%s %+d): %v; want refused %v", i, r.Member, events[i].Value, r.Err, refused)
						}
					}
				}
				score("x", 15)
				score("y", -15)
				score("w", 3)
				score("c", 2)
				var res []ranking.WriteResult
				for _, m := range []struct {
					member string
					sign   int64
				}{{"x", 1}, {"y", -1}} {
					res = run(ev(m.member, m.sign), ev(m.member, 2*m.sign), ev(m.member, m.sign), ev(m.member, m.sign))
					for i, r := range res {
						if r.Err != nil {
							t.Fatalf("event %d (%s) within bounds: %v", i, r.Member, r.Err)
						}
					}
					score(m.member, 20*m.sign)
				}
				if counter != "" {
					got := rdb.HGetAll(ctx, counter).Val()
					if got["refused"] != "2" || got["run"] != "2" {
						t.Fatalf("runs %v; want the first two turned back, the last two applied view by view", got)
					}
				}
			})
		}
	}
}

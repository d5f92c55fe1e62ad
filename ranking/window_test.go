package ranking_test

import (
	"cmp"
	"context"
	"fmt"
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

// The rolling-window model: every accepted event is kept as (member, value,
// time); the window ending on day e is, by brute force, the sum over the
// events of days e-N+1..e, tied by the latest time among a member's
// non-zero events. Most boards have wide bounds; board wn has narrow ones,
// negative values and windows that drift out of [min, max] as negative
// days leave them, and the model predicts every refusal (see refused);
// board wp's range leaves 0 out, so whether a member with a zero sum is in
// a window decides too. Windows are read (and so built) at random moments:
// no answer may depend on it.

type windowEvent struct {
	member string
	value  int64
	ms     int64
	day    string
	segs   map[string]string
}

// in reports whether the event feeds segment board seg (every event feeds
// the board itself).
func (ev windowEvent) in(seg ranking.Segment) bool {
	return seg.IsZero() || ev.segs[seg.Name] == seg.Value
}

// windowSegments are the segment boards the window workload writes to,
// the board itself first.
var windowSegments = []ranking.Segment{{}, {Name: "country", Value: "FR"}, {Name: "country", Value: "DE"},
	{Name: "team", Value: "red"}, {Name: "team", Value: "blue"}}

type windowModel struct {
	t      *testing.T
	cfg    *ranking.Config
	store  *ranking.Store
	events map[string][]windowEvent // by board
	debug  func()
	// refusals counts the refused events the model predicted; drifted the
	// window rows read outside [min, max]
	refusals, drifted int
	prevKnown         int // entries whose previous rank was known and checked
	prevCalls         int
	removals          int
}

func (wm *windowModel) dayOf(ms int64) string {
	return wm.cfg.Calendar.PeriodAt(ranking.View{Name: "day", Kind: ranking.Day}, time.UnixMilli(ms)).ID
}

// expected returns window e of view v in rank order.
func (wm *windowModel) expected(b *ranking.Board, v ranking.View, seg ranking.Segment, e string) []ranking.Entry {
	cal := wm.cfg.Calendar
	p, err := cal.ParsePeriod(v, e)
	if err != nil {
		wm.t.Fatal(err)
	}
	unit := map[string]int64{"1ms": 1, "1s": 1000, "1min": 60000, "1h": 3600000, "": 1}[b.TieResolution(v.Name)]
	type acc struct {
		value, unit int64
	}
	sums := map[string]*acc{}
	for _, ev := range wm.events[b.ID] {
		if ev.ms < p.Start.UnixMilli() || ev.ms >= p.End.UnixMilli() || ev.value == 0 || !ev.in(seg) {
			continue
		}
		a := sums[ev.member]
		if a == nil {
			a = &acc{}
			sums[ev.member] = a
		}
		a.value += ev.value
		a.unit = max(a.unit, floorDiv(ev.ms, unit))
	}
	type row struct {
		m string
		a *acc
	}
	var rows []row
	for m, a := range sums {
		rows = append(rows, row{m, a})
	}
	slices.SortFunc(rows, func(x, y row) int {
		if x.a.value != y.a.value {
			if (b.Order == ranking.Desc) == (x.a.value > y.a.value) {
				return -1
			}
			return 1
		}
		if b.Ties == ranking.TiesFirst {
			if c := cmp.Compare(x.a.unit, y.a.unit); c != 0 {
				return c
			}
		}
		return strings.Compare(x.m, y.m)
	})
	out := make([]ranking.Entry, len(rows))
	for i, r := range rows {
		out[i] = ranking.Entry{Rank: int64(i + 1), Member: r.m, Score: r.a.value}
		if b.Ties == ranking.TiesShared && i > 0 && r.a.value == rows[i-1].a.value {
			out[i].Rank = out[i-1].Rank
		}
	}
	return out
}

// check compares window e of every rolling view with the model; an expired
// window must read empty.
func (wm *windowModel) check(e string, expired bool) {
	ctx := context.Background()
	for _, b := range wm.cfg.Boards {
		for _, v := range b.Views {
			if v.Kind != ranking.Window {
				continue
			}
			for _, seg := range windowSegments {
				want := wm.expected(b, v, seg, e)
				if expired {
					want = nil
				}
				pg, err := wm.store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Segment: seg, Period: e, Limit: 1000})
				if err != nil {
					wm.t.Fatalf("%s/%s/%s %v: %v", b.ID, v.Name, e, seg, err)
				}
				if pg.Period.ID != e || pg.Total != int64(len(want)) || (len(want) > 0 && !slices.Equal(withoutPrev(pg.Entries), want)) {
					if wm.debug != nil {
						wm.debug()
					}
					wm.t.Fatalf("%s/%s %v window ending %s:\n got %d %+v\nwant %d %+v", b.ID, v.Name, seg, e, pg.Total, pg.Entries, len(want), want)
				}
				for _, en := range pg.Entries {
					if en.Score < b.Min || en.Score > b.Max {
						wm.drifted++
					}
				}
				wm.checkPrev(b, v, seg, e, pg.Entries)
			}
		}
	}
}

// checkPrev checks each entry's previous rank against the model's window
// that ended the day before: when it is known (the previous window was
// built and is retained) it must be that window's rank, or new.
func (wm *windowModel) checkPrev(b *ranking.Board, v ranking.View, seg ranking.Segment, e string, es []ranking.Entry) {
	// The brute-force window is dear: every third read is checked.
	if wm.prevCalls++; wm.prevCalls%3 != 0 || len(es) == 0 {
		return
	}
	p, err := wm.cfg.Calendar.ParsePeriod(v, e)
	if err != nil {
		wm.t.Fatal(err)
	}
	prev := map[string]int64{}
	for _, en := range wm.expected(b, v, seg, wm.cfg.Calendar.Prev(v, p).ID) {
		prev[en.Member] = en.Rank
	}
	for _, en := range es {
		switch want, ok := prev[en.Member]; {
		case en.PrevRank == ranking.PrevUnknown:
		case en.PrevRank == ranking.PrevNew && ok, en.PrevRank > 0 && en.PrevRank != want:
			wm.t.Fatalf("%s/%s %v window %s: %s previous rank %d, model %d (present %v)", b.ID, v.Name, seg, e, en.Member, en.PrevRank, want, ok)
		default:
			wm.prevKnown++
		}
	}
}

const windowBoards = `
timezone: America/New_York
boards:
  - {id: w, segments: [country, team], views: [day, 1d, 7d, 30d, all], min_score: -1000000, max_score: 1000000, lateness: %s, keep: %d}
  - {id: wa, segments: [country, team], order: asc, decimals: 1, min_score: -1000000, max_score: 1000000, views: [3d, 10d], lateness: %s, keep: %d}
  - {id: ws, segments: [country, team], ties: shared, min_score: -1000000, max_score: 1000000, views: [2d, 7d], lateness: %s, keep: %d}
  - {id: wn, segments: [country, team], min_score: -6, max_score: 6, views: [day, 3d, 7d], lateness: %s, keep: %d}
  - {id: wp, segments: [country, team], min_score: 1, max_score: 8, views: [2d, 5d], lateness: %s, keep: %d}
`

// wideBoards are the window boards whose bounds no event reaches.
const wideBoards = 3

func newWindowModel(t *testing.T, rdb redis.UniversalClient, late time.Duration, keep int) *windowModel {
	cfg := MustConfig(t, fmt.Sprintf(windowBoards, late, keep, late, keep, late, keep, late, keep, late, keep))
	return &windowModel{t: t, cfg: cfg, events: map[string][]windowEvent{},
		store: rankingtest.MustStore(t, rdb, cfg, ranking.Options{})}
}

// write sends a batch, or now and then removes a member, and records it
// in the model; it checks each answer for the window ending today against
// the model.
func (wm *windowModel) write(rng *rand.Rand, now time.Time, late time.Duration) {
	ctx := context.Background()
	if rng.IntN(2) == 0 {
		wm.readAny(rng, now, late)
	}
	b := wm.cfg.Boards[rng.IntN(len(wm.cfg.Boards))]
	if rng.IntN(20) == 0 {
		// A removal: the member leaves every retained window and day
		// total, so no window built later brings it back.
		m := fmt.Sprintf("m%02d", rng.IntN(25))
		if b.Max < 1000 {
			m = fmt.Sprintf("m%d", rng.IntN(4))
		}
		if _, err := wm.store.RemoveMember(ctx, b.ID, m); err != nil {
			wm.t.Fatal(err)
		}
		var kept []windowEvent
		for _, e := range wm.events[b.ID] {
			if e.member != m {
				kept = append(kept, e)
			}
		}
		wm.events[b.ID] = kept
		wm.removals++
		return
	}
	batch := make([]ranking.Event, 1+rng.IntN(15))
	narrow := b.Max < 1000
	for i := range batch {
		ev := ranking.Event{Member: fmt.Sprintf("m%02d", rng.IntN(25)), Value: int64(rng.IntN(7) - 2)}
		if narrow {
			ev.Member = fmt.Sprintf("m%d", rng.IntN(4)) // few members: sums reach the bounds
			ev.Value = int64(rng.IntN(11) - 5)
		}
		if rng.IntN(3) == 0 {
			back := time.Duration(rng.Int64N(int64(late - 5*time.Second)))
			grid := []time.Duration{time.Millisecond, time.Second, time.Minute, time.Hour}[rng.IntN(4)]
			ev.At = now.Add(-back).Truncate(grid)
			if ev.At.Before(now.Add(-late + 5*time.Second)) {
				ev.At = now.Add(-back)
			}
		}
		if k := rng.IntN(4); k > 0 {
			ev.Segments = map[string]string{}
			if k&1 != 0 {
				ev.Segments["country"] = windowSegments[1+rng.IntN(2)].Value
			}
			if k&2 != 0 {
				ev.Segments["team"] = windowSegments[3+rng.IntN(2)].Value
			}
		}
		batch[i] = ev
	}
	res, err := wm.store.Apply(ctx, b.ID, batch, ranking.ApplyOptions{})
	if err != nil {
		wm.t.Fatal(err)
	}
	for i, ev := range batch {
		ms := res[i].At.UnixMilli()
		if why := wm.refused(b, ev, ms, now); why != "" || res[i].Err != nil {
			if why == "" || ranking.ErrorCode(res[i].Err) != ranking.EINVALID {
				wm.t.Fatalf("%s event %+v at %d: store says %v, model says %q", b.ID, ev, ms, res[i].Err, why)
			}
			wm.refusals++
			continue
		}
		wm.events[b.ID] = append(wm.events[b.ID], windowEvent{ev.Member, ev.Value, ms, wm.dayOf(ms), ev.Segments})
		for _, vs := range res[i].Views {
			v, _ := b.View(vs.View)
			if v.Kind != ranking.Window {
				continue
			}
			var want ranking.Entry
			for _, e := range wm.expected(b, v, ranking.Segment{}, vs.Period) {
				if e.Member == ev.Member {
					want = e
				}
			}
			if vs.Score != want.Score || vs.Rank != want.Rank {
				wm.t.Fatalf("%s/%s event %+v: answer %+v, model %+v", b.ID, v.Name, ev, vs, want)
			}
		}
	}
}

// readAny reads one window of a random rolling view, board or segment
// board, ending between the day of now - late and tomorrow, which builds
// it: a write's answer must not depend on which windows were read.
func (wm *windowModel) readAny(rng *rand.Rand, now time.Time, late time.Duration) {
	b := wm.cfg.Boards[rng.IntN(len(wm.cfg.Boards))]
	var v ranking.View
	for {
		if v = b.Views[rng.IntN(len(b.Views))]; v.Kind == ranking.Window {
			break
		}
	}
	seg := windowSegments[rng.IntN(len(windowSegments))]
	at := now.Add(-time.Duration(rng.Int64N(int64(late)))).Add(24 * time.Hour)
	p := wm.cfg.Calendar.PeriodAt(v, at)
	if _, err := wm.store.Page(context.Background(), b.ID, v.Name, ranking.PageQuery{Segment: seg, Period: p.ID, Limit: 10}); err != nil {
		wm.t.Fatalf("read %s/%s %v %s: %v", b.ID, v.Name, seg, p.ID, err)
	}
}

// sum is a member's brute-force total over [from, to) and whether it has
// a non-zero event there (is present in a view).
func (wm *windowModel) sum(board string, seg ranking.Segment, member string, from, to int64) (v int64, present bool) {
	for _, ev := range wm.events[board] {
		if ev.member == member && ev.ms >= from && ev.ms < to && ev.in(seg) {
			v += ev.value
			present = present || ev.value != 0
		}
	}
	return v, present
}

// refused predicts why the store refuses an increment at ms (or ""): a
// calendar view leaving [min, max]; a day total leaving ±S; a window
// holding the event's day, up to tomorrow's, moving further out of [min,
// max] (a window may drift out when a day leaves it, and come back),
// whether it is built or not: nothing read decides it.
//
// An event with segments is refused when the board or any of its segment
// boards refuses it.
func (wm *windowModel) refused(b *ranking.Board, ev ranking.Event, ms int64, now time.Time) string {
	if why := wm.refusedIn(b, ranking.Segment{}, ev, ms, now); why != "" {
		return why
	}
	for _, name := range b.Segments {
		if value, ok := ev.Segments[name]; ok {
			if why := wm.refusedIn(b, ranking.Segment{Name: name, Value: value}, ev, ms, now); why != "" {
				return why
			}
		}
	}
	return ""
}

// refusedIn is refused for the board or one segment board.
func (wm *windowModel) refusedIn(b *ranking.Board, seg ranking.Segment, ev ranking.Event, ms int64, now time.Time) string {
	cal := wm.cfg.Calendar
	outside := func(v int64) int64 { return max(b.Min-v, v-b.Max, 0) }
	S := max(b.Max-b.Min, b.Max, -b.Max, b.Min, -b.Min)
	at := time.UnixMilli(ms)
	day := ranking.View{Name: "day", Kind: ranking.Day}
	for _, v := range b.Views {
		switch v.Kind {
		case ranking.Window:
			cur := cal.PeriodAt(v, at)
			today := cal.PeriodAt(v, now)
			for w := cur; !w.Start.After(cal.Next(v, today).Start); w = cal.Next(v, w) {
				if w.Start.After(at) {
					break // the event's day is no longer in it
				}
				old, present := wm.sum(b.ID, seg, ev.Member, w.Start.UnixMilli(), w.End.UnixMilli())
				next := old + ev.Value
				if (ev.Value != 0 || present) && outside(next) > 0 && !(present && outside(next) <= outside(old)) {
					return fmt.Sprintf("window %s %s would be %d", v.Name, w.ID, next)
				}
			}
		default:
			p := cal.PeriodAt(v, at)
			old, present := wm.sum(b.ID, seg, ev.Member, p.Start.UnixMilli(), p.End.UnixMilli())
			if next := old + ev.Value; (ev.Value != 0 || present) && outside(next) > 0 {
				return fmt.Sprintf("%s %s would be %d", v.Name, p.ID, next)
			}
		}
	}
	d := cal.PeriodAt(day, at)
	old, _ := wm.sum(b.ID, seg, ev.Member, d.Start.UnixMilli(), d.End.UnixMilli())
	if next := old + ev.Value; next < -S || next > S {
		return fmt.Sprintf("day total %s would be %d", d.ID, next)
	}
	return ""
}

// TestWindowsMiniredis simulates 60 days on miniredis's clock, across the
// New York DST change, and compares every window every day with the model:
// once with windows prepared ahead of midnight, once with preparation
// never run (every window is repaired by the first write or read).
func TestWindowsMiniredis(t *testing.T) {
	loc, _ := time.LoadLocation("America/New_York")
	for _, prepare := range []bool{true, false} {
		t.Run(fmt.Sprintf("prepare=%v", prepare), func(t *testing.T) {
			t.Parallel() // the longest test of the package under -race: the two halves on two cores
			clock := time.Date(2026, 10, 10, 9, 0, 0, 0, loc)
			m, rdb := MustMiniredis(t, clock)
			late := 30 * time.Hour
			wm := newWindowModel(t, rdb, late, 3)
			wm.debug = func() {
				for _, k := range m.Keys() {
					if strings.Contains(k, ":1d:") || strings.Contains(k, "~d:2026-10-09") {
						z, _ := rdb.ZRangeWithScores(context.Background(), k, 0, -1).Result()
						t.Logf("%s %v", k, z)
					}
				}
			}
			rng := rand.New(rand.NewPCG(5, uint64(len(fmt.Sprint(prepare)))))
			day := ranking.View{Name: "day", Kind: ranking.Day}
			lastDay := wm.cfg.Calendar.PeriodAt(day, clock)
			end := clock.AddDate(0, 0, 60)
			for clock.Before(end) {
				wm.write(rng, clock, late)
				if prepare {
					if err := wm.store.PrepareWindows(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				// Under the race detector, half the writes: the same days.
				clock = clock.Add(time.Duration(rng.IntN(120*min(raceScale, 2))) * time.Minute)
				m.SetTime(clock)
				if cur := wm.cfg.Calendar.PeriodAt(day, clock); cur.ID != lastDay.ID {
					// a new day: every window still readable (keep: 3 days),
					// tomorrow's, and the one that just expired
					lastDay = cur
					p := cur
					for range 4 {
						p = wm.cfg.Calendar.Prev(day, p)
					}
					if rng.IntN(4) == 0 {
						wm.check(p.ID, true)
					}
					for range 5 {
						p = wm.cfg.Calendar.Next(day, p)
						wm.check(p.ID, false)
					}
				}
			}
			// Day totals live only while a window may need them: the longest
			// window (30 days) plus its keep (3) and a day either side.
			totals := 0
			for _, k := range m.Keys() {
				if strings.Contains(k, "{w}:z:~d:") {
					totals++
				}
			}
			if totals == 0 || totals > 30+3+2 {
				t.Errorf("%d day totals kept after 60 days, want at most 35", totals)
			}
			t.Logf("%d events refused as the model predicted, %d window rows read outside [min, max], %d removals", wm.refusals, wm.drifted, wm.removals)
			if wm.refusals == 0 || wm.drifted == 0 {
				t.Errorf("the narrow board never reached its bounds")
			}
			if wm.prevKnown == 0 {
				t.Errorf("no window row had a known previous rank")
			}
		})
	}
}

// TestWindowsRealRedis writes 60 days of late events into a real Redis (and
// the cluster) and checks every window of those days, built on first read
// from the day totals or kept up to date by later writes.
func TestWindowsRealRedis(t *testing.T) {
	t.Parallel() // its own prefix on the shared servers
	for _, be := range backends()[1:] {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			late := 62 * 24 * time.Hour
			wm := newWindowModel(t, rdb, late, 70)
			rng := rand.New(rand.NewPCG(9, 9))
			ctx := context.Background()
			day := ranking.View{Name: "day", Kind: ranking.Day}
			for round := range 3 {
				for range 60 {
					now, err := wm.store.Now(ctx)
					if err != nil {
						t.Fatal(err)
					}
					wm.write(rng, now, late)
				}
				now, _ := wm.store.Now(ctx)
				p := wm.cfg.Calendar.Next(day, wm.cfg.Calendar.PeriodAt(day, now))
				for range 62 - round*10 {
					wm.check(p.ID, false)
					p = wm.cfg.Calendar.Prev(day, p)
				}
			}
		})
	}
}

// TestPrepareWhileWriting: two app instances prepare tomorrow's windows
// over and over while four writers keep writing; no member is lost or
// stale in today's or tomorrow's window.
func TestPrepareWhileWriting(t *testing.T) {
	rdb := redistest.Client(t)
	late := 50 * time.Hour
	wm := newWindowModel(t, rdb, late, 3)
	other := rankingtest.MustStore(t, rdb, wm.cfg, ranking.Options{Prefix: wm.store.Prefix()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 60 {
				b := wm.cfg.Boards[rng.IntN(wideBoards)]
				batch := make([]ranking.Event, 1+rng.IntN(20))
				for i := range batch {
					batch[i] = ranking.Event{Member: fmt.Sprintf("m%02d", rng.IntN(40)), Value: int64(rng.IntN(5) + 1)}
				}
				res, err := wm.store.Apply(ctx, b.ID, batch, ranking.ApplyOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i, ev := range batch {
					ms := res[i].At.UnixMilli()
					wm.events[b.ID] = append(wm.events[b.ID], windowEvent{ev.Member, ev.Value, ms, wm.dayOf(ms), ev.Segments})
				}
				mu.Unlock()
			}
		}()
	}
	for _, s := range []*ranking.Store{wm.store, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				if err := s.PrepareTomorrow(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	now, _ := wm.store.Now(ctx)
	day := ranking.View{Name: "day", Kind: ranking.Day}
	today := wm.cfg.Calendar.PeriodAt(day, now)
	wm.check(today.ID, false)
	wm.check(wm.cfg.Calendar.Next(day, today).ID, false)
}

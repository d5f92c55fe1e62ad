package ranking_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// The reference model: every view of every board kept as plain Go maps and
// ranked by brute force, fed the same events as the store, and compared with
// it after every event (the write's answer) and at the end (every period,
// every row, every member card).

type modelEntry struct {
	value  int64
	unit   int64 // tie time in the view's resolution units (from the epoch)
	exact  int64 // event time in ms, for latest
	member string
}

type modelView struct {
	view    ranking.View
	unitMS  int64
	periods map[string]map[string]*modelEntry
}

type modelBoard struct {
	b     *ranking.Board
	cal   *ranking.Calendar
	views []*modelView
	ids   map[string]modelID
	// segs are the segment boards, each a model board of its own fed the
	// events tagged with it (ids belong to the board, not to them).
	seg  ranking.Segment
	segs map[ranking.Segment]*modelBoard
	// snapDay is the local day of the all view's snapshot snap (member ->
	// rank), taken at the day's first write: the ranks at midnight.
	snapDay string
	snap    map[string]int64
	// rankCache holds ranks by view and period while verifying.
	rankCache map[*modelView]map[string]map[string]int64
}

// snapshot keeps the all view's ranks when now is the first write of a new
// local day (the board's, not a segment board's).
func (mb *modelBoard) snapshot(now int64) {
	day := mb.cal.PeriodAt(ranking.View{Name: "day", Kind: ranking.Day}, time.UnixMilli(now)).ID
	if day == mb.snapDay || !mb.seg.IsZero() {
		return
	}
	mb.snapDay, mb.snap = day, map[string]int64{}
	for _, mv := range mb.views {
		if mv.view.Kind == ranking.All {
			for m := range mv.periods["all"] {
				mb.snap[m] = mb.rank(mv, "all", m)
			}
		}
	}
}

// prevRank is a row's expected previous rank at now: the rank in the
// previous period (none once it has expired), or for all the rank at the
// last local midnight (none on segment boards).
func (mb *modelBoard) prevRank(mv *modelView, period, member string, rank int64, now time.Time) int64 {
	v := mv.view
	if v.Kind == ranking.All {
		day := mb.cal.PeriodAt(ranking.View{Name: "day", Kind: ranking.Day}, now).ID
		switch {
		case !mb.seg.IsZero():
			return ranking.PrevUnknown
		case day != mb.snapDay:
			return rank // nothing written since midnight
		case mb.snap[member] > 0:
			return mb.snap[member]
		}
		return ranking.PrevNew
	}
	p, err := mb.cal.ParsePeriod(v, period)
	if err != nil {
		panic(err)
	}
	prev := mb.cal.Prev(v, p)
	if !now.Before(mb.expiry(v, prev)) {
		return ranking.PrevUnknown
	}
	if r := mb.ranksOf(mv, prev.ID)[member]; r > 0 {
		return r
	}
	return ranking.PrevNew
}

// expiry is when period p of view v expires: keep periods after it, or
// later on boards that record results.
func (mb *modelBoard) expiry(v ranking.View, p ranking.Period) time.Time {
	exp := mb.cal.Shift(v, p, mb.b.Keep).End
	final := p.End.Add(mb.b.Lateness)
	if mb.b.ResultsKeep > 0 {
		final = final.Add(time.Hour) // store.go resultGrace
	}
	if final.After(exp) {
		exp = final
	}
	return exp
}

// ranksOf is every member's rank in a period, computed once per verify
// (the workload has stopped writing by then).
func (mb *modelBoard) ranksOf(mv *modelView, period string) map[string]int64 {
	if mb.rankCache == nil {
		mb.rankCache = map[*modelView]map[string]map[string]int64{}
	}
	if mb.rankCache[mv] == nil {
		mb.rankCache[mv] = map[string]map[string]int64{}
	}
	if r, ok := mb.rankCache[mv][period]; ok {
		return r
	}
	r := map[string]int64{}
	rows := mb.sorted(mv, period)
	for i, e := range rows {
		r[e.member] = int64(i + 1)
		if mb.b.Ties == ranking.TiesShared {
			n := int64(0)
			for _, o := range rows {
				if mb.better(o.value, e.value) {
					n++
				}
			}
			r[e.member] = n + 1
		}
	}
	mb.rankCache[mv][period] = r
	return r
}

type modelID struct {
	fingerprint string
	periods     []string
	at          int64 // Redis's now when it was recorded, ms
}

func newModelBoard(cfg *ranking.Config, b *ranking.Board) *modelBoard {
	mb := &modelBoard{b: b, cal: cfg.Calendar, ids: map[string]modelID{}, segs: map[ranking.Segment]*modelBoard{}}
	for _, v := range b.Views {
		unit := map[string]int64{"1ms": 1, "1s": 1000, "1min": 60000, "1h": 3600000, "": 1}[b.TieResolution(v.Name)]
		mb.views = append(mb.views, &modelView{view: v, unitMS: unit, periods: map[string]map[string]*modelEntry{}})
	}
	return mb
}

func (mb *modelBoard) better(x, y int64) bool {
	if mb.b.Order == ranking.Desc {
		return x > y
	}
	return x < y
}

// sorted returns a period's entries in rank order.
func (mb *modelBoard) sorted(mv *modelView, period string) []*modelEntry {
	var out []*modelEntry
	for _, e := range mv.periods[period] {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *modelEntry) int {
		if a.value != b.value {
			if mb.better(a.value, b.value) {
				return -1
			}
			return 1
		}
		if mb.b.Ties == ranking.TiesFirst && a.unit != b.unit {
			return cmp.Compare(a.unit, b.unit)
		}
		return strings.Compare(a.member, b.member)
	})
	return out
}

// rank is the brute-force rank of member in a period (0 if absent).
func (mb *modelBoard) rank(mv *modelView, period, member string) int64 {
	rows := mb.sorted(mv, period)
	for i, e := range rows {
		if e.member == member {
			if mb.b.Ties == ranking.TiesShared {
				n := int64(0)
				for _, o := range rows {
					if mb.better(o.value, e.value) {
						n++
					}
				}
				return n + 1
			}
			return int64(i + 1)
		}
	}
	return 0
}

// apply applies one event at time t (ms) and predicts the store's answer.
// ok is false when the event must be refused; code is the error code then.
func (mb *modelBoard) apply(ev ranking.Event, t int64, now int64) (res ranking.WriteResult, code string) {
	mb.snapshot(now)
	b := mb.b
	if b.Update != ranking.Increment && (ev.Value < b.Min || ev.Value > b.Max) {
		return res, ranking.EINVALID
	}
	if b.Update == ranking.Increment && (ev.Value > b.Max-b.Min || ev.Value < b.Min-b.Max) {
		return res, ranking.EINVALID
	}
	fp := fmt.Sprintf("%s\n%d\n%v", ev.Member, ev.Value, ev.At.UnixMilli()*boolInt(!ev.At.IsZero()))
	if ev.ID != "" {
		if rec, ok := mb.ids[ev.ID]; ok {
			if rec.fingerprint != fp {
				return res, ranking.ECONFLICT
			}
			res.Duplicate = true
			for i, mv := range mb.views {
				p := rec.periods[i]
				vs := ranking.ViewScore{View: mv.view.Name, Period: p}
				if e := mv.periods[p][ev.Member]; e != nil {
					vs.Score, vs.Rank = e.value, mb.rank(mv, p, ev.Member)
				}
				res.Views = append(res.Views, vs)
			}
			return res, ""
		}
	}
	// The id is looked up before the time checks: a retry of an applied
	// event is a duplicate even once its at is past lateness.
	if !ev.At.IsZero() && (t < now-b.Lateness.Milliseconds() || t > now+5000) {
		return res, ranking.EINVALID
	}
	plan, code := mb.plan(ev, t)
	if code != "" {
		return res, code
	}
	// Every segment board of the event changes with the board or nothing does.
	var segPlans [][]modelChange
	var segBoards []*modelBoard
	for _, name := range b.Segments {
		value, ok := ev.Segments[name]
		if !ok {
			continue
		}
		sg := ranking.Segment{Name: name, Value: value}
		sb := mb.segs[sg]
		if sb == nil {
			sb = &modelBoard{b: b, cal: mb.cal, seg: sg}
			for _, mv := range mb.views {
				sb.views = append(sb.views, &modelView{view: mv.view, unitMS: mv.unitMS, periods: map[string]map[string]*modelEntry{}})
			}
		}
		sp, code := sb.plan(ev, t)
		if code != "" {
			return res, code
		}
		segPlans, segBoards = append(segPlans, sp), append(segBoards, sb)
	}
	for k, sb := range segBoards {
		mb.segs[sb.seg] = sb
		sb.commit(ev, segPlans[k])
	}
	periods := mb.commit(ev, plan)
	for i, c := range plan {
		vs := ranking.ViewScore{View: c.mv.view.Name, Period: periods[i]}
		if e := c.mv.periods[c.period][ev.Member]; e != nil {
			vs.Score, vs.Rank = e.value, mb.rank(c.mv, c.period, ev.Member)
		}
		res.Views = append(res.Views, vs)
	}
	if ev.ID != "" {
		mb.ids[ev.ID] = modelID{fingerprint: fp, periods: periods, at: now}
	}
	return res, ""
}

// remove forgets member in every retained period of the board and its
// segment boards, as RemoveMember does (an expired period's key is gone in
// Redis; miniredis, whose TTLs stand still here, keeps it as it was). A
// removal that changes the all view keeps the day's snapshot first, as a
// write does.
func (mb *modelBoard) remove(member string, now int64) {
	for _, mv := range mb.views {
		if mv.view.Kind == ranking.All && mv.periods["all"][member] != nil {
			mb.snapshot(now)
		}
	}
	for _, b := range append([]*modelBoard{mb}, slices.Collect(maps.Values(mb.segs))...) {
		for _, mv := range b.views {
			for id, es := range mv.periods {
				if id != ranking.AllPeriodID {
					p, err := mb.cal.ParsePeriod(mv.view, id)
					if err != nil {
						panic(err)
					}
					if mb.expiry(mv.view, p).UnixMilli() < now {
						continue
					}
				}
				delete(es, member)
			}
		}
	}
}

// modelChange is an event's planned change to one period of one view.
type modelChange struct {
	mv     *modelView
	period string
	next   modelEntry
	write  bool
}

// plan computes an event's change to every view, or the refusal code.
func (mb *modelBoard) plan(ev ranking.Event, t int64) (plan []modelChange, code string) {
	b := mb.b
	type change = modelChange
	for _, mv := range mb.views {
		p := mb.cal.PeriodAt(mv.view, time.UnixMilli(t)).ID
		unit := floorDiv(t, mv.unitMS)
		old := mv.periods[p][ev.Member]
		next := modelEntry{value: ev.Value, unit: unit, exact: t, member: ev.Member}
		write := true
		if old == nil && b.Update == ranking.Increment && ev.Value == 0 {
			// adds nothing: an absent member stays absent
			plan = append(plan, change{mv, p, modelEntry{member: ev.Member}, false})
			continue
		}
		if old != nil {
			switch b.Update {
			case ranking.Increment:
				if ev.Value == 0 {
					next, write = *old, false
				} else {
					next = *old
					next.value += ev.Value
					next.unit = max(old.unit, unit)
				}
			case ranking.Best:
				if !(mb.better(ev.Value, old.value) || (ev.Value == old.value && unit < old.unit && b.Ties == ranking.TiesFirst)) {
					next, write = *old, false
				}
			case ranking.Latest:
				if t < old.exact {
					next, write = *old, false
				}
			}
		}
		if next.value < b.Min || next.value > b.Max {
			return nil, ranking.EINVALID
		}
		plan = append(plan, change{mv, p, next, write})
	}
	return plan, ""
}

// commit applies a plan; it returns the period of each view.
func (mb *modelBoard) commit(ev ranking.Event, plan []modelChange) (periods []string) {
	for _, c := range plan {
		if c.write {
			if c.mv.periods[c.period] == nil {
				c.mv.periods[c.period] = map[string]*modelEntry{}
			}
			n := c.next
			c.mv.periods[c.period][ev.Member] = &n
		}
		periods = append(periods, c.period)
	}
	return periods
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// modelConfig has one board per update policy, order and tie rule, with
// narrow bounds (so increments hit them), decimals, negative scores, and a
// wide board whose all view falls back to the 1h resolution.
func modelConfig(tz string, lateness time.Duration) string {
	// Every board has two segment names; events carry none, one or both.
	return strings.ReplaceAll(plainModelConfig(tz, lateness), "{id:", "{segments: [country, team], id:")
}

// plainModelConfig is modelConfig without segments: boards whose events
// apply.lua serves on its plain path (apply_plain).
func plainModelConfig(tz string, lateness time.Duration) string {
	l := lateness.String()
	return fmt.Sprintf(`
timezone: %s
week_starts: monday
boards:
  - {id: inc-desc-first, update: increment, order: desc, ties: first, decimals: 1, min_score: -20, max_score: 20, views: [hour, day, week, month, all], lateness: %s}
  - {id: inc-asc-shared, update: increment, order: asc, ties: shared, min_score: -15, max_score: 15, views: [hour, day, week, month, all], lateness: %s}
  - {id: best-asc-first, update: best, order: asc, ties: first, decimals: 2, min_score: 0, max_score: 10, views: [hour, day, week, month, all], lateness: %s}
  - {id: best-desc-shared, update: best, order: desc, ties: shared, views: [day, week, all], lateness: %s}
  - {id: latest-desc-first, update: latest, order: desc, ties: first, min_score: -5, max_score: 5, views: [hour, day, week, month, all], lateness: %s}
  - {id: latest-asc-shared, update: latest, order: asc, ties: shared, views: [day, month, all], lateness: %s}
  - {id: wide-inc, update: increment, max_score: 10000000000, views: [hour, day, week, month, all], lateness: %s}
  - {id: wide-latest, update: latest, max_score: 10000000000, views: [day, week, month, all], lateness: %s}
`, tz, l, l, l, l, l, l, l, l)
}

// workload drives one store and its model with random batches.
type workload struct {
	t       *testing.T
	rdb     redis.UniversalClient
	prefix  string
	rng     *rand.Rand
	store   *ranking.Store
	cfg     *ranking.Config
	models  map[string]*modelBoard
	now     func() time.Time // the test's view of Redis's clock
	step    func()           // moves the clock (miniredis) or not (real Redis)
	usedID  []ranking.Event
	late    time.Duration
	moved   int // rows verified whose previous rank differs from their rank
	removed int // members removed
}

var memberPool = func() []string {
	var out []string
	for i := range 24 {
		out = append(out, fmt.Sprintf("m%02d", i))
	}
	return append(out, "Zed", "zed", "ünï", "a b", "0")
}()

func (w *workload) event(b *ranking.Board) ranking.Event {
	r := w.rng
	ev := ranking.Event{Member: memberPool[r.IntN(len(memberPool))]}
	scale := int64(1)
	for range b.Decimals {
		scale *= 10
	}
	switch b.Update {
	case ranking.Increment:
		ev.Value = int64(r.IntN(9)-3) * scale / 2 // few distinct values: ties abound
		if b.Max > 1e9 {
			ev.Value = int64(r.IntN(4)) * 3_000_000_000
		}
	default:
		span := b.Max - b.Min
		ev.Value = b.Min + span*int64(r.IntN(5))/4
		if r.IntN(50) == 0 {
			ev.Value = b.Max + 1 // refused: outside the bounds
		}
	}
	now := w.now()
	switch k := r.IntN(10); {
	case k < 4: // Redis's now
	case k < 9: // a late event within lateness, on a coarse grid so times tie
		back := time.Duration(r.Int64N(int64(w.late - 2*time.Second)))
		grid := []time.Duration{time.Millisecond, time.Second, time.Minute, time.Hour}[r.IntN(4)]
		ev.At = now.Add(-back).Truncate(grid)
		if ev.At.Before(now.Add(-w.late + 2*time.Second)) {
			ev.At = now.Add(-back)
		}
	default: // too late or too far ahead: refused
		if r.IntN(2) == 0 {
			ev.At = now.Add(-w.late - time.Hour)
		} else {
			ev.At = now.Add(time.Minute)
		}
	}
	if r.IntN(4) == 0 {
		ev.Name = "Name of " + ev.Member
	}
	if len(b.Segments) == 0 {
		// no segment values
	} else if m := ev.Member; len(m) == 3 && m[0] == 'm' && (m[2]-'0')%2 == 0 && r.IntN(40) != 0 {
		// Members m00, m02, …: nearly always the same values (the common
		// case, which apply.lua serves by mirroring the board's codes),
		// now and then an event that breaks it for good.
		ev.Segments = map[string]string{
			"country": []string{"FR", "DE", "us"}[int(m[2]-'0')%3],
			"team":    []string{"red", "blue"}[int(m[1]-'0')%2],
		}
	} else if k := r.IntN(4); k > 0 {
		ev.Segments = map[string]string{}
		if k&1 != 0 {
			ev.Segments["country"] = []string{"FR", "DE", "us"}[r.IntN(3)]
		}
		if k&2 != 0 {
			ev.Segments["team"] = []string{"red", "blue"}[r.IntN(2)]
		}
	}
	if r.IntN(5) == 0 {
		if len(w.usedID) > 0 && r.IntN(3) == 0 {
			prev := w.usedID[r.IntN(len(w.usedID))]
			if r.IntN(2) == 0 {
				return prev // a retry: duplicate (or refused again)
			}
			ev.ID = prev.ID // same id, other content: conflict
		} else {
			ev.ID = fmt.Sprintf("evt-%d", r.Int64())
			w.usedID = append(w.usedID, ev)
		}
	}
	return ev
}

func (w *workload) run(events int) {
	ctx := context.Background()
	boards := w.cfg.Boards
	for done, batches := 0, 0; done < events; batches++ {
		// Every third batch goes without ranks: the same writes, answers
		// without ranks (the rng's sequence stays the workload's own).
		noRanks := batches%3 == 1
		b := boards[w.rng.IntN(len(boards))]
		if w.rng.IntN(30) == 0 {
			// A cheater's removal, now and then, between batches.
			m := memberPool[w.rng.IntN(len(memberPool))]
			if _, err := w.store.RemoveMember(ctx, b.ID, m); err != nil {
				w.t.Fatalf("remove %s from %s: %v", m, b.ID, err)
			}
			w.models[b.ID].remove(m, w.now().UnixMilli())
			w.removed++
			continue
		}
		n := 1 + w.rng.IntN(40)
		if w.rng.IntN(25) == 0 {
			n = 101 + w.rng.IntN(250) // more than one script call
		}
		batch := make([]ranking.Event, n)
		for i := range batch {
			batch[i] = w.event(b)
		}
		res, err := w.store.Apply(ctx, b.ID, batch, ranking.ApplyOptions{NoRanks: noRanks})
		if err != nil {
			w.t.Fatalf("apply: %v", err)
		}
		mb := w.models[b.ID]
		for i, ev := range batch {
			got := res[i]
			t := got.At.UnixMilli() // the script reports the event time it used
			if !ev.At.IsZero() {
				t = ev.At.UnixMilli()
			}
			// Events are generated well inside or well outside the lateness
			// range, so the test's estimate of Redis's now decides the same.
			now := w.now().UnixMilli()
			want, code := mb.apply(ev, t, now)
			if gotCode := codeOf(got.Err); gotCode != code {
				w.t.Fatalf("board %s event %+v: got error %q (%v), model says %q", b.ID, ev, gotCode, got.Err, code)
			}
			if code != "" {
				continue
			}
			if noRanks {
				want.Views = slices.Clone(want.Views)
				for k := range want.Views {
					want.Views[k].Rank = 0
				}
			}
			if got.Duplicate != want.Duplicate || !slices.Equal(got.Views, want.Views) {
				w.t.Fatalf("board %s event %+v:\n got %+v\nwant %+v", b.ID, ev, got, want)
			}
		}
		done += n
		w.step()
	}
}

// expireIDs forgets idempotency records older than ranking.DedupeWindow,
// in the model and in Redis: miniredis's TTLs do not follow SetTime here
// (period keys must outlive the simulated week), so the records' expiry is
// played by hand.
func (w *workload) expireIDs(now time.Time) {
	for id, mb := range w.models {
		for eid, rec := range mb.ids {
			if now.UnixMilli()-rec.at >= ranking.DedupeWindow.Milliseconds() {
				delete(mb.ids, eid)
				if err := w.rdb.Del(context.Background(), w.prefix+"{"+id+"}:e:"+eid).Err(); err != nil {
					w.t.Fatal(err)
				}
			}
		}
	}
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return ranking.ErrorCode(err)
}

// verify compares every period of every view, row by row, and a card for
// every member.
func (w *workload) verify() {
	checked := 0
	for _, b := range w.cfg.Boards {
		boards := []*modelBoard{w.models[b.ID]}
		for _, sb := range w.models[b.ID].segs {
			boards = append(boards, sb)
		}
		for _, mb := range boards {
			checked += w.verifyBoard(mb)
		}
	}
	w.t.Logf("verified %d rows and cards; %d rows moved since their previous period; %d removals", checked, w.moved, w.removed)
	if w.moved == 0 {
		w.t.Error("no row moved: the previous ranks were not exercised")
	}
}

// verifyBoard compares every period of every view of a board or segment
// board, row by row, with a card for every member.
func (w *workload) verifyBoard(mb *modelBoard) (checked int) {
	ctx := context.Background()
	b, seg := mb.b, mb.seg
	for _, mv := range mb.views {
		for p := range mv.periods {
			rows := mb.sorted(mv, p)
			w.verifyCodes(mb, mv, p, rows)
			period := p
			if period == "all" && w.rng.IntN(2) == 0 {
				period = "2026-01-01"
			}
			var got []ranking.Entry
			for off := 0; ; off += 7 {
				pg, err := w.store.Page(ctx, b.ID, mv.view.Name, ranking.PageQuery{Segment: seg, Period: period, Offset: off, Limit: 7})
				if err != nil {
					w.t.Fatalf("page %s/%s/%s %v: %v", b.ID, mv.view.Name, p, seg, err)
				}
				if pg.Total != int64(len(rows)) {
					w.t.Fatalf("%s/%s/%s %v: total %d, model %d", b.ID, mv.view.Name, p, seg, pg.Total, len(rows))
				}
				got = append(got, pg.Entries...)
				if len(pg.Entries) < 7 {
					break
				}
			}
			if len(got) != len(rows) {
				w.t.Fatalf("%s/%s/%s %v: %d rows, model %d", b.ID, mv.view.Name, p, seg, len(got), len(rows))
			}
			for i, e := range rows {
				wantRank := mb.rank(mv, p, e.member)
				if got[i].Member != e.member || got[i].Score != e.value || got[i].Rank != wantRank {
					w.t.Fatalf("%s/%s/%s %v row %d: got %+v, model %s %d rank %d", b.ID, mv.view.Name, p, seg, i, got[i], e.member, e.value, wantRank)
				}
				if want := mb.prevRank(mv, p, e.member, wantRank, w.now()); got[i].PrevRank != want {
					w.t.Fatalf("%s/%s/%s %v row %d %s: previous rank %d, model %d", b.ID, mv.view.Name, p, seg, i, e.member, got[i].PrevRank, want)
				}
				if got[i].PrevRank > 0 && got[i].PrevRank != wantRank {
					w.moved++
				}
				around := w.rng.IntN(4)
				card, err := w.store.Member(ctx, b.ID, mv.view.Name, e.member, ranking.MemberQuery{Segment: seg, Period: p, Around: around})
				if err != nil {
					w.t.Fatalf("card %s %v: %v", e.member, seg, err)
				}
				if card.Rank != wantRank || card.Score != e.value || card.Total != int64(len(rows)) {
					w.t.Fatalf("card %s/%s/%s %v %s: got rank %d score %d total %d", b.ID, mv.view.Name, p, seg, e.member, card.Rank, card.Score, card.Total)
				}
				lo, hi := max(i-around, 0), min(i+around+1, len(rows))
				if !slices.Equal(card.Around, withoutPrev(got[lo:hi])) {
					w.t.Fatalf("card %s around: got %+v want %+v", e.member, card.Around, got[lo:hi])
				}
				checked++
			}
		}
	}
	return checked
}

// verifyCodes checks the raw sorted-set scores the script wrote against the
// Go twin of the encoding: value and time part exactly as the model says.
func (w *workload) verifyCodes(mb *modelBoard, mv *modelView, period string, rows []*modelEntry) {
	tag := ""
	if !mb.seg.IsZero() {
		tag = "@" + mb.seg.Name + "=" + mb.seg.Value
	}
	key := w.prefix + "{" + mb.b.ID + "}:z:" + mv.view.Name + tag + ":" + period
	zs, err := w.rdb.ZRangeWithScores(context.Background(), key, 0, -1).Result()
	if err != nil {
		w.t.Fatal(err)
	}
	base := floorDiv(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), mv.unitMS)
	if period != "all" {
		p, err := mb.cal.ParsePeriod(mv.view, period)
		if err != nil {
			w.t.Fatal(err)
		}
		base = floorDiv(p.Start.UnixMilli(), mv.unitMS)
	}
	if len(zs) != len(rows) {
		w.t.Fatalf("%s: %d raw entries, model %d", key, len(zs), len(rows))
	}
	for i, z := range zs {
		rel := rows[i].unit - base
		if mb.b.Ties == ranking.TiesShared {
			rel = 0
		}
		if want := ranking.Encode(mb.b, mv.view.Name, rows[i].value, rel); z.Member != rows[i].member || int64(z.Score) != want {
			w.t.Fatalf("%s row %d: %s code %.0f, want %s %d", key, i, z.Member, z.Score, rows[i].member, want)
		}
	}
}

func newWorkload(t *testing.T, rdb redis.UniversalClient, cfgText string, late time.Duration, seed uint64) *workload {
	cfg, err := ranking.ParseConfig([]byte(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{t: t, rdb: rdb, prefix: redistest.Namespace(t) + ":", rng: rand.New(rand.NewPCG(seed, 7)), cfg: cfg, models: map[string]*modelBoard{}, late: late}
	w.store = rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: w.prefix})
	for _, b := range cfg.Boards {
		w.models[b.ID] = newModelBoard(cfg, b)
	}
	return w
}

// TestReferenceModelMiniredis moves miniredis's clock across a month end, the
// New York DST change (a repeated hour) and a week boundary while events
// arrive, some late.
func TestReferenceModelMiniredis(t *testing.T) {
	t.Parallel() // with TestReferenceModelRedis, after the package's other tests
	loc, _ := time.LoadLocation("America/New_York")
	late := 48 * time.Hour
	for _, tc := range []struct {
		name   string
		cfg    string
		events int
	}{
		{"segments", modelConfig("America/New_York", late), 12000},
		{"plain", plainModelConfig("America/New_York", late), 8000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := miniredis.RunT(t)
			clock := time.Date(2026, 10, 31, 12, 0, 0, 0, loc)
			m.SetTime(clock)
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { rdb.Close() })
			w := newWorkload(t, rdb, tc.cfg, late, 1)
			w.now = func() time.Time { return clock }
			w.step = func() {
				clock = clock.Add(time.Duration(w.rng.IntN(40)) * time.Minute)
				m.SetTime(clock)
				w.expireIDs(clock)
			}
			w.run(tc.events)
			w.verify()
			if clock.Before(time.Date(2026, 11, 2, 0, 0, 0, 0, loc)) {
				t.Fatalf("clock only reached %v; the workload must cross the week boundary", clock)
			}
		})
	}
}

// TestReferenceModelRedis runs against a real Redis with a lateness of 40
// days, so explicit event times cross month and week boundaries.
func TestReferenceModelRedis(t *testing.T) {
	t.Parallel() // with TestReferenceModelMiniredis, after the package's other tests
	late := 40 * 24 * time.Hour
	for _, tc := range []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.ClusterClient(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each flavour on its own server, under its own prefix
			rdb := tc.rdb(t)
			for _, c := range []struct {
				cfg    string
				events int
			}{{modelConfig("Europe/London", late), 10000}, {plainModelConfig("Europe/London", late), 6000}} {
				w := newWorkload(t, rdb, c.cfg, late, 2)
				w.now = func() time.Time {
					now, err := w.store.Now(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					return now
				}
				w.step = func() {}
				w.run(c.events)
				w.verify()
			}
		})
	}
}

// withoutPrev copies entries without their previous ranks (reads that do
// not answer them, such as a card's neighbours).
func withoutPrev(es []ranking.Entry) []ranking.Entry {
	out := slices.Clone(es)
	for i := range out {
		out[i].PrevRank = ranking.PrevUnknown
	}
	return out
}

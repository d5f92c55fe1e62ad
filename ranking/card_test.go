package ranking_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// The rank card model: every accepted event kept as (member, value, time);
// a period of any view is, by brute force, the sum of the events inside it,
// tied by the latest event time in the view's tie unit, present while the
// period is retained (and, for a window, built).

type cardEvent struct {
	member string
	value  int64
	ms     int64
}

type cardModel struct {
	t      *testing.T
	cfg    *ranking.Config
	store  *ranking.Store
	rdb    redis.UniversalClient
	prefix string
	events map[string][]cardEvent // by board
	names  map[string]string      // by board + "/" + member: the latest name given
	stats  map[string]int         // kinds of history points checked
}

// rows returns period p of view v in rank order, with shared or first ranks.
func (cm *cardModel) rows(b *ranking.Board, v ranking.View, p ranking.Period) []ranking.Entry {
	unit := map[string]int64{"1ms": 1, "1s": 1000, "1min": 60000, "1h": 3600000, "": 1}[b.TieResolution(v.Name)]
	type acc struct{ value, unit int64 }
	sums := map[string]*acc{}
	for _, ev := range cm.events[b.ID] {
		if !p.IsAll() && (ev.ms < p.Start.UnixMilli() || ev.ms >= p.End.UnixMilli()) {
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
	members := make([]string, 0, len(sums))
	for m := range sums {
		members = append(members, m)
	}
	slices.SortFunc(members, func(x, y string) int {
		ax, ay := sums[x], sums[y]
		if ax.value != ay.value {
			if b.Order == ranking.Desc {
				return cmp.Compare(ay.value, ax.value)
			}
			return cmp.Compare(ax.value, ay.value)
		}
		if b.Ties == ranking.TiesFirst && ax.unit != ay.unit {
			return cmp.Compare(ax.unit, ay.unit)
		}
		return strings.Compare(x, y)
	})
	out := make([]ranking.Entry, len(members))
	for i, m := range members {
		out[i] = ranking.Entry{Rank: int64(i + 1), Member: m, Name: cm.names[b.ID+"/"+m], Score: sums[m].value}
		if b.Ties == ranking.TiesShared && i > 0 && out[i].Score == out[i-1].Score {
			out[i].Rank = out[i-1].Rank
		}
	}
	return out
}

// expireAt is when period p's keys go: the end of the period keep periods
// later, and never before end + lateness.
func (cm *cardModel) expireAt(b *ranking.Board, v ranking.View, p ranking.Period) time.Time {
	last := cm.cfg.Calendar.Shift(v, p, b.Keep)
	if final := p.End.Add(b.Lateness); final.After(last.End) {
		return final
	}
	return last.End
}

// built reports whether the window marker of p exists now.
func (cm *cardModel) built(b *ranking.Board, v ranking.View, p ranking.Period) bool {
	n, err := cm.rdb.Exists(context.Background(), cm.prefix+"{"+b.ID+"}:r:"+v.Name+":"+p.ID).Result()
	if err != nil {
		cm.t.Fatal(err)
	}
	return n == 1
}

// point is the model's standing of member in p: readable is false for an
// expired period or an unbuilt window.
func (cm *cardModel) point(b *ranking.Board, v ranking.View, p ranking.Period, member string, now time.Time, readable bool) ranking.HistoryPoint {
	pt := ranking.HistoryPoint{Period: p}
	if !readable || (!p.IsAll() && !now.Before(cm.expireAt(b, v, p))) {
		return pt
	}
	rows := cm.rows(b, v, p)
	pt.Total = int64(len(rows))
	for _, e := range rows {
		if e.Member == member {
			pt.Score, pt.Rank, pt.Present = e.Score, e.Rank, true
		}
	}
	return pt
}

// redisNow reads Redis's clock.
func (cm *cardModel) redisNow() time.Time {
	now, err := cm.rdb.Time(context.Background()).Result()
	if err != nil {
		cm.t.Fatal(err)
	}
	return now.Truncate(time.Millisecond).In(cm.cfg.Calendar.Location())
}

// sameCurrent reports whether every view of b has the same current period
// at x and y.
func (cm *cardModel) sameCurrent(b *ranking.Board, x, y time.Time) bool {
	for _, v := range b.Views {
		if cm.cfg.Calendar.PeriodAt(v, x) != cm.cfg.Calendar.PeriodAt(v, y) {
			return false
		}
	}
	return true
}

// check reads one rank card and compares every field with the model. A
// zero now means Redis's own clock: the model then uses the card's Now, and
// a read during which a period ended is not checked.
func (cm *cardModel) check(b *ranking.Board, v ranking.View, period, member string, around, n int, now time.Time) bool {
	t := cm.t
	ctx := context.Background()
	cal := cm.cfg.Calendar
	live := now.IsZero()
	if live {
		now = cm.redisNow()
	}
	head := cal.PeriodAt(v, now)
	if period != "" {
		var err error
		if head, err = cal.ParsePeriod(v, period); err != nil {
			t.Fatal(err)
		}
	}
	if v.Kind == ranking.All {
		n = 1
	}
	// Which past windows are built before the read: the card builds only
	// the chosen period's window and the current ones.
	past := make([]ranking.Period, n)
	past[n-1] = head
	for i := n - 2; i >= 0; i-- {
		past[i] = cal.Prev(v, past[i+1])
	}
	readable := make([]bool, n)
	for i, p := range past {
		readable[i] = v.Kind != ranking.Window || cm.built(b, v, p)
	}
	readable[n-1] = true // built by the read if still retained
	label := fmt.Sprintf("%s/%s/%s %s around %d n %d at %s", b.ID, v.Name, head.ID, member, around, n, now.Format(time.RFC3339))

	rc, err := cm.store.RankCard(ctx, b.ID, v.Name, member, ranking.RankCardQuery{Period: period, Around: around, History: n})
	if live {
		if after := cm.redisNow(); !cm.sameCurrent(b, now, after) {
			t.Logf("%s: a period ended during the read; not checked", label)
			return false
		}
		if err == nil {
			now = rc.Now
		}
	}
	want := cm.point(b, v, head, member, now, true)
	if !want.Present {
		if ranking.ErrorCode(err) != ranking.ENOTFOUND {
			t.Fatalf("%s: got %v, want ENOTFOUND", label, err)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	rows := cm.rows(b, v, head)
	var pos int
	for i, e := range rows {
		if e.Member == member {
			pos = i
		}
	}
	c := rc.Card
	topPercent := math.Round(10000*float64(want.Rank)/float64(want.Total)) / 100
	if c.Period.ID != head.ID || !c.Now.Equal(now) || c.Final != b.Final(head, now) || c.Total != want.Total ||
		c.Rank != want.Rank || c.Score != want.Score || c.Member != member || c.Name != rows[pos].Name || c.TopPercent != topPercent {
		t.Fatalf("%s: card %s now %v final %v total %d rank %d score %d %q %q top %v, model total %d rank %d score %d name %q top %v",
			label, c.Period.ID, c.Now, c.Final, c.Total, c.Rank, c.Score, c.Member, c.Name, c.TopPercent, want.Total, want.Rank, want.Score, rows[pos].Name, topPercent)
	}
	if lo, hi := max(pos-around, 0), min(pos+around+1, len(rows)); !slices.Equal(c.Around, rows[lo:hi]) {
		t.Fatalf("%s: around\n got %+v\nwant %+v", label, c.Around, rows[lo:hi])
	}
	h := rc.History
	if h.Member != member || h.View.Name != v.Name || len(h.Points) != n {
		t.Fatalf("%s: history of %s/%s with %d points", label, h.Member, h.View.Name, len(h.Points))
	}
	for i, p := range past {
		w := cm.point(b, v, p, member, now, readable[i])
		if h.Points[i] != w {
			t.Fatalf("%s: history point %d\n got %+v\nwant %+v", label, i, h.Points[i], w)
		}
		switch {
		case !p.IsAll() && !now.Before(cm.expireAt(b, v, p)):
			cm.stats["expired"]++
		case !readable[i]:
			cm.stats["unbuilt"]++
		case w.Present:
			cm.stats["present"]++
		default:
			cm.stats["absent"]++
		}
	}
	if len(rc.Views) != len(b.Views) {
		t.Fatalf("%s: %d views", label, len(rc.Views))
	}
	for i, ov := range b.Views {
		cur := cal.PeriodAt(ov, now)
		w := cm.point(b, ov, cur, member, now, true)
		want := ranking.ViewStanding{View: ov, Period: cur, Final: b.Final(cur, now), Total: w.Total, Score: w.Score, Rank: w.Rank, Present: w.Present}
		if rc.Views[i] != want {
			t.Fatalf("%s: view %s\n got %+v\nwant %+v", label, ov.Name, rc.Views[i], want)
		}
	}
	return true
}

const cardBoards = `
timezone: America/New_York
week_starts: monday
boards:
  - {id: first, decimals: 1, min_score: -100000, max_score: 100000, views: [hour, day, week, all, 2d], lateness: 30h, keep: 3}
  - {id: shared, order: asc, ties: shared, min_score: -100000, max_score: 100000, views: [day, 3d, all], lateness: 30h, keep: 2}
`

// TestRankCardModel drives miniredis's clock over four days, across the New
// York DST change, with events now and up to the lateness back, and checks
// rank cards of random members, views and periods against the model: ranks
// with first and shared ties, neighbours, totals, history with absent,
// expired and unbuilt periods, and the current period of every view.
func TestRankCardModel(t *testing.T) {
	t.Parallel() // its own miniredis
	loc, _ := time.LoadLocation("America/New_York")
	clock := time.Date(2026, 10, 31, 18, 0, 7, 0, loc)
	m, rdb := MustMiniredis(t, clock)
	cfg := MustConfig(t, cardBoards)
	prefix := redistest.Namespace(t) + ":"
	cm := &cardModel{t: t, cfg: cfg, rdb: rdb, prefix: prefix, events: map[string][]cardEvent{}, names: map[string]string{}, stats: map[string]int{},
		store: rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix, Clock: func() time.Time { return clock }})}
	// Removals go through a second store: the first learns of them from
	// Redis only (the final periods' version), as another instance would.
	remover := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix, Clock: func() time.Time { return clock }})
	rng := rand.New(rand.NewPCG(11, 3))
	members := []string{"ann", "bo", "cy", "di", "ed", "fay", "gus", "hal"}
	ctx := context.Background()
	cards, absent, removals := 0, 0, 0
	for step := 0; clock.Before(time.Date(2026, 11, 4, 12, 0, 0, 0, loc)); step++ {
		clock = clock.Add(time.Duration(rng.IntN(40)) * time.Minute)
		m.SetTime(clock)
		b := cfg.Boards[rng.IntN(len(cfg.Boards))]
		if step%40 == 39 {
			gone := members[rng.IntN(len(members))]
			if _, err := remover.RemoveMember(ctx, b.ID, gone); err != nil {
				t.Fatal(err)
			}
			cm.events[b.ID] = slices.DeleteFunc(cm.events[b.ID], func(ev cardEvent) bool { return ev.member == gone })
			delete(cm.names, b.ID+"/"+gone)
			removals++
		}
		batch := make([]ranking.Event, 1+rng.IntN(3))
		for i := range batch {
			ev := ranking.Event{Member: members[rng.IntN(len(members))], Value: int64(1 + rng.IntN(4))}
			if rng.IntN(4) == 0 {
				ev.Value = -ev.Value
			}
			if b.Ties == ranking.TiesShared {
				ev.Value *= 5 // more ties
			}
			if rng.IntN(3) == 0 {
				ev.At = clock.Add(-time.Duration(rng.Int64N(int64(b.Lateness - time.Minute))))
			}
			if rng.IntN(5) == 0 {
				ev.Name = fmt.Sprintf("%s %d", strings.ToUpper(ev.Member), step)
			}
			batch[i] = ev
		}
		res, err := cm.store.Apply(ctx, b.ID, batch, ranking.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range batch {
			if res[i].Err != nil {
				t.Fatalf("event %+v refused: %v", ev, res[i].Err)
			}
			cm.events[b.ID] = append(cm.events[b.ID], cardEvent{ev.Member, ev.Value, res[i].At.UnixMilli()})
			if ev.Name != "" {
				cm.names[b.ID+"/"+ev.Member] = ev.Name
			}
		}
		for range 3 {
			b := cfg.Boards[rng.IntN(len(cfg.Boards))]
			v := b.Views[rng.IntN(len(b.Views))]
			period := ""
			if rng.IntN(3) == 0 {
				period = cfg.Calendar.Shift(v, cfg.Calendar.PeriodAt(v, clock), -rng.IntN(5)).ID
			}
			if cm.check(b, v, period, members[rng.IntN(len(members))], rng.IntN(4), 1+rng.IntN(8), clock) {
				cards++
			} else {
				absent++
			}
		}
	}
	t.Logf("checked %d rank cards and %d absent members after %d removals; history points %v; %d chart points kept", cards, absent, removals, cm.stats, ranking.KeptChartPoints(cm.store))
	if ranking.KeptChartPoints(cm.store) == 0 {
		t.Error("no final chart point was kept")
	}
	for _, kind := range []string{"expired", "unbuilt", "present", "absent"} {
		if cm.stats[kind] == 0 {
			t.Errorf("no %s history point was checked", kind)
		}
	}
}

// TestRankCardCluster runs the model on the cluster (Redis's own clock): a
// card's keys are all declared, so the script runs on the board's shard.
func TestRankCardCluster(t *testing.T) {
	rdb := redistest.ClusterClient(t)
	cfg := MustConfig(t, cardBoards)
	prefix := redistest.Namespace(t) + ":"
	cm := &cardModel{t: t, cfg: cfg, rdb: rdb, prefix: prefix, events: map[string][]cardEvent{}, names: map[string]string{}, stats: map[string]int{},
		store: rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix})}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 8))
	members := []string{"ann", "bo", "cy", "di", "ed"}
	for _, b := range cfg.Boards {
		var batch []ranking.Event
		for range 60 {
			batch = append(batch, ranking.Event{Member: members[rng.IntN(len(members))], Value: int64(1 + rng.IntN(3)),
				Name: "N" + members[rng.IntN(len(members))]})
		}
		res, err := cm.store.Apply(ctx, b.ID, batch, ranking.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range batch {
			if res[i].Err != nil {
				t.Fatal(res[i].Err)
			}
			cm.events[b.ID] = append(cm.events[b.ID], cardEvent{ev.Member, ev.Value, res[i].At.UnixMilli()})
			cm.names[b.ID+"/"+ev.Member] = ev.Name
		}
	}
	checked := 0
	for _, b := range cfg.Boards {
		for _, v := range b.Views {
			for _, m := range append(members, "nobody") {
				if cm.check(b, v, "", m, 2, 5, time.Time{}) {
					checked++
				}
			}
		}
	}
	if checked < len(members) {
		t.Fatalf("only %d rank cards checked", checked)
	}
	t.Logf("checked %d rank cards", checked)
}

// TestRankCardIsOneSnapshot reads rank cards on a real Redis while a writer
// keeps adding to one member, every event now: every view, the headline, the
// member's own row and the chart's last point must show the same score.
func TestRankCardIsOneSnapshot(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := MustConfig(t, `
boards:
  - {id: race, views: [day, week, month, all]}
`)
	store := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	if _, err := store.Apply(ctx, "race", []ranking.Event{{Member: "rival", Value: 1_000_000}, {Member: "me", Value: 1}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			res, err := store.Apply(ctx, "race", []ranking.Event{{Member: "me", Value: 1}}, ranking.ApplyOptions{})
			if err != nil || res[0].Err != nil {
				t.Errorf("write: %v %v", err, res)
				return
			}
			writes.Add(1)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 300 {
		rc, err := store.RankCard(ctx, "race", "week", "me", ranking.RankCardQuery{Around: 1, History: 12})
		if err != nil {
			t.Fatal(err)
		}
		if problem := disagreement(rc); problem != "" {
			t.Fatalf("read %d: %s", i, problem)
		}
	}
	stop.Store(true)
	wg.Wait()
	if writes.Load() < 2 {
		t.Fatalf("only %d writes ran during the reads", writes.Load())
	}
	t.Logf("300 consistent rank cards during %d writes", writes.Load())
}

// disagreement describes how a rank card of a member whose every event
// happened now disagrees with itself, or is "".
func disagreement(rc *ranking.RankCard) string {
	score := rc.Score
	var got []string
	ok := true
	for _, vs := range rc.Views {
		got = append(got, fmt.Sprintf("%s=%d", vs.View.Name, vs.Score))
		ok = ok && vs.Present && vs.Score == score
	}
	for _, e := range rc.Around {
		if e.Member == rc.Member {
			got = append(got, fmt.Sprintf("row=%d", e.Score))
			ok = ok && e.Score == score
		}
	}
	last := rc.History.Points[len(rc.History.Points)-1]
	got = append(got, fmt.Sprintf("chart=%d", last.Score))
	ok = ok && last.Present && last.Score == score && last.Period == rc.Period
	if ok {
		return ""
	}
	return fmt.Sprintf("headline %d but %s", score, strings.Join(got, " "))
}

// TestRankCardValidation: bad input gets a clear error and writes nothing.
func TestRankCardValidation(t *testing.T) {
	ctx := context.Background()
	m, rdb := MustMiniredis(t, time.Now())
	store := newStore(t, rdb, MustConfig(t, cardBoards), nil)
	if _, err := store.Apply(ctx, "first", []ranking.Event{{Member: "ann", Value: 5}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	keys := m.Keys()
	for _, tc := range []struct {
		board, view, period, member string
		around, n                   int
		code                        string
	}{
		{"first", "day", "", "ann", -1, 5, ranking.EINVALID},
		{"first", "day", "", "ann", ranking.MaxAround + 1, 5, ranking.EINVALID},
		{"first", "day", "", "ann", 0, 0, ranking.EINVALID},
		{"first", "day", "", "ann", 0, ranking.MaxHistory + 1, ranking.EINVALID},
		{"first", "day", "", "", 0, 5, ranking.EINVALID},
		{"first", "day", "", "a\x01", 0, 5, ranking.EINVALID},
		{"first", "day", "2026-11", "ann", 0, 5, ranking.EINVALID},
		{"first", "2d", "yesterday", "ann", 0, 5, ranking.EINVALID},
		{"nope", "day", "", "ann", 0, 5, ranking.ENOTFOUND},
		{"first", "month", "", "ann", 0, 5, ranking.ENOTFOUND},
		{"first", "day", "", "nobody", 0, 5, ranking.ENOTFOUND},
		{"first", "day", "2001-01-01", "ann", 0, 5, ranking.ENOTFOUND},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			_, err := store.RankCard(ctx, tc.board, tc.view, tc.member, ranking.RankCardQuery{Period: tc.period, Around: tc.around, History: tc.n})
			if ranking.ErrorCode(err) != tc.code {
				t.Errorf("got %v, want %s", err, tc.code)
			}
			if got := m.Keys(); !slices.Equal(got, keys) {
				t.Errorf("keys changed: %v, were %v", got, keys)
			}
		})
	}
}

// TestRankCardWindows: a card builds the chosen window and the current
// window of every view when nobody did yet, never the past windows of its
// history, and reads an expired window as gone without building it.
func TestRankCardWindows(t *testing.T) {
	ctx := context.Background()
	loc, _ := time.LoadLocation("America/New_York")
	t0 := time.Date(2026, 11, 10, 12, 0, 7, 0, loc)
	clock := t0
	m, rdb := MustMiniredis(t, clock)
	cfg := MustConfig(t, cardBoards)
	prefix := redistest.Namespace(t) + ":"
	store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: prefix, Clock: func() time.Time { return clock }})
	cm := &cardModel{t: t, cfg: cfg, rdb: rdb, prefix: prefix}
	b, _ := cfg.Board("first")
	w, _ := b.View("2d")
	window := func(id string) ranking.Period {
		p, err := cfg.Calendar.ParsePeriod(w, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// ann scores on the 9th (late) and bo on the 11th; nothing on the 12th.
	if _, err := store.Apply(ctx, "first", []ranking.Event{{Member: "ann", Value: 5, At: t0.Add(-25 * time.Hour)}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(24 * time.Hour)
	m.SetTime(clock)
	if _, err := store.Apply(ctx, "first", []ranking.Event{{Member: "bo", Value: 3}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(48 * time.Hour)
	m.SetTime(clock)
	for _, id := range []string{"2026-11-09", "2026-11-12"} {
		if cm.built(b, w, window(id)) {
			t.Fatalf("window %s built before the test", id)
		}
	}

	// A card of another view builds today's window of 2d.
	rc, err := store.RankCard(ctx, "first", "all", "bo", ranking.RankCardQuery{History: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !cm.built(b, w, window("2026-11-12")) {
		t.Error("today's window was not built by a card of the all view")
	}
	want := ranking.ViewStanding{View: w, Period: window("2026-11-12"), Total: 1, Score: 3, Rank: 1, Present: true}
	if got := rc.Views[len(rc.Views)-1]; got != want {
		t.Errorf("2d today: got %+v, want %+v", got, want)
	}

	// The current 2d card: the history reads the windows built by writes.
	rc, err = store.RankCard(ctx, "first", "2d", "bo", ranking.RankCardQuery{Around: 1, History: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pt := range rc.History.Points {
		got = append(got, fmt.Sprintf("%s:%v/%d/%d", pt.Period.ID, pt.Present, pt.Rank, pt.Total))
	}
	// 9th: never built (absent); 10th (days 9-10): built by ann's write,
	// bo absent; 11th (days 10-11): built by bo's write, bo alone.
	if want := "[2026-11-09:false/0/0 2026-11-10:false/0/1 2026-11-11:true/1/1 2026-11-12:true/1/1]"; fmt.Sprint(got) != want {
		t.Errorf("history %v, want %s", got, want)
	}
	if cm.built(b, w, window("2026-11-09")) {
		t.Error("a past window was built by reading history")
	}

	// An explicit past window that is still kept is built and read.
	rc, err = store.RankCard(ctx, "first", "2d", "ann", ranking.RankCardQuery{Period: "2026-11-09", History: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Period.ID != "2026-11-09" || rc.Rank != 1 || rc.Score != 5 || rc.Total != 1 || !rc.Final {
		t.Errorf("window 2026-11-09: %+v", rc.Card)
	}
	if pts := rc.History.Points; pts[0].Present || !pts[1].Present || pts[1].Score != 5 {
		t.Errorf("history %+v", pts)
	}
	if cm.built(b, w, window("2026-11-08")) {
		t.Error("the window before an explicit one was built")
	}

	// An expired window reads as gone and is not built.
	if _, err := store.RankCard(ctx, "first", "2d", "ann", ranking.RankCardQuery{Period: "2026-11-01", History: 2}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
		t.Errorf("expired window: %v", err)
	}
	if cm.built(b, w, window("2026-11-01")) {
		t.Error("an expired window was built")
	}
}

// TestRankCardClockOffByMinutes: when the app server's clock steps a few
// minutes after the store learnt Redis's (an NTP step), across an hour
// boundary, Redis's period is the first or the last candidate rather than
// the middle one: the card still reads Redis's period in every view, in
// one transaction.
func TestRankCardClockOffByMinutes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		redis time.Time
		step  time.Duration
	}{
		{time.Date(2026, 11, 10, 12, 57, 0, 0, time.UTC), 10 * time.Minute}, // app in the next hour
		{time.Date(2026, 11, 10, 13, 3, 0, 0, time.UTC), -10 * time.Minute}, // app in the previous hour
		{time.Date(2026, 11, 10, 23, 58, 0, 0, time.UTC), 5 * time.Minute},  // and the next day
	} {
		_, rdb := MustMiniredis(t, tc.redis)
		cfg := MustConfig(t, "boards: [{id: points, views: [hour, day, week, all]}]\n")
		var step atomic.Int64
		store := sharedStore(t, rdb, cfg, func() time.Time { return tc.redis.Add(time.Duration(step.Load())) })
		if _, err := store.Apply(ctx, "points", []ranking.Event{{Member: "a", Value: 2}}, ranking.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		// Another view's card loads the script; the hour view's card
		// arguments are then built at the stepped clock.
		if _, err := store.RankCard(ctx, "points", "week", "a", ranking.RankCardQuery{History: 3}); err != nil {
			t.Fatal(err)
		}
		step.Store(int64(tc.step))
		calls := &countCalls{n: map[string]int{}}
		rdb.AddHook(calls)
		rc, err := store.RankCard(ctx, "points", "hour", "a", ranking.RankCardQuery{History: 3})
		if err != nil {
			t.Fatal(err)
		}
		if c := calls.take(); c["tx"] != 1 || c["script"] != 0 {
			t.Errorf("redis %v step %v: commands %v, want one transaction", tc.redis, tc.step, c)
		}
		if want := cfg.Calendar.PeriodAt(mustView(t, cfg, "hour"), tc.redis).ID; rc.Period.ID != want || rc.Score != 2 {
			t.Errorf("redis %v step %v: card %s score %d, want %s", tc.redis, tc.step, rc.Period.ID, rc.Score, want)
		}
		for _, vs := range rc.Views {
			if want := cfg.Calendar.PeriodAt(vs.View, tc.redis).ID; vs.Period.ID != want || !vs.Present {
				t.Errorf("redis %v step %v: view %s: %s present %v, want %s", tc.redis, tc.step, vs.View.Name, vs.Period.ID, vs.Present, want)
			}
		}
	}
}

// TestRankCardClockJump: when the app server's clock jumps, the card still
// reads the periods of Redis's clock (it retries with candidates around it).
func TestRankCardClockJump(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 10, 12, 30, 0, 0, time.UTC)
	_, rdb := MustMiniredis(t, at)
	cfg := MustConfig(t, "boards: [{id: points, views: [hour, day, week, all]}]\n")
	var shift atomic.Int64
	store := newStore(t, rdb, cfg, func() time.Time { return at.Add(time.Duration(shift.Load())) })
	if _, err := store.Apply(ctx, "points", []ranking.Event{{Member: "a", Value: 2}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	shift.Store(int64(72 * time.Hour))
	rc, err := store.RankCard(ctx, "points", "hour", "a", ranking.RankCardQuery{History: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Period.ID != "2026-11-10T12" || rc.Score != 2 || !rc.Now.Equal(at) {
		t.Errorf("card %s score %d at %v", rc.Period.ID, rc.Score, rc.Now)
	}
	for _, vs := range rc.Views {
		if want := cfg.Calendar.PeriodAt(vs.View, at).ID; vs.Period.ID != want || !vs.Present {
			t.Errorf("view %s: %s present %v, want %s", vs.View.Name, vs.Period.ID, vs.Present, want)
		}
	}
}

func mustView(t *testing.T, cfg *ranking.Config, name string) ranking.View {
	t.Helper()
	b, _ := cfg.Board("points")
	v, ok := b.View(name)
	if !ok {
		t.Fatalf("no view %s", name)
	}
	return v
}

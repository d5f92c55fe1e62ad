package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// The league reference model: every round's cohorts kept as plain Go
// maps, fed the events the store applied, with the contract's rules
// written out by brute force (placement, tiers, zones, outcomes), and
// compared with the store's reads at the end.

type leagueSeat struct {
	level, cohort int
}

type leagueModelRound struct {
	period  ranking.Period
	scores  map[string]*modelEntry // the round's standings
	seats   map[[2]int]int         // per (shard, level): seats taken
	placed  map[string]leagueSeat
	decided map[leagueSeat]bool
	outcome map[string]int
}

type leagueModel struct {
	b      *ranking.Board
	shards int // each shard fills its own cohorts
	cal    *ranking.Calendar
	unitMS int64
	rounds map[string]*leagueModelRound
	last   map[string]string // member -> its last round played
}

func newLeagueModel(cfg *ranking.Config, b *ranking.Board) *leagueModel {
	unit := map[string]int64{"1ms": 1, "1s": 1000, "1min": 60000, "1h": 3600000, "": 1}[b.TieResolution("~lg")]
	return &leagueModel{b: b, shards: b.Shards, cal: cfg.Calendar, unitMS: unit, rounds: map[string]*leagueModelRound{}, last: map[string]string{}}
}

func (lm *leagueModel) better(x, y int64) bool {
	if lm.b.Order == ranking.Desc {
		return x > y
	}
	return x < y
}

func (lm *leagueModel) round(p ranking.Period) *leagueModelRound {
	r := lm.rounds[p.ID]
	if r == nil {
		r = &leagueModelRound{period: p, scores: map[string]*modelEntry{}, seats: map[[2]int]int{},
			placed: map[string]leagueSeat{}, decided: map[leagueSeat]bool{}, outcome: map[string]int{}}
		lm.rounds[p.ID] = r
	}
	return r
}

// apply feeds one event the store applied at Redis's now (ms) with event
// time t.
func (lm *leagueModel) apply(ev ranking.Event, t, now int64) {
	b, l := lm.b, lm.b.League
	p := lm.cal.PeriodAt(l.Cycle, time.UnixMilli(now))
	if t < p.Start.UnixMilli() || t >= p.End.UnixMilli() {
		return // a closed round (or one not begun) counts no event
	}
	r := lm.round(p)
	unit := floorDiv(t, lm.unitMS)
	old := r.scores[ev.Member]
	lm.decideLast(ev.Member, t, now)
	next := modelEntry{value: ev.Value, unit: unit, member: ev.Member}
	switch {
	case old == nil && b.Update == ranking.Increment && ev.Value == 0:
		return
	case old == nil:
	case b.Update == ranking.Increment:
		if ev.Value == 0 {
			return
		}
		next = *old
		next.value += ev.Value
		next.unit = max(old.unit, unit)
	case b.Update == ranking.Best:
		if !(lm.better(ev.Value, old.value) || (ev.Value == old.value && unit < old.unit && b.Ties == ranking.TiesFirst)) {
			return
		}
	}
	next.value = min(max(next.value, b.Min), b.Max)
	r.scores[ev.Member] = &next
	if old == nil {
		lm.place(r, ev.Member)
	}
}

// decideLast decides, as apply.lua does before a batch, the closed last
// cohort of a member new to the open round that an event at t (counted
// in that round, applied or refused by the views' bounds) names.
func (lm *leagueModel) decideLast(member string, t, now int64) {
	p := lm.cal.PeriodAt(lm.b.League.Cycle, time.UnixMilli(now))
	if t < p.Start.UnixMilli() || t >= p.End.UnixMilli() {
		return
	}
	if r := lm.rounds[p.ID]; r != nil && r.scores[member] != nil {
		return
	}
	if prev, ok := lm.last[member]; ok && prev != p.ID && lm.rounds[prev].period.End.UnixMilli() <= now {
		pr := lm.rounds[prev]
		lm.decide(pr, pr.placed[member])
	}
}

// place seats a member new to round r.
func (lm *leagueModel) place(r *leagueModelRound, member string) {
	l := lm.b.League
	level := 1
	if prev, ok := lm.last[member]; ok {
		pr := lm.rounds[prev]
		seat := pr.placed[member]
		lm.decide(pr, seat)
		level = min(max(seat.level+pr.outcome[member], 1), len(l.Tiers))
	}
	shard := ranking.ShardOf(member, lm.shards)
	at := [2]int{shard, level}
	r.seats[at]++
	r.placed[member] = leagueSeat{level, lm.number(shard, (r.seats[at]-1)/l.CohortSize+1)}
	lm.last[member] = r.period.ID
}

// number is the number shard's cohort c shows: the shards' cohorts
// interleave, shard 0's first, then shard 1's first, ...
func (lm *leagueModel) number(shard, c int) int { return (c-1)*lm.shards + shard + 1 }

// cohorts lists the numbers of a tier's cohorts in a round, increasing:
// those of every shard's seats, emptied ones too.
func (lm *leagueModel) cohorts(r *leagueModelRound, level int) (numbers []int, seats int) {
	for shard := range lm.shards {
		n := r.seats[[2]int{shard, level}]
		seats += n
		for c := 1; c <= (n+lm.b.League.CohortSize-1)/lm.b.League.CohortSize; c++ {
			numbers = append(numbers, lm.number(shard, c))
		}
	}
	slices.Sort(numbers)
	return numbers, seats
}

// rows is a cohort's standings in rank order, with ranks.
func (lm *leagueModel) rows(r *leagueModelRound, seat leagueSeat) ([]*modelEntry, []int64) {
	var out []*modelEntry
	for m, s := range r.placed {
		if s == seat {
			out = append(out, r.scores[m])
		}
	}
	slices.SortFunc(out, func(a, b *modelEntry) int {
		if a.value != b.value {
			if lm.better(a.value, b.value) {
				return -1
			}
			return 1
		}
		if lm.b.Ties == ranking.TiesFirst && a.unit != b.unit {
			return int(a.unit - b.unit)
		}
		return strings.Compare(a.member, b.member)
	})
	ranks := make([]int64, len(out))
	for i, e := range out {
		ranks[i] = int64(i + 1)
		if lm.b.Ties == ranking.TiesShared {
			n := int64(0)
			for _, o := range out {
				if lm.better(o.value, e.value) {
					n++
				}
			}
			ranks[i] = n + 1
		}
	}
	return out, ranks
}

// zones by brute force: promotion ranks 1..min(promote, n/2) below the
// top tier, demotion the last min(demote, n/2) ranks above the lowest.
func (lm *leagueModel) zone(level, n int, rank int64) (string, int) {
	l := lm.b.League
	p, d := 0, 0
	if level < len(l.Tiers) {
		p = min(l.Promote, n/2)
	}
	if level > 1 {
		d = min(l.Demote, n/2)
	}
	switch {
	case rank <= int64(p):
		return ranking.ZonePromotion, 1
	case rank > int64(n-d):
		return ranking.ZoneDemotion, -1
	}
	return ranking.ZoneSafe, 0
}

func (lm *leagueModel) decide(r *leagueModelRound, seat leagueSeat) {
	if r.decided[seat] {
		return
	}
	r.decided[seat] = true
	rows, ranks := lm.rows(r, seat)
	for i, e := range rows {
		_, r.outcome[e.member] = lm.zone(seat.level, len(rows), ranks[i])
	}
}

// decideClosed decides every cohort of every round closed at now, as
// DecideLeagues does.
func (lm *leagueModel) decideClosed(now int64) {
	for _, r := range lm.rounds {
		if r.period.End.UnixMilli() > now {
			continue
		}
		for _, s := range r.placed {
			lm.decide(r, s)
		}
	}
}

// remove forgets a member everywhere, as RemoveMember does.
func (lm *leagueModel) remove(member string) {
	for _, r := range lm.rounds {
		delete(r.scores, member)
		delete(r.placed, member)
		delete(r.outcome, member)
	}
	delete(lm.last, member)
}

// verify compares every round's overview, cohorts and members with the
// store's reads.
func (lm *leagueModel) verify(t *testing.T, s *ranking.Store) (cohorts int) {
	t.Helper()
	ctx := context.Background()
	l := lm.b.League
	outcomeName := map[int]string{1: ranking.OutcomePromoted, 0: ranking.OutcomeStayed, -1: ranking.OutcomeDemoted}
	for id, r := range lm.rounds {
		ov, err := s.League(ctx, lm.b.ID, id)
		if err != nil {
			t.Fatalf("%s round %s: %v", lm.b.ID, id, err)
		}
		for li, tier := range ov.Tiers {
			level := li + 1
			members := 0
			for _, seat := range r.placed {
				if seat.level == level {
					members++
				}
			}
			numbers, seats := lm.cohorts(r, level)
			if tier.Seats != seats || tier.Members != members || tier.NCohorts != len(numbers) {
				t.Fatalf("%s round %s tier %s: seats %d members %d cohorts %d; model %d, %d, %d", lm.b.ID, id, tier.ID, tier.Seats, tier.Members, tier.NCohorts, seats, members, len(numbers))
			}
			listed := make([]int, len(tier.Cohorts))
			for i, c := range tier.Cohorts {
				listed[i] = c.Number
			}
			if want := numbers[:min(len(numbers), ranking.MaxOverviewCohorts)]; !slices.Equal(listed, want) {
				t.Fatalf("%s round %s tier %s: cohorts listed %v; model %v", lm.b.ID, id, tier.ID, listed, want)
			}
			// A number no shard gave (past the last, or a gap left by a
			// shard with fewer cohorts) is no cohort.
			for c := 1; c <= len(numbers)+lm.shards; c++ {
				if slices.Contains(numbers, c) {
					continue
				}
				if _, err := s.Cohort(ctx, lm.b.ID, id, tier.ID, c); ranking.ErrorCode(err) != ranking.ENOTFOUND {
					t.Fatalf("%s round %s cohort %s %d: no shard has it, but read %v", lm.b.ID, id, tier.ID, c, err)
				}
			}
			for ci, c := range numbers {
				seat := leagueSeat{level, c}
				rows, ranks := lm.rows(r, seat)
				if ci < len(tier.Cohorts) && tier.Cohorts[ci].Members != len(rows) {
					t.Fatalf("%s round %s cohort %s %d: %d members in the overview; model %d", lm.b.ID, id, tier.ID, c, tier.Cohorts[ci].Members, len(rows))
				}
				if len(rows) > l.CohortSize {
					t.Fatalf("cohort over its size: %d", len(rows))
				}
				got, err := s.Cohort(ctx, lm.b.ID, id, tier.ID, c)
				if len(rows) == 0 {
					if ranking.ErrorCode(err) != ranking.ENOTFOUND {
						t.Fatalf("%s round %s cohort %s %d: emptied, but read %v", lm.b.ID, id, tier.ID, c, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s round %s cohort %s %d: %v", lm.b.ID, id, tier.ID, c, err)
				}
				cohorts++
				if got.Decided != r.decided[seat] {
					t.Fatalf("%s round %s cohort %s %d: decided %v, model %v", lm.b.ID, id, tier.ID, c, got.Decided, r.decided[seat])
				}
				var want, have []string
				for i, e := range rows {
					zone, _ := lm.zone(level, len(rows), ranks[i])
					o := ""
					if r.decided[seat] {
						// A decided member's zone is its outcome's, whatever
						// removals did to the ranks since.
						o = outcomeName[r.outcome[e.member]]
						zone = map[int]string{1: ranking.ZonePromotion, 0: ranking.ZoneSafe, -1: ranking.ZoneDemotion}[r.outcome[e.member]]
					}
					want = append(want, fmt.Sprintf("%s:%d:%d:%s:%s", e.member, ranks[i], e.value, zone, o))
				}
				for _, e := range got.Entries {
					have = append(have, fmt.Sprintf("%s:%d:%d:%s:%s", e.Member, e.Rank, e.Score, e.Zone, e.Outcome))
				}
				if !slices.Equal(want, have) {
					t.Fatalf("%s round %s cohort %s %d:\n got %v\nwant %v", lm.b.ID, id, tier.ID, c, have, want)
				}
			}
		}
		for m, seat := range r.placed {
			st, err := s.LeagueMember(ctx, lm.b.ID, id, m)
			if err != nil {
				t.Fatalf("%s round %s member %s: %v", lm.b.ID, id, m, err)
			}
			if st.Level != seat.level || st.Number != seat.cohort || st.Tier.ID != l.Tiers[seat.level-1].ID {
				t.Fatalf("%s round %s member %s: tier %d cohort %d, model %+v", lm.b.ID, id, m, st.Level, st.Number, seat)
			}
		}
	}
	return cohorts
}

// leagueModelConfig has a league board per combination the contract
// names: cohort sizes 5 and 30, 3 and 10 tiers, ties first and shared,
// asc and desc, increment and best; some show the cycle view, some not.
const leagueModelConfig = `
boards:
  - {id: l5-inc, order: desc, ties: first, min_score: -10, max_score: 40, views: [hour, all], lateness: 3h,
     league: {cycle: hour, tiers: [a, b, c], cohort_size: 5, promote: 2, demote: 2}}
  - {id: l30-best, update: best, order: asc, ties: shared, max_score: 20, views: [day], lateness: 3h,
     league: {cycle: hour, tiers: [t1, t2, t3, t4, t5, t6, t7, t8, t9, t10], cohort_size: 30, promote: 7, demote: 5}}
  - {id: l5-shared, order: desc, ties: shared, min_score: 0, max_score: 30, views: [hour, day], lateness: 3h,
     league: {cycle: hour, tiers: [t1, t2, t3, t4, t5, t6, t7, t8, t9, t10], cohort_size: 5, promote: 2, demote: 1}}
  - {id: l30-first, update: best, order: desc, ties: first, max_score: 20, views: [hour, all], lateness: 3h,
     league: {cycle: hour, tiers: [a, b, c], cohort_size: 30, promote: 10, demote: 15}}
`

// leagueWorkload plays rounds of random events into every league board of
// its store and model: members join, skip rounds and come back; some
// events are dated in the closed round before; a few members are removed.
type leagueWorkload struct {
	t        *testing.T
	rng      *rand.Rand
	store    *ranking.Store
	models   map[string]*leagueModel
	pool     []string
	removals bool // members are removed now and then
}

func newLeagueWorkload(t *testing.T, rdb redis.UniversalClient, clock func() time.Time, seed uint64) *leagueWorkload {
	return newLeagueWorkloadOf(t, rdb, clock, seed, leagueModelConfig)
}

// newLeagueWorkloadOf is newLeagueWorkload on the boards of config (ids as
// leagueModelConfig's); members are removed only when no board is sharded.
func newLeagueWorkloadOf(t *testing.T, rdb redis.UniversalClient, clock func() time.Time, seed uint64, config string) *leagueWorkload {
	cfg := MustConfig(t, config)
	w := &leagueWorkload{t: t, rng: rand.New(rand.NewPCG(seed, 26)), models: map[string]*leagueModel{}, removals: true}
	w.store = newStore(t, rdb, cfg, clock)
	for _, b := range cfg.Boards {
		w.models[b.ID] = newLeagueModel(cfg, b)
		if b.Sharded() {
			w.removals = false
		}
	}
	for i := range 90 {
		w.pool = append(w.pool, fmt.Sprintf("p%02d", i))
	}
	w.pool = append(w.pool, "Zed", "zed", "ünï")
	return w
}

// round plays n batches at now() with the members active this round.
func (w *leagueWorkload) round(batches int, now func() time.Time, step func()) {
	ctx := context.Background()
	r := w.rng
	var active []string
	for _, m := range w.pool {
		if r.IntN(10) < 6 {
			active = append(active, m)
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range w.models {
			if !yield(id) {
				return
			}
		}
	})
	for range batches {
		id := ids[r.IntN(len(ids))]
		lm := w.models[id]
		batch := make([]ranking.Event, 1+r.IntN(6))
		for i := range batch {
			ev := ranking.Event{Member: active[r.IntN(len(active))], Value: int64(r.IntN(7))}
			if lm.b.Update == ranking.Increment {
				ev.Value -= 2
			}
			if i > 0 && r.IntN(4) == 0 {
				// Late: in this round or the closed one before.
				ev.At = now().Add(-time.Duration(r.IntN(90)) * time.Minute).Truncate(time.Minute)
			}
			batch[i] = ev
		}
		res, err := w.store.Apply(ctx, id, batch, ranking.ApplyOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		redisNow := res[0].At.UnixMilli() // the first event has no at: Redis's now
		for i, ev := range batch {
			if res[i].Err != nil {
				if !res[i].At.IsZero() {
					// Refused by the views' bounds: nothing changed but the
					// member's last cohort, decided before the batch ran.
					lm.decideLast(ev.Member, res[i].At.UnixMilli(), redisNow)
				}
				continue
			}
			lm.apply(ev, res[i].At.UnixMilli(), redisNow)
		}
		if r.IntN(60) == 0 && w.removals {
			m := w.pool[r.IntN(len(w.pool))]
			if _, err := w.store.RemoveMember(ctx, id, m); err != nil {
				w.t.Fatal(err)
			}
			lm.remove(m)
		}
		step()
	}
}

// decide runs a recorder pass in the store and the model.
func (w *leagueWorkload) decide(now int64) {
	if _, err := w.store.DecideLeagues(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	for _, lm := range w.models {
		lm.decideClosed(now)
	}
}

func (w *leagueWorkload) verify() {
	total := 0
	for _, id := range []string{"l5-inc", "l30-best", "l5-shared", "l30-first"} {
		total += w.models[id].verify(w.t, w.store)
	}
	w.t.Logf("%d cohorts verified", total)
}

// TestLeagueModelMiniredis plays six hourly rounds and an empty one with
// the clock moved through each; the recorder runs after some rounds only,
// so both placements and the recorder decide cohorts.
func TestLeagueModelMiniredis(t *testing.T) {
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	w := newLeagueWorkload(t, rdb, func() time.Time { return clock }, 1)
	now := func() time.Time { return clock }
	// Hours 9 to 15 but 13: a round with no events, skipped by everyone.
	for i, hour := range []int{9, 10, 11, 12, 14, 15} {
		clock = time.Date(2026, 11, 2, hour, 0, 1, 0, time.UTC)
		m.SetTime(clock)
		w.round(150, now, func() {
			clock = clock.Add(time.Duration(w.rng.IntN(40)) * time.Second)
			m.SetTime(clock)
		})
		if i%2 == 1 {
			w.decide(clock.UnixMilli())
		}
	}
	w.verify()
	// Past the last round: the recorder decides what is left.
	clock = clock.Add(2 * time.Hour)
	m.SetTime(clock)
	w.decide(clock.UnixMilli())
	w.verify()
}

// TestLeagueModelRedis is a shorter run on a real Redis and on the
// cluster: placement and standings within the current round, and events
// dated in the round before, which count in no round.
func TestLeagueModelRedis(t *testing.T) {
	for _, tc := range []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.ClusterClient(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := tc.rdb(t)
			w := newLeagueWorkload(t, rdb, nil, 2)
			now := func() time.Time {
				n, err := w.store.Now(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			w.round(200, now, func() {})
			w.decide(now().UnixMilli())
			w.verify()
		})
	}
}

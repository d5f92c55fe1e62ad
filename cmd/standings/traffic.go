package main

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/standings/standings/ranking"
)

// Simulated traffic for the demo: a few hundred players with a skewed
// activity distribution, bursts and quiet spells, and values that follow
// each board's rules, so that a newcomer sees boards move.

// Demo pacing.
const (
	demoPlayers     = 240
	demoFlush       = 100 * time.Millisecond // events are sent in small batches
	demoBackfillCap = 8000                   // events written at start, all boards
)

var demoFirst = []string{
	"Ana", "Zoë", "Łukasz", "Kofi", "Priya", "João", "Emma", "Omar", "Yuki", "Lucas",
	"Sofia", "Mateo", "Aisha", "Noah", "Chloé", "Mehmet", "Ingrid", "Ravi", "Leila", "Tomás",
	"Hana", "Diego", "Amara", "Finn", "Mei", "Olga", "Kwame", "Sara", "Arjun", "Elif",
	"Nora", "Pedro", "Zanele", "Jonas", "Ayumi", "Rafael", "Freya", "Tariq", "Lina", "Bjørn",
}

var demoLast = []string{
	"Lima", "Müller", "Nowak", "Mensah", "Nair", "Silva", "Berg", "Haddad", "Tanaka", "Martin",
	"Rossi", "García", "Bello", "Smith", "Dubois", "Yılmaz", "Larsen", "Patel", "Haddadi", "Costa",
	"Sato", "Fernández", "Okafor", "Murphy", "Chen", "Ivanova", "Boateng", "Cohen", "Rao", "Demir",
}

// player is one simulated member.
type player struct {
	id, name string
	country  string  // its fixed value of the demo's segment "country"
	weight   float64 // share of the activity
	level    float64 // best/latest boards: where its values sit, in [0, 1]
}

// demo generates the traffic.
type demo struct {
	store  *ranking.Store
	cfg    *ranking.Config
	logger *slog.Logger
	rng    *rand.Rand
	now    func() time.Time // pacing only; periods are decided by Redis

	players []player
	cum     []float64 // cumulative weights, for picking players
	best    map[string]int64
	seeded  bool // history wrote the past: no backfill
}

func newDemo(store *ranking.Store, cfg *ranking.Config, logger *slog.Logger, seed uint64) *demo {
	d := &demo{store: store, cfg: cfg, logger: logger, rng: rand.New(rand.NewPCG(seed, 0x5eed)), now: time.Now, best: map[string]int64{}}
	seen := map[string]bool{}
	for len(d.players) < demoPlayers {
		name := demoFirst[d.rng.IntN(len(demoFirst))] + " " + demoLast[d.rng.IntN(len(demoLast))]
		id := strings.ReplaceAll(strings.ToLower(name), " ", "-")
		if seen[id] {
			continue
		}
		seen[id] = true
		i := len(d.players)
		d.players = append(d.players, player{id: id, name: name, country: demoCountries[d.rng.IntN(len(demoCountries))],
			weight: 1 / math.Pow(float64(i+1), 0.9), level: d.rng.Float64()})
	}
	total := 0.0
	for _, p := range d.players {
		total += p.weight
		d.cum = append(d.cum, total)
	}
	return d
}

// pick chooses a player by activity weight.
func (d *demo) pick() *player {
	x := d.rng.Float64() * d.cum[len(d.cum)-1]
	lo, hi := 0, len(d.cum)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if d.cum[mid] < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return &d.players[lo]
}

// event makes one valid event for board b (At left zero: Redis's now).
func (d *demo) event(b *ranking.Board) ranking.Event {
	p := d.pick()
	unit := int64(math.Pow10(b.Decimals))
	span := float64(b.Max - b.Min)
	var v int64
	switch b.Update {
	case ranking.Increment:
		v = (1 + d.rng.Int64N(10)) * unit
		if d.rng.IntN(20) == 0 {
			v = (25 + d.rng.Int64N(75)) * unit // a big day
		}
		// Stay far inside the bounds whatever the totals: increments are
		// small against the range, and a board near its max gets none.
		v = min(v, max((b.Max-b.Min)/100000, 1))
	case ranking.Best:
		// Attempts scatter around the player's level in the lower part of
		// the range; better is lower for asc boards.
		center := 0.05 + 0.25*p.level
		x := center * (1 + d.rng.NormFloat64()*0.05)
		if b.Order == ranking.Desc {
			x = 1 - x
		}
		v = b.Min + int64(math.Max(0, math.Min(1, x))*span)
		if d.rng.IntN(10) == 0 { // players slowly improve
			p.level = math.Max(0, p.level-0.01)
		}
	case ranking.Latest:
		// A rating drifting around the player's level.
		p.level = math.Max(0, math.Min(1, p.level+d.rng.NormFloat64()*0.01))
		v = b.Min + int64(p.level*span)
	}
	v = max(b.Min, min(b.Max, v))
	ev := ranking.Event{Member: p.id, Name: p.name, Value: v}
	if b.HasSegment("country") {
		ev.Segments = map[string]string{"country": p.country}
	}
	return ev
}

// demoCountries are the values of the demo's segment "country".
var demoCountries = []string{"FR", "DE", "CN", "JP", "BR", "IN", "US", "UA"}

// Run backfills history, then writes live traffic until ctx ends. Errors
// never stop it: Redis may come and go, and the demo carries on.
func (d *demo) Run(ctx context.Context) {
	d.backfill(ctx)
	burst := false
	phaseEnd := d.now()
	var batch map[string][]ranking.Event
	flush := time.NewTicker(demoFlush)
	defer flush.Stop()
	var lastErr time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush.C:
		}
		if now := d.now(); now.After(phaseEnd) {
			burst = !burst
			if burst {
				phaseEnd = now.Add(time.Duration(2+d.rng.IntN(6)) * time.Second)
			} else {
				phaseEnd = now.Add(time.Duration(3+d.rng.IntN(8)) * time.Second)
			}
		}
		rate := 3.0 // events/s when quiet
		if burst {
			rate = 35
		}
		n := d.poisson(rate * demoFlush.Seconds())
		batch = map[string][]ranking.Event{}
		for range n {
			b := d.cfg.Boards[d.rng.IntN(len(d.cfg.Boards))]
			batch[b.ID] = append(batch[b.ID], d.event(b))
		}
		for board, evs := range batch {
			if _, err := d.store.Apply(ctx, board, evs, ranking.ApplyOptions{NoRanks: true}); err != nil && ctx.Err() == nil {
				if time.Since(lastErr) > 30*time.Second {
					lastErr = time.Now()
					d.logger.Warn("demo traffic: write failed; retrying", "board", board, "err", err)
				}
				select { // back off while Redis is away
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		}
	}
}

// poisson draws a Poisson-distributed count with mean lambda (small).
func (d *demo) poisson(lambda float64) int {
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= d.rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// backfill writes past events with explicit times, as far back as each
// board's lateness allows, so boards start with history: previous periods
// to browse and rank-card charts with a shape.
func (d *demo) backfill(ctx context.Context) {
	if d.seeded {
		d.logger.Info("demo traffic on", "live_events_per_s", "3 quiet, 35 in bursts")
		return
	}
	now, err := d.store.Now(ctx)
	if err != nil {
		d.logger.Warn("demo traffic: no backfill", "err", err)
		return
	}
	var hours float64
	for _, b := range d.cfg.Boards {
		hours += math.Max(0, (b.Lateness - 2*time.Minute).Hours())
	}
	perHour := math.Min(40, demoBackfillCap/math.Max(hours, 1))
	written := 0
	for _, b := range d.cfg.Boards {
		reach := b.Lateness - 2*time.Minute // margin: the clock moves while we write
		if reach <= 0 {
			continue
		}
		n := int(reach.Hours() * perHour)
		events := make([]ranking.Event, 0, n)
		for i := range n {
			ev := d.event(b)
			// Oldest first, so best/latest boards evolve forwards in time.
			ev.At = now.Add(-reach + time.Duration(float64(reach)*float64(i)/float64(max(n, 1))))
			events = append(events, ev)
		}
		for len(events) > 0 && ctx.Err() == nil {
			k := min(len(events), ranking.MaxBatch)
			if _, err := d.store.Apply(ctx, b.ID, events[:k], ranking.ApplyOptions{NoRanks: true}); err != nil {
				d.logger.Warn("demo traffic: backfill stopped", "board", b.ID, "err", err)
				break
			}
			written += k
			events = events[k:]
		}
	}
	d.logger.Info("demo traffic on", "backfilled_events", written, "live_events_per_s", "3 quiet, 35 in bursts")
}

// Demo history: on the embedded Redis the demo travels its clock back and
// writes the past through the normal write path, each stretch of time
// while its periods are still open, recording results as they become
// final, so that a newcomer sees last week's podium, 7-day movement,
// results, recaps and winners in the first minute. A step is under every
// demo board's lateness, and two steps a day: a step's events are written
// at its end, and a league round counts only events written while it is
// open, so with one step a day ending at midnight (a start in the hour
// after it) no round would have had a player.
const (
	demoHistory     = 9 * 7 * 24 * time.Hour // nine weeks: two month ends, several finished weeks
	demoHistoryStep = 12 * time.Hour         // see below
	demoRecent      = 50 * time.Hour         // the busier recent past
	demoOldPerHour  = 0.5                    // events an hour per board, before demoRecent
	demoNewPerHour  = 8                      // and within it
)

// Seed writes the demo's history when the store's Redis is the embedded
// one; run it before anything else uses the store. A failure leaves a
// shorter history and is logged: the demo carries on.
func (d *demo) Seed(ctx context.Context) {
	began := time.Now()
	n, ok, err := d.history(ctx)
	if err != nil {
		d.logger.Warn("demo traffic: history stopped early", "err", err)
	}
	if ok {
		d.seeded = true
		d.logger.Info("demo history written", "events", n, "weeks", int(demoHistory.Hours()/24/7), "took", time.Since(began).Round(time.Millisecond))
	}
}

// history writes the demo's past up to Redis's now and returns the number
// of events written; ok is false when the store's Redis is not the
// embedded one (its clock cannot travel: Run's backfill reaches back as
// far as lateness allows instead). Nothing else may use the store
// meanwhile; the clock is back on the wall's when it returns.
func (d *demo) history(ctx context.Context) (written int, ok bool, err error) {
	end, err := d.store.Now(ctx)
	if err != nil {
		return 0, false, err
	}
	start := end.Add(-demoHistory).Truncate(time.Hour)
	if ok, err := d.store.TravelEmbedded(ctx, start); !ok || err != nil {
		return 0, ok, err
	}
	defer func() {
		if _, backErr := d.store.TravelEmbedded(context.WithoutCancel(ctx), time.Time{}); err == nil {
			err = backErr
		}
	}()
	for t := start; t.Before(end) && ctx.Err() == nil; {
		next := t.Add(demoHistoryStep)
		if next.After(end) {
			next = end
		}
		if _, err := d.store.TravelEmbedded(ctx, next); err != nil {
			return written, true, err
		}
		perHour := demoOldPerHour
		if end.Sub(next) < demoRecent {
			perHour = demoNewPerHour
		}
		n := int(next.Sub(t).Hours() * perHour)
		for _, b := range d.cfg.Boards {
			events := make([]ranking.Event, 0, n)
			for i := range n {
				ev := d.event(b)
				// Oldest first, so best/latest boards evolve forwards in time.
				ev.At = t.Add(time.Duration(float64(next.Sub(t)) * float64(i+1) / float64(n+1)))
				events = append(events, ev)
			}
			for len(events) > 0 {
				k := min(len(events), ranking.MaxBatch)
				if _, err := d.store.Apply(ctx, b.ID, events[:k], ranking.ApplyOptions{NoRanks: true}); err != nil {
					return written, true, err
				}
				written += k
				events = events[k:]
			}
		}
		// Once a simulated day: the results that became final.
		if _, err := d.store.RecordResults(ctx); err != nil {
			return written, true, err
		}
		// and the league groups whose round ended, as the recorder would.
		if _, err := d.store.DecideLeagues(ctx); err != nil {
			return written, true, err
		}
		t = next
	}
	return written, true, nil
}

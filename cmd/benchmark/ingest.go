package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

const (
	benchBoard  = "points"
	benchConfig = "boards: [{id: points, views: [hour, day, week, month, all]}, {id: pseg, segments: [country, team], views: [hour, day, week, month, all]}, {id: pseg2, segments: [country, team], views: [hour, day, week, month, all]}]\n"
	// The boards the segment comparison writes to, without and with
	// segment values: one each, as an event without segment values ends a
	// member's purity (see apply.lua) and the two take turns on one data set.
	segBoard     = "pseg"
	segBoard2    = "pseg2"
	benchPrefix  = "bench:"
	ingestBatch  = 100     // events per Apply call and per pipeline
	ingestIDs    = 100_000 // distinct members the events are drawn from
	maxEventVal  = 10      // event values are 1..maxEventVal
	casMaxTries  = 1000    // read+CAS attempts per view before giving up
	casTimeScale = 1e13    // packed = score*casTimeScale + (casTimeScale - ms)
)

// benchViews are the board's views, in config order.
var benchViews = []string{"hour", "day", "week", "month", "all"}

// contender is one way of writing the ingest events.
type contender struct {
	name    string // BENCH <name>_events_per_s
	short   string // RATIO ingest_vs_<short>
	desc    string
	newWork func(g *eventGen) work
}

// runIngest measures Store.Apply against plain Redis write patterns, all
// with the same writers and the same event stream.
func runIngest(ctx context.Context, e *env) error {
	store, err := newBenchStore(ctx, e)
	if err != nil {
		return err
	}
	defer store.Close()
	members := memberIDs(ingestIDs)
	var casRetries atomic.Int64
	contenders := []contender{
		{"ingest", "ingest", "Store.Apply without ranks, 100 events per script call, exact tie-breaks and overtakes", applyWork(store, benchBoard, ranking.ApplyOptions{NoRanks: true})},
		{"ingest_ranked", "ingest_ranked", "Store.Apply, 100 events per script call, exact tie-breaks and ranks", applyWork(store, benchBoard, ranking.ApplyOptions{})},
		{"raw_zincrby", "raw", "pipelined ZINCRBY x5 per event, 100 events per round trip (no atomicity, ties or ranks)", rawWork(e.rdb)},
		{"multi", "multi", "MULTI, ZINCRBY x5, EXEC per event, one round trip per event", multiWork(e.rdb)},
		{"multi_pipelined", "multi_pipelined", "100 MULTI/ZINCRBY x5/EXEC blocks per round trip", multiPipelinedWork(e.rdb)},
		{"cas", "cas", "per view: ZSCORE, then a compare-and-set script; retried on conflict", casWork(e.rdb, &casRetries)},
		{"exact_floor", "exact_floor", "the least Redis work of an exact atomic ingest: one script per 100 events, ZMSCORE and one ZADD per view of the board's codes, nothing else (see floor.go)", floorWork(e.rdb, store, benchBoard, "", 0)},
		{"incr_floor", "incr_floor", "the other exact design's floor: one ZINCRBY per view and event from the member's last event time, nothing read from the views (see floor.go)", incrFloorWork(e.rdb)},
	}
	// The contenders take turns on one data set (see env.runTurns), so
	// their ratios compare moments of the same machine.
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("ingest: flushall: %w", err)
	}
	cs := make([]turnContender, len(contenders))
	for i, c := range contenders {
		cs[i] = turnContender{name: c.name, desc: c.desc}
		for w := range e.opts.writers {
			cs[i].works = append(cs[i].works, c.newWork(newEventGen(members, uint64(w))))
		}
	}
	// Single writes: Store.Write, one event per call and ranks answered, as
	// the web API's POST /scores sends them, from singleWriters callers at
	// once, grouped into shared script calls (writeGroup) and each on its
	// own (Options.SoloWrites), on the same board and data set.
	solo, err := newSoloBenchStore(ctx, e)
	if err != nil {
		return err
	}
	defer solo.Close()
	for _, c := range []struct {
		name, desc string
		store      *ranking.Store
	}{
		{"single_write", fmt.Sprintf("Store.Write, one event per call, ranks answered, %d callers at once; concurrent writes share script calls", singleWriters(e)), store},
		{"single_write_solo", "the same with Options.SoloWrites: every write in its own script call", solo},
	} {
		tc := turnContender{name: c.name, desc: c.desc}
		for w := range singleWriters(e) {
			tc.works = append(tc.works, singleWork(c.store, benchBoard)(newEventGen(members, uint64(100+w))))
		}
		cs = append(cs, tc)
	}
	totals, err := e.runTurns(ctx, cs, turnRounds, 2*e.opts.duration/turnRounds)
	if err != nil {
		return err
	}
	for _, name := range []string{"single_write", "single_write_solo"} {
		m := totals[name]
		lat := sortedCopy(m.latencies)
		e.out.bench(name+"_events_per_s", m.eventsPerSecond(), "events/s")
		e.out.bench(name+"_redis_us_per_event", m.redisUSPerEvent(), "us")
		e.out.bench(name+"_p50_ms", ms(percentile(lat, 50)), "ms")
		e.out.bench(name+"_p99_ms", ms(percentile(lat, 99)), "ms")
	}
	e.out.ratio("redis_cpu_single_write_vs_solo", divide(totals["single_write"].redisUSPerEvent(), totals["single_write_solo"].redisUSPerEvent()))
	rates, cpu := map[string]float64{}, map[string]float64{}
	for _, c := range contenders {
		rates[c.name] = totals[c.name].eventsPerSecond()
		cpu[c.name] = totals[c.name].redisUSPerEvent()
	}
	ingestLat := totals["ingest"].latencies
	for _, c := range contenders {
		e.out.bench(c.name+"_events_per_s", rates[c.name], "events/s")
		e.out.bench(c.name+"_redis_us_per_event", cpu[c.name], "us")
		if c.name == "ingest" {
			lat := sortedCopy(ingestLat)
			e.out.bench("ingest_call_p50_ms", ms(percentile(lat, 50)), "ms")
			e.out.bench("ingest_call_p99_ms", ms(percentile(lat, 99)), "ms")
		}
	}
	e.logf("  cas retries (warm-up included): %d", casRetries.Load())
	for _, c := range contenders[2:] {
		e.out.ratio("ingest_vs_"+c.short, divide(rates["ingest"], rates[c.name]))
	}
	// Redis CPU per event bounds a dedicated Redis and is far steadier
	// than events/s on a shared machine; lower is better.
	e.out.ratio("redis_cpu_ingest_vs_multi_pipelined", divide(cpu["ingest"], cpu["multi_pipelined"]))
	e.out.ratio("redis_cpu_ingest_vs_raw", divide(cpu["ingest"], cpu["raw_zincrby"]))
	// The floor under any exact atomic ingest, against plain MULTI/EXEC:
	// above 1.0, no exact script can match MULTI/ZINCRBY's Redis CPU.
	e.out.ratio("redis_cpu_exact_floor_vs_multi_pipelined", divide(cpu["exact_floor"], cpu["multi_pipelined"]))
	e.out.ratio("redis_cpu_incr_floor_vs_multi_pipelined", divide(cpu["incr_floor"], cpu["multi_pipelined"]))
	e.out.ratio("redis_cpu_ingest_vs_exact_floor", divide(cpu["ingest"], cpu["exact_floor"]))
	e.logf("  target: RATIO redis_cpu_ingest_vs_exact_floor <= 1.2 (stretch 1.1)")
	return runSegmentIngest(ctx, e, store, members)
}

// Segment values of the segment comparison: a member's country and team
// are fixed, drawn from these many values.
const (
	benchCountries = 20
	benchTeams     = 50
)

// turnRounds is how many slices each contender of the ingest and segment
// comparisons takes, in turns (see env.runTurns). On a shared machine one
// slice's ratio to the next contender's moves by a fifth either way
// (ingest against exact_floor: 1.08 to 1.48 over 12 slices of one run),
// so a ratio is the mean of many short slices rather than a few long ones.
const turnRounds = 20

// runSegmentIngest compares events/s into a board with segments, without
// and with 2 segment values per event (each a segment board of 5 views
// updated in the same script call), each beside the floor script with the
// same events. The ratios divide rates measured at different moments of a
// shared machine, so the four contenders take turns in turnRounds
// slices (2 x -duration each in all, as the pages suite does), on one
// data set that grows through the turns: a slow spell, or a larger set,
// weighs on all of them alike. Each writer keeps its event stream across
// its slices.
func runSegmentIngest(ctx context.Context, e *env, store *ranking.Store, members []string) error {
	var cs []turnContender
	for _, nseg := range []int{0, 2} {
		for _, floor := range []bool{false, true} {
			c := turnContender{
				name: fmt.Sprintf("ingest_%dseg", nseg),
				desc: fmt.Sprintf("Store.Apply, %d events per call, %d segment values per event (country of %d, team of %d)", ingestBatch, nseg, benchCountries, benchTeams),
			}
			board := segBoard
			if nseg > 0 {
				board = segBoard2
			}
			newWork := segmentWork(store, board, nseg)
			if floor {
				c.name = fmt.Sprintf("floor_%dseg", nseg)
				c.desc = "the floor script (see floor.go), the same events and segment values"
				newWork = floorWork(e.rdb, store, board, fmt.Sprintf("floor%d:", nseg), nseg)
			}
			for w := range e.opts.writers {
				c.works = append(c.works, newWork(newEventGen(members, uint64(w))))
			}
			cs = append(cs, c)
		}
	}
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("segments: flushall: %w", err)
	}
	totals, err := e.runTurns(ctx, cs, turnRounds, 2*e.opts.duration/turnRounds)
	if err != nil {
		return err
	}
	rates, cpu := map[string]float64{}, map[string]float64{}
	for _, c := range cs {
		rates[c.name] = totals[c.name].eventsPerSecond()
		cpu[c.name] = totals[c.name].redisUSPerEvent()
	}
	e.out.bench("ingest_0seg_events_per_s", rates["ingest_0seg"], "events/s")
	e.out.bench("ingest_2seg_events_per_s", rates["ingest_2seg"], "events/s")
	e.out.bench("ingest_0seg_redis_us_per_event", cpu["ingest_0seg"], "us")
	e.out.bench("ingest_2seg_redis_us_per_event", cpu["ingest_2seg"], "us")
	e.out.bench("floor_0seg_redis_us_per_event", cpu["floor_0seg"], "us")
	e.out.bench("floor_2seg_redis_us_per_event", cpu["floor_2seg"], "us")
	e.out.ratio("redis_cpu_0seg_vs_2seg", divide(cpu["ingest_0seg"], cpu["ingest_2seg"]))
	e.logf("  target: RATIO ingest_2seg_vs_0seg >= 0.85 x ingest_2seg_vs_0seg_ceiling")
	e.out.ratio("ingest_2seg_vs_0seg", divide(rates["ingest_2seg"], rates["ingest_0seg"]))
	// The ceiling: 2 segment values add at least the floor script's extra
	// Redis CPU (10 more sorted-set writes per event, nothing read) to
	// whatever an event without segments costs, so with Store.Apply's cost
	// without segments no implementation exceeds this ratio.
	extra := cpu["floor_2seg"] - cpu["floor_0seg"]
	e.out.bench("segment_writes_floor_redis_us_per_event", extra, "us")
	e.out.ratio("ingest_2seg_vs_0seg_ceiling", divide(cpu["ingest_0seg"], cpu["ingest_0seg"]+extra))
	e.out.ratio("floor_2seg_vs_0seg", divide(rates["floor_2seg"], rates["floor_0seg"]))
	return nil
}

// segmentWork is applyWork with nseg (0..2) segment values per event; a
// member's values are fixed (its country and team), as in real traffic.
func segmentWork(store *ranking.Store, board string, nseg int) func(*eventGen) work {
	return func(g *eventGen) work {
		events := make([]ranking.Event, ingestBatch)
		return func(ctx context.Context) (int, error) {
			for i := range events {
				k := g.rnd.IntN(len(g.members))
				ev := ranking.Event{Member: g.members[k], Value: 1 + g.rnd.Int64N(maxEventVal)}
				if nseg > 0 {
					ev.Segments = map[string]string{"country": "c" + strconv.Itoa(k%benchCountries)}
					if nseg > 1 {
						ev.Segments["team"] = "t" + strconv.Itoa(k%benchTeams)
					}
				}
				events[i] = ev
			}
			res, err := store.Apply(ctx, board, events, ranking.ApplyOptions{})
			if err != nil {
				return 0, err
			}
			for _, r := range res {
				if r.Err != nil {
					return 0, fmt.Errorf("event for %s refused: %w", r.Member, r.Err)
				}
			}
			return len(events), nil
		}
	}
}

// newBenchStore opens a Store for the benchmark board, with a pool for the
// writers plus a spare.
func newBenchStore(ctx context.Context, e *env) (*ranking.Store, error) {
	cfg, err := ranking.ParseConfig([]byte(benchConfig))
	if err != nil {
		return nil, fmt.Errorf("benchmark board: %w", err)
	}
	return e.openStore(ctx, cfg, benchPrefix, e.opts.writers+2, "")
}

// singleWriters is how many callers the single-write contenders run: a
// web server's concurrent requests, each with one event.
func singleWriters(e *env) int { return 4 * e.opts.writers }

// newSoloBenchStore is newBenchStore's store (same board and keys) with
// Options.SoloWrites.
func newSoloBenchStore(ctx context.Context, e *env) (*ranking.Store, error) {
	cfg, err := ranking.ParseConfig([]byte(benchConfig))
	if err != nil {
		return nil, fmt.Errorf("benchmark board: %w", err)
	}
	return e.openStoreWith(ctx, cfg, ranking.Options{Prefix: benchPrefix, SoloWrites: true}, singleWriters(e)+2, "")
}

// singleWork writes one event per call with Store.Write.
func singleWork(store *ranking.Store, board string) func(*eventGen) work {
	return func(g *eventGen) work {
		return func(ctx context.Context) (int, error) {
			m, v := g.next()
			if _, err := store.Write(ctx, board, ranking.Event{Member: m, Value: v}); err != nil {
				return 0, err
			}
			return 1, nil
		}
	}
}

// memberIDs returns n member ids u000000, u000001, ...
func memberIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%06d", i)
	}
	return ids
}

// eventGen draws events: a random member and a value in 1..maxEventVal.
type eventGen struct {
	rnd     *rand.Rand
	members []string
}

func newEventGen(members []string, seed uint64) *eventGen {
	return &eventGen{rnd: rand.New(rand.NewPCG(seed, 0x5eed)), members: members}
}

func (g *eventGen) next() (member string, value int64) {
	return g.members[g.rnd.IntN(len(g.members))], 1 + g.rnd.Int64N(maxEventVal)
}

// applyWork sends ingestBatch events per Store.Apply call to board.
func applyWork(store *ranking.Store, board string, opts ranking.ApplyOptions) func(*eventGen) work {
	return func(g *eventGen) work {
		events := make([]ranking.Event, ingestBatch)
		return func(ctx context.Context) (int, error) {
			for i := range events {
				m, v := g.next()
				events[i] = ranking.Event{Member: m, Value: v}
			}
			res, err := store.Apply(ctx, board, events, opts)
			if err != nil {
				return 0, err
			}
			for _, r := range res {
				if r.Err != nil {
					return 0, fmt.Errorf("event for %s refused: %w", r.Member, r.Err)
				}
			}
			return len(events), nil
		}
	}
}

// rawWork pipelines ZINCRBY on the five view keys for ingestBatch events.
func rawWork(rdb *redis.Client) func(*eventGen) work {
	return func(g *eventGen) work {
		keys := newViewKeys("raw:")
		return func(ctx context.Context) (int, error) {
			ks := keys.at(time.Now())
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for range ingestBatch {
					m, v := g.next()
					for _, k := range ks {
						p.ZIncrBy(ctx, k, float64(v), m)
					}
				}
				return nil
			})
			return ingestBatch, err
		}
	}
}

// multiWork sends one MULTI/EXEC transaction per event.
func multiWork(rdb *redis.Client) func(*eventGen) work {
	return func(g *eventGen) work {
		keys := newViewKeys("multi:")
		return func(ctx context.Context) (int, error) {
			ks := keys.at(time.Now())
			m, v := g.next()
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range ks {
					p.ZIncrBy(ctx, k, float64(v), m)
				}
				return nil
			})
			return 1, err
		}
	}
}

// multiPipelinedWork sends ingestBatch MULTI/EXEC blocks in one pipeline.
// The commands go through Do because inside MULTI every reply is QUEUED.
func multiPipelinedWork(rdb *redis.Client) func(*eventGen) work {
	return func(g *eventGen) work {
		keys := newViewKeys("multip:")
		return func(ctx context.Context) (int, error) {
			ks := keys.at(time.Now())
			cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for range ingestBatch {
					m, v := g.next()
					p.Do(ctx, "multi")
					for _, k := range ks {
						p.Do(ctx, "zincrby", k, v, m)
					}
					p.Do(ctx, "exec")
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
			if want := ingestBatch * (len(ks) + 2); len(cmds) != want {
				return 0, fmt.Errorf("multi_pipelined: %d replies, want %d", len(cmds), want)
			}
			return ingestBatch, nil
		}
	}
}

// casScript writes ARGV[3] as member ARGV[1]'s score in KEYS[1] only if the
// score is still ARGV[2] ("" = absent). Scores are compared as numbers.
var casScript = redis.NewScript(`
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
local same
if ARGV[2] == '' then same = (cur == false) else same = (cur ~= false and tonumber(cur) == tonumber(ARGV[2])) end
if not same then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`)

// casWork is the optimistic-lock pattern: for each view in turn, read the
// packed score, compute the new one in Go, compare-and-set it, retry on a
// conflict.
func casWork(rdb *redis.Client, retries *atomic.Int64) func(*eventGen) work {
	return func(g *eventGen) work {
		keys := newViewKeys("cas:")
		return func(ctx context.Context) (int, error) {
			ks := keys.at(time.Now())
			m, v := g.next()
			for _, k := range ks {
				if err := casAdd(ctx, rdb, k, m, v, retries); err != nil {
					return 0, err
				}
			}
			return 1, nil
		}
	}
}

func casAdd(ctx context.Context, rdb *redis.Client, key, member string, value int64, retries *atomic.Int64) error {
	for range casMaxTries {
		old, err := rdb.ZScore(ctx, key, member).Result()
		oldArg := ""
		var score int64
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		default:
			oldArg = strconv.FormatFloat(old, 'f', -1, 64)
			score = int64(math.Floor(old / casTimeScale))
		}
		packed := float64(score+value)*casTimeScale + (casTimeScale - float64(time.Now().UnixMilli()))
		ok, err := casScript.Run(ctx, rdb, []string{key}, member, oldArg, strconv.FormatFloat(packed, 'f', -1, 64)).Int()
		if err != nil {
			return err
		}
		if ok == 1 {
			return nil
		}
		retries.Add(1)
	}
	return fmt.Errorf("cas: %s in %s still conflicting after %d attempts", member, key, casMaxTries)
}

// viewKeys names one sorted set per view and current period (UTC), e.g.
// raw:hour:2026-11-22T13, and keeps the periods' starts (the floors count
// tie units from them), recomputed when the hour changes.
type viewKeys struct {
	prefix string
	hour   time.Time
	keys   []string
	starts []time.Time // per view; the all view's: the Unix epoch
}

func newViewKeys(prefix string) *viewKeys { return &viewKeys{prefix: prefix} }

func (vk *viewKeys) at(now time.Time) []string {
	h := now.UTC().Truncate(time.Hour)
	if vk.keys != nil && h.Equal(vk.hour) {
		return vk.keys
	}
	day := time.Date(h.Year(), h.Month(), h.Day(), 0, 0, 0, 0, time.UTC)
	monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	vk.hour = h
	vk.starts = []time.Time{h, day, monday, time.Date(h.Year(), h.Month(), 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0)}
	vk.keys = []string{
		vk.prefix + "hour:" + h.Format("2006-01-02T15"),
		vk.prefix + "day:" + day.Format("2006-01-02"),
		vk.prefix + "week:" + monday.Format("2006-01-02"),
		vk.prefix + "month:" + h.Format("2006-01"),
		vk.prefix + "all:all",
	}
	return vk.keys
}

// tieUnits are the tie-break units of the bench board's views, in
// benchViews order, as its codec picks them (hour: 1ms; day, week, month:
// 1s; all: 1h, the finest that fits an all-time view's codes in 53 bits).
var tieUnits = sync.OnceValue(func() []time.Duration {
	cfg, err := ranking.ParseConfig([]byte(benchConfig))
	if err != nil {
		panic(err)
	}
	b, _ := cfg.Board(benchBoard)
	units := make([]time.Duration, len(benchViews))
	for i, v := range benchViews {
		d, ok := map[string]time.Duration{"1ms": time.Millisecond, "1s": time.Second, "1min": time.Minute, "1h": time.Hour}[b.TieResolution(v)]
		if !ok {
			panic("bench board view " + v + " has tie unit " + b.TieResolution(v))
		}
		units[i] = d
	}
	return units
})

// addCommandStats adds the calls of b to a, averaging each command's
// time per call over both.
func addCommandStats(a, b []commandStat) []commandStat {
	for _, x := range b {
		i := slices.IndexFunc(a, func(y commandStat) bool { return y.name == x.name })
		if i < 0 {
			a = append(a, x)
			continue
		}
		calls := a[i].calls + x.calls
		a[i].usecPerCall = divide(a[i].usecPerCall*float64(a[i].calls)+x.usecPerCall*float64(x.calls), float64(calls))
		a[i].calls = calls
	}
	slices.SortFunc(a, func(x, y commandStat) int {
		return cmp.Or(cmp.Compare(y.calls, x.calls), strings.Compare(x.name, y.name))
	})
	return a
}

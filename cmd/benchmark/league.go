package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

const (
	leagueBoard      = "lg"
	leaguePlainBoard = "lgplain"
	leagueCloseMax   = 100_000 // members of the round that closes (fewer with a smaller -members)
	leagueClientName = "standings-bench-league"
	leagueSlowlogLen = 1_000_000
	leagueMaxPasses  = 20 // recorder passes before the round must be final
	// The closing store reads the calendar one hour ahead of the filling
	// store: real Redis has no clock to move, so the round just filled is
	// over by the closing store's calendar while Redis's clock stays put.
	leagueAheadZone = "Etc/GMT-1"
)

// leagueConfig is two boards alike but for the league, so the ingest
// comparison shows what the league adds to an event; the close measurement
// uses the league board with a cycle of an hour.
func leagueConfig(cycle, timezone string) string {
	tz := ""
	if timezone != "" {
		tz = "timezone: " + timezone + "\n"
	}
	const views = "[hour, day, week, month, all]"
	return tz + "boards:\n" +
		"  - {id: " + leaguePlainBoard + ", views: " + views + "}\n" +
		"  - {id: " + leagueBoard + ", views: " + views + ", league: {cycle: " + cycle +
		", tiers: [bronze, silver, gold, diamond], cohort_size: 30, promote: 7, demote: 5}}\n"
}

// runLeague compares events/s and Redis CPU per event into a board with a
// league and the same board without, then measures the longest single
// Redis call while a round of up to 100,000 members closes.
func runLeague(ctx context.Context, e *env) error {
	cfg, err := ranking.ParseConfig([]byte(leagueConfig("day", "")))
	if err != nil {
		return fmt.Errorf("league boards: %w", err)
	}
	store, err := e.openStore(ctx, cfg, benchPrefix, e.opts.writers+2, "")
	if err != nil {
		return err
	}
	defer store.Close()
	members := memberIDs(ingestIDs)
	// Two rounds, the second in reverse order, best of each (as the other
	// comparisons do); each writer draws the same events for either board.
	rates, cpu := map[string]float64{}, map[string]float64{}
	for _, board := range []string{leagueBoard, leaguePlainBoard, leaguePlainBoard, leagueBoard} {
		name := "ingest_plain"
		if board == leagueBoard {
			name = "ingest_league"
		}
		e.logf("- %s: Store.Apply, %d events per call, 5 views%s", name, ingestBatch,
			map[bool]string{true: " and a daily league (4 tiers, cohorts of 30)"}[board == leagueBoard])
		newWork := applyWork(store, board, ranking.ApplyOptions{})
		m, err := e.measure(ctx, name, func(writer int) work {
			return newWork(newEventGen(members, uint64(writer)))
		})
		if err != nil {
			return err
		}
		rates[name] = max(rates[name], m.eventsPerSecond())
		if u := m.redisUSPerEvent(); cpu[name] == 0 || u < cpu[name] {
			cpu[name] = u
		}
	}
	for _, name := range []string{"ingest_league", "ingest_plain"} {
		e.out.bench(name+"_events_per_s", rates[name], "events/s")
		e.out.bench(name+"_redis_us_per_event", cpu[name], "us")
	}
	e.logf("  target: RATIO ingest_league_vs_plain >= 0.7")
	e.out.ratio("ingest_league_vs_plain", divide(rates["ingest_league"], rates["ingest_plain"]))
	return runLeagueClose(ctx, e)
}

// runLeagueClose fills the current hour's round with n members through
// Store.Apply, then closes it as a deployment does: league recorder passes
// (Store.DecideLeagues) until the round is final, and every member's first
// event of the next round. SLOWLOG keeps every command of the closing
// store's connections; the longest is how long other clients waited. The
// same members, filled and written alike into the board without a league,
// give the floor: what a batch of the next round costs without the league.
func runLeagueClose(ctx context.Context, e *env) error {
	n := min(e.opts.members, leagueCloseMax)
	fillCfg, err := ranking.ParseConfig([]byte(leagueConfig("hour", "UTC")))
	if err != nil {
		return err
	}
	closeCfg, err := ranking.ParseConfig([]byte(leagueConfig("hour", leagueAheadZone)))
	if err != nil {
		return err
	}
	filler, err := e.openStore(ctx, fillCfg, benchPrefix, e.opts.writers+2, "")
	if err != nil {
		return err
	}
	defer filler.Close()
	closer, err := e.openStore(ctx, closeCfg, benchPrefix, e.opts.writers+2, "client_name="+leagueClientName)
	if err != nil {
		return err
	}
	defer closer.Close()
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	// The whole fill must land in one round: near the end of an hour,
	// wait for the next one (at most a minute).
	now, err := filler.Now(ctx)
	if err != nil {
		return err
	}
	if left := now.Truncate(time.Hour).Add(time.Hour).Sub(now); left < time.Minute {
		e.logf("  %v left in this hour's round: waiting for the next", left.Round(time.Second))
		select {
		case <-time.After(left + time.Second):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if now, err = filler.Now(ctx); err != nil {
			return err
		}
	}
	round := now.UTC().Format("2006-01-02T15")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%07d", i)
	}
	write := func(s *ranking.Store, board string) func(ctx context.Context, lo, hi int) error {
		return func(ctx context.Context, lo, hi int) error {
			events := make([]ranking.Event, 0, hi-lo)
			for i := lo; i < hi; i++ {
				events = append(events, ranking.Event{Member: ids[i], Value: 1 + int64(i*7919%1000)})
			}
			res, err := s.Apply(ctx, board, events, ranking.ApplyOptions{NoRanks: true})
			if err != nil {
				return err
			}
			for _, r := range res {
				if r.Err != nil {
					return fmt.Errorf("event for %s refused: %w", r.Member, r.Err)
				}
			}
			return nil
		}
	}
	e.logf("- filling round %s (cycle hour) of board %q, and board %q alike, with %d members through Store.Apply (%d events per call, %d writers)",
		round, leagueBoard, leaguePlainBoard, n, ranking.MaxBatch, e.opts.writers)
	t0 := time.Now()
	for _, board := range []string{leagueBoard, leaguePlainBoard} {
		if err := e.inBatches(ctx, n, ranking.MaxBatch, write(filler, board)); err != nil {
			return fmt.Errorf("fill %s: %w", board, err)
		}
	}
	e.logf("  filled in %v", time.Since(t0).Round(time.Millisecond))
	key := func(suffix string) string { return benchPrefix + "{" + leagueBoard + "}:" + suffix }
	placed, err := e.rdb.ZCard(ctx, key("lg:"+round+":m")).Result()
	if err != nil {
		return err
	}
	if placed != int64(n) {
		return fmt.Errorf("round %s placed %d members, want %d (did the round change during the fill, or the key layout of docs/design.md?)", round, placed, n)
	}
	// The rounds left to decide are listed by their end: by the closing
	// store's calendar the round ended an hour earlier than the filler
	// listed it, so it is listed again at that end.
	closeEnd := now.Truncate(time.Hour)
	if err := e.rdb.ZAdd(ctx, key("lr"), redis.Z{Score: float64(closeEnd.UnixMilli()), Member: round}).Err(); err != nil {
		return err
	}

	restore, err := e.slowlogAll(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err := restore(); err != nil {
			e.logf("  restoring the slowlog settings: %v", err)
		}
	}()
	if err := e.rdb.ConfigSet(ctx, "slowlog-max-len", strconv.Itoa(leagueSlowlogLen)).Err(); err != nil {
		return err
	}
	if err := e.rdb.SlowLogReset(ctx).Err(); err != nil {
		return err
	}
	e.logf("- closing round %s: league recorder passes (Store.DecideLeagues) until it is final", round)
	t0 = time.Now()
	decided, passes := 0, 0
	for ; passes < leagueMaxPasses; passes++ {
		d, err := closer.DecideLeagues(ctx)
		if err != nil {
			return fmt.Errorf("DecideLeagues: %w", err)
		}
		decided += d
		final, err := e.rdb.HExists(ctx, key("lg:"+round+":f"), "final").Result()
		if err != nil {
			return err
		}
		if final {
			passes++
			break
		}
	}
	e.logf("  %d passes decided %d cohorts in %v", passes, decided, time.Since(t0).Round(time.Millisecond))
	recorder, err := e.slowlogCalls(ctx)
	if err != nil {
		return err
	}
	if want := (n + 29) / 30; decided != want {
		return fmt.Errorf("the recorder decided %d cohorts, want %d", decided, want)
	}
	// The next round is written in the ingest suite's batches: a call of
	// ranking.MaxBatch events is long whatever the league does.
	e.logf("- every member's first event of the next round (%d events per call, %d writers)", ingestBatch, e.opts.writers)
	if err := e.inBatches(ctx, n, ingestBatch, write(closer, leagueBoard)); err != nil {
		return fmt.Errorf("next round: %w", err)
	}
	next, err := e.slowlogCalls(ctx)
	if err != nil {
		return err
	}
	e.logf("- the floor: the same events into board %q, without a league (%d events per call, %d writers)", leaguePlainBoard, ingestBatch, e.opts.writers)
	if err := e.inBatches(ctx, n, ingestBatch, write(closer, leaguePlainBoard)); err != nil {
		return fmt.Errorf("plain board: %w", err)
	}
	plain, err := e.slowlogCalls(ctx)
	if err != nil {
		return err
	}
	all := append(recorder, next...)
	for _, part := range []struct {
		name  string
		calls []leagueCall
	}{{"recorder", recorder}, {"next round", next}, {"plain", plain}, {"close", all}} {
		longest := slices.MaxFunc(part.calls, func(a, b leagueCall) int { return int(a.d - b.d) })
		ds := make([]time.Duration, len(part.calls))
		for i, c := range part.calls {
			ds[i] = c.d
		}
		ds = sortedCopy(ds)
		e.logf("  %-10s %6d calls, p50 %v, p99 %v, longest %v (%.120s)", part.name, len(part.calls),
			percentile(ds, 50), percentile(ds, 99), longest.d, longest.what)
	}
	longest := func(cs []leagueCall) float64 {
		return float64(slices.MaxFunc(cs, func(a, b leagueCall) int { return int(a.d - b.d) }).d.Microseconds())
	}
	median := func(cs []leagueCall) float64 {
		ds := make([]time.Duration, len(cs))
		for i, c := range cs {
			ds[i] = c.d
		}
		return float64(percentile(sortedCopy(ds), 50).Microseconds())
	}
	// A next-round call is a plain board's batch plus the league's own
	// work (seating each member); the plain batch is the floor no league
	// change can lower, so the league's share is the difference.
	e.logf("  target: league_close_longest_call_us <= 5000 (a %d-event batch alone costs plain_batch_longest_call_us)", ingestBatch)
	e.out.bench("league_close_longest_call_us", longest(all), "us")
	e.out.bench("league_close_calls", float64(len(all)), "calls")
	e.out.bench("league_close_recorder_longest_call_us", longest(recorder), "us")
	e.out.bench("league_close_next_round_longest_call_us", longest(next), "us")
	e.out.bench("plain_batch_longest_call_us", longest(plain), "us")
	e.out.bench("league_close_next_round_p50_call_us", median(next), "us")
	e.out.bench("plain_batch_p50_call_us", median(plain), "us")
	e.out.bench("league_close_next_round_extra_p50_us", median(next)-median(plain), "us")
	return nil
}

// leagueCall is one logged command of the closing store.
type leagueCall struct {
	what string
	d    time.Duration
}

// slowlogCalls returns the closing store's commands in SLOWLOG and empties
// it; an error if it is empty or may have overflowed.
func (e *env) slowlogCalls(ctx context.Context) ([]leagueCall, error) {
	logs, err := e.rdb.SlowLogGet(ctx, leagueSlowlogLen).Result()
	if err != nil {
		return nil, err
	}
	if len(logs) >= leagueSlowlogLen {
		return nil, fmt.Errorf("SLOWLOG is full (%d entries): some calls were not seen", len(logs))
	}
	if err := e.rdb.SlowLogReset(ctx).Err(); err != nil {
		return nil, err
	}
	var calls []leagueCall
	for _, l := range slices.Backward(logs) {
		if l.ClientName != leagueClientName || len(l.Args) == 0 {
			continue
		}
		calls = append(calls, leagueCall{describeCommand(l.Args), l.Duration})
	}
	if len(calls) == 0 {
		return nil, errors.New("SLOWLOG holds no command of the closing store")
	}
	return calls, nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

const (
	resultsSmall      = 1000 // members of the small period, the N the big one is compared with
	resultsReps       = 7    // recordings of each kind; the median of their longest blocks is reported
	resultsNameEvery  = 4    // every 4th member has a display name
	resultsClientName = "standings-bench-record"
	resultsSlowlogLen = 10000
	resultsView       = "day"
	resultsBig        = "big"
	resultsSmallBoard = "small"
	resultsWarmBoard  = "warm"
)

// resultsConfig is the boards of the results suite. They differ only in
// size. The filling store accepts events 72h late so that all of yesterday
// can be written; the recording stores read the same boards with lateness
// 0s, so yesterday is final at once. Lateness decides only when a period is
// final, never how it is stored, so both see the same data (as after an
// operator shortens lateness and restarts).
func resultsConfig(lateness string, top int) string {
	var sb strings.Builder
	sb.WriteString("boards:\n")
	for _, id := range []string{resultsBig, resultsSmallBoard, resultsWarmBoard} {
		fmt.Fprintf(&sb, "  - {id: %s, views: [%s], lateness: %s, results_top: %d}\n", id, resultsView, lateness, top)
	}
	return sb.String()
}

// recordCase is one kind of measured call: a recording or a baseline.
type recordCase struct {
	name  string
	board string // the board whose stored result goes first; "" for a baseline
	total int64  // members of board's period
	top   int64  // results_top of the recording store
	do    func(ctx context.Context) error
}

// runResults measures how long recording the result of a final period
// blocks Redis, on a period of -members members and on one of 1,000, beside
// ZRANGE of the top 10 and ZCARD on the same key. Each command's time in
// Redis comes from SLOWLOG with a threshold of 0: the longest one is how
// long other clients waited.
func runResults(ctx context.Context, e *env) error {
	n := e.opts.members
	if n == resultsSmall {
		return fmt.Errorf("-members %d: the results suite compares that period with one of %d members, so it needs another size", n, resultsSmall)
	}
	writer, err := newResultsStore(ctx, e, "72h", 10, e.opts.writers+2, "")
	if err != nil {
		return err
	}
	defer writer.Close()
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	now, err := writer.Now(ctx)
	if err != nil {
		return err
	}
	view, _ := writer.Config().Boards[0].View(resultsView)
	cal := writer.Config().Calendar
	period := cal.Prev(view, cal.PeriodAt(view, now))

	e.logf("- filling %s %s of board %q with %d members through Store.Apply (%d events per call, %d writers), events at yesterday",
		resultsView, period.ID, resultsBig, n, ranking.MaxBatch, e.opts.writers)
	values := memberValues(n)
	t0 := time.Now()
	if err := e.inBatches(ctx, n, ranking.MaxBatch, func(ctx context.Context, lo, hi int) error {
		return applyPeriod(ctx, writer, resultsBig, period, values, lo, hi)
	}); err != nil {
		return fmt.Errorf("fill %s: %w", resultsBig, err)
	}
	took := time.Since(t0)
	e.logf("  filled %d members in %v (%.0f members/s)", n, took.Round(time.Millisecond), float64(n)/took.Seconds())
	if err := applyPeriod(ctx, writer, resultsSmallBoard, period, memberValues(resultsSmall), 0, resultsSmall); err != nil {
		return fmt.Errorf("fill %s: %w", resultsSmallBoard, err)
	}
	if err := applyPeriod(ctx, writer, resultsWarmBoard, period, memberValues(1), 0, 1); err != nil {
		return fmt.Errorf("fill %s: %w", resultsWarmBoard, err)
	}
	bigKey := periodZKey(resultsBig, period.ID)
	for _, b := range []struct {
		board string
		want  int64
	}{{resultsBig, int64(n)}, {resultsSmallBoard, resultsSmall}} {
		key := periodZKey(b.board, period.ID)
		card, err := e.rdb.ZCard(ctx, key).Result()
		if err != nil {
			return err
		}
		if card != b.want {
			return fmt.Errorf("%s holds %d members, want %d (has the key layout of docs/design.md changed?)", key, card, b.want)
		}
		// Small sets and hashes are compact lists that Redis scans
		// linearly, which shows in the timings below.
		names := benchPrefix + "{" + b.board + "}:n"
		zenc, _ := e.rdb.ObjectEncoding(ctx, key).Result()
		nenc, _ := e.rdb.ObjectEncoding(ctx, names).Result()
		nlen, _ := e.rdb.HLen(ctx, names).Result()
		e.logf("  %-6s %d members (%s), %d names (%s)", b.board, card, zenc, nlen, nenc)
	}

	// The measured commands come from a client of their own, so SLOWLOG
	// entries can be told from the suite's control commands by name.
	rc := redis.NewClient(&redis.Options{
		Addr: e.rdb.Options().Addr, ClientName: resultsClientName, PoolSize: 1,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute,
	})
	defer rc.Close()
	rec10, err := newResultsStore(ctx, e, "0s", 10, 1, "client_name="+resultsClientName)
	if err != nil {
		return err
	}
	defer rec10.Close()
	rec1000, err := newResultsStore(ctx, e, "0s", 1000, 1, "client_name="+resultsClientName)
	if err != nil {
		return err
	}
	defer rec1000.Close()
	restore, err := e.slowlogAll(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err := restore(); err != nil {
			e.logf("  restoring the slowlog settings: %v", err)
		}
	}()
	// Warm up: the scripts are loaded, the connection is open and both
	// stores know Redis's clock before anything is measured.
	for _, s := range []*ranking.Store{rec10, rec1000} {
		if _, err := s.RecordResult(ctx, resultsWarmBoard, resultsView, period.ID); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}

	record := func(s *ranking.Store, board string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			ok, err := s.RecordResult(ctx, board, resultsView, period.ID)
			if err == nil && !ok {
				err = fmt.Errorf("%s %s of board %q was already recorded", resultsView, period.ID, board)
			}
			return err
		}
	}
	tag := sizeTag(n)
	cases := []recordCase{
		{"result_record_" + tag, resultsBig, int64(n), 10, record(rec10, resultsBig)},
		{"result_record_" + tag + "_top1000", resultsBig, int64(n), 1000, record(rec1000, resultsBig)},
		{"result_record_1k", resultsSmallBoard, resultsSmall, 10, record(rec10, resultsSmallBoard)},
		{"zrange_top10", "", 0, 0, func(ctx context.Context) error { return rc.ZRangeWithScores(ctx, bigKey, 0, 9).Err() }},
		{"zcard", "", 0, 0, func(ctx context.Context) error { return rc.ZCard(ctx, bigKey).Err() }},
	}
	blocks := map[string][]time.Duration{}
	for rep := range resultsReps {
		// Each repetition starts at another case, so that no case always
		// runs after the same one (a top-1000 recording leaves the CPU
		// caches colder for whatever follows).
		for j := range cases {
			c := cases[(rep+j)%len(cases)]
			// Each recording starts with the result not yet stored, so
			// every repetition records the period in full.
			if c.board != "" {
				if err := e.rdb.Del(ctx, resultKey(c.board, period.ID)).Err(); err != nil {
					return err
				}
			}
			block, cmds, err := e.slowest(ctx, c.do)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			blocks[c.name] = append(blocks[c.name], block)
			if c.board != "" {
				if err := checkRecorded(ctx, writer, c.board, period.ID, c.total, c.top); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
			}
			if rep == 0 {
				e.logf("  %-28s %s", c.name, strings.Join(cmds, ", "))
			}
		}
	}

	med := map[string]float64{}
	for _, c := range cases {
		med[c.name] = float64(median(blocks[c.name]).Microseconds())
		e.logf("  %-28s longest command of each of %d runs: %v; median %v us", c.name, resultsReps, blocks[c.name], med[c.name])
	}
	big := med["result_record_"+tag]
	e.out.bench("result_record_"+tag+"_max_block_us", big, "us")
	e.out.bench("result_record_"+tag+"_top1000_max_block_us", med["result_record_"+tag+"_top1000"], "us")
	e.out.bench("result_record_1k_max_block_us", med["result_record_1k"], "us")
	e.out.bench("zrange_top10_"+tag+"_max_block_us", med["zrange_top10"], "us")
	e.out.bench("zcard_"+tag+"_max_block_us", med["zcard"], "us")
	e.logf("  targets: result_record_block_%s_vs_1k <= 3 (the block does not grow with N); result_record_block_vs_zrange_top10 a small constant, the same at any N", tag)
	e.out.ratio("result_record_block_vs_zrange_top10", divide(big, med["zrange_top10"]))
	e.out.ratio("result_record_block_"+tag+"_vs_1k", divide(big, med["result_record_1k"]))
	return nil
}

// newResultsStore opens a store of the results suite's boards (see
// env.openStore for pool and query).
func newResultsStore(ctx context.Context, e *env, lateness string, top, pool int, query string) (*ranking.Store, error) {
	cfg, err := ranking.ParseConfig([]byte(resultsConfig(lateness, top)))
	if err != nil {
		return nil, fmt.Errorf("results benchmark boards: %w", err)
	}
	return e.openStore(ctx, cfg, benchPrefix, pool, query)
}

// applyPeriod writes members [lo, hi) of len(values) into period p of
// board, one event each with its value, at instants spread evenly over the period, every
// resultsNameEvery-th with a name.
func applyPeriod(ctx context.Context, store *ranking.Store, board string, p ranking.Period, values []int64, lo, hi int) error {
	n := len(values)
	spanMS := p.End.Sub(p.Start).Milliseconds()
	events := make([]ranking.Event, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ev := ranking.Event{
			Member: fmt.Sprintf("u%07d", i),
			Value:  values[i],
			At:     p.Start.Add(time.Duration(int64(i)*spanMS/int64(n)) * time.Millisecond),
		}
		if i%resultsNameEvery == 0 {
			ev.Name = "Player " + strconv.Itoa(i)
		}
		events = append(events, ev)
	}
	res, err := store.Apply(ctx, board, events, ranking.ApplyOptions{})
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

// periodZKey and resultKey follow the key layout of docs/design.md; the
// suite checks the first holds the members it wrote and that every
// recording after the second is a fresh one.
func periodZKey(board, period string) string {
	return benchPrefix + "{" + board + "}:z:" + resultsView + ":" + period
}

func resultKey(board, period string) string {
	return benchPrefix + "{" + board + "}:rs:" + resultsView + ":" + period
}

// slowlogAll makes SLOWLOG keep every command and returns a function that
// puts the previous settings back.
func (e *env) slowlogAll(ctx context.Context) (restore func() error, err error) {
	params := []string{"slowlog-log-slower-than", "slowlog-max-len"}
	old := map[string]string{}
	for _, p := range params {
		v, err := e.rdb.ConfigGet(ctx, p).Result()
		if err != nil {
			return nil, err
		}
		old[p] = v[p]
	}
	restore = func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var errs []error
		for _, p := range params {
			errs = append(errs, e.rdb.ConfigSet(ctx, p, old[p]).Err())
		}
		errs = append(errs, e.rdb.SlowLogReset(ctx).Err())
		return errors.Join(errs...)
	}
	if err := e.rdb.ConfigSet(ctx, "slowlog-max-len", strconv.Itoa(resultsSlowlogLen)).Err(); err != nil {
		return nil, err
	}
	if err := e.rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		return nil, errors.Join(err, restore())
	}
	return restore, nil
}

// slowest runs do with an empty SLOWLOG and returns the longest time Redis
// spent on one command of the measured client, and every such command as
// "name key: duration" in the order they ran.
func (e *env) slowest(ctx context.Context, do func(context.Context) error) (time.Duration, []string, error) {
	if err := e.rdb.SlowLogReset(ctx).Err(); err != nil {
		return 0, nil, err
	}
	if err := do(ctx); err != nil {
		return 0, nil, err
	}
	logs, err := e.rdb.SlowLogGet(ctx, resultsSlowlogLen).Result()
	if err != nil {
		return 0, nil, err
	}
	var longest time.Duration
	var cmds []string
	for _, l := range slices.Backward(logs) { // SLOWLOG GET lists the newest first
		if l.ClientName != resultsClientName || len(l.Args) == 0 {
			continue
		}
		longest = max(longest, l.Duration)
		cmds = append(cmds, fmt.Sprintf("%s: %dus", describeCommand(l.Args), l.Duration.Microseconds()))
	}
	if len(cmds) == 0 {
		return 0, nil, errors.New("SLOWLOG holds no command of the measured client")
	}
	return longest, cmds, nil
}

// describeCommand names a logged command and the keys it was given,
// without the board's key prefix: a script call shows its KEYS (read.lua
// n,z:...; record.lua z:...,res:...,rs:...,out), any other command its
// first argument.
func describeCommand(args []string) string {
	name := strings.ToLower(args[0])
	short := func(key string) string {
		if _, rest, ok := strings.Cut(key, "}:"); ok {
			return rest
		}
		return key
	}
	if (name == "evalsha" || name == "eval") && len(args) > 2 {
		nkeys, _ := strconv.Atoi(args[2])
		keys := args[3:min(len(args), 3+nkeys)]
		for i, k := range keys {
			keys[i] = short(k)
		}
		return name + " " + strings.Join(keys, ",")
	}
	if len(args) > 1 {
		return name + " " + short(args[1])
	}
	return name
}

// checkRecorded checks that the stored result of board's period holds its
// total and its top entries.
func checkRecorded(ctx context.Context, s *ranking.Store, board, period string, total, top int64) error {
	raw, err := s.Result(ctx, board, resultsView, period)
	if err != nil {
		return err
	}
	var r ranking.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	if want := min(total, top); r.Total != total || int64(len(r.Entries)) != want {
		return fmt.Errorf("recorded result has total %d and %d entries, want %d and %d", r.Total, len(r.Entries), total, want)
	}
	return nil
}

// median returns the middle of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := sortedCopy(ds)
	return s[len(s)/2]
}

// sizeTag names a member count in result names: 1m for 1,000,000, 1k for
// 1,000, 2k for 2,000, else the number itself.
func sizeTag(n int) string {
	switch {
	case n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "m"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

const (
	memoryBatch    = 1000 // events per Apply call and members per ZADD
	memoryMaxValue = 1000 // member values are 1..memoryMaxValue
	settleTime     = 300 * time.Millisecond
)

// footprint is what one data set cost Redis.
type footprint struct {
	bytes   int64         // data memory after the load minus before
	before  int64         // data memory before the load
	keys    int64         // DBSIZE
	entries int64         // sorted-set entries under the measured keys
	cpu     time.Duration // Redis CPU time of the load
}

// runMemory loads the same members with the same values into the 5-view
// board through Store.Apply and into five plain sorted sets, and compares
// the Redis memory per member per view: right after the load, and after
// the search index's compaction has run to the end, as the background
// pass does within minutes (the steady state).
func runMemory(ctx context.Context, e *env) error {
	n := e.opts.members
	ids := memberIDs(n)
	values := memberValues(n)
	store, err := newBenchStore(ctx, e)
	if err != nil {
		return err
	}
	defer store.Close()
	views := int64(len(benchViews))
	want := int64(n) * views

	e.logf("- standings: %d members through Store.Apply, %d per call, %d writers", n, memoryBatch, e.opts.writers)
	warm := func(ctx context.Context) error { return applyMembers(ctx, store, ids[:1], values[:1]) }
	load := func(ctx context.Context, lo, hi int) error {
		return applyMembers(ctx, store, ids[lo:hi], values[lo:hi])
	}
	std, err := e.loadFootprint(ctx, warm, load, n, benchPrefix+"{"+benchBoard+"}:z:*")
	if err != nil {
		return fmt.Errorf("standings load: %w", err)
	}

	uncompacted := std.bytes
	moved, compactCPU, err := compactAll(ctx, e, store)
	if err != nil {
		return fmt.Errorf("standings compaction: %w", err)
	}
	after, err := e.dataMemory(ctx)
	if err != nil {
		return err
	}
	std.bytes = after - std.before
	e.logf("  compaction moved %d search entries into blocks; used_memory -> %d (%+d bytes)", moved, after, std.bytes-uncompacted)

	if err := e.keyBreakdown(ctx, benchPrefix+"{"+benchBoard+"}:", n, std.bytes); err != nil {
		return fmt.Errorf("standings breakdown: %w", err)
	}

	if err := e.scatteredCompaction(ctx, store, ids); err != nil {
		return fmt.Errorf("standings scattered compaction: %w", err)
	}

	e.logf("- plain: the same members and values, ZADD of %d into %d plain keys, pipelined", memoryBatch, views)
	plainLoad := func(ctx context.Context, lo, hi int) error { return zaddMembers(ctx, e.rdb, ids[lo:hi], values[lo:hi]) }
	plain, err := e.loadFootprint(ctx, nil, plainLoad, n, "plain:*")
	if err != nil {
		return fmt.Errorf("plain load: %w", err)
	}

	for _, f := range []struct {
		name string
		fp   footprint
	}{{"standings", std}, {"plain", plain}} {
		if f.fp.entries != want {
			return fmt.Errorf("%s: %d sorted-set entries, want %d members x %d views", f.name, f.fp.entries, n, views)
		}
	}
	stdPer := float64(std.bytes) / float64(want)
	plainPer := float64(plain.bytes) / float64(want)
	e.out.bench("memory_bytes_per_member_view", stdPer, "bytes")
	e.out.bench("plain_zset_bytes_per_member_view", plainPer, "bytes")
	e.out.ratio("memory_vs_plain", divide(stdPer, plainPer))
	e.out.ratio("memory_vs_plain_uncompacted", divide(float64(uncompacted)/float64(want), plainPer))
	e.logf("  target: RATIO memory_vs_plain <= 1.1")
	e.out.bench("memory_load_redis_us_per_member", divide(float64(std.cpu.Microseconds()), float64(n)), "us")
	e.out.bench("index_compact_redis_us_per_entry", divide(float64(compactCPU.Microseconds()), float64(moved)), "us")
	return nil
}

// compactAll runs passes of the search index's compaction until one moves
// nothing, and returns the entries moved and the Redis CPU time taken.
func compactAll(ctx context.Context, e *env, store *ranking.Store) (int, time.Duration, error) {
	cpu0, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return 0, 0, err
	}
	moved := 0
	for {
		rep, err := store.CompactIndex(ctx)
		if err != nil {
			return 0, 0, err
		}
		if rep.Moved == 0 {
			break
		}
		moved += rep.Moved
	}
	cpu1, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return 0, 0, err
	}
	return moved, cpu1 - cpu0, nil
}

// scatteredCompaction measures compaction in its steady state: members new
// after the index was packed, with ids between the packed ones, so that
// each block a call writes takes a few, unlike the load's sorted bulk. Two
// rounds of 2 new members per block each (at least 512), the first to walk compaction's
// cursor round (past the load's last entries, which stay in ni), the second
// measured: Redis's CPU per entry moved and the longest compact.lua call
// (SLOWLOG), which is how long one step keeps every other command on that
// Redis waiting.
func (e *env) scatteredCompaction(ctx context.Context, store *ranking.Store, ids []string) error {
	blocks, err := e.rdb.HLen(ctx, benchPrefix+"{"+benchBoard+"}:nb").Result()
	if err != nil {
		return err
	}
	// At least 512: on a small board ni's threshold (128 entries), not
	// the blocks, decides when a call moves anything.
	k := min(max(int(2*blocks), 512), len(ids))
	step := len(ids) / k
	round := func(suffix string) (int, time.Duration, error) {
		fresh := make([]string, k)
		values := make([]int64, k)
		for i := range fresh {
			fresh[i] = ids[i*step] + suffix
			values[i] = 1
		}
		for lo := 0; lo < k; lo += memoryBatch {
			hi := min(lo+memoryBatch, k)
			if err := applyMembers(ctx, store, fresh[lo:hi], values[lo:hi]); err != nil {
				return 0, 0, err
			}
		}
		return compactAll(ctx, e, store)
	}
	e.logf("- standings: 2 rounds of %d new members between the packed ones (%d blocks), each compacted", k, blocks)
	if _, _, err := round("a"); err != nil {
		return err
	}
	old, err := e.rdb.ConfigGet(ctx, "slowlog-log-slower-than").Result()
	if err != nil {
		return err
	}
	if err := e.rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		return err
	}
	defer e.rdb.ConfigSet(context.WithoutCancel(ctx), "slowlog-log-slower-than", old["slowlog-log-slower-than"])
	if err := e.rdb.ConfigSet(ctx, "slowlog-max-len", "100000").Err(); err != nil {
		return err
	}
	if err := e.rdb.Do(ctx, "slowlog", "reset").Err(); err != nil {
		return err
	}
	// The round's writes run scripts too: only the calls after the last
	// write are compaction's.
	moved, cpu, err := round("b")
	if err != nil {
		return err
	}
	logs, err := e.rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return err
	}
	var longest time.Duration
	calls := 0
	for _, l := range logs { // newest first
		if len(l.Args) < 2 || !strings.EqualFold(l.Args[0], "evalsha") {
			continue
		}
		if l.Args[1] != ranking.CompactScriptHash() {
			break
		}
		calls++
		longest = max(longest, l.Duration)
	}
	e.logf("  moved %d entries in %d calls", moved, calls)
	if moved == 0 || calls == 0 {
		return fmt.Errorf("compaction moved %d entries in %d calls after %d new members", moved, calls, k)
	}
	e.out.bench("index_compact_scattered_redis_us_per_entry", divide(float64(cpu.Microseconds()), float64(moved)), "us")
	e.out.bench("index_compact_call_max_us", float64(longest.Microseconds()), "us")
	return nil
}

// keyBreakdown says where a board's bytes go: per key type ("z_hour" for
// the hour view's periods, "n" names, "ni" the search index, "k" the
// registry, ...) the exact MEMORY USAGE of its keys per member, and as
// "other" what used_memory grew by beyond them (the keyspace's own tables,
// expiry entries).
func (e *env) keyBreakdown(ctx context.Context, prefix string, n int, total int64) error {
	sums := map[string]int64{}
	var kinds []string
	var counted int64
	iter := e.rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		kind := strings.TrimPrefix(key, prefix)
		if k, rest, ok := strings.Cut(kind, ":"); ok {
			kind = k
			if k == "z" || k == "x" || k == "r" || k == "snap" || k == "mv" {
				view, _, _ := strings.Cut(rest, ":")
				kind = k + "_" + strings.ReplaceAll(view, "~", "")
			}
		}
		usage, err := e.rdb.Do(ctx, "memory", "usage", key, "samples", "0").Int64()
		if err != nil {
			return fmt.Errorf("memory usage %s: %w", key, err)
		}
		if _, ok := sums[kind]; !ok {
			kinds = append(kinds, kind)
		}
		sums[kind] += usage
		counted += usage
	}
	if err := iter.Err(); err != nil {
		return err
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		e.out.bench("memory_bytes_per_member_key_"+k, divide(float64(sums[k]), float64(n)), "bytes")
	}
	e.out.bench("memory_bytes_per_member_key_other", divide(float64(total-counted), float64(n)), "bytes")
	return nil
}

// memberValues returns one value in 1..memoryMaxValue per member, the same
// on every run.
func memberValues(n int) []int64 {
	rnd := rand.New(rand.NewPCG(42, 1000))
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = 1 + rnd.Int64N(memoryMaxValue)
	}
	return vals
}

// loadFootprint flushes Redis, runs warm (if any) and flushes again so that
// script caches and client buffers exist before the baseline, then loads n
// members in batches and measures the memory the data took.
func (e *env) loadFootprint(ctx context.Context, warm func(context.Context) error,
	load func(ctx context.Context, lo, hi int) error, n int, pattern string) (footprint, error) {
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return footprint{}, err
	}
	if warm != nil {
		if err := warm(ctx); err != nil {
			return footprint{}, fmt.Errorf("warm-up: %w", err)
		}
		if err := e.rdb.FlushAll(ctx).Err(); err != nil {
			return footprint{}, err
		}
	}
	before, err := e.dataMemory(ctx)
	if err != nil {
		return footprint{}, err
	}
	cpu0, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return footprint{}, err
	}
	t0 := time.Now()
	if err := e.inBatches(ctx, n, memoryBatch, load); err != nil {
		return footprint{}, err
	}
	took := time.Since(t0)
	cpu1, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return footprint{}, err
	}
	after, err := e.dataMemory(ctx)
	if err != nil {
		return footprint{}, err
	}
	fp := footprint{bytes: after - before, before: before, cpu: cpu1 - cpu0}
	if fp.keys, err = e.rdb.DBSize(ctx).Result(); err != nil {
		return footprint{}, err
	}
	if fp.entries, err = e.countEntries(ctx, pattern); err != nil {
		return footprint{}, err
	}
	e.logf("  loaded %d members in %v (%.0f members/s); DBSIZE %d keys, %d entries in %s; used_memory %d -> %d (+%d bytes, %.1f MiB)",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), fp.keys, fp.entries, pattern,
		before, after, fp.bytes, float64(fp.bytes)/(1<<20))
	return fp, nil
}

// dataMemory lets Redis settle, then returns used_memory without client
// buffers, which depend on the last request rather than on the data.
func (e *env) dataMemory(ctx context.Context) (int64, error) {
	_ = e.rdb.Do(ctx, "memory", "purge").Err() // jemalloc only; harmless elsewhere
	select {
	case <-time.After(settleTime):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	info, err := infoSection(ctx, e.rdb, "memory")
	if err != nil {
		return 0, err
	}
	used, err := infoInt(info, "used_memory")
	if err != nil {
		return 0, err
	}
	clients, err := infoInt(info, "mem_clients_normal")
	if err != nil {
		return 0, err
	}
	return used - clients, nil
}

// countEntries sums ZCARD over the sorted sets matching pattern and logs
// each key's MEMORY USAGE estimate.
func (e *env) countEntries(ctx context.Context, pattern string) (int64, error) {
	var total int64
	iter := e.rdb.Scan(ctx, 0, pattern, 100).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		card, err := e.rdb.ZCard(ctx, key).Result()
		if err != nil {
			return 0, fmt.Errorf("zcard %s: %w", key, err)
		}
		usage, _ := e.rdb.MemoryUsage(ctx, key).Result()
		enc, _ := e.rdb.ObjectEncoding(ctx, key).Result()
		e.logf("    %-40s %8d entries, %s, ~%.1f bytes/entry (MEMORY USAGE)", key, card, enc, divide(float64(usage), float64(card)))
		total += card
	}
	return total, iter.Err()
}

// inBatches calls load for [lo, hi) ranges of size batch covering [0, n),
// from e.opts.writers goroutines, logging progress every few seconds.
func (e *env) inBatches(ctx context.Context, n, batch int, load func(ctx context.Context, lo, hi int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range e.opts.writers {
		wg.Go(func() {
			for ctx.Err() == nil {
				lo := int(next.Add(int64(batch))) - batch
				if lo >= n {
					return
				}
				hi := min(lo+batch, n)
				if err := load(ctx, lo, hi); err != nil {
					cancel(err)
					return
				}
				done.Add(int64(hi - lo))
			}
		})
	}
	stop := make(chan struct{})
	go e.progress(stop, &done, n)
	wg.Wait()
	close(stop)
	return context.Cause(ctx)
}

func (e *env) progress(stop <-chan struct{}, done *atomic.Int64, n int) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			e.logf("    ... %d/%d members", done.Load(), n)
		}
	}
}

// applyMembers writes one event per member through Store.Apply.
func applyMembers(ctx context.Context, store *ranking.Store, ids []string, values []int64) error {
	events := make([]ranking.Event, len(ids))
	for i := range ids {
		events[i] = ranking.Event{Member: ids[i], Value: values[i]}
	}
	res, err := store.Apply(ctx, benchBoard, events, ranking.ApplyOptions{})
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

// zaddMembers adds the members with their values to every plain view key,
// one ZADD per key, in one pipeline.
func zaddMembers(ctx context.Context, rdb *redis.Client, ids []string, values []int64) error {
	zs := make([]redis.Z, len(ids))
	for i := range ids {
		zs[i] = redis.Z{Score: float64(values[i]), Member: ids[i]}
	}
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, v := range benchViews {
			p.ZAdd(ctx, "plain:"+v, zs...)
		}
		return nil
	})
	return err
}

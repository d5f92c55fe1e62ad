package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// work does one unit of a contender's work (typically one round trip) and
// returns how many events it completed.
type work func(ctx context.Context) (events int, err error)

// maxSamples bounds the latency samples kept per writer.
const maxSamples = 1 << 18

// runResult is what one timed run of a contender achieved.
type runResult struct {
	events    int64
	calls     int64
	elapsed   time.Duration
	latencies []time.Duration // per work call, unsorted
}

func (r runResult) eventsPerSecond() float64 {
	return divide(float64(r.events), r.elapsed.Seconds())
}

// drive runs writers goroutines, each calling its own work until d has
// passed. Calls in flight at the deadline complete and count; the elapsed
// time runs until the last writer stops. The first error stops everyone.
func drive(ctx context.Context, writers int, d time.Duration, newWork func(writer int) work) (runResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		events, calls atomic.Int64
		mu            sync.Mutex
		latencies     []time.Duration
		wg            sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for w := range writers {
		do := newWork(w)
		wg.Go(func() {
			var local []time.Duration
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t0 := time.Now()
				n, err := do(ctx)
				if err != nil {
					cancel(err)
					return
				}
				if len(local) < maxSamples {
					local = append(local, time.Since(t0))
				}
				events.Add(int64(n))
				calls.Add(1)
			}
			mu.Lock()
			latencies = append(latencies, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res := runResult{events: events.Load(), calls: calls.Load(), elapsed: time.Since(start), latencies: latencies}
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// warmupFor is the warm-up length before a measurement of length d.
func warmupFor(d time.Duration) time.Duration {
	return min(max(d/10, 100*time.Millisecond), time.Second)
}

// measurement is a timed run plus what Redis and the client spent on it.
type measurement struct {
	runResult
	redisCPU  time.Duration
	clientCPU time.Duration
	commands  []commandStat
}

// redisUSPerEvent is the Redis server's CPU time per event, in µs.
func (m measurement) redisUSPerEvent() float64 {
	return divide(float64(m.redisCPU.Microseconds()), float64(m.events))
}

// measure flushes Redis, runs setup, warms the contender up, then runs it
// for -duration with Redis's counters reset, and logs where the time went.
func (e *env) measure(ctx context.Context, name string, newWork func(writer int) work, setup ...func(context.Context) error) (measurement, error) {
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return measurement{}, fmt.Errorf("%s: flushall: %w", name, err)
	}
	for _, f := range setup {
		if err := f(ctx); err != nil {
			return measurement{}, fmt.Errorf("%s: setup: %w", name, err)
		}
	}
	warm := warmupFor(e.opts.duration)
	if _, err := drive(ctx, e.opts.writers, warm, newWork); err != nil {
		return measurement{}, fmt.Errorf("%s: warm-up: %w", name, err)
	}
	if err := e.rdb.ConfigResetStat(ctx).Err(); err != nil {
		return measurement{}, fmt.Errorf("%s: config resetstat: %w", name, err)
	}
	redis0, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return measurement{}, err
	}
	client0 := processCPU()
	res, err := drive(ctx, e.opts.writers, e.opts.duration, newWork)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", name, err)
	}
	m := measurement{runResult: res, clientCPU: processCPU() - client0}
	redis1, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return measurement{}, err
	}
	m.redisCPU = redis1 - redis0
	if m.commands, err = commandStats(ctx, e.rdb); err != nil {
		return measurement{}, err
	}
	e.logMeasurement(name, m)
	return m, nil
}

func (e *env) logMeasurement(name string, m measurement) {
	perEvent := func(d time.Duration) float64 { return divide(float64(d.Microseconds()), float64(m.events)) }
	lat := sortedCopy(m.latencies)
	e.logf("  %-16s %9.0f events/s  %d events in %d calls over %v; call p50 %.3f ms, p99 %.3f ms",
		name, m.eventsPerSecond(), m.events, m.calls, m.elapsed.Round(time.Millisecond),
		ms(percentile(lat, 50)), ms(percentile(lat, 99)))
	e.logf("  %-16s redis CPU %.1f us/event, client CPU %.1f us/event (2 cores shared)",
		"", perEvent(m.redisCPU), perEvent(m.clientCPU))
	var parts []string
	total := 0.0
	for _, c := range m.commands {
		perEv := divide(float64(c.calls), float64(m.events))
		total += perEv
		parts = append(parts, fmt.Sprintf("%s %.2f/event %.2fus/call", c.name, perEv, c.usecPerCall))
	}
	e.logf("  %-16s redis commands %.2f/event (script-internal ones included): %s", "", total, strings.Join(parts, ", "))
}

// commandStat is one line of INFO commandstats.
type commandStat struct {
	name        string
	calls       int64
	usecPerCall float64
}

// commandStats reads INFO commandstats, most called first, leaving out the
// benchmark's own control commands.
func commandStats(ctx context.Context, rdb *redis.Client) ([]commandStat, error) {
	info, err := infoSection(ctx, rdb, "commandstats")
	if err != nil {
		return nil, err
	}
	var stats []commandStat
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok || name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		fields := parseFields(v)
		calls, _ := strconv.ParseInt(fields["calls"], 10, 64)
		upc, _ := strconv.ParseFloat(fields["usec_per_call"], 64)
		stats = append(stats, commandStat{name: name, calls: calls, usecPerCall: upc})
	}
	slices.SortFunc(stats, func(a, b commandStat) int {
		return cmp.Or(cmp.Compare(b.calls, a.calls), strings.Compare(a.name, b.name))
	})
	return stats, nil
}

// redisCPU is the server's user+system CPU time so far.
func redisCPU(ctx context.Context, rdb *redis.Client) (time.Duration, error) {
	info, err := infoSection(ctx, rdb, "cpu")
	if err != nil {
		return 0, err
	}
	user, _ := strconv.ParseFloat(info["used_cpu_user"], 64)
	sys, _ := strconv.ParseFloat(info["used_cpu_sys"], 64)
	return time.Duration((user + sys) * float64(time.Second)), nil
}

// infoSection returns the key:value pairs of one INFO section.
func infoSection(ctx context.Context, rdb *redis.Client, section string) (map[string]string, error) {
	text, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", section, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// parseFields splits "a=1,b=2" into a map.
func parseFields(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// infoInt reads an integer field of an INFO section.
func infoInt(info map[string]string, key string) (int64, error) {
	v, ok := info[key]
	if !ok {
		return 0, fmt.Errorf("INFO has no field %s", key)
	}
	return strconv.ParseInt(v, 10, 64)
}

// turnContender is one contender of a comparison run in turns: its work
// per writer, kept across its slices so each writer's event stream goes on.
type turnContender struct {
	name, desc string
	works      []work
}

// runTurns warms every contender up, then runs them in turns, rounds
// slices of slice each, on the data set they all grow, and sums each
// one's slices: a slow spell of a shared machine, or a larger data set,
// weighs on every contender alike instead of on whichever ran during it.
// It logs each contender's totals.
func (e *env) runTurns(ctx context.Context, cs []turnContender, rounds int, slice time.Duration) (map[string]measurement, error) {
	for _, c := range cs {
		e.logf("- %s: %s", c.name, c.desc)
		if _, err := drive(ctx, len(c.works), warmupFor(e.opts.duration), func(w int) work { return c.works[w] }); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", c.name, err)
		}
	}
	totals := map[string]measurement{}
	for range rounds {
		for _, c := range cs {
			if err := e.rdb.ConfigResetStat(ctx).Err(); err != nil {
				return nil, fmt.Errorf("%s: config resetstat: %w", c.name, err)
			}
			cpu0, err := redisCPU(ctx, e.rdb)
			if err != nil {
				return nil, err
			}
			client0 := processCPU()
			res, err := drive(ctx, len(c.works), slice, func(w int) work { return c.works[w] })
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			client1 := processCPU()
			cpu1, err := redisCPU(ctx, e.rdb)
			if err != nil {
				return nil, err
			}
			m := totals[c.name]
			m.events += res.events
			m.calls += res.calls
			m.elapsed += res.elapsed
			m.latencies = append(m.latencies, res.latencies...)
			m.redisCPU += cpu1 - cpu0
			m.clientCPU += client1 - client0
			stats, err := commandStats(ctx, e.rdb)
			if err != nil {
				return nil, err
			}
			m.commands = addCommandStats(m.commands, stats)
			totals[c.name] = m
		}
	}
	for _, c := range cs {
		e.logMeasurement(c.name, totals[c.name])
	}
	return totals, nil
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// The shard suite: one board's members spread over the masters of a
// 3-master cluster (contract 17). The same events go into a board with
// `shards: 1` and into one with `shards: 3` (each shard's tag on its own
// master), and every figure is Redis's own accounting per master (INFO
// cpu, INFO memory), so the 2 shared cores matter less:
//   - ingest: Redis CPU per event on the busiest master;
//   - memory: the busiest master's growth;
//   - reads: all masters' Redis CPU per top-100 page, per rank card, and
//     per page at offset members/2 against the first page.

const shardBoards = `
timezone: UTC
boards:
  - {id: one, max_score: 1000000000, views: [day, week, month, all]}
  - {id: three, shards: 3, max_score: 1000000000, views: [day, week, month, all]}
`

// shardMax bounds the members the suite loads (two boards on one machine).
const shardMax = 1_000_000

func runShard(ctx context.Context, e *env) error {
	n := min(e.opts.members, shardMax)
	e.logf("- starting a 3-master cluster on loopback")
	cl, err := redistest.StartCluster(ctx, 3)
	if err != nil {
		return err
	}
	defer cl.Close()
	masters := make([]*redis.Client, len(cl.Addrs))
	for i, a := range cl.Addrs {
		masters[i] = redis.NewClient(&redis.Options{Addr: a})
		defer masters[i].Close()
	}
	cfg, err := ranking.ParseConfig([]byte(shardBoards))
	if err != nil {
		return err
	}
	store, err := ranking.Open(ctx, cfg, ranking.Options{RedisCluster: strings.Join(cl.Addrs, ","), Prefix: benchPrefix})
	if err != nil {
		return err
	}
	defer store.Close()

	// Ingest and memory: the same events, one board after the other.
	cpu, mem := map[string][]float64{}, map[string][]float64{}
	for _, board := range []string{"one", "three"} {
		e.logf("- %d members' first events into board %q (%d events per call, %d writers)", n, board, ranking.MaxBatch, e.opts.writers)
		cpu0, mem0, err := masterUsage(ctx, masters)
		if err != nil {
			return err
		}
		err = e.inBatches(ctx, n, ranking.MaxBatch, func(ctx context.Context, lo, hi int) error {
			events := make([]ranking.Event, 0, hi-lo)
			for i := lo; i < hi; i++ {
				events = append(events, ranking.Event{Member: fmt.Sprintf("m%07d", i), Value: int64(1 + i*7919%100000), Name: "Member " + strconv.Itoa(i)})
			}
			_, err := store.Apply(ctx, board, events, ranking.ApplyOptions{NoRanks: true})
			return err
		})
		if err != nil {
			return fmt.Errorf("load %s: %w", board, err)
		}
		cpu1, mem1, err := masterUsage(ctx, masters)
		if err != nil {
			return err
		}
		for i := range masters {
			cpu[board] = append(cpu[board], float64((cpu1[i]-cpu0[i]).Microseconds())/float64(n))
			mem[board] = append(mem[board], float64(mem1[i]-mem0[i]))
		}
		e.logf("  Redis CPU per event by master: %s us; memory growth by master: %s bytes", floats(cpu[board]), floats(mem[board]))
	}
	e.out.bench("shard_unsharded_busiest_master_us_per_event", maxOf(cpu["one"]), "us")
	e.out.bench("shard_sharded3_busiest_master_us_per_event", maxOf(cpu["three"]), "us")
	e.logf("  target: RATIO sharded3_busiest_master_cpu_vs_unsharded <= 0.45 (ideal 0.33)")
	e.out.ratio("sharded3_busiest_master_cpu_vs_unsharded", divide(maxOf(cpu["three"]), maxOf(cpu["one"])))
	e.out.bench("shard_unsharded_busiest_master_bytes", maxOf(mem["one"]), "bytes")
	e.out.bench("shard_sharded3_busiest_master_bytes", maxOf(mem["three"]), "bytes")
	e.logf("  target: RATIO sharded3_busiest_master_memory_vs_unsharded <= 0.45")
	e.out.ratio("sharded3_busiest_master_memory_vs_unsharded", divide(maxOf(mem["three"]), maxOf(mem["one"])))

	// Reads: all masters' CPU per read, the same reads of both boards.
	type read struct {
		name string
		do   func(ctx context.Context, board string, rng *rand.Rand) error
	}
	reads := []read{
		{"page", func(ctx context.Context, board string, _ *rand.Rand) error {
			_, err := store.Page(ctx, board, "week", ranking.PageQuery{Limit: 100})
			return err
		}},
		{"card", func(ctx context.Context, board string, rng *rand.Rand) error {
			_, err := store.RankCard(ctx, board, "week", fmt.Sprintf("m%07d", rng.IntN(n)), ranking.RankCardQuery{Around: 2, History: 12})
			return err
		}},
		{"deep_page", func(ctx context.Context, board string, _ *rand.Rand) error {
			_, err := store.Page(ctx, board, "week", ranking.PageQuery{Offset: n / 2, Limit: 100})
			return err
		}},
	}
	per := map[string]float64{}
	for _, r := range reads {
		for _, board := range []string{"one", "three"} {
			perMaster, count, err := e.readCPUPerMaster(ctx, masters, func(ctx context.Context, rng *rand.Rand) error { return r.do(ctx, board, rng) })
			if err != nil {
				return fmt.Errorf("%s of %s: %w", r.name, board, err)
			}
			us := sumOf(perMaster)
			e.logf("  %-9s %-5s %d reads, all masters' Redis CPU %.1f us per read (per master %s)", r.name, board, count, us, floats(perMaster))
			name := "shard_" + shardBoardName[board] + "_" + r.name
			e.out.bench(name+"_us_per_read", us, "us")
			if r.name == "card" {
				// The rank card's target holds per node: what the busiest
				// master spends on one card.
				e.out.bench(name+"_busiest_master_us_per_read", maxOf(perMaster), "us")
			}
			per[board+"/"+r.name] = us
		}
	}
	// The floor: a read that spans 3 masters sends each at least one
	// call; what one call costs Redis beyond its work (reading, parsing,
	// answering) is measured by a script that does nothing.
	call, _, err := e.readCPU(ctx, masters, func(ctx context.Context, rng *rand.Rand) error {
		return masters[rng.IntN(len(masters))].Eval(ctx, "return 1", nil).Err()
	})
	if err != nil {
		return err
	}
	e.out.bench("shard_call_floor_us", call, "us")
	e.logf("  floor: a read of the 3 shards costs at least 2 calls more than one of one board: (unsharded + 2 x shard_call_floor_us) / unsharded")
	e.out.ratio("sharded3_page_floor_vs_unsharded", divide(per["one/page"]+2*call, per["one/page"]))
	e.out.ratio("sharded3_card_floor_vs_unsharded", divide(per["one/card"]+2*call, per["one/card"]))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%07d", i)
	}
	floors := map[string]float64{}
	for _, board := range []string{"one", "three"} {
		perMaster, err := e.cardFloorPerMaster(ctx, masters, cfg, store, benchPrefix, board, ids, 2, false)
		if err != nil {
			return err
		}
		us := sumOf(perMaster)
		e.out.bench("shard_"+shardBoardName[board]+"_card_floor_us_per_read", us, "us")
		e.out.bench("shard_"+shardBoardName[board]+"_card_floor_busiest_master_us_per_read", maxOf(perMaster), "us")
		floors[board] = us
	}
	e.logf("  floor: the least an exact card's current standings ask of each shard (cmd/benchmark/shard_floor.go), the chart kept by the app on both boards")
	e.out.ratio("sharded3_card_count_floor_vs_unsharded", divide(floors["three"], floors["one"]))
	e.logf("  targets: page and card <= 2.0 each; a page at offset %d <= 3x the first page; a card <= 40 us on its busiest master", n/2)
	e.out.ratio("sharded3_page_read_cpu_vs_unsharded", divide(per["three/page"], per["one/page"]))
	e.out.ratio("sharded3_card_cpu_vs_unsharded", divide(per["three/card"], per["one/card"]))
	e.out.ratio("sharded3_deep_page_vs_first_page_cpu", divide(per["three/deep_page"], per["three/page"]))
	return nil
}

// readCPU runs do from every writer for -duration and returns all
// masters' Redis CPU per call and the number of calls.
func (e *env) readCPU(ctx context.Context, masters []*redis.Client, do func(context.Context, *rand.Rand) error) (float64, int64, error) {
	per, count, err := e.readCPUPerMaster(ctx, masters, do)
	var total float64
	for _, us := range per {
		total += us
	}
	return total, count, err
}

// readCPUPerMaster is readCPU with each master's Redis CPU per call.
func (e *env) readCPUPerMaster(ctx context.Context, masters []*redis.Client, do func(context.Context, *rand.Rand) error) ([]float64, int64, error) {
	for _, m := range masters {
		if err := m.ConfigResetStat(ctx).Err(); err != nil {
			return nil, 0, err
		}
	}
	cpu0, _, err := masterUsage(ctx, masters)
	if err != nil {
		return nil, 0, err
	}
	rctx, cancel := context.WithTimeout(ctx, e.opts.duration)
	defer cancel()
	var count atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := range e.opts.writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for rctx.Err() == nil {
				// Each read runs to its end: the deadline only stops new ones.
				if err := do(ctx, rng); err != nil {
					once.Do(func() { first = err })
					return
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, 0, first
	}
	cpu1, _, err := masterUsage(ctx, masters)
	if err != nil {
		return nil, 0, err
	}
	reads := float64(max(count.Load(), 1))
	per := make([]float64, len(masters))
	for i := range masters {
		per[i] = float64((cpu1[i] - cpu0[i]).Microseconds()) / reads
	}
	// What the reads asked of Redis, all masters together.
	calls, usec := map[string]float64{}, map[string]float64{}
	for _, m := range masters {
		stats, err := commandStats(ctx, m)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range stats {
			calls[c.name] += float64(c.calls)
			usec[c.name] += float64(c.calls) * c.usecPerCall
		}
	}
	names := slices.SortedFunc(maps.Keys(calls), func(a, b string) int { return cmp.Compare(usec[b], usec[a]) })
	var parts []string
	for _, n := range names[:min(len(names), 6)] {
		parts = append(parts, fmt.Sprintf("%s %.2f/read %.1fus", n, calls[n]/reads, usec[n]/reads))
	}
	e.logf("    redis commands per read (script-internal included): %s", strings.Join(parts, ", "))
	return per, count.Load(), nil
}

// masterUsage reads each master's CPU so far and memory in use.
func masterUsage(ctx context.Context, masters []*redis.Client) (cpu []time.Duration, mem []int64, err error) {
	for _, m := range masters {
		c, err := redisCPU(ctx, m)
		if err != nil {
			return nil, nil, err
		}
		info, err := infoSection(ctx, m, "memory")
		if err != nil {
			return nil, nil, err
		}
		used, _ := strconv.ParseInt(info["used_memory"], 10, 64)
		cpu, mem = append(cpu, c), append(mem, used)
	}
	return cpu, mem, nil
}

// shardBoardName names the suite's boards in BENCH lines.
var shardBoardName = map[string]string{"one": "unsharded", "three": "sharded3"}

func sumOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strings.Join(parts, " ")
}

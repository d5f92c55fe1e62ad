package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

const streamBoards = "boards: [{id: points, stream: true, max_score: 1000000, views: [all]}, {id: quiet, views: [all]}]\n"

// streamEntry is one entry the tests add, with what the model expects.
type streamEntry struct {
	values map[string]any
	bad    bool // must end in the dead stream
}

// runConsumer runs one consumer until stop is called.
func runConsumer(t *testing.T, store *ranking.Store, name string, opts ranking.StreamOptions) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		store.RunStreamConsumer(ctx, name, opts, func(err error) { t.Logf("%s: %v", name, err) })
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// waitDone waits until the group has delivered and acknowledged everything.
func waitDone(t *testing.T, rdb redis.UniversalClient, store *ranking.Store) {
	t.Helper()
	key := store.StreamKey("points")
	ctx := context.Background()
	testsupport.WaitFor(t, "stream "+key+" drained", func() bool {
		groups, err := rdb.XInfoGroups(ctx, key).Result()
		last, err2 := rdb.XRevRangeN(ctx, key, "+", "-", 1).Result()
		return err == nil && err2 == nil && len(groups) == 1 && len(last) == 1 &&
			groups[0].Pending == 0 && groups[0].LastDeliveredID == last[0].ID
	})
}

// checkModel compares scores with the reference sums and the dead stream
// with the bad entries.
func checkModel(t *testing.T, rdb redis.UniversalClient, store *ranking.Store, sums map[string]int64, bad map[string]streamEntry) {
	t.Helper()
	ctx := context.Background()
	for m, want := range sums {
		card, err := store.Member(ctx, "points", "all", m, ranking.MemberQuery{})
		if err != nil {
			t.Fatalf("member %s: %v", m, err)
		}
		if card.Score != want {
			t.Errorf("member %s: score %d, want %d", m, card.Score, want)
		}
	}
	dead, err := rdb.XRange(ctx, store.DeadKey("points"), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != len(bad) {
		t.Errorf("dead stream holds %d entries, want %d", len(dead), len(bad))
	}
	seen := map[string]bool{}
	for _, d := range dead {
		src, _ := d.Values["source_id"].(string)
		e, ok := bad[src]
		if !ok || seen[src] {
			t.Errorf("dead entry %v is not a bad entry, or is there twice", d.Values)
			continue
		}
		seen[src] = true
		if msg, _ := d.Values["error"].(string); msg == "" {
			t.Errorf("dead entry %s has no error", src)
		}
		for f, v := range e.values {
			if d.Values[f] != v {
				t.Errorf("dead entry %s: field %s = %v, want %v", src, f, d.Values[f], v)
			}
		}
	}
	pending, err := rdb.XPending(ctx, store.StreamKey("points"), ranking.StreamGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	if pending.Count != 0 {
		t.Errorf("%d entries still pending", pending.Count)
	}
}

// TestStreamAppliesAndDeadLetters checks good entries are applied, bad ones
// copied with error and source_id to the dead stream, and all acknowledged;
// dead.lua touches only the keys it declares.
func TestStreamAppliesAndDeadLetters(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, streamBoards)
			store := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			key := store.StreamKey("points")
			add := func(values map[string]any) string {
				id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: values}).Result()
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			// Written before any consumer ran: the group starts at 0.
			sums := map[string]int64{}
			add(map[string]any{"member": "ann", "value": "5"})
			sums["ann"] += 5
			add(map[string]any{"member": "bob", "value": "2", "name": "Bob", "id": "e1"})
			sums["bob"] += 2
			add(map[string]any{"member": "bob", "value": "2", "id": "e1"}) // duplicate
			add(map[string]any{"member": "ann", "value": "1", "at": time.Now().UTC().Format(time.RFC3339)})
			sums["ann"]++
			badValues := []map[string]any{
				{"member": "ann", "value": "1.5"},
				{"member": "ann", "value": "ten"},
				{"value": "3"},
				{"member": "ann"},
				{"member": "ann", "value": "1", "colour": "red"},
				{"member": "ann", "value": "1", "at": "yesterday"},
				{"member": "ann", "value": "1", "at": "2001-01-01T00:00:00Z"},
				{"member": "ann", "value": "2000000"},
				{"member": "ann", "value": "1", "segments": `{"team":"red"}`},
				{"member": "a\x01b", "value": "1"},
			}
			bad := map[string]streamEntry{}
			for _, v := range badValues {
				bad[add(v)] = streamEntry{values: v, bad: true}
			}
			stats := &ranking.StreamStats{}
			stop := runConsumer(t, store, "c1", ranking.StreamOptions{Block: 50 * time.Millisecond, Stats: stats})
			add(map[string]any{"member": "cy", "value": "7"})
			sums["cy"] += 7
			waitDone(t, rdb, store)
			stop()
			checkModel(t, rdb, store, sums, bad)
			if got := stats.Dead.Load(); got != int64(len(badValues)) {
				t.Errorf("dead count %d, want %d", got, len(badValues))
			}
			if got := stats.Duplicates.Load(); got != 1 {
				t.Errorf("duplicates %d, want 1", got)
			}
			if n, _ := rdb.Exists(ctx, store.StreamKey("quiet")).Result(); n != 0 {
				t.Errorf("a board without stream: true got an ingest stream")
			}
		})
	}
}

// TestStreamCrashIsClaimed runs 10,000 entries through two consumers, one
// of which dies holding a batch it read but never acknowledged; the other
// claims it and every entry counts exactly once.
func TestStreamCrashIsClaimed(t *testing.T) {
	t.Parallel() // waits on timeouts, its own servers or prefix
	for _, be := range backends()[1:] {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, streamBoards)
			ctx := context.Background()
			storeA := newStore(t, rdb, cfg, nil)
			storeB := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: storeA.Prefix()})
			key := storeA.StreamKey("points")
			r := rand.New(rand.NewPCG(1, 2))
			sums := map[string]int64{}
			bad := map[string]streamEntry{}
			usedIDs := map[string]map[string]any{}
			pipe := rdb.Pipeline()
			type pend struct {
				cmd    *redis.StringCmd
				values map[string]any
				bad    bool
			}
			var pends []pend
			const total = 10000
			for i := range total {
				m := fmt.Sprintf("m%d", r.IntN(50))
				v := int64(r.IntN(100) + 1)
				values := map[string]any{"member": m, "value": fmt.Sprint(v)}
				isBad := false
				switch k := r.IntN(20); {
				case k == 0:
					values["value"] = "x"
					isBad = true
				case k < 4:
					id := fmt.Sprintf("id%d", r.IntN(1000))
					// Later entries with a used id repeat the first one
					// (a producer's retry) and are duplicates: it counts once.
					if first, ok := usedIDs[id]; ok {
						values = first
					} else {
						values["id"] = id
						usedIDs[id] = values
						sums[m] += v
					}
				default:
					sums[m] += v
				}
				pends = append(pends, pend{pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: values}), values, isBad})
				if i%500 == 499 {
					if _, err := pipe.Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, p := range pends {
				if p.bad {
					bad[p.cmd.Val()] = streamEntry{values: p.values, bad: true}
				}
			}
			// A's crash: after a few batches it applies one and stops before
			// acknowledging it; b's re-apply must be a duplicate.
			var batches atomic.Int64
			crashed := make(chan struct{})
			var once sync.Once
			optsA := ranking.WithBeforeAck(ranking.StreamOptions{Block: 50 * time.Millisecond}, func(string, int) bool {
				if batches.Add(1) < 10 {
					return true
				}
				once.Do(func() { close(crashed) })
				return false
			})
			stopA := runConsumer(t, storeA, "a", optsA)
			<-crashed
			stopA()
			statsB := &ranking.StreamStats{}
			stopB := runConsumer(t, storeB, "b", ranking.StreamOptions{
				Block: 50 * time.Millisecond, ClaimIdle: 500 * time.Millisecond,
				ClaimEvery: 200 * time.Millisecond, Stats: statsB,
			})
			waitDone(t, rdb, storeB)
			stopB()
			if statsB.Claimed.Load() == 0 || statsB.Duplicates.Load() == 0 {
				t.Errorf("b claimed %d entries from a, %d duplicates; want some of each", statsB.Claimed.Load(), statsB.Duplicates.Load())
			}
			checkModel(t, rdb, storeB, sums, bad)
		})
	}
}

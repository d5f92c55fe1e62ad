package ranking_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// reshardConfig is the sharded model's boards with one copy of each, "-s2",
// laid out over n shards (the copy keeps its name whatever n is).
func reshardConfig(t *testing.T, n int) *ranking.Config {
	t.Helper()
	text := strings.ReplaceAll(shardConfig("Europe/Paris"), "shards: 2,", fmt.Sprintf("shards: %d,", n))
	cfg, err := ranking.ParseConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// oneCopy makes the sharded model's helpers see one copy per board, "-s2".
func oneCopy(t *testing.T) {
	old := shardCounts
	shardCounts = []int{2}
	t.Cleanup(func() { shardCounts = old })
}

// baseBoards is a config holding the model's base boards only, for the
// workload's list of boards to write and compare.
func baseBoards(t *testing.T) *ranking.Config {
	t.Helper()
	old := shardCounts
	shardCounts = nil
	defer func() { shardCounts = old }()
	cfg, err := ranking.ParseConfig([]byte(shardConfig("Europe/Paris")))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// reshardModel writes the same events into the base boards and their
// copies with one shard, then moves every copy to 4, 3 and 1 shards, each
// move stopped after some steps and run again; after each, every read of
// the copies equals the base boards'.
func reshardModel(t *testing.T, rdb redis.UniversalClient, events int, now func() time.Time, step func()) {
	oneCopy(t)
	ctx := context.Background()
	prefix := redistest.Namespace(t) + ":"
	storeWith := func(n int) *ranking.Store {
		return rankingtest.MustStore(t, rdb, reshardConfig(t, n), ranking.Options{Prefix: prefix})
	}
	w := &shardWorkload{t: t, rng: rand.New(rand.NewPCG(7, 27)), cfg: baseBoards(t), store: storeWith(1), now: now, step: step}
	for i := range 60 {
		w.members = append(w.members, fmt.Sprintf("m%03d", i))
	}
	w.members = append(w.members, "Zed", "ünï", "a b", "0")
	writeBoth(w, events)
	if err := w.store.CheckShards(ctx); err != nil {
		t.Fatal(err)
	}
	shards := 1
	for round, n := range []int{4, 3, 1} {
		for _, b := range w.cfg.Boards {
			id := b.ID + "-s2"
			// Half of the search entries are in small blocks, as
			// compaction leaves them: the move takes both.
			for i := range shards {
				if _, _, err := ranking.CompactIndexStep(ctx, w.store, id, i, 40, 0, 64, 64); err != nil {
					t.Fatal(err)
				}
			}
			// An entry in a block and in ni at once (a write added it
			// again before compaction took it out): counted once.
			addBlockEntryToNI(t, rdb, prefix+"{"+id+"*}:nb")
			// Stopped after the check, in the middle of the copy, in the
			// middle of the deletion.
			stopPhase, stopAt := []string{"verify", "copy", "delete"}[round], []int{1, 3, 2}[round]
			rctx, cancel := context.WithCancel(ctx)
			steps := 0
			_, err := w.store.Reshard(rctx, id, n, ranking.ReshardOptions{Step: func(phase string) {
				if phase == stopPhase {
					if steps++; steps == stopAt {
						cancel()
					}
				}
			}})
			cancel()
			if err == nil {
				t.Fatalf("%s to %d shards: not stopped at %s step %d", id, n, stopPhase, stopAt)
			}
			// Start-up refuses the board while its move is under way.
			var mis *ranking.ShardsMismatchError
			if err := storeWith(n).CheckShards(ctx); !errors.As(err, &mis) || mis.UnderWayTo != n {
				t.Fatalf("%s: start-up during the move: %v", id, err)
			}
			rep, err := w.store.Reshard(ctx, id, n, ranking.ReshardOptions{})
			if err != nil {
				t.Fatalf("%s to %d shards, run again: %v", id, n, err)
			}
			if !rep.Resumed || rep.To != n {
				t.Fatalf("%s: report %+v", id, rep)
			}
			if got, err := w.store.RecordedShards(ctx, id); err != nil || got != n {
				t.Fatalf("%s: recorded %d shards (%v), want %d", id, got, err, n)
			}
		}
		w.store = storeWith(n)
		if err := w.store.CheckShards(ctx); err != nil {
			t.Fatalf("start-up with shards: %d: %v", n, err)
		}
		if checked := w.verify(); checked == 0 {
			t.Fatal("nothing verified")
		}
		shards = n
		for _, b := range w.cfg.Boards {
			for _, q := range []string{"m", "m0", "m05", "z", "u", "a", "0"} {
				want, err := w.store.SearchMembers(ctx, b.ID, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := w.store.SearchMembers(ctx, b.ID+"-s2", q)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s-s2 on %d shards, q %q:\n got %v\nwant %v", b.ID, n, q, got, want)
				}
			}
		}
		// The moved boards take writes as before.
		writeBoth(w, events/4)
	}
	w.verify()
}

// writeBoth writes the same random batches into the base boards and their
// copies, each event at a time of its own (so that both get the same
// times on a Redis whose clock runs), and checks that each event gets the
// same answer but for ranks (a sharded board answers the ranks after the
// batch, a board of one shard those after the event).
func writeBoth(w *shardWorkload, events int) {
	ctx := context.Background()
	bases := w.cfg.Boards
	for done := 0; done < events; {
		b := bases[w.rng.IntN(len(bases))]
		batch := make([]ranking.Event, 1+w.rng.IntN(30))
		for i := range batch {
			batch[i] = w.event(b)
			if batch[i].At.IsZero() {
				batch[i].At = w.now().Truncate(time.Millisecond)
			}
		}
		want, err := w.store.Apply(ctx, b.ID, batch, ranking.ApplyOptions{})
		if err != nil {
			w.t.Fatalf("apply %s: %v", b.ID, err)
		}
		got, err := w.store.Apply(ctx, b.ID+"-s2", batch, ranking.ApplyOptions{})
		if err != nil {
			w.t.Fatalf("apply %s-s2: %v", b.ID, err)
		}
		for i := range want {
			if !sameResult(got[i], want[i], true) {
				w.t.Fatalf("board %s-s2 event %+v:\n got %+v\nwant %+v", b.ID, batch[i], got[i], want[i])
			}
		}
		done += len(batch)
		w.step()
	}
}

// TestReshardEqualsUnsharded runs the model on Redis and the cluster,
// whose clocks run: the events carry their times.
func TestReshardEqualsUnsharded(t *testing.T) {
	for _, be := range redistest.Backends(nil)[1:] { // miniredis: TestReshardMiniredisOverDays
		t.Run(be.Name, func(t *testing.T) {
			reshardModel(t, be.Client(t), 300, time.Now, func() {})
		})
	}
}

// TestReshardMiniredisOverDays moves miniredis's clock over days while
// events arrive, so that day snapshots and previous periods are moved too.
func TestReshardMiniredisOverDays(t *testing.T) {
	m := miniredis.RunT(t)
	loc, _ := time.LoadLocation("Europe/Paris")
	clock := time.Date(2026, 11, 14, 20, 0, 0, 0, loc)
	m.SetTime(clock)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	rng := rand.New(rand.NewPCG(1, 2))
	ranking.SetReshardPages(t, 4, 3)
	reshardModel(t, rdb, 600, func() time.Time { return clock }, func() {
		clock = clock.Add(time.Duration(rng.IntN(90)) * time.Minute)
		m.SetTime(clock)
	})
}

func TestStartupRefusesOtherShardCount(t *testing.T) {
	oneCopy(t)
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	opts := ranking.Options{Prefix: redistest.Namespace(t) + ":"}
	one := rankingtest.MustStore(t, rdb, reshardConfig(t, 1), opts)
	// Written before any record: a board of one shard.
	if _, err := one.Apply(ctx, "inc-s2", []ranking.Event{{Member: "a", Value: 1}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := one.CheckShards(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.HGet(ctx, opts.Prefix+"{inc-s2}:meta", "shards").Result(); err != nil || n != "1" {
		t.Fatalf("a board written before the record: record %q (%v), want 1", n, err)
	}
	rdb.Del(ctx, opts.Prefix+"{sha-s2}:meta") // a board without data or record
	four := rankingtest.MustStore(t, rdb, reshardConfig(t, 4), opts)
	err := four.CheckShards(ctx)
	var mis *ranking.ShardsMismatchError
	if !errors.As(err, &mis) || mis.Board != "inc-s2" || mis.Configured != 4 || mis.Recorded != 1 {
		t.Fatalf("start-up with shards: 4 over one shard's data: %v", err)
	}
	for _, want := range []string{`"inc-s2"`, "shards: 4", "1 shards", "standings reshard --config FILE --board inc-s2 --shards 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The other boards had no data: the check recorded the file's count.
	if n, err := four.RecordedShards(ctx, "sha-s2"); err != nil || n != 4 {
		t.Fatalf("sha-s2: recorded %d (%v), want 4", n, err)
	}
	if err := one.CheckShards(ctx); err == nil || !strings.Contains(err.Error(), `"sha-s2"`) {
		t.Fatalf("start-up with shards: 1 over a board recorded with 4: %v", err)
	}
}

func TestReshardRefusedWhileServed(t *testing.T) {
	oneCopy(t)
	ctx := context.Background()
	m := miniredis.RunT(t)
	m.SetTime(time.Now())
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	s := rankingtest.MustStore(t, rdb, reshardConfig(t, 1), ranking.Options{})
	if _, err := s.Apply(ctx, "inc-s2", []ranking.Event{{Member: "a", Value: 1}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Announce(ctx, "web-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckShards(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := s.Reshard(ctx, "inc-s2", 3, ranking.ReshardOptions{})
	if !errors.Is(err, ranking.ErrServed) || !strings.Contains(err.Error(), "web-1") {
		t.Fatalf("reshard while served: %v", err)
	}
	// Refused, it left no record behind: the instance may restart.
	if err := s.CheckShards(ctx); err != nil {
		t.Fatalf("start-up after a refused reshard: %v", err)
	}
	// A word past its time does not count.
	m.FastForward(ranking.ServingTTL + time.Second)
	m.SetTime(time.Now().Add(ranking.ServingTTL + time.Second))
	if err := s.SyncClock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reshard(ctx, "inc-s2", 3, ranking.ReshardOptions{}); err != nil {
		t.Fatalf("reshard after the instance's word ran out: %v", err)
	}
	if err := s.Announce(ctx, "web-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Withdraw(ctx, "web-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reshard(ctx, "inc-s2", 1, ranking.ReshardOptions{}); err != nil {
		t.Fatalf("reshard after the instance withdrew: %v", err)
	}
	// Bad input changes nothing.
	for _, n := range []int{0, 65, 1} {
		if _, err := s.Reshard(ctx, "inc-s2", n, ranking.ReshardOptions{}); err == nil {
			t.Fatalf("reshard to %d shards: no error", n)
		}
	}
}

// TestReshardCheckFindsDifference loses a name in the new layout between
// the copy and the check: the check refuses, keeps the old layout, and the
// next run copies again and finishes.
func TestReshardCheckFindsDifference(t *testing.T) {
	oneCopy(t)
	ctx := context.Background()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 11, 14, 20, 0, 0, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	opts := ranking.Options{Prefix: redistest.Namespace(t) + ":"}
	one := rankingtest.MustStore(t, rdb, reshardConfig(t, 1), opts)
	var events []ranking.Event
	for i := range 40 {
		events = append(events, ranking.Event{Member: fmt.Sprintf("m%02d", i), Value: int64(i % 7), Name: fmt.Sprintf("Player %d", i),
			Segments: map[string]string{"country": []string{"FR", "DE"}[i%2]}})
	}
	if _, err := one.Apply(ctx, "lat-s2", events, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	_, err := one.Reshard(rctx, "lat-s2", 3, ranking.ReshardOptions{Step: func(phase string) {
		if phase == "copy" {
			cancel()
		}
	}})
	cancel()
	if err == nil {
		t.Fatal("not stopped after the copy")
	}
	// m07's name, on its new shard, goes missing.
	var lost string
	for _, k := range m.Keys() {
		if strings.Contains(k, "{lat-s2#") && strings.HasSuffix(k, "}:n") && rdb.HExists(ctx, k, "m07").Val() {
			lost = k
		}
	}
	if lost == "" {
		t.Fatal("m07's name was not copied")
	}
	rdb.HDel(ctx, lost, "m07")
	_, err = one.Reshard(ctx, "lat-s2", 3, ranking.ReshardOptions{})
	if err == nil || !strings.Contains(err.Error(), "n: ") || !strings.Contains(err.Error(), "old one is kept") {
		t.Fatalf("check after a lost name: %v", err)
	}
	if n, _ := one.RecordedShards(ctx, "lat-s2"); n != 1 {
		t.Fatalf("recorded %d shards after a failed check", n)
	}
	if c, err := one.Member(ctx, "lat-s2", "all", "m07", ranking.MemberQuery{}); err != nil || c.Name != "Player 7" {
		t.Fatalf("the old layout after a failed check: %+v, %v", c, err)
	}
	if _, err := one.Reshard(ctx, "lat-s2", 3, ranking.ReshardOptions{}); err != nil {
		t.Fatalf("run again: %v", err)
	}
	three := rankingtest.MustStore(t, rdb, reshardConfig(t, 3), opts)
	if c, err := three.Member(ctx, "lat-s2", "all", "m07", ranking.MemberQuery{}); err != nil || c.Name != "Player 7" {
		t.Fatalf("after the move: %+v, %v", c, err)
	}
}

// addBlockEntryToNI adds the first entry of a block of every search index
// matching pattern to the index's ni again, on every master.
func addBlockEntryToNI(t *testing.T, rdb redis.UniversalClient, pattern string) {
	t.Helper()
	ctx := context.Background()
	add := func(ctx context.Context, node *redis.Client) error {
		keys, err := node.Keys(ctx, pattern).Result()
		if err != nil {
			return err
		}
		for _, nb := range keys {
			blocks, err := node.HVals(ctx, nb).Result()
			if err != nil || len(blocks) == 0 {
				return err
			}
			e := strings.Split(strings.Trim(blocks[0], "\n"), "\n")[0]
			if err := node.ZAdd(ctx, strings.TrimSuffix(nb, "nb")+"ni", redis.Z{Member: e}).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if c, ok := rdb.(*redis.ClusterClient); ok {
		err = c.ForEachMaster(ctx, add)
	} else {
		err = add(ctx, rdb.(*redis.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
}

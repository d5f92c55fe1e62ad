package ranking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// Results, removals, the relay, the sweep and the ingest stream of sharded
// boards: the same events go into stores whose boards differ only in their
// shard count (same board ids, so the same digests), each under its own
// prefix; what they record, amend, relay and read must be the same bytes.

// shardResultsBoards: an increment board (ties first) and a best board
// (ascending, shared ties, decimals); hours final at their end.
const shardResultsBoards = `boards:
  - {id: r, views: [hour, day, all], keep: 30, lateness: 0s, results_top: 5, results_keep: 50, shards: %[1]d}
  - {id: t, update: best, order: asc, ties: shared, decimals: 1, min_score: 0, max_score: 50, views: [hour, day], keep: 30, lateness: 0s, results_top: 4, results_keep: 50, shards: %[1]d}
webhooks:
  - {url: "http://127.0.0.1:9/", secret_env: %[2]s, events: [member.removed], boards: [r, t]}
`

// shardCopies are the shard counts compared with one shard.
var shardCopies = []int{1, 3, 7}

// shardStores opens one store per shard count on rdb, each under its own
// prefix, all on clock.
func shardStores(t *testing.T, rdb redis.UniversalClient, clock func() time.Time) []*ranking.Store {
	t.Setenv(hookSecretEnv, "s3cret")
	var out []*ranking.Store
	for _, n := range shardCopies {
		cfg := MustConfig(t, fmt.Sprintf(shardResultsBoards, n, hookSecretEnv))
		out = append(out, rankingtest.MustStore(t, rdb, cfg, ranking.Options{
			Prefix: fmt.Sprintf("%s-s%d:", redistest.Namespace(t), n), Clock: clock,
		}))
	}
	return out
}

// applyAll applies the same batch to every store.
func applyAll(t *testing.T, stores []*ranking.Store, board string, batch []ranking.Event) {
	t.Helper()
	for _, s := range stores {
		res, err := s.Apply(context.Background(), board, batch, ranking.ApplyOptions{NoRanks: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("%s event %+v: %v", board, batch[i], r.Err)
			}
		}
	}
}

func randomBatch(r *rand.Rand, board string, n int) []ranking.Event {
	batch := make([]ranking.Event, n)
	for i := range batch {
		ev := ranking.Event{Member: fmt.Sprintf("m%02d", r.IntN(30))}
		if board == "r" {
			ev.Value = int64(r.IntN(12))
		} else {
			ev.Value = int64(r.IntN(26)) * 10 // ties likely
		}
		if r.IntN(3) == 0 {
			ev.Name = "Name " + ev.Member
		}
		batch[i] = ev
	}
	return batch
}

// allResults lists every recorded result of every view of the two boards,
// as stored.
func allResults(t *testing.T, s *ranking.Store) []string {
	t.Helper()
	var out []string
	for _, bv := range [][2]string{{"r", "hour"}, {"r", "day"}, {"t", "hour"}, {"t", "day"}} {
		rs, err := s.Results(context.Background(), bv[0], bv[1], "", ranking.MaxResultsLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, string(r))
		}
	}
	return out
}

// sameResults fails unless every store stored the same results as the
// first (one shard), byte for byte; it returns them.
func sameResults(t *testing.T, stores []*ranking.Store, what string) []string {
	t.Helper()
	want := allResults(t, stores[0])
	for i, s := range stores[1:] {
		got := allResults(t, s)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d shards stored\n%s\none shard stored\n%s", what, shardCopies[i+1], strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	return want
}

// samePages fails unless every view's current and previous periods read
// the same on every store.
func samePages(t *testing.T, stores []*ranking.Store) {
	t.Helper()
	ctx := context.Background()
	cfg := stores[0].Config()
	for _, b := range cfg.Boards {
		for _, v := range b.Views {
			cur, err := stores[0].Page(ctx, b.ID, v.Name, ranking.PageQuery{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			periods := []string{cur.Period.ID}
			if v.Kind != ranking.All {
				p := cur.Period
				for range 3 {
					p = cfg.Calendar.Prev(v, p)
					periods = append(periods, p.ID)
				}
			}
			for _, period := range periods {
				q := ranking.PageQuery{Period: period, Limit: 100}
				want, err := stores[0].Page(ctx, b.ID, v.Name, q)
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range stores[1:] {
					got, err := s.Page(ctx, b.ID, v.Name, q)
					if err != nil {
						t.Fatal(err)
					}
					if got.Total != want.Total || !slices.Equal(got.Entries, want.Entries) {
						t.Fatalf("%s/%s %s on %d shards:\n got %d %v\nwant %d %v", b.ID, v.Name, period, shardCopies[i+1], got.Total, got.Entries, want.Total, want.Entries)
					}
				}
			}
		}
	}
}

// streamEvents is what a store's results stream holds, in order.
func streamEvents(t *testing.T, rdb redis.UniversalClient, s *ranking.Store) []string {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), s.ResultsStream(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, fmt.Sprint(m.Values["type"], " ", m.Values["board"], " ", m.Values["view"], " ", m.Values["period"], " ", m.Values["result"]))
	}
	return out
}

// removedDeliveries lists the pending member.removed deliveries' boards.
func removedDeliveries(t *testing.T, s *ranking.Store) []string {
	t.Helper()
	ds, err := s.Deliveries(context.Background(), ranking.DeliveryPending, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		if d.Type == ranking.EventMemberRemoved {
			out = append(out, d.Board)
		}
	}
	slices.Sort(out)
	return out
}

// TestShardedResultsEqualUnsharded writes the same events over a day of
// hours into boards of 1, 3 and 7 shards, records, removes two members
// (one at the top of recorded hours, one never in a result) and relays:
// the recorded results, their amendments, the pages, the results stream
// and the member.removed deliveries are the same on every shard count.
func TestShardedResultsEqualUnsharded(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	clock := time.Date(2026, 3, 10, 17, 5, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	stores := shardStores(t, rdb, func() time.Time { return clock })
	setTime := func(to time.Time) {
		clock = to
		m.SetTime(to)
		for _, s := range stores {
			if err := s.SyncClock(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := rand.New(rand.NewPCG(27, 1))
	for range 9 {
		for _, board := range []string{"r", "t"} {
			applyAll(t, stores, board, randomBatch(r, board, 5+r.IntN(25)))
		}
		setTime(clock.Add(time.Duration(40+r.IntN(40)) * time.Minute))
	}
	applyAll(t, stores, "r", []ranking.Event{{Member: "late", Value: 1}})
	setTime(time.Date(2026, 3, 11, 0, 30, 0, 0, time.UTC)) // the 10th is final
	for _, s := range stores {
		if n, err := s.RecordResults(ctx); err != nil || n == 0 {
			t.Fatalf("recorded %d, %v", n, err)
		}
	}
	recorded := sameResults(t, stores, "recorded")
	// The top member of the first recorded hour of r.
	var first ranking.Result
	if err := json.Unmarshal([]byte(recorded[len(recorded)-1]), &first); err != nil {
		t.Fatal(err)
	}
	for _, rs := range recorded {
		var res ranking.Result
		if err := json.Unmarshal([]byte(rs), &res); err != nil {
			t.Fatal(err)
		}
		if res.Board == "r" && res.View == "hour" && len(res.Entries) > 0 {
			first = res
		}
	}
	if len(first.Entries) == 0 {
		t.Fatal("no recorded hour lists anyone")
	}
	top := first.Entries[0].Member
	for _, member := range []string{top, "late"} {
		for _, board := range []string{"r", "t"} {
			want, err := stores[0].RemoveMember(ctx, board, member)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range stores[1:] {
				if got, err := s.RemoveMember(ctx, board, member); err != nil || got != want {
					t.Fatalf("remove %s from %s on %d shards: %v %v, one shard says %v", member, board, shardCopies[i+1], got, err, want)
				}
			}
		}
	}
	amended := sameResults(t, stores, "amended")
	if slices.Equal(amended, recorded) || !strings.Contains(strings.Join(amended, ""), `"amended_at"`) {
		t.Fatal("the removal amended nothing")
	}
	samePages(t, stores)
	for range 2 { // the second relay finds the outboxes empty
		for _, s := range stores {
			if _, err := s.RelayResults(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantStream, wantHooks := streamEvents(t, rdb, stores[0]), removedDeliveries(t, stores[0])
	for i, s := range stores[1:] {
		if got := streamEvents(t, rdb, s); !slices.Equal(got, wantStream) {
			t.Fatalf("results stream on %d shards:\n%s\none shard:\n%s", shardCopies[i+1], strings.Join(got, "\n"), strings.Join(wantStream, "\n"))
		}
		if got := removedDeliveries(t, s); !slices.Equal(got, wantHooks) {
			t.Fatalf("member.removed deliveries on %d shards %v, one shard %v", shardCopies[i+1], got, wantHooks)
		}
		for sh := range shardCopies[i+1] {
			if n := rdb.XLen(ctx, s.ShardPrefix("r", sh)+"out").Val(); n != 0 {
				t.Fatalf("shard %d's outbox holds %d entries after the relay", sh, n)
			}
		}
	}
	if len(wantHooks) == 0 {
		t.Fatal("no member.removed delivery")
	}
}

// TestShardedRecordSeesARemovalBetween: a removal runs between a sharded
// board's merged read and record.lua. Removed in full (its amendment
// counted on the board), the recording reads again; removed by a process
// that died before amending, the result lists the member until the relay
// amends it from the shard's outbox. Either way the result ends equal to
// the one-shard board's with the same removal.
func TestShardedRecordSeesARemovalBetween(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			ranking.GuardKeys(t)
			ctx := context.Background()
			clock := time.Date(2026, 3, 10, 17, 5, 0, 0, time.UTC)
			m, rdb := MustMiniredis(t, clock)
			stores := shardStores(t, rdb, func() time.Time { return clock })
			var batch []ranking.Event
			for i := range 12 {
				batch = append(batch, ranking.Event{Member: fmt.Sprintf("m%02d", i), Value: int64(20 - i), Name: fmt.Sprint("N", i)})
			}
			applyAll(t, stores, "r", batch)
			clock = clock.Add(time.Hour)
			m.SetTime(clock)
			b, _ := stores[0].Config().Board("r")
			v, _ := b.View("hour")
			hour := stores[0].Config().Calendar.PeriodAt(v, clock.Add(-time.Hour)).ID
			// One shard: removed before recording (crash: after, then relayed).
			s0 := stores[0]
			if !crash {
				if ok, err := s0.RemoveMember(ctx, "r", "m00"); err != nil || !ok {
					t.Fatalf("remove: %v %v", ok, err)
				}
			}
			if ok, err := s0.RecordResult(ctx, "r", "hour", hour); err != nil || !ok {
				t.Fatalf("record: %v %v", ok, err)
			}
			if crash {
				if ok, err := s0.RemoveMemberOnly(ctx, "r", "m00"); err != nil || !ok {
					t.Fatalf("remove: %v %v", ok, err)
				}
			}
			if _, err := s0.RelayResults(ctx); err != nil {
				t.Fatal(err)
			}
			want, _ := mustResult(t, s0, "r", "hour", hour)
			for _, s := range stores[1:] {
				var hooked atomic.Int32
				s.SetBeforeRecord(func() {
					if hooked.Add(1) != 1 {
						return
					}
					var err error
					if crash {
						_, err = s.RemoveMemberOnly(ctx, "r", "m00")
					} else {
						_, err = s.RemoveMember(ctx, "r", "m00")
					}
					if err != nil {
						t.Error(err)
					}
				})
				ok, err := s.RecordResult(ctx, "r", "hour", hour)
				s.SetBeforeRecord(nil)
				if err != nil || !ok {
					t.Fatalf("record: %v %v", ok, err)
				}
				if got := hooked.Load(); (got == 1) != crash {
					// Removed in full, the first read is refused and read again.
					t.Fatalf("record read %d times", got)
				}
				if crash {
					r, _ := mustResult(t, s, "r", "hour", hour)
					if r.Entries[0].Member != "m00" {
						t.Fatalf("recorded before the relay %v: the removal's process died before counting itself", rows(r))
					}
				}
				if _, err := s.RelayResults(ctx); err != nil {
					t.Fatal(err)
				}
				got, _ := mustResult(t, s, "r", "hour", hour)
				if !slices.Equal(rows(got), rows(want)) || got.Total != want.Total || got.Digest != want.Digest || got.AmendedAt != want.AmendedAt {
					t.Fatalf("%d shards: %v of %d %s, one shard %v of %d %s", s.Config().Boards[0].Shards, rows(got), got.Total, got.Digest, rows(want), want.Total, want.Digest)
				}
			}
		})
	}
}

// TestShardedResultsOnEveryBackend records a sharded board's finished hour
// on real Redis and the cluster (the hour is made by copying each shard's
// current hour, as TestRemovalAmendsOnEveryBackend does), removes its top
// member and relays: recorded and amended results match the one-shard
// board's but for their timestamps, and the removal's delivery comes from
// the member's shard's outbox.
func TestShardedResultsOnEveryBackend(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends()[1:] {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			stores := shardStores(t, rdb, nil)
			stores = []*ranking.Store{stores[0], stores[1]} // 1 and 3 shards
			var batch []ranking.Event
			for i := range 20 {
				// Distinct scores: events without a time get each script
				// call's clock, and a sharded batch is several calls.
				batch = append(batch, ranking.Event{Member: fmt.Sprintf("m%02d", i), Value: int64(1 + (i*7)%20), Name: fmt.Sprint("N", i)})
			}
			applyAll(t, stores, "r", batch)
			b, _ := stores[0].Config().Board("r")
			v, _ := b.View("hour")
			cal := stores[0].Config().Calendar
			now, err := stores[0].Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cur := cal.PeriodAt(v, now)
			prev := cal.Prev(v, cur).ID
			for _, s := range stores {
				sb, _ := s.Config().Board("r")
				for sh := range sb.Shards {
					pre := s.ShardPrefix("r", sh)
					flat, err := rdb.ZRangeWithScores(ctx, pre+"z:hour:"+cur.ID, 0, -1).Result()
					if err != nil {
						t.Fatal(err)
					}
					if len(flat) == 0 {
						continue
					}
					if err := rdb.ZAdd(ctx, pre+"z:hour:"+prev, flat...).Err(); err != nil {
						t.Fatal(err)
					}
					exp := rdb.ZScore(ctx, pre+"k", "hour:"+cur.ID).Val()
					if err := rdb.ZAdd(ctx, pre+"k", redis.Z{Score: exp, Member: "hour:" + prev}).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			same := func(what string) ranking.Result {
				t.Helper()
				want, _ := mustResult(t, stores[0], "r", "hour", prev)
				got, _ := mustResult(t, stores[1], "r", "hour", prev)
				if !slices.Equal(rows(got), rows(want)) || got.Total != want.Total || got.Digest != want.Digest ||
					(got.AmendedAt == "") != (want.AmendedAt == "") {
					t.Fatalf("%s: 3 shards %v of %d %s, one shard %v of %d %s", what, rows(got), got.Total, got.Digest, rows(want), want.Total, want.Digest)
				}
				return got
			}
			for _, s := range stores {
				if ok, err := s.RecordResult(ctx, "r", "hour", prev); err != nil || !ok {
					t.Fatalf("record: %v %v", ok, err)
				}
			}
			top := same("recorded").Entries[0].Member
			for _, s := range stores {
				if ok, err := s.RemoveMember(ctx, "r", top); err != nil || !ok {
					t.Fatalf("remove: %v %v", ok, err)
				}
			}
			if r := same("amended"); slices.ContainsFunc(r.Entries, func(e ranking.ResultEntry) bool { return e.Member == top }) {
				t.Fatalf("amended result still lists %s", top)
			}
			for _, s := range stores {
				if _, err := s.RelayResults(ctx); err != nil {
					t.Fatal(err)
				}
				if got := removedDeliveries(t, s); !slices.Equal(got, []string{"r"}) {
					t.Fatalf("member.removed deliveries %v", got)
				}
			}
			sh := ranking.ShardOf(top, 3)
			if n := rdb.XLen(ctx, stores[1].ShardPrefix("r", sh)+"out").Val(); n != 0 {
				t.Fatalf("the member's shard's outbox holds %d entries after the relay", n)
			}
		})
	}
}

// TestShardedSweepEqualsUnsharded: members whose hours expired are
// forgotten on every shard's walk, as on the board of one shard: the same
// names, search entries and member records are left, and as many are
// forgotten.
func TestShardedSweepEqualsUnsharded(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	clock := time.Date(2026, 3, 10, 10, 5, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, clock)
	const cfgText = "boards: [{id: w, views: [hour], keep: 1, lateness: 0s, segments: [team], shards: %d}]\n"
	var stores []*ranking.Store
	for _, n := range shardCopies {
		stores = append(stores, rankingtest.MustStore(t, rdb, MustConfig(t, fmt.Sprintf(cfgText, n)), ranking.Options{
			Prefix: fmt.Sprintf("%s-s%d:", redistest.Namespace(t), n), Clock: func() time.Time { return clock },
		}))
	}
	var old, fresh []ranking.Event
	for i := range 40 {
		old = append(old, ranking.Event{Member: fmt.Sprintf("old%02d", i), Value: 1, Name: fmt.Sprint("Player ", i), Segments: map[string]string{"team": "red"}})
	}
	for i := range 15 {
		fresh = append(fresh, ranking.Event{Member: fmt.Sprintf("new%02d", i), Value: 1, Name: fmt.Sprint("Player ", 100+i)})
	}
	applyAll(t, stores, "w", old)
	clock = clock.Add(4 * time.Hour)
	m.SetTime(clock)
	applyAll(t, stores, "w", fresh)
	var want int
	for i, s := range stores {
		if err := s.SyncClock(ctx); err != nil {
			t.Fatal(err)
		}
		forgotten := 0
		for range 20 {
			rep, err := s.Sweep(ctx)
			if err != nil {
				t.Fatal(err)
			}
			forgotten += rep.Forgotten
		}
		if i == 0 {
			want = forgotten
		} else if forgotten != want {
			t.Fatalf("%d shards forgot %d, one shard %d", shardCopies[i], forgotten, want)
		}
	}
	if want == 0 {
		t.Fatal("nothing forgotten")
	}
	// What is left of n, ni and sm over the shards (search itself is
	// read elsewhere).
	left := func(st *ranking.Store) []string {
		var out []string
		b, _ := st.Config().Board("w")
		for sh := range b.Shards {
			pre := st.ShardPrefix("w", sh)
			for _, f := range rdb.HKeys(ctx, pre+"n").Val() {
				out = append(out, "n "+f)
			}
			for _, e := range rdb.ZRange(ctx, pre+"ni", 0, -1).Val() {
				out = append(out, "ni "+e)
			}
			for _, f := range rdb.HKeys(ctx, pre+"sm").Val() {
				out = append(out, "sm "+f)
			}
		}
		slices.Sort(out)
		return out
	}
	wantLeft := left(stores[0])
	if slices.ContainsFunc(wantLeft, func(e string) bool { return strings.Contains(e, "old") }) {
		t.Fatalf("one shard kept %v", wantLeft)
	}
	for i, s := range stores[1:] {
		if got := left(s); !slices.Equal(got, wantLeft) {
			t.Fatalf("%d shards kept %v, one shard %v", shardCopies[i+1], got, wantLeft)
		}
	}
}

// TestShardedStreamCrashIsClaimed is TestStreamCrashIsClaimed on a board of
// 3 shards, shorter: each entry's event goes to its member's shard, where
// its id (the entry's) makes a re-applied entry a duplicate.
func TestShardedStreamCrashIsClaimed(t *testing.T) {
	t.Parallel() // waits on timeouts, its own servers or prefix
	for _, be := range backends()[1:] {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: points, stream: true, max_score: 1000000, views: [all], shards: 3}]\n")
			ctx := context.Background()
			storeA := newStore(t, rdb, cfg, nil)
			storeB := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: storeA.Prefix()})
			key := storeA.StreamKey("points")
			r := rand.New(rand.NewPCG(27, 2))
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
			const total = 2000
			for range total {
				m := fmt.Sprintf("m%d", r.IntN(50))
				v := int64(r.IntN(100) + 1)
				values := map[string]any{"member": m, "value": fmt.Sprint(v)}
				isBad := false
				switch k := r.IntN(20); {
				case k == 0:
					values["value"] = "x"
					isBad = true
				case k < 4:
					id := fmt.Sprintf("id%d", r.IntN(300))
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
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range pends {
				if p.bad {
					bad[p.cmd.Val()] = streamEntry{values: p.values, bad: true}
				}
			}
			var batches atomic.Int64
			crashed := make(chan struct{})
			var once sync.Once
			optsA := ranking.WithBeforeAck(ranking.StreamOptions{Block: 50 * time.Millisecond}, func(string, int) bool {
				if batches.Add(1) < 5 {
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

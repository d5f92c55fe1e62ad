package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// The sharded equivalence model: the same events go into a board with one
// shard and into copies of it with 2, 5 and 16 shards; every answer (each
// write's result, and every read of every view at many offsets) must be
// the same. The one-shard board is itself checked against the brute-force
// model (model_test.go), so equal answers are right answers.

var shardCounts = []int{2, 5, 16}

// shardBases are the boards copied: both orders, both tie rules, the three
// update policies, decimals, a rolling window and a segment name.
var shardBases = []string{
	`{id: inc, update: increment, order: desc, ties: first, decimals: 1, min_score: -20, max_score: 20, views: [hour, day, week, all, 3d], segments: [country], lateness: 48h}`,
	`{id: sha, update: increment, order: asc, ties: shared, min_score: -15, max_score: 15, views: [day, week, all, 2d], lateness: 48h}`,
	`{id: best, update: best, order: asc, ties: first, decimals: 2, min_score: 0, max_score: 10, views: [day, all], lateness: 48h}`,
	`{id: lat, update: latest, order: desc, ties: shared, min_score: -5, max_score: 5, views: [day, month, all], segments: [country], lateness: 48h}`,
}

func shardConfig(tz string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "timezone: %s\nboards:\n", tz)
	for _, base := range shardBases {
		fmt.Fprintf(&sb, "  - %s\n", base)
		id := strings.TrimPrefix(strings.Fields(base)[1], "")
		id = strings.TrimSuffix(id, ",")
		for _, n := range shardCounts {
			copyOf := strings.Replace(base, "{id: "+id+",", fmt.Sprintf("{id: %s-s%d, shards: %d,", id, n, n), 1)
			fmt.Fprintf(&sb, "  - %s\n", copyOf)
		}
	}
	return sb.String()
}

type shardWorkload struct {
	t       *testing.T
	rng     *rand.Rand
	store   *ranking.Store
	cfg     *ranking.Config
	members []string
	now     func() time.Time
	step    func()
	ids     []ranking.Event
	// dated gives every event an explicit time: on a real Redis, whose
	// clock moves between the copies' writes, so that ties fall alike.
	dated   bool
	last    map[string][]ranking.Event // each board's last batch
	removed int                        // removals of a member on the board
}

func (w *shardWorkload) event(b *ranking.Board) ranking.Event {
	r := w.rng
	ev := ranking.Event{Member: w.members[r.IntN(len(w.members))]}
	scale := int64(1)
	for range b.Decimals {
		scale *= 10
	}
	switch b.Update {
	case ranking.Increment:
		ev.Value = int64(r.IntN(9)-3) * scale / 2
	default:
		ev.Value = b.Min + (b.Max-b.Min)*int64(r.IntN(5))/4
	}
	if w.dated || r.IntN(3) == 0 {
		back := time.Duration(r.Int64N(int64(40 * time.Hour)))
		grid := []time.Duration{time.Millisecond, time.Second, time.Hour}[r.IntN(3)]
		ev.At = w.now().Add(-back).Truncate(grid)
	}
	if r.IntN(4) == 0 {
		ev.Name = "Name of " + ev.Member
	}
	if len(b.Segments) > 0 && r.IntN(2) == 0 {
		ev.Segments = map[string]string{"country": []string{"FR", "DE", "us"}[r.IntN(3)]}
	}
	if r.IntN(6) == 0 {
		if len(w.ids) > 0 && r.IntN(3) == 0 {
			return w.ids[r.IntN(len(w.ids))] // a retry: duplicate
		}
		ev.ID = fmt.Sprintf("evt-%d", r.Int64())
		w.ids = append(w.ids, ev)
	}
	return ev
}

// copies are the sharded copies of base board id.
func (w *shardWorkload) copies(id string) []string {
	out := make([]string, len(shardCounts))
	for i, n := range shardCounts {
		out[i] = fmt.Sprintf("%s-s%d", id, n)
	}
	return out
}

func (w *shardWorkload) run(events int) {
	ctx := context.Background()
	var bases []*ranking.Board
	for _, b := range w.cfg.Boards {
		if b.Shards == 1 {
			bases = append(bases, b)
		}
	}
	for done, batches := 0, 0; done < events; batches++ {
		b := bases[w.rng.IntN(len(bases))]
		if last := w.last[b.ID]; len(last) > 0 && w.rng.IntN(8) == 0 {
			// A removal, now and then, of a member the board's last batch
			// wrote: every copy answers as the board.
			m := last[w.rng.IntN(len(last))].Member
			want, err := w.store.RemoveMember(ctx, b.ID, m)
			if err != nil {
				w.t.Fatalf("remove %s from %s: %v", m, b.ID, err)
			}
			for _, id := range w.copies(b.ID) {
				if got, err := w.store.RemoveMember(ctx, id, m); err != nil || got != want {
					w.t.Fatalf("remove %s from %s: %v %v, the board says %v", m, id, got, err, want)
				}
			}
			if want {
				w.removed++
			}
			continue
		}
		n := 1 + w.rng.IntN(30)
		if w.rng.IntN(20) == 0 {
			n = 101 + w.rng.IntN(150)
		}
		batch := make([]ranking.Event, n)
		for i := range batch {
			batch[i] = w.event(b)
		}
		w.last[b.ID] = batch
		opts := ranking.ApplyOptions{NoRanks: batches%3 == 1}
		want, err := w.store.Apply(ctx, b.ID, batch, opts)
		if err != nil {
			w.t.Fatalf("apply %s: %v", b.ID, err)
		}
		for _, id := range w.copies(b.ID) {
			got, err := w.store.Apply(ctx, id, batch, opts)
			if err != nil {
				w.t.Fatalf("apply %s: %v", id, err)
			}
			for i := range want {
				// A sharded board answers the ranks after the whole batch;
				// with one event that is the rank after the event.
				if !sameResult(got[i], want[i], n > 1) {
					w.t.Fatalf("board %s event %+v:\n got %+v\nwant %+v (board %s)", id, batch[i], got[i], want[i], b.ID)
				}
				if n > 1 && !opts.NoRanks && got[i].Err == nil && !got[i].Duplicate {
					for _, vs := range got[i].Views {
						var rank int64
						c, err := w.store.Member(ctx, b.ID, vs.View, got[i].Member, ranking.MemberQuery{Period: vs.Period})
						if err == nil {
							rank = c.Rank
						}
						if vs.Rank != rank {
							w.t.Fatalf("board %s event %+v view %s: rank %d after the batch, the board with one shard says %d", id, batch[i], vs.View, vs.Rank, rank)
						}
					}
				}
			}
		}
		done += n
		w.step()
	}
}

func sameResult(a, b ranking.WriteResult, noRanks bool) bool {
	if codeOf(a.Err) != codeOf(b.Err) {
		return false
	}
	if a.Err != nil {
		return true
	}
	if a.Duplicate && b.Duplicate {
		// A duplicate answers the member's state in the original event's
		// periods as far as its script call lists them, which depends on
		// the other events of the call.
		return a.Member == b.Member
	}
	if noRanks {
		a.Views, b.Views = slices.Clone(a.Views), slices.Clone(b.Views)
		for k := range a.Views {
			a.Views[k].Rank = 0
		}
		for k := range b.Views {
			b.Views[k].Rank = 0
		}
	}
	return a.Member == b.Member && a.Duplicate == b.Duplicate && a.At.Equal(b.At) && slices.Equal(a.Views, b.Views)
}

// verify compares every read of every view of every base board with its
// copies': the current and previous periods, the board and a segment.
func (w *shardWorkload) verify() (checked int) {
	ctx := context.Background()
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 {
			continue
		}
		segs := []ranking.Segment{{}}
		if len(b.Segments) > 0 {
			segs = append(segs, ranking.Segment{Name: "country", Value: "FR"})
		}
		for _, v := range b.Views {
			for _, seg := range segs {
				cur, err := w.store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Segment: seg, Limit: 1})
				if err != nil {
					w.t.Fatal(err)
				}
				periods := []string{""}
				if v.Kind != ranking.All {
					periods = append(periods, w.store.Config().Calendar.Prev(v, cur.Period).ID)
				}
				for _, period := range periods {
					checked += w.verifyView(b, v, seg, period)
				}
			}
		}
	}
	return checked
}

func (w *shardWorkload) verifyView(b *ranking.Board, v ranking.View, seg ranking.Segment, period string) (checked int) {
	ctx := context.Background()
	where := fmt.Sprintf("%s/%s %v period %q", b.ID, v.Name, seg, period)
	first, err := w.store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Segment: seg, Period: period, Limit: 1})
	if err != nil {
		w.t.Fatalf("%s: %v", where, err)
	}
	total := int(first.Total)
	offsets := []int{0, 1, 99, 100, total / 2, total - 1, total + 5}
	type pq struct{ offset, limit int }
	var qs []pq
	for _, o := range offsets {
		if o < 0 {
			continue
		}
		for _, l := range []int{7, 100} {
			qs = append(qs, pq{o, l})
		}
	}
	for _, id := range w.copies(b.ID) {
		for _, q := range qs {
			pageQ := ranking.PageQuery{Segment: seg, Period: period, Offset: q.offset, Limit: q.limit}
			want, err := w.store.Page(ctx, b.ID, v.Name, pageQ)
			if err != nil {
				w.t.Fatalf("%s: %v", where, err)
			}
			got, err := w.store.Page(ctx, id, v.Name, pageQ)
			if err != nil {
				w.t.Fatalf("%s on %s: %v", where, id, err)
			}
			if got.Total != want.Total || got.Period.ID != want.Period.ID || !slices.Equal(got.Entries, want.Entries) {
				w.t.Fatalf("%s offset %d limit %d on %s:\n got total %d %v\nwant total %d %v", where, q.offset, q.limit, id, got.Total, got.Entries, want.Total, want.Entries)
			}
			checked++
		}
		// Members' ranks and neighbours: a sample, the same for every copy.
		sample := []string{w.members[0], w.members[len(w.members)-1]}
		for range 8 {
			sample = append(sample, w.members[w.rng.IntN(len(w.members))])
		}
		for _, m := range sample {
			mq := ranking.MemberQuery{Segment: seg, Period: period, Around: 3}
			want, werr := w.store.Member(ctx, b.ID, v.Name, m, mq)
			got, gerr := w.store.Member(ctx, id, v.Name, m, mq)
			if codeOf(werr) != codeOf(gerr) {
				w.t.Fatalf("%s member %s on %s: got error %v, want %v", where, m, id, gerr, werr)
			}
			if werr != nil {
				continue
			}
			if got.Rank != want.Rank || got.Total != want.Total || got.Score != want.Score || got.Name != want.Name ||
				!slices.Equal(got.Around, want.Around) {
				w.t.Fatalf("%s member %s on %s:\n got #%d/%d %v\nwant #%d/%d %v", where, m, id, got.Rank, got.Total, got.Around, want.Rank, want.Total, want.Around)
			}
			checked++
		}
		// A member list with absent and repeated ids.
		list := []string{"nobody", w.members[0], w.members[0]}
		for range 12 {
			list = append(list, w.members[w.rng.IntN(len(w.members))])
		}
		mq := ranking.MembersQuery{Segment: seg, Period: period}
		want, err := w.store.Members(ctx, b.ID, v.Name, list, mq)
		if err != nil {
			w.t.Fatal(err)
		}
		got, err := w.store.Members(ctx, id, v.Name, list, mq)
		if err != nil {
			w.t.Fatal(err)
		}
		if got.Total != want.Total || !slices.Equal(got.Entries, want.Entries) {
			w.t.Fatalf("%s members on %s:\n got %v\nwant %v", where, id, got.Entries, want.Entries)
		}
		checked++
	}
	return checked
}

func newShardWorkload(t *testing.T, rdb redis.UniversalClient, members int, seed uint64) *shardWorkload {
	cfg, err := ranking.ParseConfig([]byte(shardConfig("Europe/Paris")))
	if err != nil {
		t.Fatal(err)
	}
	w := &shardWorkload{t: t, rng: rand.New(rand.NewPCG(seed, 17)), cfg: cfg, last: map[string][]ranking.Event{}}
	w.store = rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: redistest.Namespace(t) + ":"})
	for i := range members {
		w.members = append(w.members, fmt.Sprintf("m%04d", i))
	}
	w.members = append(w.members, "Zed", "zed", "ünï", "a b", "0")
	return w
}

// TestShardedReadsEqualUnshardedMiniredis moves miniredis's clock over
// days and a week boundary while events arrive, some late; the merged
// reads take their counting path on small boards (low thresholds) and
// their shallow path.
func TestShardedReadsEqualUnshardedMiniredis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		shallow, window int64
		events          int
	}{{"counting", 5, 8, 1000}, {"shallow", 1000, 4096, 500}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := miniredis.RunT(t)
			loc, _ := time.LoadLocation("Europe/Paris")
			clock := time.Date(2026, 11, 14, 20, 0, 0, 0, loc)
			m.SetTime(clock)
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { rdb.Close() })
			w := newShardWorkload(t, rdb, 150, 3)
			ranking.SetShardReadLimits(w.store, tc.shallow, tc.window)
			w.now = func() time.Time { return clock }
			w.step = func() {
				clock = clock.Add(time.Duration(w.rng.IntN(90)) * time.Minute)
				m.SetTime(clock)
			}
			w.run(tc.events / raceScale)
			if n := w.verify(); n == 0 {
				t.Fatal("nothing verified")
			}
			t.Logf("%d removals", w.removed)
		})
	}
}

// TestShardedDeepPages reads pages deep into boards of 2,500 members with
// the production thresholds: offsets past the shallow read take the
// counting path, on a board of few codes (ties: entries narrow the cut)
// and on one of many (codes do).
func TestShardedDeepPages(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 11, 14, 20, 0, 0, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	w := newShardWorkload(t, rdb, 2500, 5)
	ctx := context.Background()
	for _, tc := range []struct {
		board  string
		values int // scores drawn from [0, values) then centred
	}{{"sha", 30}, {"inc", 400}} {
		batch := make([]ranking.Event, 0, ranking.MaxBatch)
		for i, mem := range w.members {
			batch = append(batch, ranking.Event{Member: mem, Value: int64(w.rng.IntN(tc.values) - tc.values/2), Name: "N" + mem})
			if len(batch) == ranking.MaxBatch || i == len(w.members)-1 {
				for _, id := range append([]string{tc.board}, w.copies(tc.board)...) {
					if _, err := w.store.Apply(ctx, id, batch, ranking.ApplyOptions{NoRanks: true}); err != nil {
						t.Fatal(err)
					}
				}
				batch = batch[:0]
			}
		}
		b, _ := w.store.Config().Board(tc.board)
		for _, v := range b.Views {
			w.verifyView(b, v, ranking.Segment{}, "")
		}
		// An export: pages one after another, each from the end of the one
		// before (PageQuery.After), equal to the one-shard board's.
		for _, id := range w.copies(tc.board) {
			var after *ranking.Cursor
			for offset := 0; ; offset += 100 {
				q := ranking.PageQuery{Offset: offset, Limit: 100, NoPrevRanks: true}
				want, err := w.store.Page(ctx, tc.board, "all", q)
				if err != nil {
					t.Fatal(err)
				}
				q.After = after
				got, err := w.store.Page(ctx, id, "all", q)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Entries, want.Entries) {
					t.Fatalf("export offset %d on %s:\n got %v\nwant %v", offset, id, got.Entries, want.Entries)
				}
				if len(got.Entries) < 100 {
					break
				}
				after = got.Next
			}
		}
		for _, offset := range []int{999, 1000, 1001, 1234, 2000, 2499, 2504} {
			want, err := w.store.Page(ctx, tc.board, "all", ranking.PageQuery{Offset: offset, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range w.copies(tc.board) {
				got, err := w.store.Page(ctx, id, "all", ranking.PageQuery{Offset: offset, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Entries, want.Entries) {
					t.Fatalf("offset %d on %s:\n got %v\nwant %v", offset, id, got.Entries, want.Entries)
				}
			}
		}
	}
	// Many codes: a deep page is three calls a shard (the guesses and the
	// counts, the codes placed where those guesses say the cut falls, then
	// what is left of the cut read with the page), on a store whose
	// commands the test sees.
	watched := ranking.StoreOnClient(rdb, w.cfg, ranking.Options{Prefix: w.store.Prefix()})
	calls := &countCalls{n: map[string]int{}}
	rdb.AddHook(calls)
	for _, n := range shardCounts {
		id := fmt.Sprintf("inc-s%d", n)
		for _, offset := range []int{1234, 2000} {
			want, err := w.store.Page(ctx, "inc", "all", ranking.PageQuery{Offset: offset, Limit: 100, NoPrevRanks: true})
			if err != nil {
				t.Fatal(err)
			}
			calls.take()
			got, err := watched.Page(ctx, id, "all", ranking.PageQuery{Offset: offset, Limit: 100, NoPrevRanks: true})
			if err != nil {
				t.Fatal(err)
			}
			if c := calls.take(); c["script"] == 0 || c["script"] > 3*n {
				t.Errorf("offset %d on %s: commands %v, want at most %d script calls", offset, id, c, 3*n)
			}
			if !slices.Equal(got.Entries, want.Entries) {
				t.Fatalf("offset %d on %s:\n got %v\nwant %v", offset, id, got.Entries, want.Entries)
			}
		}
	}
}

// TestShardedReadsEqualUnshardedRedis runs a shorter workload on a real
// Redis and on the 3-master cluster, whose shards spread over its masters.
func TestShardedReadsEqualUnshardedRedis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.ClusterClient(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each flavour on its own server, under its own prefix
			w := newShardWorkload(t, tc.rdb(t), 60, 11)
			ranking.SetShardReadLimits(w.store, 5, 8)
			w.now = func() time.Time {
				now, err := w.store.Now(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return now
			}
			w.step = func() {}
			w.dated = true
			w.run(600 / raceScale)
			if n := w.verify(); n == 0 {
				t.Fatal("nothing verified")
			}
		})
	}
}

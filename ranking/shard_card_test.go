package ranking_test

import (
	"context"
	"fmt"
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

// Rank cards, name search and segment value lists of sharded boards answer
// what the same board with one shard answers (shard_model_test.go's
// workload: the one-shard board is itself checked against the brute-force
// model).

// cardText is everything a card shows, as comparable text (the read's own
// clock and board left out).
func cardText(rc *ranking.RankCard) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s final=%v total=%d #%d %s %q score=%d top=%v\naround %v\n",
		rc.Period.ID, rc.Final, rc.Total, rc.Rank, rc.Member, rc.Name, rc.Score, rc.TopPercent, rc.Around)
	for _, pt := range rc.History.Points {
		fmt.Fprintf(&sb, "history %s %d #%d %d %v\n", pt.Period.ID, pt.Total, pt.Rank, pt.Score, pt.Present)
	}
	for _, vs := range rc.Views {
		fmt.Fprintf(&sb, "view %s %s %v %d #%d %d %v\n", vs.View.Name, vs.Period.ID, vs.Final, vs.Total, vs.Rank, vs.Score, vs.Present)
	}
	for _, sg := range rc.Segments {
		fmt.Fprintf(&sb, "segment %v %d #%d %d\n", sg.Segment, sg.Total, sg.Rank, sg.Score)
	}
	if m := rc.PassedBy; m != nil {
		fmt.Fprintf(&sb, "passed by %s %q, %s %q #%d %s %s\n", m.Member, m.Name, m.Passed, m.PassedName, m.Rank, m.Period, m.At.UTC())
	}
	return sb.String()
}

// copyMoves gives each sharded copy the base board's overtakes lists, so
// that cards compare who passed whom (the lists are the board's own).
func (w *shardWorkload) copyMoves(rdb redis.UniversalClient, prefix string) {
	ctx := context.Background()
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 {
			continue
		}
		for _, v := range b.Views {
			lines, err := rdb.LRange(ctx, prefix+"{"+b.ID+"}:mv:"+v.Name, 0, -1).Result()
			if err != nil {
				w.t.Fatal(err)
			}
			for _, id := range w.copies(b.ID) {
				key := prefix + "{" + id + "}:mv:" + v.Name
				rdb.Del(ctx, key)
				if len(lines) > 0 {
					if err := rdb.RPush(ctx, key, lines).Err(); err != nil {
						w.t.Fatal(err)
					}
				}
			}
		}
	}
}

// verifyCards compares rank cards: every member's on every view's current
// period (members are every members[i] with i % every == 0), a sample's on
// the previous period and on a segment board.
func (w *shardWorkload) verifyCards(every int) (checked int) {
	ctx := context.Background()
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 {
			continue
		}
		for _, v := range b.Views {
			cur, err := w.store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Limit: 1})
			if err != nil {
				w.t.Fatal(err)
			}
			type cq struct {
				member string
				q      ranking.RankCardQuery
			}
			var qs []cq
			for i, m := range w.members {
				if i%every == 0 {
					qs = append(qs, cq{m, ranking.RankCardQuery{Around: 2, History: 4}})
				}
			}
			for k := range 12 {
				m := w.members[(k*37)%len(w.members)]
				if v.Kind != ranking.All {
					prev := w.store.Config().Calendar.Prev(v, cur.Period).ID
					qs = append(qs, cq{m, ranking.RankCardQuery{Period: prev, Around: 3, History: 3}})
				}
				if len(b.Segments) > 0 {
					seg := ranking.Segment{Name: "country", Value: []string{"FR", "DE", "us"}[k%3]}
					qs = append(qs, cq{m, ranking.RankCardQuery{Segment: seg, Around: 1, History: 2}})
				}
			}
			for _, c := range qs {
				want, werr := w.store.RankCard(ctx, b.ID, v.Name, c.member, c.q)
				for _, id := range w.copies(b.ID) {
					got, gerr := w.store.RankCard(ctx, id, v.Name, c.member, c.q)
					if codeOf(gerr) != codeOf(werr) {
						w.t.Fatalf("%s/%s card of %s %+v: got error %v, want %v", id, v.Name, c.member, c.q, gerr, werr)
					}
					if werr != nil {
						continue
					}
					if g, wt := cardText(got), cardText(want); g != wt {
						w.t.Fatalf("%s/%s card of %s %+v:\n got %s\nwant %s", id, v.Name, c.member, c.q, g, wt)
					}
					checked++
				}
			}
		}
	}
	return checked
}

// verifySearch compares name searches: prefixes matching many members,
// few, one and none; ids and names (events give "Name of <id>" names, so
// "name of m0" matches by name members that sit on every shard).
func (w *shardWorkload) verifySearch() (checked int) {
	ctx := context.Background()
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 {
			continue
		}
		for _, q := range []string{"m", "M0", "m00", "m001", "name", "Name of m0", "NAME OF M01", "z", "Zed", "ü", "u", "a b", "0", "nobody"} {
			want, err := w.store.SearchMembers(ctx, b.ID, q)
			if err != nil {
				w.t.Fatal(err)
			}
			for _, id := range w.copies(b.ID) {
				got, err := w.store.SearchMembers(ctx, id, q)
				if err != nil {
					w.t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					w.t.Fatalf("search %q on %s:\n got %v\nwant %v", q, id, got, want)
				}
				checked++
			}
		}
	}
	return checked
}

// verifySegments compares the values seen of each segment name.
func (w *shardWorkload) verifySegments() (checked int) {
	ctx := context.Background()
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 || len(b.Segments) == 0 {
			continue
		}
		want, err := w.store.SegmentValues(ctx, b.ID, "country")
		if err != nil {
			w.t.Fatal(err)
		}
		wantChoices, err := w.store.SegmentChoices(ctx, b.ID, 2)
		if err != nil {
			w.t.Fatal(err)
		}
		for _, id := range w.copies(b.ID) {
			got, err := w.store.SegmentValues(ctx, id, "country")
			if err != nil {
				w.t.Fatal(err)
			}
			choices, err := w.store.SegmentChoices(ctx, id, 2)
			if err != nil {
				w.t.Fatal(err)
			}
			if !slices.Equal(got, want) || fmt.Sprint(choices) != fmt.Sprint(wantChoices) {
				w.t.Fatalf("segment values on %s: got %v %v, want %v %v", id, got, choices, want, wantChoices)
			}
			checked++
		}
	}
	return checked
}

// fill writes the same batches into every base board and its copies
// with every event dated: Redis's clock moves between the copies' writes
// on a real server, and the reads compared here need the same data, not
// the same write answers (shardWorkload.run compares those on miniredis).
func (w *shardWorkload) fill(events int) {
	ctx := context.Background()
	at := w.now()
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 {
			continue
		}
		batch := make([]ranking.Event, 0, events)
		for range events {
			ev := w.event(b)
			if ev.At.IsZero() {
				ev.At = at.Truncate(time.Millisecond)
			}
			batch = append(batch, ev)
		}
		for len(batch) > 0 {
			n := min(len(batch), ranking.MaxBatch)
			for _, id := range append([]string{b.ID}, w.copies(b.ID)...) {
				if _, err := w.store.Apply(ctx, id, batch[:n], ranking.ApplyOptions{}); err != nil {
					w.t.Fatalf("apply %s: %v", id, err)
				}
			}
			batch = batch[n:]
		}
	}
}

// TestShardedCardsEqualUnshardedMiniredis: cards of every member, search
// and segment lists while miniredis's clock moves over days and a week
// boundary, on the counting and the shallow paths of merged reads.
func TestShardedCardsEqualUnshardedMiniredis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		shallow, window int64
	}{{"counting", 5, 8}, {"shallow", 1000, 4096}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := miniredis.RunT(t)
			loc, _ := time.LoadLocation("Europe/Paris")
			clock := time.Date(2026, 11, 14, 20, 0, 0, 0, loc)
			m.SetTime(clock)
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { rdb.Close() })
			w := newShardWorkload(t, rdb, 50, 11)
			ranking.SetShardReadLimits(w.store, tc.shallow, tc.window)
			w.now = func() time.Time { return clock }
			w.step = func() {
				clock = clock.Add(time.Duration(w.rng.IntN(90)) * time.Minute)
				m.SetTime(clock)
			}
			w.run(600 / raceScale)
			w.copyMoves(rdb, w.store.Prefix())
			every := 2
			if tc.name == "shallow" {
				every = 7
			}
			n := w.verifyCards(every) + w.verifySearch() + w.verifySegments() + w.verifyPresence()
			t.Logf("%d answers compared", n)
		})
	}
}

// TestShardedCardsEqualUnsharded is a shorter run on real Redis and the
// cluster.
func TestShardedCardsEqualUnsharded(t *testing.T) {
	for _, be := range redistest.Backends(nil)[1:] {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			w := newShardWorkload(t, rdb, 30, 13)
			w.now = time.Now
			w.step = func() {}
			w.fill(250)
			w.copyMoves(rdb, w.store.Prefix())
			n := w.verifyCards(3) + w.verifySearch() + w.verifySegments() + w.verifyPresence()
			t.Logf("%d answers compared", n)
		})
	}
}

// TestShardedSegmentValuesCap: each shard caps its own values index, so
// the union could exceed MaxSegmentValues; a sharded board lists its
// first MaxSegmentValues values in byte order, never more than a board of
// one shard can hold.
func TestShardedSegmentValuesCap(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	cfg, err := ranking.ParseConfig([]byte("boards:\n  - {id: sb, shards: 3, views: [all], segments: [country]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: redistest.Namespace(t) + ":"})
	ctx := context.Background()
	var union []string
	for i, n := range []int{ranking.MaxSegmentValues, 600, 3} {
		zs := make([]redis.Z, n)
		for j := range zs {
			v := fmt.Sprintf("v%d-%05d", (j+i*(j%2))%7, j) // shards share half their values
			zs[j] = redis.Z{Member: v}
			union = append(union, v)
		}
		if err := rdb.ZAdd(ctx, ranking.ShardSegValuesKey(s, "sb", i, "country"), zs...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(union)
	union = slices.Compact(union)
	if len(union) <= ranking.MaxSegmentValues {
		t.Fatalf("the union holds %d values, not past the cap", len(union))
	}
	got, err := s.SegmentValues(ctx, "sb", "country")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, union[:ranking.MaxSegmentValues]) {
		t.Fatalf("got %d values from %q, want the union's first %d from %q", len(got), got[0], ranking.MaxSegmentValues, union[0])
	}
	choices, err := s.SegmentChoices(ctx, "sb", 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(choices) != 1 || !slices.Equal(choices[0], union[:4]) {
		t.Fatalf("choices %v, want %v", choices, union[:4])
	}
}

// verifyPresence compares Scored and the overtakes' names (the lists are
// the base board's, copied by copyMoves).
func (w *shardWorkload) verifyPresence() (checked int) {
	ctx := context.Background()
	list := append([]string{"nobody"}, w.members...)
	for _, b := range w.cfg.Boards {
		if b.Shards != 1 {
			continue
		}
		for _, v := range b.Views {
			want, err := w.store.Scored(ctx, b.ID, v.Name, ranking.Segment{}, list)
			if err != nil {
				w.t.Fatal(err)
			}
			wantMoves, _, err := w.store.Moves(ctx, b.ID, v.Name, ranking.MaxMoves)
			if err != nil {
				w.t.Fatal(err)
			}
			for _, id := range w.copies(b.ID) {
				got, err := w.store.Scored(ctx, id, v.Name, ranking.Segment{}, list)
				if err != nil {
					w.t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					w.t.Fatalf("scored on %s/%s: got %v, want %v", id, v.Name, got, want)
				}
				moves, _, err := w.store.Moves(ctx, id, v.Name, ranking.MaxMoves)
				if err != nil {
					w.t.Fatal(err)
				}
				if !slices.Equal(moves, wantMoves) {
					w.t.Fatalf("moves on %s/%s: got %v, want %v", id, v.Name, moves, wantMoves)
				}
				checked += 2
			}
		}
	}
	return checked
}

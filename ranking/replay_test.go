package ranking_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// replayBoards is a board of one shard, a sharded one and one with
// segments, with every kind of answered view; keep 30 holds an hour 30
// hours after its end.
const replayBoards = `boards:
  - {id: one, views: [hour, day, week, 7d, all], keep: 30, lateness: 1h}
  - {id: sh, shards: 3, views: [hour, day, week, 7d, all], keep: 30, lateness: 1h}
  - {id: seg, segments: [country], views: [hour, day, week, 7d, all], keep: 30, lateness: 1h}
`

// idKey is the key of the idempotency record of id, on member's shard.
func idKey(s *ranking.Store, b *ranking.Board, member, id string) string {
	return s.ShardPrefix(b.ID, ranking.ShardOf(member, b.Shards)) + "e:" + id
}

// outlive makes an idempotency record outlast the dedupe window, as a
// longer window would: the duplicate then comes when the original's
// periods are long past.
func outlive(t *testing.T, rdb redis.UniversalClient, key string) {
	t.Helper()
	if ok, err := rdb.Persist(context.Background(), key).Result(); err != nil || !ok {
		t.Fatalf("persist %s: %v %v", key, ok, err)
	}
}

// checkReplay checks a duplicate's answer: the original's periods, and in
// each the member's state now as a card read says (0, rank 0 when the
// member is not there, or the period is past its retention). wantScore
// lists views where the member must still have a score.
func checkReplay(t *testing.T, s *ranking.Store, board, member string, orig, got ranking.WriteResult, wantScore ...string) {
	t.Helper()
	ctx := context.Background()
	if !got.Duplicate || got.Err != nil {
		t.Fatalf("not a duplicate: %+v", got)
	}
	for vi, v := range got.Views {
		if v.View != orig.Views[vi].View || v.Period != orig.Views[vi].Period {
			t.Errorf("view %s: period %s, want the original's %s", v.View, v.Period, orig.Views[vi].Period)
			continue
		}
		var score, rank int64
		c, err := s.Member(ctx, board, v.View, member, ranking.MemberQuery{Period: v.Period})
		switch {
		case err == nil:
			score, rank = c.Score, c.Rank
		case ranking.ErrorCode(err) != ranking.ENOTFOUND:
			t.Fatalf("view %s period %s: %v", v.View, v.Period, err)
		}
		if v.Score != score || v.Rank != rank {
			t.Errorf("view %s period %s: duplicate answers score %d rank %d, the period holds %d rank %d", v.View, v.Period, v.Score, v.Rank, score, rank)
		}
		for _, w := range wantScore {
			if w == v.View && v.Score == 0 {
				t.Errorf("view %s period %s: score 0, want the member's score there", v.View, v.Period)
			}
		}
	}
}

// TestReplayOriginalPeriods: a duplicate answers the member's state in the
// periods its original went to, however long ago those were (here the
// record is made to outlive the dedupe window): hours, days, weeks and
// windows no longer around now, and a period past its retention as
// absent, on a board of one shard and a sharded one.
func TestReplayOriginalPeriods(t *testing.T) {
	t0 := time.Date(2026, 11, 18, 10, 20, 0, 0, time.UTC) // a Wednesday
	for _, tc := range []struct {
		name  string
		after time.Duration
		score []string // views where alice still has a score
	}{
		{"hour 2h old", 2 * time.Hour, []string{"hour", "day", "week", "7d", "all"}},
		{"hour 23h old", 23 * time.Hour, []string{"hour", "day", "week", "7d", "all"}},
		{"day before yesterday", 50 * time.Hour, []string{"day", "week", "7d", "all"}},
		{"window 4 days old", 4 * 24 * time.Hour, []string{"day", "week", "7d", "all"}},
		{"week two weeks old", 15 * 24 * time.Hour, []string{"day", "week", "7d", "all"}},
		{"past retention", 40 * 24 * time.Hour, []string{"week", "all"}},
	} {
		for _, board := range []string{"one", "sh", "seg"} {
			t.Run(tc.name+"/"+board, func(t *testing.T) {
				m, rdb := MustMiniredis(t, t0)
				cfg := MustConfig(t, replayBoards)
				b, _ := cfg.Board(board)
				clock := t0
				s := newStore(t, rdb, cfg, func() time.Time { return clock })
				ctx := context.Background()
				at := func(d time.Duration) {
					clock = t0.Add(d)
					m.SetTime(clock)
				}
				write := func(ev ranking.Event) ranking.WriteResult {
					t.Helper()
					if board == "seg" {
						ev.Segments = map[string]string{"country": "FR"}
					}
					res, err := s.Write(ctx, board, ev)
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				orig := write(ranking.Event{Member: "alice", Value: 5, ID: "o"})
				outlive(t, rdb, idKey(s, b, "alice", "o"))
				write(ranking.Event{Member: "bob", Value: 7})
				at(time.Minute)
				write(ranking.Event{Member: "alice", Value: 3}) // the original's periods change after it
				write(ranking.Event{Member: "carol", Value: 9})
				at(tc.after)
				write(ranking.Event{Member: "dave", Value: 1})
				got := write(ranking.Event{Member: "alice", Value: 5, ID: "o"})
				checkReplay(t, s, board, "alice", orig, got, tc.score...)
				// It changed nothing, on the board or its segment board.
				q := ranking.MemberQuery{}
				if board == "seg" {
					q.Segment = ranking.Segment{Name: "country", Value: "FR"}
				}
				if c, err := s.Member(ctx, board, "all", "alice", q); err != nil || c.Score != 8 {
					t.Errorf("alice in all after the duplicate: %+v %v, want 8", c, err)
				}
				// The record still guards the id: a different event under it
				// is a conflict.
				if _, err := s.Write(ctx, board, ranking.Event{Member: "alice", Value: 6, ID: "o"}); ranking.ErrorCode(err) != ranking.ECONFLICT {
					t.Errorf("a different event under the id: %v, want conflict", err)
				}
			})
		}
	}
}

// TestReplayMixedBatch: a batch of new events and duplicates of old ones
// (their periods long past) applies the new events once and answers each
// duplicate with its original periods' state, on every Redis flavour.
// Real Redis has no clock to move, so the old original is made by moving
// its record back: an event dated in a past hour whose record says it
// took Redis's now then (no at), which a duplicate without at then
// repeats.
func TestReplayMixedBatch(t *testing.T) {
	for _, be := range backends() {
		for _, board := range []string{"one", "sh", "seg"} {
			t.Run(be.Name+"/"+board, func(t *testing.T) {
				rdb := be.Client(t)
				cfg := MustConfig(t, strings.ReplaceAll(replayBoards, "lateness: 1h", "lateness: 30h"))
				b, _ := cfg.Board(board)
				s := newStore(t, rdb, cfg, nil)
				ctx := context.Background()
				now, err := s.Now(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var origs []ranking.WriteResult
				for j, back := range []time.Duration{2 * time.Hour, 26 * time.Hour} {
					id := []string{"two", "day"}[j]
					ev := ranking.Event{Member: "alice", Value: 5, ID: id, At: now.Add(-back)}
					res, err := s.Write(ctx, board, ev)
					if err != nil {
						t.Fatal(err)
					}
					origs = append(origs, res)
					key := idKey(s, b, "alice", id)
					rec, err := rdb.Get(ctx, key).Result()
					if err != nil {
						t.Fatal(err)
					}
					head, tail, _ := strings.Cut(rec, "\x00")
					head = strings.TrimSuffix(head, "\n"+strconv.FormatInt(ev.At.UnixMilli(), 10)) + "\n"
					if err := rdb.Set(ctx, key, head+"\x00"+tail, 0).Err(); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Write(ctx, board, ranking.Event{Member: "bob", Value: 7, At: now.Add(-2 * time.Hour)}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Write(ctx, board, ranking.Event{Member: "alice", Value: 3, At: now.Add(-2 * time.Hour)}); err != nil {
					t.Fatal(err)
				}
				batch := []ranking.Event{
					{Member: "dave", Value: 2},
					{Member: "alice", Value: 5, ID: "two"},
					{Member: "erin", Value: 4, ID: "n"},
					{Member: "alice", Value: 5, ID: "day"},
					{Member: "erin", Value: 4, ID: "n"},
					{Member: "alice", Value: 5, ID: "two"},
				}
				q := ranking.MemberQuery{}
				if board == "seg" {
					// The new events also change the segment board, whose
					// keys follow the original rows'.
					q.Segment = ranking.Segment{Name: "country", Value: "FR"}
					for j := range batch {
						batch[j].Segments = map[string]string{"country": "FR"}
					}
				}
				res, err := s.Apply(ctx, board, batch, ranking.ApplyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range []int{0, 2} {
					if res[j].Err != nil || res[j].Duplicate {
						t.Fatalf("new event %d: %+v", j, res[j])
					}
				}
				if !res[4].Duplicate || res[4].Views[0].Period != res[2].Views[0].Period {
					t.Errorf("a repeat within the batch: %+v, want a duplicate of %+v", res[4], res[2])
				}
				checkReplay(t, s, board, "alice", origs[0], res[1], "hour", "day", "week", "all")
				checkReplay(t, s, board, "alice", origs[1], res[3], "hour", "day", "week", "all")
				checkReplay(t, s, board, "alice", origs[0], res[5], "hour", "day", "week", "all")
				for _, m := range []struct {
					member string
					score  int64
				}{{"dave", 2}, {"erin", 4}, {"alice", 13}} {
					c, err := s.Member(ctx, board, "all", m.member, ranking.MemberQuery{})
					if err != nil || c.Score != m.score {
						t.Errorf("%s in all: %+v %v, want %d (each new event once)", m.member, c, err, m.score)
					}
					if q.Segment.Name == "" || m.member == "alice" {
						continue
					}
					c, err = s.Member(ctx, board, "all", m.member, q)
					if err != nil || c.Score != m.score {
						t.Errorf("%s in all: %+v %v, want %d (each new event once)", m.member, c, err, m.score)
					}
				}
			})
		}
	}
}

// TestReplayReadsIDsOnce: a batch of events with ids, none repeated, reads
// their records with one MGET and no GET per event (the duplicates'
// pre-scan costs no command per event).
func TestReplayReadsIDsOnce(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := MustConfig(t, replayBoards)
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	stats := func() (get, mget int64) {
		t.Helper()
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
			if !ok {
				continue
			}
			n, _, _ := strings.Cut(rest, ",")
			switch name {
			case "cmdstat_get":
				get, _ = strconv.ParseInt(n, 10, 64)
			case "cmdstat_mget":
				mget, _ = strconv.ParseInt(n, 10, 64)
			}
		}
		return get, mget
	}
	var batch []ranking.Event
	for j := range 50 {
		batch = append(batch, ranking.Event{Member: "m" + strconv.Itoa(j), Value: 1, ID: "id" + strconv.Itoa(j)})
	}
	if _, err := s.Apply(ctx, "one", batch[:1], ranking.ApplyOptions{}); err != nil { // windows built, clock known
		t.Fatal(err)
	}
	get0, mget0 := stats()
	if _, err := s.Apply(ctx, "one", batch[1:], ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	get1, mget1 := stats()
	// Another test's store may share the server: only this call's own
	// count is bounded, from above.
	if get1-get0 >= int64(len(batch)-1) || mget1-mget0 < 1 {
		t.Errorf("a batch of %d events with ids: %d GET, %d MGET; want the records read with one MGET", len(batch)-1, get1-get0, mget1-mget0)
	}
}

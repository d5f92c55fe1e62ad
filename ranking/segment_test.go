package ranking_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

// TestSegmentsConfig: the segments field takes 0..3 distinct names of
// [a-z][a-z0-9_]{0,15}; anything else is refused naming the board and field.
func TestSegmentsConfig(t *testing.T) {
	cfg := mustBoardsFile(t, "boards: [{id: a, segments: [country, team_2]}, {id: b}]\n")
	a, _ := cfg.Board("a")
	if !slices.Equal(a.Segments, []string{"country", "team_2"}) {
		t.Fatalf("segments %v", a.Segments)
	}
	if b, _ := cfg.Board("b"); len(b.Segments) != 0 {
		t.Fatalf("default segments %v", b.Segments)
	}
	for _, tc := range []struct{ name, field, want string }{
		{"too many", "[a, b, c, d]", "at most 3"},
		{"bad name", "[Country]", "must match"},
		{"digit first", "[1x]", "must match"},
		{"too long", "[abcdefghijklmnopq]", "must match"},
		{"twice", "[team, team]", "listed twice"},
		{"not a list", "country", "must be a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := mustConfigProblems(t, "boards: [{id: x, segments: "+tc.field+"}]\n")
			if len(problems) != 1 || !strings.Contains(problems[0], tc.want) ||
				!strings.Contains(problems[0], `board "x"`) || !strings.Contains(problems[0], `"segments"`) {
				t.Fatalf("problems %q, want one naming board x, segments and %q", problems, tc.want)
			}
		})
	}
	problems := mustConfigProblems(t, "boards: [{id: x, segment: [a]}]\n")
	if !strings.Contains(problems[0], "segments") {
		t.Fatalf("the unknown-key message does not list segments: %q", problems)
	}
}

// TestSegmentEventValidation: bad segments are EINVALID before Redis.
func TestSegmentEventValidation(t *testing.T) {
	_, rdb := MustMiniredis(t, time.Now())
	cfg := MustConfig(t, "boards: [{id: seg, segments: [country, team]}, {id: plain}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		board string
		segs  map[string]string
	}{
		{"unknown name", "seg", map[string]string{"city": "Paris"}},
		{"empty value", "seg", map[string]string{"country": ""}},
		{"long value", "seg", map[string]string{"country": strings.Repeat("x", 33)}},
		{"bad character", "seg", map[string]string{"country": "F R"}},
		{"colon", "seg", map[string]string{"country": "a:b"}},
		{"no segments", "plain", map[string]string{"country": "FR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Write(ctx, tc.board, ranking.Event{Member: "a", Value: 1, Segments: tc.segs})
			if ranking.ErrorCode(err) != ranking.EINVALID {
				t.Fatalf("error %v, want invalid_argument", err)
			}
		})
	}
	if keys := rdb.Keys(ctx, "*").Val(); len(keys) != 0 {
		t.Fatalf("refused events wrote %v", keys)
	}
	b, _ := cfg.Board("seg")
	for _, in := range []string{"country", "country:", "city:x", ":FR", "country:F R"} {
		if _, err := b.ParseSegment(in); ranking.ErrorCode(err) != ranking.EINVALID {
			t.Errorf("ParseSegment(%q): %v, want invalid_argument", in, err)
		}
	}
	if sg, err := b.ParseSegment("team:red-1.x_Y"); err != nil || sg != (ranking.Segment{Name: "team", Value: "red-1.x_Y"}) {
		t.Fatalf("ParseSegment: %v %v", sg, err)
	}
}

// TestSegmentValueCheck holds the written-out value check to the
// contract's pattern on chosen and random strings.
func TestSegmentValueCheck(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)
	check := func(v string) {
		if got, want := ranking.ValidSegmentValue(v), pattern.MatchString(v); got != want {
			t.Fatalf("ValidSegmentValue(%q) = %v, the pattern says %v", v, got, want)
		}
	}
	for _, v := range []string{"", "a", "FR", "red-1.x_Y", strings.Repeat("x", 32), strings.Repeat("x", 33),
		"F R", "a:b", "a\n", "\na", "é", "a/b", "a\x00", "@", "[", "`", "{", "~"} {
		check(v)
	}
	for c := range 256 {
		check(string(rune(c)))
		check("a" + string([]byte{byte(c)}) + "b")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcXYZ019_.-: /\x00\xffé"
	for range 5000 {
		b := make([]byte, rng.IntN(36))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(b))
	}
}

// TestSegmentBoards: an event updates the board and its segment boards;
// reads, cards, values and removal see them.
func TestSegmentBoards(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, `
boards:
  - {id: pts, segments: [country, team], views: [day, 2d, all], min_score: -100, max_score: 100}
`)
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			fr := ranking.Segment{Name: "country", Value: "FR"}
			de := ranking.Segment{Name: "country", Value: "DE"}
			red := ranking.Segment{Name: "team", Value: "red"}
			events := []ranking.Event{
				{Member: "ann", Value: 5, Segments: map[string]string{"country": "FR", "team": "red"}},
				{Member: "bob", Value: 7, Segments: map[string]string{"country": "DE"}},
				{Member: "cy", Value: 3, Segments: map[string]string{"country": "FR"}},
				{Member: "ann", Value: 4, ID: "x1"},
				{Member: "dan", Value: 9},
				{Member: "cy", Value: 1, Segments: map[string]string{"team": "red"}},
			}
			res, err := s.Apply(ctx, "pts", events, ranking.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if r.Err != nil {
					t.Fatalf("event %d: %v", i, r.Err)
				}
			}
			type row struct {
				m     string
				score int64
			}
			want := map[ranking.Segment][]row{
				{}:                            {{"ann", 9}, {"dan", 9}, {"bob", 7}, {"cy", 4}}, // same ms: member id order
				fr:                            {{"ann", 5}, {"cy", 3}},
				de:                            {{"bob", 7}},
				red:                           {{"ann", 5}, {"cy", 1}},
				{Name: "team", Value: "blue"}: nil,
			}
			for seg, rows := range want {
				for _, view := range []string{"day", "2d", "all"} {
					pg, err := s.Page(ctx, "pts", view, ranking.PageQuery{Segment: seg, Limit: 10})
					if err != nil {
						t.Fatalf("%v %s: %v", seg, view, err)
					}
					var got []row
					for _, e := range pg.Entries {
						got = append(got, row{e.Member, e.Score})
					}
					if int(pg.Total) != len(rows) || !slices.Equal(got, rows) {
						t.Fatalf("%v %s: total %d rows %v, want %v", seg, view, pg.Total, got, rows)
					}
				}
			}
			c, err := s.Member(ctx, "pts", "day", "cy", ranking.MemberQuery{Segment: fr, Around: 1})
			if err != nil || c.Rank != 2 || c.Total != 2 || c.Score != 3 {
				t.Fatalf("member in FR: %+v %v", c, err)
			}
			if _, err := s.Member(ctx, "pts", "day", "cy", ranking.MemberQuery{Segment: de, Around: 1}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
				t.Fatalf("cy in DE: %v", err)
			}
			if _, err := s.Page(ctx, "pts", "day", ranking.PageQuery{Segment: ranking.Segment{Name: "city", Value: "x"}, Limit: 10}); ranking.ErrorCode(err) != ranking.EINVALID {
				t.Fatalf("unknown segment name: %v", err)
			}
			got, err := s.Scored(ctx, "pts", "day", red, []string{"ann", "bob", "cy"})
			if err != nil || !slices.Equal(got, []bool{true, false, true}) {
				t.Fatalf("scored in red: %v %v", got, err)
			}
			for _, view := range []string{"day", "2d", "all"} {
				rc, err := s.RankCard(ctx, "pts", view, "cy", ranking.RankCardQuery{Around: 1, History: 3})
				if err != nil {
					t.Fatal(err)
				}
				wantSegs := []ranking.SegmentRank{{Segment: fr, Total: 2, Rank: 2, Score: 3}, {Segment: red, Total: 2, Rank: 2, Score: 1}}
				if !slices.Equal(rc.Segments, wantSegs) {
					t.Fatalf("%s card segments %+v, want %+v", view, rc.Segments, wantSegs)
				}
				rc, err = s.RankCard(ctx, "pts", view, "cy", ranking.RankCardQuery{Segment: red, Around: 1, History: 3})
				if err != nil || rc.Rank != 2 || rc.Total != 2 || rc.Score != 1 || len(rc.Around) != 2 {
					t.Fatalf("%s card in red: %+v %v", view, rc, err)
				}
				if rc.Views[0].Total != 2 {
					t.Fatalf("%s card in red: views %+v", view, rc.Views)
				}
			}
			vals, err := s.SegmentValues(ctx, "pts", "country")
			if err != nil || !slices.Equal(vals, []string{"DE", "FR"}) {
				t.Fatalf("values %v %v", vals, err)
			}
			if _, err := s.SegmentValues(ctx, "pts", "city"); ranking.ErrorCode(err) != ranking.EINVALID {
				t.Fatalf("values of an unknown name: %v", err)
			}
			// The retry of x1 is a duplicate: nothing counts twice.
			if r, err := s.Write(ctx, "pts", events[3]); err != nil || !r.Duplicate {
				t.Fatalf("retry: %+v %v", r, err)
			}
			if ok, err := s.RemoveMember(ctx, "pts", "ann"); err != nil || !ok {
				t.Fatalf("remove: %v %v", ok, err)
			}
			for _, seg := range []ranking.Segment{{}, fr, red} {
				for _, view := range []string{"day", "2d", "all"} {
					if _, err := s.Member(ctx, "pts", view, "ann", ranking.MemberQuery{Segment: seg}); ranking.ErrorCode(err) != ranking.ENOTFOUND {
						t.Fatalf("ann still in %v %s after removal: %v", seg, view, err)
					}
				}
			}
		})
	}
}

// TestSegmentWriteIsAtomic: an event the board refuses (bounds of the board
// or of a segment board, a full values index) writes nothing anywhere.
func TestSegmentWriteIsAtomic(t *testing.T) {
	m, rdb := MustMiniredis(t, time.Now())
	cfg := MustConfig(t, "boards: [{id: b, segments: [country, team], views: [day, 3d, all], min_score: 0, max_score: 10}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	mustWrite := func(ev ranking.Event) {
		t.Helper()
		if _, err := s.Write(ctx, "b", ev); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(ranking.Event{Member: "a", Value: 8})
	mustWrite(ranking.Event{Member: "a", Value: 1, Segments: map[string]string{"country": "FR"}})
	before := m.Dump()
	for _, tc := range []struct {
		name string
		ev   ranking.Event
		code string
	}{
		// 8+1+3 leaves the board's [0, 10]; the FR board (1+3) would not.
		{"board bounds", ranking.Event{Member: "a", Value: 3, ID: "i1", Name: "A", Segments: map[string]string{"country": "FR", "team": "red"}}, ranking.EINVALID},
		// -2 keeps the board within bounds (7) but FR would read -1.
		{"segment bounds", ranking.Event{Member: "a", Value: -2, ID: "i2", Name: "A", Segments: map[string]string{"country": "FR"}}, ranking.EINVALID},
		{"bad value", ranking.Event{Member: "a", Value: 1, Segments: map[string]string{"country": "F/R"}}, ranking.EINVALID},
		{"unknown name", ranking.Event{Member: "a", Value: 1, Segments: map[string]string{"city": "x"}}, ranking.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Write(ctx, "b", tc.ev)
			if ranking.ErrorCode(err) != tc.code {
				t.Fatalf("error %v, want %s", err, tc.code)
			}
			if after := m.Dump(); after != before {
				t.Fatalf("Redis changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	t.Run("values cap", func(t *testing.T) {
		// Fill the team index to the cap directly: 10,000 writes would
		// test nothing more.
		idx := s.Prefix() + "{b}:seg:team"
		zs := make([]redis.Z, ranking.MaxSegmentValues)
		for i := range zs {
			zs[i] = redis.Z{Member: fmt.Sprintf("t%05d", i)}
		}
		if err := rdb.ZAdd(ctx, idx, zs...).Err(); err != nil {
			t.Fatal(err)
		}
		before := m.Dump()
		_, err := s.Write(ctx, "b", ranking.Event{Member: "z", Value: 1, Segments: map[string]string{"country": "FR", "team": "new"}})
		if ranking.ErrorCode(err) != ranking.EINVALID || !strings.Contains(err.Error(), "10000") {
			t.Fatalf("a new value past the cap: %v", err)
		}
		if after := m.Dump(); after != before {
			t.Fatalf("the refused value changed Redis")
		}
		// A known value is still accepted.
		mustWrite(ranking.Event{Member: "z", Value: 1, Segments: map[string]string{"team": "t00042"}})
		vals, err := s.SegmentValues(ctx, "b", "team")
		if err != nil || len(vals) != ranking.MaxSegmentValues || !slices.IsSorted(vals) || slices.Contains(vals, "new") {
			t.Fatalf("values: %d sorted %v, %v", len(vals), slices.IsSorted(vals), err)
		}
	})
}

// TestSegmentChangeMessage: a write's change message names the segment
// boards it changed, and ParseChange reads them.
func TestSegmentChangeMessage(t *testing.T) {
	ch, ok := ranking.ParseChange("b\nday:2026-11-22\nday@country=FR:2026-11-22\nall@team=red:all")
	want := []ranking.ViewPeriod{{View: "day", Period: "2026-11-22"},
		{View: "day", Period: "2026-11-22", Segment: ranking.Segment{Name: "country", Value: "FR"}},
		{View: "all", Period: "all", Segment: ranking.Segment{Name: "team", Value: "red"}}}
	if !ok || ch.Board != "b" || !slices.Equal(ch.Periods, want) {
		t.Fatalf("parse: %+v %v", ch, ok)
	}
	if _, ok := ranking.ParseChange("b\nday@country:2026-11-22"); ok {
		t.Fatal("a segment without a value parsed")
	}

	_, rdb := MustMiniredis(t, time.Now())
	cfg := MustConfig(t, "boards: [{id: b, segments: [country], views: [day, all]}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	sub, err := s.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 1, Segments: map[string]string{"country": "FR"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-sub.C():
		var segs []string
		for _, vp := range got.Periods {
			if !vp.Segment.IsZero() {
				segs = append(segs, vp.View+" "+vp.Segment.String())
			}
		}
		slices.Sort(segs)
		if !slices.Equal(segs, []string{"all country:FR", "day country:FR"}) {
			t.Fatalf("change %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change message")
	}
}

// TestSegmentScriptsDeclareEveryKey: the segment paths (first writes of a
// value, window builds of segment boards on write, read and card, exact
// latest times, removal) touch only declared keys.
func TestSegmentScriptsDeclareEveryKey(t *testing.T) {
	ranking.GuardKeys(t)
	start := time.Date(2026, 11, 20, 22, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, start)
	cfg := MustConfig(t, `
boards:
  - {id: inc, segments: [country, team], min_score: -50, max_score: 50, views: [hour, day, 3d, all], lateness: 72h}
  - {id: latest, segments: [country], update: latest, ties: shared, views: [day, week, all], lateness: 72h}
`)
	clock := start
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	for day := range 3 {
		clock = start.Add(time.Duration(day) * 24 * time.Hour)
		m.SetTime(clock)
		for _, board := range []string{"inc", "latest"} {
			events := []ranking.Event{
				{Member: "a", Value: 5, ID: fmt.Sprintf("e1-%d", day), Name: "Ann", Segments: map[string]string{"country": "FR"}},
				{Member: "b", Value: 3, At: clock.Add(-50 * time.Hour), ID: fmt.Sprintf("e2-%d", day), Segments: map[string]string{"country": "DE"}},
				{Member: "a", Value: 2, At: clock.Add(-26 * time.Hour), Segments: map[string]string{"country": "FR"}},
				{Member: "a", Value: 5, ID: fmt.Sprintf("e1-%d", day), Name: "Ann", Segments: map[string]string{"country": "FR"}}, // duplicate
			}
			if board == "inc" {
				events = append(events, ranking.Event{Member: "c", Value: 1, Segments: map[string]string{"country": "FR", "team": fmt.Sprintf("t%d", day)}})
			}
			res, err := s.Apply(ctx, board, events, ranking.ApplyOptions{})
			if err != nil {
				t.Fatalf("%s: %v", board, err)
			}
			for i, r := range res {
				if r.Err != nil {
					t.Fatalf("%s event %d: %v", board, i, r.Err)
				}
			}
		}
	}
	// A new day: every segment window is unbuilt; reads and cards build them.
	clock = clock.Add(24 * time.Hour)
	m.SetTime(clock)
	for _, board := range []string{"inc", "latest"} {
		b, _ := cfg.Board(board)
		for _, v := range b.Views {
			for _, seg := range []ranking.Segment{{}, {Name: "country", Value: "FR"}, {Name: "country", Value: "XX"}} {
				if _, err := s.Page(ctx, board, v.Name, ranking.PageQuery{Segment: seg, Limit: 10}); err != nil {
					t.Fatalf("%s/%s %v page: %v", board, v.Name, seg, err)
				}
				if _, err := s.Member(ctx, board, v.Name, "a", ranking.MemberQuery{Segment: seg, Around: 2}); err != nil && ranking.ErrorCode(err) != ranking.ENOTFOUND {
					t.Fatalf("%s/%s %v member: %v", board, v.Name, seg, err)
				}
				if _, err := s.RankCard(ctx, board, v.Name, "a", ranking.RankCardQuery{Segment: seg, Around: 2, History: 5}); err != nil && ranking.ErrorCode(err) != ranking.ENOTFOUND {
					t.Fatalf("%s/%s %v rank card: %v", board, v.Name, seg, err)
				}
			}
		}
	}
	if _, err := s.Write(ctx, "inc", ranking.Event{Member: "a", Value: 1, Segments: map[string]string{"team": "t0"}}); err != nil {
		t.Fatal(err)
	}
	for _, board := range []string{"inc", "latest"} {
		if ok, err := s.RemoveMember(ctx, board, "a"); err != nil || !ok {
			t.Fatalf("%s remove: %v %v", board, ok, err)
		}
	}
}

// TestSegmentStream: an ingest stream entry's segments JSON updates the
// segment boards; bad segments are dead-lettered and change nothing.
func TestSegmentStream(t *testing.T) {
	_, rdb := MustMiniredis(t, time.Now())
	cfg := MustConfig(t, "boards: [{id: points, stream: true, segments: [country], views: [all]}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	key := s.StreamKey("points")
	for _, v := range []map[string]any{
		{"member": "ann", "value": "2", "segments": `{"country":"FR"}`},
		{"member": "bob", "value": "3", "segments": `{}`},
		{"member": "cy", "value": "1", "segments": `{"team":"red"}`},
		{"member": "cy", "value": "1", "segments": `{"country":"FR","country":"DE"}`},
		{"member": "cy", "value": "1", "segments": `{"country":7}`},
		{"member": "cy", "value": "1", "segments": `["FR"]`},
		{"member": "cy", "value": "1", "segments": `{"country":"F R"}`},
	} {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	stop := runConsumer(t, s, "c1", ranking.StreamOptions{Block: 50 * time.Millisecond})
	waitDone(t, rdb, s)
	stop()
	pg, err := s.Page(ctx, "points", "all", ranking.PageQuery{Segment: ranking.Segment{Name: "country", Value: "FR"}, Limit: 10})
	if err != nil || pg.Total != 1 || pg.Entries[0].Member != "ann" || pg.Entries[0].Score != 2 {
		t.Fatalf("FR board: %+v %v", pg, err)
	}
	if all, _ := s.Page(ctx, "points", "all", ranking.PageQuery{Limit: 10}); all.Total != 2 {
		t.Fatalf("board total %d, want 2 (ann, bob)", all.Total)
	}
	if n := rdb.XLen(ctx, s.Prefix()+"{points}:dead").Val(); n != 5 {
		t.Fatalf("%d dead letters, want 5", n)
	}
}

// TestSegmentKeysExpire: a segment board's period keys expire with the
// board's, and their registry entries go with them.
func TestSegmentKeysExpire(t *testing.T) {
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, start)
	cfg := MustConfig(t, "boards: [{id: b, segments: [country], views: [day, 2d], keep: 1, lateness: 1h}]\n")
	clock := start
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	write := func(member string) {
		t.Helper()
		if _, err := s.Write(ctx, "b", ranking.Event{Member: member, Value: 1, Segments: map[string]string{"country": "FR"}}); err != nil {
			t.Fatal(err)
		}
	}
	write("a")
	segKeys := func() (n int) {
		for _, k := range m.Keys() {
			if strings.Contains(k, "@country=FR:2026-11-20") {
				n++
			}
		}
		return n
	}
	if segKeys() == 0 {
		t.Fatal("no segment keys written")
	}
	clock = start.Add(5 * 24 * time.Hour)
	m.FastForward(clock.Sub(start))
	m.SetTime(clock)
	write("b")
	if n := segKeys(); n != 0 {
		t.Fatalf("%d segment keys of 2026-11-20 outlived their retention: %v", n, m.Keys())
	}
	reg, _ := rdb.ZRange(ctx, s.Prefix()+"{b}:k", 0, -1).Result()
	for _, e := range reg {
		if strings.Contains(e, "2026-11-20") {
			t.Fatalf("registry still lists %q", e)
		}
	}
}

// countCalls counts the commands a client sends, by name.
type countCalls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook counts a transaction (a rank card's read) as "tx".
func (c *countCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			c.mu.Lock()
			c.n["tx"]++
			c.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}
func (c *countCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.mu.Lock()
		c.n[cmd.Name()]++
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

// take returns the counts since the last take, scripts as "script".
func (c *countCalls) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for name, n := range c.n {
		if name == "evalsha" || name == "eval" {
			name = "script"
		}
		out[name] += n
	}
	c.n = map[string]int{}
	return out
}

// TestSegmentCardRoundTrips: on a board with segments a rank card reads
// the member's segment record once; later cards are one script call that
// checks the record in its snapshot, and a record that changed since
// costs one more call, never a card of the old segment boards.
func TestSegmentCardRoundTrips(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: pts, segments: [country, team], views: [day, all]}]\n")
			s := sharedStore(t, rdb, cfg, nil)
			ctx := context.Background()
			write := func(member string, segs map[string]string) {
				t.Helper()
				if _, err := s.Write(ctx, "pts", ranking.Event{Member: member, Value: 1, Segments: segs}); err != nil {
					t.Fatal(err)
				}
			}
			write("ann", map[string]string{"country": "FR"})
			write("bob", map[string]string{"country": "FR", "team": "red"})
			// Load the script and learn Redis's clock first.
			if _, err := s.RankCard(ctx, "pts", "day", "bob", ranking.RankCardQuery{Around: 1, History: 3}); err != nil {
				t.Fatal(err)
			}
			calls := &countCalls{n: map[string]int{}}
			rdb.AddHook(calls)
			card := func(seg ranking.Segment, want map[string]int, segs ...ranking.Segment) {
				t.Helper()
				calls.take()
				rc, err := s.RankCard(ctx, "pts", "day", "ann", ranking.RankCardQuery{Segment: seg, Around: 1, History: 3})
				if err != nil {
					t.Fatal(err)
				}
				var got []ranking.Segment
				for _, sr := range rc.Segments {
					got = append(got, sr.Segment)
				}
				if !slices.Equal(got, segs) {
					t.Fatalf("card segments %v, want %v", got, segs)
				}
				c := calls.take()
				// The overtakes list is read again once it is 200 ms old,
				// which a loaded machine can pass between two cards.
				delete(c, "lrange")
				if !maps.Equal(c, want) {
					t.Fatalf("commands %v, want %v", c, want)
				}
			}
			fr := ranking.Segment{Name: "country", Value: "FR"}
			de := ranking.Segment{Name: "country", Value: "DE"}
			red := ranking.Segment{Name: "team", Value: "red"}
			card(ranking.Segment{}, map[string]int{"hget": 1, "tx": 1}, fr)
			card(ranking.Segment{}, map[string]int{"tx": 1}, fr)
			card(fr, map[string]int{"tx": 1}, fr)
			// New values: the kept record is stale, and the card says so.
			write("ann", map[string]string{"country": "DE", "team": "red"})
			card(ranking.Segment{}, map[string]int{"tx": 2}, de, red)
			card(red, map[string]int{"tx": 1}, de, red)
			// Removed and back without values: the record still names DE
			// and red, where ann no longer scores, so the card lists none.
			if ok, err := s.RemoveMember(ctx, "pts", "ann"); err != nil || !ok {
				t.Fatalf("remove: %v %v", ok, err)
			}
			write("ann", nil)
			// The removal also changed the final periods the store kept
			// chart points of: the card reads again without them. (A chart
			// of 3 days: the day before yesterday is past its lateness at
			// any hour, so a point of it is always kept.)
			card(ranking.Segment{}, map[string]int{"tx": 2})
			card(ranking.Segment{}, map[string]int{"tx": 1})
			// Another app server keeps nothing yet: one read of the record.
			s2 := ranking.StoreOnClient(rdb, cfg, ranking.Options{Prefix: s.Prefix()})
			calls.take()
			if _, err := s2.RankCard(ctx, "pts", "day", "ann", ranking.RankCardQuery{Around: 1, History: 3}); err != nil {
				t.Fatal(err)
			}
			if c := calls.take(); c["hget"] != 1 {
				t.Fatalf("a fresh store's card: commands %v", c)
			}
		})
	}
}

// TestSegmentKeysCreatedInMixedBatch: one batch that writes segment values
// whose keys exist beside values whose keys it creates gives every created
// key its expiry and registry entry, and keeps the existing keys' own.
func TestSegmentKeysCreatedInMixedBatch(t *testing.T) {
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, start)
	cfg := MustConfig(t, "boards: [{id: b, segments: [country, team], views: [day, week], keep: 1, lateness: 1h}]\n")
	s := newStore(t, rdb, cfg, func() time.Time { return start })
	ctx := context.Background()
	ev := func(member, country, team string) ranking.Event {
		return ranking.Event{Member: member, Value: 1, Segments: map[string]string{"country": country, "team": team}}
	}
	if _, err := s.Apply(ctx, "b", []ranking.Event{ev("a", "FR", "red"), ev("b", "DE", "red")}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	first := map[string]time.Duration{}
	for _, k := range m.Keys() {
		if strings.Contains(k, "@") {
			first[k] = m.TTL(k)
		}
	}
	if len(first) == 0 {
		t.Fatal("no segment keys written")
	}
	m.FastForward(time.Minute)
	batch := []ranking.Event{ev("c", "IT", "red"), ev("d", "FR", "blue"), ev("e", "ES", "green"), ev("f", "DE", "red"), ev("g", "NL", "blue")}
	res, err := s.Apply(ctx, "b", batch, ranking.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s refused: %v", r.Member, r.Err)
		}
	}
	reg, _ := rdb.ZRange(ctx, s.Prefix()+"{b}:k", 0, -1).Result()
	listed := map[string]bool{}
	for _, e := range reg {
		listed[e] = true
	}
	created := 0
	for _, k := range m.Keys() {
		at := strings.Index(k, "}:z:")
		if at < 0 || !strings.Contains(k, "@") {
			continue
		}
		if !listed[k[at+len("}:z:"):]] {
			t.Errorf("registry does not list %s", k)
		}
		ttl := m.TTL(k)
		if ttl <= 0 {
			t.Errorf("%s has no expiry", k)
		}
		if old, ok := first[k]; ok {
			if ttl != old-time.Minute {
				t.Errorf("%s expiry moved from %v to %v", k, old, ttl)
			}
		} else {
			created++
		}
	}
	// IT, ES, NL, blue and green are new: 5 values x 2 views.
	if created != 10 {
		t.Fatalf("%d segment period keys created by the batch, want 10: %v", created, m.Keys())
	}
}

// A member's mirrored writes (its segment values unchanged so far) and a
// later event of the same batch that plans its segment rows in full: the
// later one adds to the codes the mirrored ones wrote, not to the stored
// ones.
func TestSegmentMirroredThenFullInOneBatch(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, "boards: [{id: pts, segments: [country, team], views: [day, all]}]\n")
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			ev := func(member string, v int64, segs map[string]string) ranking.Event {
				return ranking.Event{Member: member, Value: v, Segments: segs}
			}
			fr, de := map[string]string{"country": "FR", "team": "red"}, map[string]string{"country": "DE", "team": "red"}
			batches := [][]ranking.Event{
				{ev("ann", 1, fr)},
				// Mirrored twice, then DE ends ann's purity in country, so
				// FR is planned in full by the last event.
				{ev("ann", 2, fr), ev("ann", 4, fr), ev("ann", 8, de), ev("ann", 16, fr), ev("ann", 32, fr)},
			}
			for _, b := range batches {
				res, err := s.Apply(ctx, "pts", b, ranking.ApplyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					if r.Err != nil {
						t.Fatalf("event %d: %v", i, r.Err)
					}
				}
			}
			want := map[ranking.Segment]int64{
				{}:                             63,
				{Name: "country", Value: "FR"}: 55,
				{Name: "country", Value: "DE"}: 8,
				{Name: "team", Value: "red"}:   63,
			}
			for seg, score := range want {
				for _, view := range []string{"day", "all"} {
					pg, err := s.Page(ctx, "pts", view, ranking.PageQuery{Segment: seg, Limit: 10})
					if err != nil {
						t.Fatal(err)
					}
					if len(pg.Entries) != 1 || pg.Entries[0].Member != "ann" || pg.Entries[0].Score != score {
						t.Errorf("%v %s: %+v, want ann at %d", seg, view, pg.Entries, score)
					}
				}
			}
		})
	}
}

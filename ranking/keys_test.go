package ranking_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestScriptsDeclareEveryKey: every script touches only keys its caller
// declared in KEYS (so Redis Cluster can redirect or refuse the whole call
// while a board's slot migrates), over writes with ids and late times,
// duplicates, exact latest times, window builds, reads of every kind,
// rank cards, rate limits and removal.
func TestScriptsDeclareEveryKey(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends()[:2] {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			cfg := MustConfig(t, `
boards:
  - {id: inc, min_score: -50, max_score: 50, views: [hour, day, 3d, all], lateness: 72h}
  - {id: latest, update: latest, ties: shared, views: [day, week, all], lateness: 72h}
`)
			s := newStore(t, rdb, cfg, nil)
			ctx := context.Background()
			now, err := s.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, board := range []string{"inc", "latest"} {
				events := []ranking.Event{
					{Member: "a", Value: 5, ID: "e1", Name: "Ann"},
					{Member: "b", Value: 3, At: now.Add(-50 * time.Hour), ID: "e2"},
					{Member: "a", Value: 2, At: now.Add(-26 * time.Hour)},
					{Member: "a", Value: 5, ID: "e1", Name: "Ann"}, // duplicate
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
				b, _ := cfg.Board(board)
				for _, v := range b.Views {
					if _, err := s.Page(ctx, board, v.Name, ranking.PageQuery{Limit: 10}); err != nil {
						t.Fatalf("%s/%s page: %v", board, v.Name, err)
					}
					if _, err := s.Member(ctx, board, v.Name, "a", ranking.MemberQuery{Around: 2}); err != nil {
						t.Fatalf("%s/%s member: %v", board, v.Name, err)
					}
					if _, err := s.RankCard(ctx, board, v.Name, "a", ranking.RankCardQuery{Around: 2, History: 5}); err != nil {
						t.Fatalf("%s/%s rank card: %v", board, v.Name, err)
					}
				}
				if _, err := s.TakeRate(ctx, "some-api-key", 1000, 2000, 1); err != nil {
					t.Fatalf("rate: %v", err)
				}
			}
			if err := s.PrepareTomorrow(ctx); err != nil {
				t.Fatal(err)
			}
			// Search entries in blocks: compaction, a rename that takes the
			// old name's entry out of a block, a search.
			for _, board := range []string{"inc", "latest"} {
				if _, _, err := ranking.CompactIndexStep(ctx, s, board, 0, 100, 0, 1024, 64); err != nil {
					t.Fatalf("%s compact: %v", board, err)
				}
				if _, err := s.Write(ctx, board, ranking.Event{Member: "a", Value: 1, Name: "Anna"}); err != nil {
					t.Fatalf("%s rename: %v", board, err)
				}
				if _, err := s.SearchMembers(ctx, board, "a"); err != nil {
					t.Fatalf("%s search: %v", board, err)
				}
			}
			for _, board := range []string{"inc", "latest"} {
				if ok, err := s.RemoveMember(ctx, board, "a"); err != nil || !ok {
					t.Fatalf("%s remove: %v %v", board, ok, err)
				}
			}
		})
	}
}

// registerOnce adds a registry entry just before the first script call
// that follows its arming, as a concurrent write would.
type registerOnce struct {
	key, entry string
	armed      bool
	fired      int
	rdb        *redis.Client
}

func (h *registerOnce) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *registerOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *registerOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.armed && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			h.armed = false
			h.fired++
			if err := h.rdb.ZAdd(ctx, h.key, redis.Z{Score: 4102444800000, Member: h.entry}).Err(); err != nil {
				return err
			}
			if err := h.rdb.ZAdd(ctx, h.key[:len(h.key)-1]+"z:"+h.entry, redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
				return err
			}
		}
		return next(ctx, cmd)
	}
}

// TestRemoveRetriesWhenRegistryChanges: removal declares the registry's
// entries as read just before the call; an entry registered in between
// makes the script change nothing and the removal runs again, reaching
// the new period too.
func TestRemoveRetriesWhenRegistryChanges(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := MustConfig(t, "boards: [{id: b, views: [day, all]}]\n")
	s := sharedStore(t, rdb, cfg, nil)
	ctx := context.Background()
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 1}); err != nil {
		t.Fatal(err)
	}
	hookClient := redis.NewClient(rdb.Options())
	t.Cleanup(func() { hookClient.Close() })
	reg := s.Prefix() + "{b}:k"
	h := &registerOnce{key: reg, entry: "day:2099-12-31", armed: true, rdb: hookClient}
	rdb.AddHook(h)
	ok, err := s.RemoveMember(ctx, "b", "a")
	if err != nil || !ok || h.fired != 1 {
		t.Fatalf("remove: %v %v (hook fired %d times)", ok, err, h.fired)
	}
	if n, _ := rdb.ZCard(ctx, s.Prefix()+"{b}:z:day:2099-12-31").Result(); n != 0 {
		t.Fatalf("the period registered during the removal still holds the member")
	}
}

// keyRow is one row of the key table in keys.go's doc comment.
type keyRow struct {
	pattern, typ string
	re           *regexp.Regexp
}

// keyTable reads the key table out of keys.go: each row is a line of the
// comment's indented block starting with a pattern; <prefix> stands for
// prefix and every other <...> for any non-empty text.
func keyTable(t *testing.T, prefix string) []keyRow {
	t.Helper()
	src, err := os.ReadFile("keys.go")
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`<[^>]+>`)
	var rows []keyRow
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//\t")
		if !ok || !(strings.HasPrefix(rest, "<prefix>") || strings.HasPrefix(rest, "{<prefix>")) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 3 {
			t.Fatalf("key table row without type or description: %q", rest)
		}
		var re strings.Builder
		re.WriteString("^")
		last := 0
		for _, m := range placeholder.FindAllStringIndex(f[0], -1) {
			re.WriteString(regexp.QuoteMeta(f[0][last:m[0]]))
			if f[0][m[0]:m[1]] == "<prefix>" {
				re.WriteString(regexp.QuoteMeta(prefix))
			} else {
				re.WriteString("(?s:.+)")
			}
			last = m[1]
		}
		re.WriteString(regexp.QuoteMeta(f[0][last:]) + "$")
		rows = append(rows, keyRow{f[0], f[1], regexp.MustCompile(re.String())})
	}
	if len(rows) < 20 {
		t.Fatalf("key table in keys.go has %d rows", len(rows))
	}
	return rows
}

// scriptKeys records the KEYS of every script call.
type scriptKeys struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (h *scriptKeys) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *scriptKeys) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.record(c)
		}
		return next(ctx, cmds)
	}
}
func (h *scriptKeys) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record(cmd)
		return next(ctx, cmd)
	}
}

func (h *scriptKeys) record(cmd redis.Cmder) {
	if n := cmd.Name(); n != "evalsha" && n != "eval" {
		return
	}
	args := cmd.Args()
	nkeys, _ := args[2].(int)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range args[3 : 3+nkeys] {
		h.seen[k.(string)] = true
	}
}

// TestEveryKeyHasARow: after a workload that makes every kind of key
// (writes with ids, late times, segments and exact times, window builds,
// reads, rank cards, moves and day snapshots, name search and its
// backfill, rate limits, the ingest stream with a dead letter, recorded,
// amended and relayed results, delivered and failed webhooks, a removal,
// the sweep), every key a script was given and every key left in Redis
// matches a row of keys.go's table, of the row's type, and every row was
// matched: a new kind of key needs its row (and a step here).
func TestEveryKeyHasARow(t *testing.T) {
	ctx := context.Background()
	t.Setenv(hookSecretEnv, "s3cret")
	at := time.Date(2026, 3, 10, 22, 15, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, at)
	h := &scriptKeys{seen: map[string]bool{}}
	rdb.AddHook(h)
	cfg := MustConfig(t, fmt.Sprintf(`
boards:
  - {id: inc, views: [hour, day, 3d, all], lateness: 0s, segments: [team], stream: true, results_top: 5, results_keep: 2}
  - {id: latest, update: latest, ties: shared, views: [day, week, all], lateness: 72h}
  - {id: swept, views: [hour]}
  - {id: lg, views: [day], league: {cycle: hour, tiers: [a, b], cohort_size: 5, promote: 1, demote: 1}}
  - {id: sh, shards: 3, views: [day, all], results_keep: 0}
webhooks:
  - {url: "http://127.0.0.1:9/", secret_env: %s, events: [period.final, member.removed], boards: [inc, sh]}
`, hookSecretEnv))
	now := at
	s := sharedStore(t, rdb, cfg, func() time.Time { return now })
	setTime := func(to time.Time) {
		now = to
		m.SetTime(to)
		if err := s.SyncClock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	apply := func(board string, events ...ranking.Event) {
		t.Helper()
		res, err := s.Apply(ctx, board, events, ranking.ApplyOptions{})
		must(board+" apply", err)
		for i, r := range res {
			must(fmt.Sprintf("%s event %d", board, i), r.Err)
		}
	}
	reads := func(member string) {
		t.Helper()
		for _, board := range []string{"inc", "latest"} {
			b, _ := cfg.Board(board)
			for _, v := range b.Views {
				_, err := s.Page(ctx, board, v.Name, ranking.PageQuery{Limit: 10})
				must(board+"/"+v.Name+" page", err)
				_, err = s.RankCard(ctx, board, v.Name, member, ranking.RankCardQuery{Around: 2, History: 5})
				must(board+"/"+v.Name+" rank card", err)
			}
		}
		_, err := s.Page(ctx, "inc", "3d", ranking.PageQuery{Segment: ranking.Segment{Name: "team", Value: "red"}, Limit: 10})
		must("segment page", err)
		_, _, err = s.Moves(ctx, "inc", "all", 10)
		must("moves", err)
		apply("sh", ranking.Event{Member: member, Value: 1})
		_, _, err = s.Moves(ctx, "sh", "all", 10)
		must("sharded moves", err)
		_, err = s.SearchMembers(ctx, "inc", "ann")
		must("search", err)
	}

	red := map[string]string{"team": "red"}
	apply("inc", ranking.Event{Member: "a", Value: 5, ID: "e1", Name: "Ann", Segments: red},
		ranking.Event{Member: "b", Value: 3, Segments: red}, ranking.Event{Member: "c", Value: 1})
	apply("latest", ranking.Event{Member: "a", Value: 5, ID: "e1", Name: "Ann"},
		ranking.Event{Member: "b", Value: 3, At: at.Add(-50 * time.Hour), ID: "e2"})
	reads("a")
	apply("lg", ranking.Event{Member: "a", Value: 2}, ranking.Event{Member: "b", Value: 1})
	apply("sh", ranking.Event{Member: "a", Value: 2, Name: "Ann", ID: "e1"}, ranking.Event{Member: "b", Value: 1}, ranking.Event{Member: "c", Value: 4})
	_, err0 := s.Page(ctx, "sh", "all", ranking.PageQuery{Limit: 10})
	must("sharded page", err0)
	_, err0 = s.RemoveMember(ctx, "sh", "b")
	must("sharded removal", err0)
	apply("swept", ranking.Event{Member: "a", Value: 1, Name: "Ann"})
	_, err := s.TakeRate(ctx, "some-api-key", 1000, 2000, 1)
	must("rate", err)
	must("backfill", s.IndexMemberIDs(ctx))
	must("prepare tomorrow", s.PrepareTomorrow(ctx))

	// The next day: its first write takes the day's snapshot; b passes a.
	setTime(at.Add(2 * time.Hour))
	apply("inc", ranking.Event{Member: "b", Value: 10, Segments: red})
	apply("latest", ranking.Event{Member: "b", Value: 4})
	reads("b")
	// The league: a's placement decides its last cohort; reads of each kind.
	apply("lg", ranking.Event{Member: "a", Value: 1})
	_, err = s.League(ctx, "lg", "")
	must("league", err)
	_, err = s.Cohort(ctx, "lg", "", "b", 1)
	must("cohort", err)
	_, err = s.LeagueMember(ctx, "lg", "", "a")
	must("league member", err)

	// The ingest stream, with one entry for the dead letters.
	for _, v := range []map[string]any{{"member": "d", "value": "2"}, {"member": "d", "value": "ten"}} {
		must("xadd", rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.StreamKey("inc"), Values: v}).Err())
	}
	stop := runConsumer(t, s, "c1", ranking.StreamOptions{})
	testsupport.WaitFor(t, "the stream drained", func() bool {
		p, err := rdb.XPending(ctx, s.StreamKey("inc"), ranking.StreamGroup).Result()
		return err == nil && p.Count == 0 && rdb.XLen(ctx, s.DeadKey("inc")).Val() == 1
	})
	stop()

	// Results of the finished hours, relayed with their deliveries; a
	// removal amends them.
	setTime(at.Add(4 * time.Hour))
	_, err = s.RecordResults(ctx)
	must("record", err)
	_, err = s.DecideLeagues(ctx)
	must("decide leagues", err)
	ok, err := s.RemoveMember(ctx, "lg", "a")
	must("league remove", err)
	if !ok {
		t.Fatal("a was not removed from the league board")
	}
	_, err = s.RelayResults(ctx)
	must("relay", err)
	ids, err := s.ClaimDelivery(ctx, 1, time.Minute, "t1")
	must("claim", err)
	if len(ids) != 1 {
		t.Fatalf("claimed %v", ids)
	}
	_, err = s.ReportDelivery(ctx, ids[0], "t1", 200)
	must("report", err)
	ok, err = s.RemoveMember(ctx, "inc", "a")
	must("remove", err)
	if !ok {
		t.Fatal("a was not removed")
	}
	_, err = s.RelayResults(ctx)
	must("relay", err)
	setTime(at.Add(60 * 24 * time.Hour))
	ids, err = s.ClaimDelivery(ctx, 1, time.Minute, "t2")
	must("claim", err)
	if len(ids) != 1 {
		t.Fatalf("claimed %v", ids)
	}
	_, err = s.ReportDelivery(ctx, ids[0], "t2", 500)
	must("report", err)
	_, err = s.Sweep(ctx)
	must("sweep", err)
	_, err = s.CompactIndex(ctx)
	must("compact", err)

	// The shard count record, a move stopped at its first step, and an
	// instance's word that it serves the boards.
	must("check shards", s.CheckShards(ctx))
	rctx, cancel := context.WithCancel(ctx)
	if _, err := s.Reshard(rctx, "latest", 2, ranking.ReshardOptions{Step: func(string) { cancel() }}); err == nil {
		t.Fatal("the move was not stopped")
	}
	cancel()
	must("announce", s.Announce(ctx, "i1"))

	rows := keyTable(t, s.Prefix())
	matched := make([]bool, len(rows))
	check := func(key, typ string) {
		for i, r := range rows {
			if r.re.MatchString(key) {
				if typ != "" && typ != r.typ {
					t.Errorf("key %q is a %s; its row %s says %s", key, typ, r.pattern, r.typ)
				}
				matched[i] = true
				return
			}
		}
		t.Errorf("key %q (%s) matches no row of the key table in keys.go", key, typ)
	}
	for key := range h.seen {
		check(key, "")
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	must("keys", err)
	for _, key := range keys {
		check(key, rdb.Type(ctx, key).Val())
	}
	check(s.Channel(), "channel")
	for i, r := range rows {
		if !matched[i] {
			t.Errorf("no key of row %s in Redis or in a script's KEYS", r.pattern)
		}
	}
}

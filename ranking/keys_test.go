package ranking_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
	s := newStore(t, rdb, cfg, nil)
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

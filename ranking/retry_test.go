package ranking_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestRetryAfterLateness: a same-id retry of an applied event is a
// duplicate even after its at has left the lateness window, so retrying a
// 503 with the same id is always safe.
func TestRetryAfterLateness(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, now)
	cfg := MustConfig(t, "boards: [{id: b, views: [hour, day, all], lateness: 5m}]\n")
	clock := now
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	ev := ranking.Event{Member: "a", Value: 7, ID: "e1", At: now.Add(-4 * time.Minute)}
	if _, err := s.Write(ctx, "b", ev); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(3 * time.Minute) // at is now 7 minutes old, past lateness
	m.SetTime(clock)
	res, err := s.Write(ctx, "b", ev)
	if err != nil || !res.Duplicate {
		t.Fatalf("retry past lateness: %+v %v; want a duplicate", res, err)
	}
	if p := periodsOf(res); p["hour"] != "2026-11-22T10" || res.Views[2].Score != 7 {
		t.Fatalf("duplicate answers %+v", res.Views)
	}
	// A different event under the same id is still a conflict, and a new
	// id with the stale at is still refused.
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 8, ID: "e1", At: ev.At}); ranking.ErrorCode(err) != ranking.ECONFLICT {
		t.Fatalf("reused id: %v", err)
	}
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 7, ID: "e2", At: ev.At}); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Fatalf("stale at with a new id: %v", err)
	}
	if c, err := s.Member(ctx, "b", "all", "a", ranking.MemberQuery{}); err != nil || c.Score != 7 {
		t.Fatalf("score %+v %v, want 7", c, err)
	}
}

// failNthEvalSha fails the nth EVALSHA with a connection error.
type failNthEvalSha struct {
	n, seen atomic.Int64
}

func (h *failNthEvalSha) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *failNthEvalSha) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *failNthEvalSha) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" && h.seen.Add(1) == h.n.Load() {
			err := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset (injected)")}
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// TestBatchFailsBetweenChunks: when Redis fails after the first script call
// of a large batch, the applied events keep their answers and the others
// say they are unavailable (outcome unknown, or not applied); when the
// first call fails, the whole call fails.
func TestBatchFailsBetweenChunks(t *testing.T) {
	rdb := redistest.Client(t)
	hook := &failNthEvalSha{}
	rdb.AddHook(hook)
	cfg := MustConfig(t, "boards: [{id: b, views: [day, all]}]\n")
	s := sharedStore(t, rdb, cfg, nil)
	ctx := context.Background()
	events := make([]ranking.Event, 250)
	for i := range events {
		events[i] = ranking.Event{Member: "m" + strconv.Itoa(i), Value: 1}
	}
	events[3].Member = "" // refused before Redis

	hook.n.Store(2) // the second script call
	res, err := s.Apply(ctx, "b", events, ranking.ApplyOptions{})
	if err != nil {
		t.Fatalf("a failure after the first call failed the batch: %v", err)
	}
	// events 0..100 (101 valid, one refused) went in the first call
	for i, r := range res {
		switch {
		case i == 3:
			if ranking.ErrorCode(r.Err) != ranking.EINVALID {
				t.Fatalf("event 3: %v", r.Err)
			}
		case i <= 100:
			if r.Err != nil || len(r.Views) != 2 || r.Views[1].Score != 1 {
				t.Fatalf("event %d of the applied call: %+v", i, r)
			}
		case i <= 200:
			if ranking.ErrorCode(r.Err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(r.Err) != ranking.OutcomeUnknown || !strings.Contains(r.Err.Error(), "same id") {
				t.Fatalf("event %d of the failed call: %v", i, r.Err)
			}
		default:
			if ranking.ErrorCode(r.Err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(r.Err) != ranking.OutcomeNotApplied || !strings.Contains(r.Err.Error(), "not applied") {
				t.Fatalf("event %d never sent: %v", i, r.Err)
			}
		}
		if r.Member != events[i].Member {
			t.Fatalf("event %d answers member %q", i, r.Member)
		}
	}
	pg, err := s.Page(ctx, "b", "all", ranking.PageQuery{Limit: 1000})
	if err != nil || pg.Total != 100 {
		t.Fatalf("%v members after the partial batch, want the first call's 100: %v", pg.Total, err)
	}

	// The first call fails: its events' outcome is unknown, the others
	// were not applied; a batch of one call fails as a whole.
	hook.seen.Store(0)
	hook.n.Store(1)
	res, err = s.Apply(ctx, "b", events, ranking.ApplyOptions{})
	if err != nil || ranking.ErrorOutcome(res[0].Err) != ranking.OutcomeUnknown || ranking.ErrorOutcome(res[249].Err) != ranking.OutcomeNotApplied {
		t.Fatalf("first call failed: %v; event 0 %v, event 249 %v", err, res[0].Err, res[249].Err)
	}
	hook.seen.Store(0)
	hook.n.Store(1)
	if _, err := s.Apply(ctx, "b", events[:50], ranking.ApplyOptions{}); ranking.ErrorCode(err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(err) != ranking.OutcomeUnknown {
		t.Fatalf("the only call failed: %v, want the whole call unavailable, outcome unknown", err)
	}
}

// TestRegistryPrunedByWrites: registry entries of expired periods go with
// ordinary writes, without a removal.
func TestRegistryPrunedByWrites(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, now)
	cfg := MustConfig(t, "boards: [{id: b, views: [hour, all], keep: 1, lateness: 0s}]\n")
	clock := now
	s := newStore(t, rdb, cfg, func() time.Time { return clock })
	ctx := context.Background()
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 1}); err != nil {
		t.Fatal(err)
	}
	reg := s.Prefix() + "{b}:k"
	if got, _ := rdb.ZRange(ctx, reg, 0, -1).Result(); !strings.Contains(strings.Join(got, " "), "hour:2026-11-22T10") {
		t.Fatalf("registry %v lacks the hour written", got)
	}
	clock = now.Add(3 * time.Hour) // hour 10 expired at 12:00
	m.SetTime(clock)
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "a", Value: 1}); err != nil {
		t.Fatal(err)
	}
	got, _ := rdb.ZRange(ctx, reg, 0, -1).Result()
	if strings.Contains(strings.Join(got, " "), "hour:2026-11-22T10") || !strings.Contains(strings.Join(got, " "), "hour:2026-11-22T13") {
		t.Fatalf("registry after expiry: %v", got)
	}
}

// tryAgain is the reply a cluster node gives while a multi-key call's
// keys are split between it and the node its slot migrates to.
type tryAgain string

func (e tryAgain) Error() string { return string(e) }
func (tryAgain) RedisError()     {}

// alwaysReply answers its error reply to every script call.
type alwaysReply string

func (alwaysReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (alwaysReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (a alwaysReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" || cmd.Name() == "eval" {
			err := tryAgain(a)
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// TestTryAgainIsUnavailable: when the client's retries of TRYAGAIN, ASK or
// MOVED run out (a slot migration that lasts), or Redis refuses writes on
// purpose (too few replicas, a demoted primary, a failed disk), the call is
// a clean 503 unavailable, never a 500, and nothing changed.
func TestTryAgainIsUnavailable(t *testing.T) {
	rdb := redistest.Client(t)
	cfg := MustConfig(t, "boards: [{id: b, views: [day, all]}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	for _, reply := range []string{
		"TRYAGAIN Multiple keys request during rehashing of slot",
		"ASK 3558 127.0.0.1:7001",
		"MOVED 3558 127.0.0.1:7001",
		"NOREPLICAS Not enough good replicas to write.",
		"READONLY You can't write against a read only replica.",
		"MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
	} {
		flaky := redis.NewClient(rdb.Options())
		t.Cleanup(func() { flaky.Close() })
		flaky.AddHook(alwaysReply(reply))
		fs := ranking.StoreOnClient(flaky, cfg, ranking.Options{Prefix: s.Prefix()})
		if _, err := fs.Write(ctx, "b", ranking.Event{Member: "a", Value: 1}); ranking.ErrorCode(err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(err) != ranking.OutcomeNotApplied {
			t.Fatalf("write under %q: %v, want unavailable, not applied", reply, err)
		}
		if _, err := fs.Page(ctx, "b", "all", ranking.PageQuery{Limit: 10}); ranking.ErrorCode(err) != ranking.EUNAVAILABLE {
			t.Fatalf("read under %q: %v, want unavailable", reply, err)
		}
	}
	if pg, err := s.Page(ctx, "b", "all", ranking.PageQuery{Limit: 10}); err != nil || pg.Total != 0 {
		t.Fatalf("after refused writes: %+v %v", pg, err)
	}
}

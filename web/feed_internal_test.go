package web

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

// TestHubFeedDropIsCountedAndResubscribed: while the hub is stuck in a
// render, the change feed drops its subscription instead of waiting; the
// hub counts the drop, subscribes again at once and re-renders its topics
// (anything may have changed).
func TestHubFeedDropIsCountedAndResubscribed(t *testing.T) {
	cfg, err := ranking.ParseConfig([]byte("boards: [{id: b, views: [day]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{})
	ctx := context.Background()
	subscribers := func() int64 {
		n, err := rdb.PubSubNumSub(ctx, store.Channel()).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n[store.Channel()]
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	f := newFakeRender()
	stuck, release := make(chan struct{}), make(chan struct{})
	first := true
	render := func(ctx context.Context, key topicKey) (rendered, error) {
		if first {
			first = false // renders of one flush run at once, but there is one topic
			close(stuck)
			<-release
		}
		return f.render(ctx, key)
	}
	h := newHub(render, f.scored, store, hubLimits{tick: 10 * time.Millisecond, maxRenders: 64, maxConns: 1 << 20, maxPerClient: 1 << 20},
		slog.New(slog.DiscardHandler), newMetrics())
	h.start()
	t.Cleanup(h.close)
	until("the hub to subscribe", func() bool { return subscribers() == 1 })

	key := topicKey{board: "b", view: "day", limit: 10}
	h.joinNew(t, key)
	<-stuck
	for range 1000 {
		if err := rdb.Publish(ctx, store.Channel(), "b\nday:2026-11-22").Err(); err != nil {
			t.Fatal(err)
		}
	}
	until("the stuck hub's subscription to be dropped", func() bool { return subscribers() == 0 })
	close(release)

	until("the drop to be counted", func() bool { return counted(t, h.metrics, "standings_feed_dropped_total") == 1 })
	until("the hub to subscribe again", func() bool { return subscribers() == 1 })
	before := f.total()
	until("the topic to render again", func() bool { return f.total() > before })
	if n := counted(t, h.metrics, "standings_feed_dropped_total"); n != 1 {
		t.Errorf("%v drops counted, want 1", n)
	}
}

// counted is the value of a counter without labels.
func counted(tb testing.TB, m *metrics, name string) float64 {
	tb.Helper()
	fams, err := m.registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	tb.Fatalf("no metric %s", name)
	return 0
}

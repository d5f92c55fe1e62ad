package ranking_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

func TestSmoke(t *testing.T) {
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	cfg, err := ranking.ParseConfig([]byte(`
timezone: Asia/Shanghai
boards:
  - id: points
    views: [hour, day, week, month, all]
    decimals: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	s := ranking.NewStore(rdb, cfg, ranking.Options{})
	ctx := context.Background()
	for i, m := range []string{"alice", "bob", "carol", "alice"} {
		res, err := s.Write(ctx, "points", ranking.Event{Member: m, Value: int64(10 + i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res)
	}
	pg, err := s.Page(ctx, "points", "week", "", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", pg.Period)
	for _, e := range pg.Entries {
		t.Logf("%+v", e)
	}
	c, err := s.Member(ctx, "points", "all", "", "bob", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", c)
}

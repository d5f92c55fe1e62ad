package ranking_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

// TestCheckEncoding: start-up records how each view of a board encodes its
// scores, refuses settings that would read the stored codes differently
// (a wider range, other decimals with the same scaled range, another
// order, shared ties, a timezone whose longest week differs),
// leaving the data and the record as they were, and takes new views and
// settings that keep the encoding.
func TestCheckEncoding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	const prefix = "enc:"
	conf := func(tz, board string) *ranking.Config {
		t.Helper()
		cfg, err := ranking.ParseConfig([]byte(fmt.Sprintf("timezone: %s\nboards:\n  - %s\n", tz, board)))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	open := func(tz, board string) *ranking.Store {
		return rankingtest.MustStore(t, rdb, conf(tz, board), ranking.Options{Prefix: prefix})
	}
	const base = "{id: reads, update: increment, order: desc, min_score: 0, max_score: 1000, views: [week, all]}"
	s := open("UTC", base)
	if err := s.CheckEncoding(ctx); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if _, err := s.Apply(ctx, "reads", []ranking.Event{{Member: "ann", Value: 7}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := rdb.HGetAll(ctx, prefix+"{reads}:meta").Val()
	if !strings.Contains(rec["enc:week"], "scores 0 to 1000 with 0 decimals, desc, ties by ") || rec["enc:all"] == "" {
		t.Fatalf("record %q", rec)
	}
	dump := func() string {
		keys := rdb.Keys(ctx, prefix+"*").Val()
		out := fmt.Sprint(len(keys), rdb.HGetAll(ctx, prefix+"{reads}:meta").Val())
		for _, k := range keys {
			if rdb.Type(ctx, k).Val() == "zset" {
				out += fmt.Sprint(k, rdb.ZRangeWithScores(ctx, k, 0, -1).Val())
			}
		}
		return out
	}
	before := dump()

	for _, c := range []struct{ name, tz, board string }{
		{"wider range", "UTC", strings.Replace(base, "max_score: 1000", "max_score: 2000", 1)},
		{"decimals, same scaled range", "UTC", strings.Replace(base, "max_score: 1000", "max_score: 100, decimals: 1", 1)},
		{"order", "UTC", strings.Replace(base, "order: desc", "order: asc", 1)},
		{"shared ties", "UTC", strings.Replace(base, "views:", "ties: shared, views:", 1)},
		{"timezone", "Europe/Paris", base}, // a week can last 7 days and 1 hour
	} {
		err := open(c.tz, c.board).CheckEncoding(ctx)
		var mis *ranking.EncodingMismatchError
		if !errors.As(err, &mis) || mis.Board != "reads" || mis.Recorded == mis.Configured {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(err.Error(), `board "reads": the scores of view "`) || !strings.Contains(err.Error(), `in Redis are encoded as scores 0 to 1000 with 0 decimals, desc`) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if after := dump(); after != before {
			t.Fatalf("%s: a refused start changed Redis:\n%s\n%s", c.name, before, after)
		}
	}

	// A new view beside a refused change is not recorded either.
	if err := open("UTC", strings.Replace(strings.Replace(base, "[week, all]", "[day, week, all]", 1), "max_score: 1000", "max_score: 2000", 1)).CheckEncoding(ctx); err == nil {
		t.Fatal("a new view and a wider range: no error")
	}
	if after := dump(); after != before {
		t.Fatalf("a new view beside a refused change was recorded:\n%s\n%s", before, after)
	}

	// A new view is recorded; the old ones still read the same.
	grown := open("UTC", strings.Replace(base, "[week, all]", "[day, week, all]", 1))
	if err := grown.CheckEncoding(ctx); err != nil {
		t.Fatalf("a new view: %v", err)
	}
	if rdb.HGet(ctx, prefix+"{reads}:meta", "enc:day").Val() == "" {
		t.Fatal("the new view has no record")
	}
	got, err := grown.Page(ctx, "reads", "all", ranking.PageQuery{Limit: 10})
	if err != nil || len(got.Entries) != 1 || got.Entries[0].Score != 7 {
		t.Fatalf("all after a new view: %+v %v", got, err)
	}
	// Settings that keep the encoding (a new name for the board's title).
	if err := open("UTC", strings.Replace(base, "{id: reads,", "{id: reads, title: Reads,", 1)).CheckEncoding(ctx); err != nil {
		t.Fatalf("same encoding: %v", err)
	}
	// Data written before the record: the first start records it.
	rdb.HDel(ctx, prefix+"{reads}:meta", "enc:week", "enc:all", "enc:day")
	if err := open("UTC", strings.Replace(base, "max_score: 1000", "max_score: 2000", 1)).CheckEncoding(ctx); err != nil {
		t.Fatalf("no record: %v", err)
	}
	if err := s.CheckEncoding(ctx); err == nil {
		t.Fatal("the old settings after the new ones were recorded: no error")
	}
}

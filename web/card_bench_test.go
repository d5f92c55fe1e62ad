package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/web"
)

// BenchmarkRankCardPage serves a rank card page, gzipped, through the
// whole handler (miniredis behind it: look at the app's allocations and
// CPU with -benchmem or -memprofile, not at ns/op, which is mostly
// miniredis's Lua).
func BenchmarkRankCardPage(b *testing.B) {
	f := MustFixture(b)
	var events []string
	for i := range 200 {
		events = append(events, fmt.Sprintf(`{"member":"m%03d","name":"Member %d","value":%d}`, i, i, 1+i*37%500))
	}
	MustOK(b, f.do(b, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[`+strings.Join(events, ",")+`]}`))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := httptest.NewRequest("GET", fmt.Sprintf("/boards/points/week/members/m%03d", i%200), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
		i++
	}
}

// BenchmarkRankCardPageReal serves rank cards as the pages suite does
// (cmd/benchmark/pages.go): a board of day, week, month and all time on a
// real Redis, whose card members have a score in each of the 11 days,
// weeks and months before the current ones, so every chart is full. Redis
// runs in its own process: a CPU profile of this benchmark is the app's
// share of a card alone (model, markup, gzip, middleware, the client).
func BenchmarkRankCardPageReal(b *testing.B) {
	rdb := MustRealRedis(b)
	const board = `
boards:
  - id: bench
    title: Bench
    views: [day, week, month, all]
`
	cfg, err := ranking.ParseConfig([]byte(board))
	if err != nil {
		b.Fatal(err)
	}
	lateCfg, err := ranking.ParseConfig([]byte(strings.Replace(board, "    title: Bench", "    title: Bench\n    lateness: 9600h", 1)))
	if err != nil {
		b.Fatal(err)
	}
	store := rankingtest.MustStore(b, rdb, cfg, ranking.Options{Prefix: "bench:"})
	late := rankingtest.MustStore(b, rdb, lateCfg, ranking.Options{Prefix: "bench:"})
	ctx := context.Background()
	const n, cards = 2000, 200
	for lo := 0; lo < n; lo += ranking.MaxBatch {
		var evs []ranking.Event
		for i := lo; i < min(lo+ranking.MaxBatch, n); i++ {
			evs = append(evs, ranking.Event{Member: fmt.Sprintf("m%05d", i), Name: fmt.Sprintf("Player m%05d", i), Value: int64(1 + i*7919%100000)})
		}
		if _, err := store.Apply(ctx, "bench", evs, ranking.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	now, err := late.Now(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var times []time.Time
	for _, v := range lateCfg.Boards[0].Views {
		if v.Kind == ranking.All {
			continue
		}
		p := lateCfg.Calendar.PeriodAt(v, now)
		for range 11 {
			p = lateCfg.Calendar.Prev(v, p)
			times = append(times, p.Start.Add(p.End.Sub(p.Start)/2))
		}
	}
	for i := range cards {
		var evs []ranking.Event
		for j, at := range times {
			evs = append(evs, ranking.Event{Member: fmt.Sprintf("m%05d", i), Value: int64(1 + (i*31+j*17)%1000), At: at})
		}
		if _, err := late.Apply(ctx, "bench", evs, ranking.ApplyOptions{NoRanks: true}); err != nil {
			b.Fatal(err)
		}
	}
	srv := web.NewServer(web.Options{Store: store, Feed: store, Config: cfg, WriteKeys: []string{writeKey}})
	b.Cleanup(srv.Close)
	h := srv.Handler()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := httptest.NewRequest("GET", fmt.Sprintf("/boards/bench/week/members/m%05d", i%cards), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
		i++
	}
}

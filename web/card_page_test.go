package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// MustRealRedis starts a redis-server of its own for tb (the web tests have
// no shared one), or skips tb when Redis is missing and not required.
func MustRealRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	if err := redistest.Available(); err != nil {
		if redistest.Required() {
			tb.Fatal(err)
		}
		tb.Skipf("Redis is not available: %v (set %s=1 to fail instead)", err, redistest.RequireEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := redistest.StartServer(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	tb.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestRankCardPageIsOneSnapshot renders rank cards on a real Redis while a
// writer keeps adding to the member, every event now: the headline, the
// member's own row, every view and the chart's last point must show the
// same score on every page.
func TestRankCardPageIsOneSnapshot(t *testing.T) {
	rdb := MustRealRedis(t)
	cfg, err := ranking.ParseConfig([]byte(`
boards:
  - {id: race, title: Race, views: [day, week, month, all]}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix})
	srv := web.NewServer(web.Options{Store: store, Feed: store, Config: cfg, WriteKeys: []string{writeKey}})
	t.Cleanup(srv.Close)
	f := &fixture{handler: srv.Handler()}
	ctx := context.Background()
	if _, err := store.Apply(ctx, "race", []ranking.Event{{Member: "rival", Value: 1_000_000}, {Member: "me", Value: 1}}, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var (
		stop   atomic.Bool
		writes atomic.Int64
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			res, err := store.Apply(ctx, "race", []ranking.Event{{Member: "me", Value: 1}}, ranking.ApplyOptions{})
			if err != nil || res[0].Err != nil {
				t.Errorf("write: %v %v", err, res)
				return
			}
			writes.Add(1)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 300 {
		doc := MustOK(t, f.get(t, "/boards/race/week/members/me")).Doc(t)
		if problem := pageDisagreement(doc); problem != "" {
			t.Fatalf("page %d: %s", i, problem)
		}
	}
	stop.Store(true)
	wg.Wait()
	if writes.Load() < 2 {
		t.Fatalf("only %d writes ran during the reads", writes.Load())
	}
	t.Logf("300 consistent rank card pages during %d writes", writes.Load())
}

// pageDisagreement describes how a rank card page of a member whose every
// event happened now shows more than one score, or is "".
func pageDisagreement(doc *goquery.Document) string {
	text := func(s *goquery.Selection) string { return strings.TrimSpace(s.Text()) }
	head := text(doc.Find(testid(views.TestCardScore)))
	seen := []string{"headline=" + head}
	ok := head != ""
	row := text(doc.Find(testid(views.TestNeighbours) + " tr.self " + testid(views.TestScore)))
	seen = append(seen, "row="+row)
	ok = ok && row == head
	rows := doc.Find(testid(views.TestCardViews) + " tbody tr")
	ok = ok && rows.Length() == 4
	rows.Each(func(_ int, s *goquery.Selection) {
		score := text(s.Find("td.score"))
		seen = append(seen, s.AttrOr("data-view", "")+"="+score)
		ok = ok && score == head
	})
	// A chart is drawn from two periods with a score; one period is
	// said in words, with no score to disagree.
	if dots := doc.Find(testid(views.TestChart) + " circle title"); dots.Length() > 0 || doc.Find(testid(views.TestChartFew)).Length() == 0 {
		last := text(dots.Last())
		seen = append(seen, "chart="+last)
		ok = ok && strings.HasSuffix(last, ": "+head)
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("scores differ: %s", strings.Join(seen, " "))
}

package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/alicebob/miniredis/v2"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// charts is the score and rank charts of a card fragment or page, as
// parsed HTML (so a page and a frame compare alike).
func charts(tb testing.TB, html string) string {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, id := range []string{views.IDChart, views.IDRankChart} {
		h, err := goquery.OuterHtml(doc.Find("#" + id))
		if err != nil || h == "" {
			tb.Fatalf("no #%s in %.300q", id, html)
		}
		out = append(out, h)
	}
	return strings.Join(out, "\n")
}

// untilCharts reads frames until one shows the charts want, failing after
// 2 s: well before the hub's 5 s refresh, so the frame comes from the
// change itself.
func untilCharts(t *testing.T, c *websocket.Conn, want, after string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		got := charts(t, next(t, c))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frame with the page's charts after %s; last\n%s\nwant\n%s", after, got, want)
		}
	}
}

// TestLiveCardChartMatchesPage: a live rank card shows the same chart as
// the card page after a write in the current hour, after a late event in
// a past hour (which the change feed names) and after the hour turns.
func TestLiveCardChartMatchesPage(t *testing.T) {
	cfg, err := ranking.ParseConfig([]byte("boards: [{id: pts, views: [hour, day], lateness: 48h}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	mr.SetTime(testNow)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix, Clock: func() time.Time { return testNow }})
	srv := web.NewServer(web.Options{Store: store, Feed: store, Config: cfg, WriteKeys: []string{writeKey}, LiveRefresh: time.Hour})
	hs := httptest.NewServer(srv.Handler())
	// Pages come from a second server on the same store, which keeps
	// final chart points of its own.
	pages := web.NewServer(web.Options{Store: store, Feed: store, Config: cfg})
	ps := httptest.NewServer(pages.Handler())
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
		pages.Close()
		ps.Close()
	})
	f := &liveFixture{mr: mr, srv: srv, http: hs}

	at := func(h, m int) string { return time.Date(2026, 11, 22, h, m, 0, 0, time.UTC).Format(time.RFC3339) }
	f.write(t, "pts", `{"member":"bob","value":4,"at":"`+at(7, 30)+`"}`)
	f.write(t, "pts", `{"member":"alice","value":5,"at":"`+at(8, 15)+`"}`)
	f.write(t, "pts", `{"member":"bob","value":2,"at":"`+at(8, 30)+`"}`)
	f.write(t, "pts", `{"member":"bob","value":1}`)

	page := func() string {
		t.Helper()
		res, err := http.Get(ps.URL + "/boards/pts/hour/members/bob")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	c := f.dial(t, "/ws/pts/hour?member=bob")
	first := next(t, c)
	if got, want := charts(t, first), charts(t, page()); got != want {
		t.Fatalf("first frame's charts\n%s\nthe page's\n%s", got, want)
	}

	// A write in the current hour.
	f.write(t, "pts", `{"member":"bob","value":3}`)
	frame := until(t, c, func(s string) bool { return strings.Contains(s, ">4<") })
	if got, want := charts(t, frame), charts(t, page()); got != want {
		t.Errorf("chart after a write\n%s\nthe page's\n%s", got, want)
	}

	// A late event in hour 07 passes bob there.
	before := charts(t, page())
	f.write(t, "pts", `{"member":"alice","value":10,"at":"`+at(7, 45)+`"}`)
	after := charts(t, page())
	if after == before {
		t.Fatal("the late event did not change the page's chart")
	}
	untilCharts(t, c, after, "a late event")

	// The hour turns, then bob scores: the chart moves on by one period.
	mr.SetTime(testNow.Add(time.Hour))
	f.write(t, "pts", `{"member":"bob","value":2}`)
	untilCharts(t, c, charts(t, page()), "the hour turned")
}

package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// MustRecord moves Redis's clock to at and runs one result recorder pass,
// as every instance does in the background. The clock stays at at.
func (f *fixture) MustRecord(tb testing.TB, boards string, at time.Time) {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(boards))
	if err != nil {
		tb.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: f.mr.Addr()})
	defer rdb.Close()
	f.mr.SetTime(at)
	if _, err := rankingtest.MustStore(tb, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix}).RecordResults(context.Background()); err != nil {
		tb.Fatalf("RecordResults at %s: %v", at, err)
	}
}

// day is midnight UTC of a November 2026 day.
func day(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }

// mustResults records results of the points board's days up to 21 Nov:
// more than a page of them, 30 Oct and the last two with scores. On 21 Nov ann
// leads, bob and cy tie on 20 (cy second to get there) and dee is 4th.
func mustResults(tb testing.TB) *fixture {
	tb.Helper()
	f := MustFixture(tb)
	for _, at := range []time.Time{day(1).AddDate(0, 0, -7), day(1).Add(-time.Hour), day(6), day(12), day(18)} {
		if at == day(1).Add(-time.Hour) {
			f.MustWriteAt(tb, day(1).AddDate(0, 0, -2).Add(10*time.Hour), "points", `{"member":"early","value":3}`)
		}
		f.MustRecord(tb, testBoards, at)
	}
	f.MustWriteAt(tb, day(20).Add(10*time.Hour), "points", `{"member":"zed","value":7}`)
	for _, ev := range []string{
		`{"member":"ann","value":30,"name":"Ann <b>&</b>"}`,
		`{"member":"bob","value":20,"name":"Bob"}`,
		`{"member":"cy","value":20}`,
		`{"member":"dee","value":10}`,
	} {
		f.MustWriteAt(tb, day(21).Add(10*time.Hour), "points", ev)
	}
	f.MustRecord(tb, testBoards, testNow)
	return f
}

// resultIDs lists the period ids of the results on a results page.
func resultIDs(doc *goquery.Document) []string {
	var out []string
	doc.Find(testid(views.TestResult) + "," + testid(views.TestResultGap)).Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("id", "")) })
	return out
}

// resultIDs' first result's recap link.
func first21Recap(doc *goquery.Document) string {
	return doc.Find("#2026-11-21 "+testid(views.TestResultRecap)).AttrOr("href", "")
}

func podium(s *goquery.Selection) []string {
	var out []string
	s.Find(testid(views.TestPodiumRow)).Each(func(_ int, r *goquery.Selection) {
		out = append(out, strings.TrimSpace(r.Find(testid(views.TestRank)).Text())+" "+
			strings.TrimSpace(r.Find(testid(views.TestMember)).Text())+" "+strings.TrimSpace(r.Find(testid(views.TestScore)).Text()))
	})
	return out
}

func TestResultsPage(t *testing.T) {
	f := mustResults(t)
	doc := MustOK(t, f.get(t, "/boards/points/day/results")).Doc(t)
	if title := doc.Find("title").Text(); !strings.HasPrefix(title, "Results") {
		t.Errorf("title %q", title)
	}
	// The days nobody scored between them collapse into one line (they
	// were a card each, "Nobody scored", which buried the two that count).
	ids := resultIDs(doc)
	if len(ids) != 3 || ids[0] != "2026-11-21" || ids[1] != "2026-11-20" || ids[2] != "2026-11-19" {
		t.Fatalf("first page %v", ids)
	}
	gap := doc.Find(testid(views.TestResultGap))
	if got := strings.Join(strings.Fields(gap.Text()), " "); gap.Length() != 1 || got != "18 days with no scores Monday 2 Nov 2026 – Thursday 19 Nov 2026" {
		t.Errorf("gap %q", got)
	}
	if got := first21Recap(doc); got != "/boards/points/day/recap?period=2026-11-21" {
		t.Errorf("recap link %q", got)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Fatalf("not newest first: %v", ids)
		}
	}
	first := doc.Find("#2026-11-21")
	if got := strings.TrimSpace(first.Find("h2").Text()); got != "Saturday 21 Nov 2026" {
		t.Errorf("label %q", got)
	}
	if got, want := strings.Join(podium(first), "|"), "1 Ann <b>&</b> 30|2 Bob 20|3 cy 20"; got != want {
		t.Errorf("podium %q, want %q", got, want)
	}
	if got := first.Find(testid(views.TestResultTotal)).Text(); got != "4 ranked" {
		t.Errorf("total %q", got)
	}
	if got := first.Find(testid(views.TestResultBoard)).AttrOr("href", ""); got != "/boards/points/day?period=2026-11-21" {
		t.Errorf("board link %q", got)
	}
	if got := first.Find(testid(views.TestResultCSV)).AttrOr("href", ""); got != "/boards/points/day.csv?period=2026-11-21" {
		t.Errorf("csv link %q", got)
	}
	if n := doc.Find("main script, main b").Length(); n != 0 {
		t.Errorf("a name rendered as markup: %d elements", n)
	}
	if doc.Find(testid(views.TestNewest)).Length() != 0 {
		t.Error("a Newest link on the newest page")
	}

	t.Run("older", func(t *testing.T) {
		older := doc.Find(testid(views.TestOlder)).AttrOr("href", "")
		if want := "/boards/points/day/results?before=2026-11-02"; older != want {
			t.Fatalf("older link %q, want %q", older, want)
		}
		next := MustOK(t, f.get(t, older)).Doc(t)
		more := resultIDs(next)
		if len(more) == 0 || more[0] >= "2026-11-02" {
			t.Fatalf("older page %v after %v", more, ids)
		}
		if got := next.Find(testid(views.TestNewest)).AttrOr("href", ""); got != "/boards/points/day/results" {
			t.Errorf("newest link %q", got)
		}
		// The oldest page has no older link.
		last := next
		for i := 0; last.Find(testid(views.TestOlder)).Length() > 0; i++ {
			if i > 10 {
				t.Fatal("older links never end")
			}
			last = MustOK(t, f.get(t, last.Find(testid(views.TestOlder)).AttrOr("href", ""))).Doc(t)
		}
	})

	t.Run("board page links its results", func(t *testing.T) {
		for path, want := range map[string]string{
			"/boards/points/day":  "/boards/points/day/results",
			"/boards/points/week": "/boards/points/week/results",
			"/boards/points/all":  "",
		} {
			got := MustOK(t, f.get(t, path)).Doc(t).Find(testid(views.TestResultsLink)).AttrOr("href", "")
			if got != want {
				t.Errorf("%s: results link %q, want %q", path, got, want)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		before := f.dump()
		for path, status := range map[string]int{
			"/boards/points/all/results":                   http.StatusNotFound,
			"/boards/points/hour/results":                  http.StatusNotFound,
			"/boards/nope/day/results":                     http.StatusNotFound,
			"/boards/points/day/results?before=yesterday":  http.StatusUnprocessableEntity,
			"/boards/points/week/results?before=2026-11":   http.StatusUnprocessableEntity,
			"/boards/points/day/results?before=2026-13-01": http.StatusUnprocessableEntity,
		} {
			r := f.get(t, path)
			if r.Status != status {
				t.Errorf("%s: %d, want %d", path, r.Status, status)
				continue
			}
			if r.Doc(t).Find(testid(views.TestErrorStatus)).Length() != 1 {
				t.Errorf("%s: not the error page: %s", path, r.Body)
			}
		}
		f.MustUnchanged(t, before)
	})
}

func TestResultsPageEmpty(t *testing.T) {
	f := MustFixture(t)
	doc := MustOK(t, f.get(t, "/boards/points/week/results")).Doc(t)
	got := doc.Find(testid(views.TestEmpty)).Text()
	if want := "No week has finished yet. This week becomes final on Mon 23 Nov 01:00 UTC."; got != want {
		t.Errorf("empty state %q, want %q", got, want)
	}
	if resultIDs(doc) != nil {
		t.Error("results listed")
	}
}

// TestResultsPageTies: shared ties show as equal ranks on the podium.
func TestResultsPageTies(t *testing.T) {
	f := MustFixture(t)
	for _, ev := range []string{`{"member":"a","value":61.5}`, `{"member":"b","value":61.5}`, `{"member":"c","value":70}`, `{"member":"d","value":80}`} {
		f.MustWrite(t, "lap", ev)
	}
	f.MustRecord(t, testBoards, day(23).Add(time.Hour))
	doc := MustOK(t, f.get(t, "/boards/lap/week/results")).Doc(t)
	if got, want := strings.Join(podium(doc.Find("#2026-11-16")), "|"), "1 a 61.5|1 b 61.5|3 c 70"; got != want {
		t.Errorf("podium %q, want %q", got, want)
	}
}

func TestFinalPeriodPage(t *testing.T) {
	f := mustResults(t)
	doc := MustOK(t, f.get(t, "/boards/points/day?period=2026-11-21")).Doc(t)
	if got := doc.Find(testid(views.TestFinalTitle)).Text(); got != "Final results — Saturday 21 Nov 2026" {
		t.Errorf("heading %q", got)
	}
	link := doc.Find(testid(views.TestResultLink)).AttrOr("href", "")
	if link != "/boards/points/day/results#2026-11-21" {
		t.Errorf("result link %q", link)
	}
	js := doc.Find(testid(views.TestResultJSON)).AttrOr("href", "")
	if js != "/api/v1/boards/points/day/results/2026-11-21" {
		t.Errorf("JSON link %q", js)
	}
	if r := MustOK(t, f.get(t, js)); !strings.Contains(r.Body, `"period":"2026-11-21"`) {
		t.Errorf("JSON %s", r.Body)
	}
	if doc.Find(testid(views.TestCountdown)).Length() != 0 {
		t.Error("a countdown on a final period")
	}

	t.Run("older than the first results page", func(t *testing.T) {
		doc := MustOK(t, f.get(t, "/boards/points/day?period=2026-10-30")).Doc(t)
		link := doc.Find(testid(views.TestResultLink)).AttrOr("href", "")
		if link != "/boards/points/day/results?before=2026-10-31#2026-10-30" {
			t.Fatalf("result link %q", link)
		}
		page := MustOK(t, f.get(t, strings.TrimSuffix(link, "#2026-10-30"))).Doc(t)
		if ids := resultIDs(page); len(ids) == 0 || ids[0] != "2026-10-30" {
			t.Errorf("linked page starts %v", ids)
		}
	})

	t.Run("not recorded yet", func(t *testing.T) {
		f := MustFixture(t)
		f.MustWriteAt(t, day(21).Add(time.Hour), "points", `{"member":"a","value":1}`)
		f.mr.SetTime(day(22).Add(time.Hour + 30*time.Second))
		doc := MustOK(t, f.get(t, "/boards/points/day?period=2026-11-21")).Doc(t)
		if doc.Find(testid(views.TestFinalTitle)).Length() != 1 || doc.Find(testid(views.TestResultLink)).Length() != 0 {
			t.Fatal("final heading without a result link expected")
		}
		if got := doc.Find(testid(views.TestRecording)).Text(); got != "The result is being recorded." {
			t.Errorf("note %q", got)
		}
	})
}

func TestClosingPeriodPage(t *testing.T) {
	f := MustFixture(t)
	f.mr.SetTime(day(22).Add(30 * time.Minute))
	doc := MustOK(t, f.get(t, "/boards/points/day?period=2026-11-21")).Doc(t)
	want := "Saturday 21 Nov 2026 has ended. Late scores may still arrive until Sun 22 Nov 01:00 UTC; the standings are final after that."
	if got := doc.Find(testid(views.TestClosing)).Text(); got != want {
		t.Errorf("closing %q, want %q", got, want)
	}
	if doc.Find(testid(views.TestFinalTitle)).Length() != 0 || doc.Find(testid(views.TestCountdown)).Length() != 0 {
		t.Error("a closing period shown as final or current")
	}
}

const zoneBoards = `
timezone: Asia/Shanghai
boards:
  - id: z
    title: Zoned
    views: [week, month, 7d, all]
    lateness: 5m
`

// TestCountdown: a current period says when it ends, in the board's zone;
// windows and all time have no end.
func TestCountdown(t *testing.T) {
	f := MustFixtureOf(t, zoneBoards, web.Options{WriteRate: -1})
	// testNow is Sun 22 Nov 18:00 in Shanghai.
	for _, tc := range []struct{ path, countdown, resets, rolling string }{
		{"/boards/z/week", "Ends in 6h 0m 0s", "resets Mon 00:00 Asia/Shanghai", ""},
		{"/boards/z/month", "Ends in 8d 6h 0m", "resets 1 Dec 00:00 Asia/Shanghai", ""},
		{"/boards/z/7d", "", "", "rolling 7 days"},
		{"/boards/z/all", "", "", ""},
		{"/embed/z/week", "Ends in 6h 0m 0s", "resets Mon 00:00 Asia/Shanghai", ""},
		{"/embed/z/7d", "", "", ""},
	} {
		doc := MustOK(t, f.get(t, tc.path)).Doc(t)
		cd := doc.Find(testid(views.TestCountdown))
		if got := cd.Text(); got != tc.countdown {
			t.Errorf("%s: countdown %q, want %q", tc.path, got, tc.countdown)
		}
		if tc.countdown != "" {
			end := time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC)
			if tc.path == "/boards/z/month" {
				end = time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)
			}
			if cd.AttrOr("data-countdown-end", "") != strconv.FormatInt(end.UnixMilli(), 10) || cd.AttrOr("data-countdown-now", "") != strconv.FormatInt(testNow.UnixMilli(), 10) {
				t.Errorf("%s: countdown data %v", tc.path, cd.Nodes[0].Attr)
			}
		}
		if got := doc.Find(testid(views.TestResets)).Text(); got != tc.resets {
			t.Errorf("%s: resets %q, want %q", tc.path, got, tc.resets)
		}
		if got := doc.Find(testid(views.TestRolling)).Text(); got != tc.rolling {
			t.Errorf("%s: rolling %q, want %q", tc.path, got, tc.rolling)
		}
	}

	t.Run("closing in the board's zone", func(t *testing.T) {
		f.mr.SetTime(time.Date(2026, 11, 22, 16, 2, 0, 0, time.UTC))
		doc := MustOK(t, f.get(t, "/boards/z/week?period=2026-11-16")).Doc(t)
		want := "The week of 16 Nov 2026 has ended. Late scores may still arrive until Mon 23 Nov 00:05 Asia/Shanghai; the standings are final after that."
		if got := doc.Find(testid(views.TestClosing)).Text(); got != want {
			t.Errorf("closing %q, want %q", got, want)
		}
	})

	t.Run("the last seconds", func(t *testing.T) {
		// A fresh server: current-period reads are shared for a tick.
		f := MustFixtureOf(t, zoneBoards, web.Options{WriteRate: -1})
		f.mr.SetTime(time.Date(2026, 11, 22, 15, 58, 55, 0, time.UTC))
		if got := MustOK(t, f.get(t, "/boards/z/week")).Doc(t).Find(testid(views.TestCountdown)).Text(); got != "Ends in 1m 5s" {
			t.Errorf("countdown %q", got)
		}
	})
}

func TestIndexShowsWinners(t *testing.T) {
	f := mustResults(t)
	f.MustWrite(t, "points", `{"member":"now","value":1,"name":"Now Leader"}`)
	doc := MustOK(t, f.get(t, "/")).Doc(t)
	points := doc.Find(`[data-board="points"]`)
	if got := strings.TrimSpace(points.Find(testid(views.TestLeaders) + " h3").Text()); got != "Today (so far)" {
		t.Errorf("leaders label %q", got)
	}
	if !strings.Contains(points.Find(testid(views.TestLeaders)).Text(), "Now Leader") {
		t.Errorf("leaders %q", points.Find(testid(views.TestLeaders)).Text())
	}
	w := points.Find(testid(views.TestWinners))
	if got := strings.TrimSpace(w.Find("h3").Text()); got != "Saturday 21 Nov 2026 — winners" {
		t.Errorf("winners label %q", got)
	}
	if got := w.Find("h3 a").AttrOr("href", ""); got != "/boards/points/day/results#2026-11-21" {
		t.Errorf("winners link %q", got)
	}
	var names []string
	w.Find("ol li a").Each(func(_ int, s *goquery.Selection) { names = append(names, s.Text()) })
	if got := strings.Join(names, "|"); got != "Ann <b>&</b>|Bob|cy" {
		t.Errorf("winners %q", got)
	}
	if doc.Find("main b").Length() != 0 {
		t.Error("a name rendered as markup")
	}
	// lap has results, but nobody scored in them: no winners shown.
	if n := doc.Find(`[data-board="lap"] ` + testid(views.TestWinners)).Length(); n != 0 {
		t.Errorf("lap shows %d winners blocks", n)
	}
}

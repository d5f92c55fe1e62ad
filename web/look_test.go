package web_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/static"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestNotFoundPagesInPlainWords: an unknown board or view, or a member
// without a score, is a page in plain words with a way on: the board one
// probably meant, and every board there is.
func TestNotFoundPagesInPlainWords(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"ann","value":1}`)
	for _, c := range []struct{ path, message, way string }{
		{"/boards/nosuch/day", "There is no board called “nosuch”. These are the boards there are:", ""},
		{"/boards/points/nosuch", "Points has no view “nosuch”. Its views are Day, Week, All time.", "/boards/points/day"},
		{"/boards/points/week/members/bob", "“bob” has no score in this period of Points.", "/boards/points/week"},
		{"/no/such/page", "There is no page at this address.", ""},
	} {
		r := f.get(t, c.path)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s: %d", c.path, r.Status)
			continue
		}
		doc := r.Doc(t)
		if got := strings.TrimSpace(doc.Find(".error > p").First().Text()); got != c.message {
			t.Errorf("%s: message %q, want %q", c.path, got, c.message)
		}
		if got := doc.Find(testid(views.TestErrorWay)).AttrOr("href", ""); got != c.way {
			t.Errorf("%s: way on %q, want %q", c.path, got, c.way)
		}
		var boards []string
		doc.Find(testid(views.TestErrorBoards) + " a").Each(func(_ int, s *goquery.Selection) { boards = append(boards, s.Text()+" "+s.AttrOr("href", "")) })
		if strings.Join(boards, ", ") != "Points /boards/points/day, Fastest lap /boards/lap/week" {
			t.Errorf("%s: boards %v", c.path, boards)
		}
		if strings.Contains(r.Body, `no board "`) || strings.Contains(r.Body, "of board") {
			t.Errorf("%s: developer words on the page", c.path)
		}
	}
}

// TestPagePastTheEnd: ?page=99 of a 3-member period is a 404 that says so
// and links to the last page, not an empty "0–9800 of 3".
func TestPagePastTheEnd(t *testing.T) {
	f := MustFixture(t)
	for _, m := range []string{"a", "b", "c"} {
		f.MustWrite(t, "points", `{"member":"`+m+`","value":1}`)
	}
	r := f.get(t, "/boards/points/day?page=99")
	if r.Status != http.StatusNotFound {
		t.Fatalf("status %d", r.Status)
	}
	doc := r.Doc(t)
	if got := strings.TrimSpace(doc.Find(".error > p").First().Text()); got != "Page 99 is past the end: this period has 3 members on 1 page." {
		t.Errorf("message %q", got)
	}
	if got := doc.Find(testid(views.TestErrorWay)).AttrOr("href", ""); got != "/boards/points/day" {
		t.Errorf("last page link %q", got)
	}
	if r := f.get(t, "/boards/points/day?page=1"); r.Status != 200 {
		t.Errorf("page 1: %d", r.Status)
	}
}

// TestAllTimeHasNoPeriodNavigation: all time is one period: no Previous,
// Next or "current" badge.
func TestAllTimeHasNoPeriodNavigation(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"a","value":1}`)
	doc := MustOK(t, f.get(t, "/boards/points/all")).Doc(t)
	if n := doc.Find(`nav.period, .badge.now`).Length(); n != 0 {
		t.Errorf("all time shows %d period controls", n)
	}
	if got := strings.TrimSpace(doc.Find(testid(views.TestPeriod)).Text()); got != "All time" {
		t.Errorf("period label %q", got)
	}
	if n := MustOK(t, f.get(t, "/boards/points/week")).Doc(t).Find(`nav.period`).Length(); n != 1 {
		t.Errorf("the week view lost its period navigation")
	}
}

// TestAssetsVersionedAndCompressed: pages link versioned static names
// cached for a year; plain names still work with a short cache; pages and
// assets are gzipped for clients that accept it; /favicon.ico answers.
func TestAssetsVersionedAndCompressed(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"a","value":1}`)
	doc := MustOK(t, f.get(t, "/boards/points/day")).Doc(t)
	css := doc.Find(`link[rel=stylesheet]`).AttrOr("href", "")
	if !regexp.MustCompile(`^/static/app\.[0-9a-f]{10}\.css$`).MatchString(css) {
		t.Fatalf("stylesheet %q is not versioned", css)
	}
	r := MustOK(t, f.get(t, css))
	if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/css") {
		t.Errorf("versioned: %q %q", cc, r.Header.Get("Content-Type"))
	}
	if cc := MustOK(t, f.get(t, "/static/app.css")).Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("plain name: %q", cc)
	}
	if cc := MustOK(t, f.get(t, "/static/app.0000000000.css")).Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("an outdated version: %q", cc)
	}
	for _, path := range []string{"/boards/points/day", css, "/api/v1/openapi.json"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		r := f.serve(req)
		if r.Status != 200 || r.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d, encoding %q", path, r.Status, r.Header.Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(strings.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(zr); err != nil || len(b) < 1024 {
			t.Errorf("%s: %d bytes, %v", path, len(b), err)
		}
	}
	if r := f.get(t, "/favicon.ico"); r.Status != 200 || r.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("favicon: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
}

// TestWidgetBuilder: the Widget button opens the embed builder: the
// snippet to paste (absolute URL, escaped), a preview of the same widget,
// and a GET form for rows, theme and size.
func TestWidgetBuilder(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"a","value":1}`)
	board := MustOK(t, f.get(t, "/boards/points/week")).Doc(t)
	if got := board.Find(`.exports a:contains("Widget")`).AttrOr("href", ""); got != "/boards/points/week/widget" {
		t.Errorf("Widget button %q", got)
	}
	doc := MustOK(t, f.get(t, "/boards/points/week/widget?limit=5&theme=dark")).Doc(t)
	want := `<iframe src="http://example.com/embed/points/week?limit=5&amp;theme=dark" title="Points · Week" width="360" height="290" style="border:0" loading="lazy"></iframe>`
	if got := doc.Find(testid(views.TestWidgetSnippet)).Text(); got != want {
		t.Errorf("snippet\n got %s\nwant %s", got, want)
	}
	pv := doc.Find(testid(views.TestWidgetPreview))
	if pv.AttrOr("src", "") != "/embed/points/week?limit=5&theme=dark" || pv.AttrOr("height", "") != "290" {
		t.Errorf("preview %v", pv.Nodes[0].Attr)
	}
	if csp := MustOK(t, f.get(t, "/boards/points/week/widget")).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src 'self'") {
		t.Errorf("the preview cannot load under %q", csp)
	}
	for _, q := range []string{"limit=51", "theme=pink", "width=10", "height=abc"} {
		if r := f.get(t, "/boards/points/week/widget?"+q); r.Status != 422 {
			t.Errorf("%s: %d", q, r.Status)
		}
	}
}

// TestUnitsAndFormats: a board's unit names its scores on pages, and
// format: duration shows seconds as a time; the API keeps numbers.
func TestUnitsAndFormats(t *testing.T) {
	f := MustFixtureOf(t, `
boards:
  - {id: reads, title: Reads, unit: reads, views: [week]}
  - {id: lap, title: Fastest lap, format: duration, order: asc, update: best, decimals: 3, max_score: 36000, views: [week]}
`, web.Options{WriteRate: -1})
	f.MustWrite(t, "reads", `{"member":"a","value":5}`)
	f.MustWrite(t, "reads", `{"member":"b","value":3}`)
	f.MustWrite(t, "lap", `{"member":"a","value":61.25}`)
	f.MustWrite(t, "lap", `{"member":"b","value":3725.5}`)
	doc := MustOK(t, f.get(t, "/boards/reads/week")).Doc(t)
	if got := strings.TrimSpace(doc.Find("th.score").Text()); got != "Reads" {
		t.Errorf("column %q", got)
	}
	card := MustOK(t, f.get(t, "/boards/reads/week/members/b")).Doc(t)
	if got := strings.TrimSpace(card.Find(testid(views.TestCardGap)).Text()); got != "3 reads to pass #1" {
		t.Errorf("gap %q", got)
	}
	if got := strings.TrimSpace(card.Find("dl.headline dt").Eq(1).Text()); got != "Reads" {
		t.Errorf("headline label %q", got)
	}
	lap := MustOK(t, f.get(t, "/boards/lap/week")).Doc(t)
	if got := fmt.Sprint(tableRows(lap.Selection)); got != "[1 a 1:01.250 2 b 1:02:05.500]" {
		t.Errorf("lap rows %s", got)
	}
	if got := strings.TrimSpace(lap.Find("th.score").Text()); got != "Time" {
		t.Errorf("lap column %q", got)
	}
	if body := MustOK(t, f.get(t, "/api/v1/boards/lap/week")).Body; !strings.Contains(body, `"score":61.25,`) {
		t.Errorf("the API changed its numbers: %s", body)
	}
}

// TestCardCharts: the rank card draws the score and the rank over recent
// periods with periods in words; lower-is-better boards say so.
func TestCardCharts(t *testing.T) {
	f := MustFixture(t)
	f.MustWriteAt(t, testNow.Add(-7*24*time.Hour), "points", `{"member":"a","value":447}`)
	f.MustWrite(t, "points", `{"member":"a","value":3}`)
	f.MustWriteAt(t, testNow.Add(-7*24*time.Hour), "lap", `{"member":"a","value":63.5}`) // a line needs two weeks
	f.MustWrite(t, "lap", `{"member":"a","value":61.25}`)
	doc := MustOK(t, f.get(t, "/boards/points/week/members/a")).Doc(t)
	rank := doc.Find(testid(views.TestRankChart))
	if rank.Length() != 1 || !strings.Contains(rank.AttrOr("aria-label", ""), "#1 at the top") {
		t.Fatalf("rank chart %d %q", rank.Length(), rank.AttrOr("aria-label", ""))
	}
	var labels []string
	doc.Find(testid(views.TestChart) + " text").Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.Text()) })
	if got := strings.Join(labels, "|"); strings.Contains(got, ".50") || strings.Contains(got, "2026-") || !strings.Contains(got, "16 Nov") {
		t.Errorf("score chart labels %q: no trailing zeros, dates in words", got)
	}
	if doc.Find(testid(views.TestChartNote)).Length() != 0 {
		t.Error("a higher-is-better board says lower is better")
	}
	lap := MustOK(t, f.get(t, "/boards/lap/week/members/a")).Doc(t)
	if got := lap.Find(testid(views.TestChartNote)).Text(); !strings.Contains(got, "Lower is better") {
		t.Errorf("lap chart note %q", got)
	}
}

// TestPastCardSpeaksOfItsOwnPeriod: a finished period's card says how it
// ended (won, finished #N, behind by) and does not mix in this period's
// views.
func TestPastCardSpeaksOfItsOwnPeriod(t *testing.T) {
	f := MustFixture(t)
	yesterday := testNow.Add(-24 * time.Hour)
	f.MustWriteAt(t, yesterday, "points", `{"member":"a","value":50}`)
	f.MustWriteAt(t, yesterday, "points", `{"member":"b","value":36}`)
	f.MustWrite(t, "points", `{"member":"b","value":99}`)
	past := "/boards/points/day/members/%s?period=2026-11-21"
	a := MustOK(t, f.get(t, fmt.Sprintf(past, "a"))).Doc(t)
	if got := strings.TrimSpace(a.Find(testid(views.TestCardGap)).Text()); got != "Won on Saturday 21 Nov 2026" && !strings.HasPrefix(got, "Won ") {
		t.Errorf("winner's result %q", got)
	}
	b := MustOK(t, f.get(t, fmt.Sprintf(past, "b"))).Doc(t)
	if got := strings.TrimSpace(b.Find(testid(views.TestCardGap)).Text()); got != "Finished #2, 14 points behind #1" {
		t.Errorf("runner-up's result %q", got)
	}
	if got := strings.TrimSpace(b.Find("dl.headline dt").Last().Text()); got != "Result" {
		t.Errorf("headline label %q", got)
	}
	var lines []string
	b.Find(testid(views.TestCardLine)).Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "Finished #2 of 2 ") {
		t.Errorf("lines %q", lines)
	}
	if b.Find(testid(views.TestCardViews)).Length() != 0 || b.Find(testid(views.TestCardPastViews)+" a").AttrOr("href", "") != "/boards/points/day/members/b" {
		t.Error("a past card mixes in the current views or does not link to the current card")
	}
	now := MustOK(t, f.get(t, "/boards/points/day/members/b")).Doc(t)
	if now.Find(testid(views.TestCardViews)).Length() != 1 {
		t.Error("the current card lost its views")
	}
}

// TestBoardPodium: a board's first page shows its top three as a podium:
// the table's own first rows, styled, so that ranks 1-3 are not repeated
// right under a separate podium (and live frames patch one set of rows);
// other pages and widgets have none.
func TestBoardPodium(t *testing.T) {
	f := MustFixture(t)
	for i := range 105 {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%03d","value":%d}`, i, 1+i))
	}
	doc := MustOK(t, f.get(t, "/boards/points/week")).Doc(t)
	var got []string
	doc.Find(testid(views.TestBoardPodium)+" tbody tr").Slice(0, 4).Each(func(_ int, s *goquery.Selection) {
		got = append(got, s.AttrOr("class", "")+" "+s.Find("a").Text())
	})
	if strings.Join(got, ", ") != "podium medal-1 m104, podium medal-2 m103, podium medal-3 m102,  m101" {
		t.Errorf("podium rows %v", got)
	}
	// Each of the top three is on the page once (the ticker aside).
	if n := doc.Find(`main a[href="/boards/points/week/members/m104"]`).Not(testid(views.TestTicker) + " a").Length(); n != 1 {
		t.Errorf("the leader is linked %d times", n)
	}
	if doc.Find(".podium-block").Length() != 0 {
		t.Error("a separate podium block repeats the top rows")
	}
	if MustOK(t, f.get(t, "/boards/points/week?page=2")).Doc(t).Find(testid(views.TestBoardPodium)).Length() != 0 {
		t.Error("page 2 has a podium")
	}
	if MustOK(t, f.get(t, "/embed/points/week")).Doc(t).Find(testid(views.TestBoardPodium)).Length() != 0 {
		t.Error("the widget has a podium")
	}
}

// TestNoRawPeriodIDsOnPages: people read periods in words: no page text
// shows an id such as 2026-11-23T16, 2026-11-16 or 2026-11 (links and
// data attributes carry them, text does not).
func TestNoRawPeriodIDsOnPages(t *testing.T) {
	f := mustResults(t)
	f.MustWriteAt(t, testNow.Add(-7*24*time.Hour), "points", `{"member":"ann","value":2}`)
	f.MustWrite(t, "points", `{"member":"ann","value":3}`)
	raw := regexp.MustCompile(`\b20\d\d-\d\d(-\d\d)?(T\d\d)?\b`)
	for _, path := range []string{
		"/", "/boards/points/day", "/boards/points/week", "/boards/points/all", "/boards/points/day?period=2026-11-21",
		"/boards/points/week/members/ann", "/boards/points/day/members/ann?period=2026-11-21", "/boards/points/day/results",
		"/embed/points/week", "/boards/points/week/widget",
	} {
		doc := MustOK(t, f.get(t, path)).Doc(t)
		doc.Find("script, style, code, pre").Remove()
		if m := raw.FindString(doc.Find("body").Text()); m != "" {
			t.Errorf("%s shows the raw period id %q", path, m)
		}
	}
}

// TestETagsAndCaching: pages and API reads carry a validator and answer
// 304 when the client has the bytes; the current period may be cached for
// about a second, a final one for a day; errors and writes are never
// cached.
func TestETagsAndCaching(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"a","value":1}`)
	f.MustWriteAt(t, testNow.Add(-14*24*time.Hour), "points", `{"member":"b","value":2}`)
	for _, c := range []struct{ path, cache string }{
		{"/boards/points/week", "public, max-age=1, stale-while-revalidate=5"},
		{"/embed/points/week", "public, max-age=1, stale-while-revalidate=5"},
		{"/api/v1/boards/points/week", "public, max-age=1, stale-while-revalidate=5"},
		{"/boards/points/week?period=2026-11-02", "public, max-age=86400"},
		{"/api/v1/boards/points/week?period=2026-11-02", "public, max-age=86400"},
		{"/boards/points/week/members/a", "public, max-age=1, stale-while-revalidate=5"},
		{"/", "no-cache"},
		{"/api/v1/boards", "no-cache"},
		{"/static/app.css", "public, max-age=300"},
		{static.URL("app.js"), "public, max-age=31536000, immutable"},
	} {
		r := MustOK(t, f.get(t, c.path))
		etag := r.Header.Get("ETag")
		if !strings.HasPrefix(etag, `W/"`) || r.Header.Get("Cache-Control") != c.cache {
			t.Errorf("%s: ETag %q, Cache-Control %q, want %q", c.path, etag, r.Header.Get("Cache-Control"), c.cache)
			continue
		}
		req := httptest.NewRequest("GET", c.path, nil)
		req.Header.Set("If-None-Match", `"x", `+etag)
		if again := f.serve(req); again.Status != http.StatusNotModified || again.Body != "" {
			t.Errorf("%s: revalidation answered %d with %d bytes", c.path, again.Status, len(again.Body))
		}
	}
	before := MustOK(t, f.get(t, "/api/v1/boards/points/week")).Header.Get("ETag")
	f.MustWrite(t, "points", `{"member":"a","value":5}`)
	req := httptest.NewRequest("GET", "/api/v1/boards/points/week", nil)
	req.Header.Set("If-None-Match", before)
	if r := f.serve(req); r.Status != 200 {
		t.Errorf("a changed read answered %d", r.Status)
	}
	if r := f.get(t, "/boards/nosuch/week"); r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("ETag") != "" {
		t.Errorf("an error page: %v", r.Header)
	}
	if r := f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"a","value":1}`); r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("ETag") != "" {
		t.Errorf("a write: %v", r.Header)
	}
}

package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// Doc parses an HTML answer.
func (r response) Doc(tb testing.TB) *goquery.Document {
	tb.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		tb.Fatalf("content type %q, body %s", ct, r.Body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

func testid(id string) string { return `[data-testid="` + id + `"]` }

// MustWrite posts one event, failing the test unless it is accepted.
func (f *fixture) MustWrite(tb testing.TB, board, body string) {
	tb.Helper()
	MustOK(tb, f.do(tb, "POST", "/api/v1/boards/"+board+"/scores", writeKey, body))
}

// MustWriteAt posts one event while Redis's clock reads at.
func (f *fixture) MustWriteAt(tb testing.TB, at time.Time, board, body string) {
	tb.Helper()
	f.mr.SetTime(at)
	defer f.mr.SetTime(testNow)
	f.MustWrite(tb, board, body)
}

// tableRows returns "rank member score" for each row of the standings table.
func tableRows(doc *goquery.Selection) []string {
	var out []string
	doc.Find(testid(views.TestRow)).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Find(testid(views.TestRank)).Text())+" "+
			s.AttrOr("data-member", "")+" "+strings.TrimSpace(s.Find(testid(views.TestScore)).Text()))
	})
	return out
}

func TestIndexListsBoardsAndLeaders(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"alice","value":3,"name":"Alice"}`)
	doc := MustOK(t, f.get(t, "/")).Doc(t)
	items := doc.Find(testid(views.TestBoardItem))
	if items.Length() != 2 {
		t.Fatalf("%d boards listed, want 2", items.Length())
	}
	first := items.First()
	if first.AttrOr("data-board", "") != "points" || !strings.Contains(first.Text(), "Alice") {
		t.Errorf("first board %q", first.Text())
	}
	var links []string
	first.Find(".chips a").Each(func(_ int, s *goquery.Selection) { links = append(links, s.AttrOr("href", "")) })
	if want := "/boards/points/day /boards/points/week /boards/points/all"; strings.Join(links, " ") != want {
		t.Errorf("view links %v, want %s", links, want)
	}
}

// TestPeriodNavStopsAtKeep follows a view's Previous links from now: they
// reach back exactly the board's keep (12 days by default), and the oldest
// kept period links no older one.
func TestPeriodNavStopsAtKeep(t *testing.T) {
	f := MustFixture(t)
	path := "/boards/points/day"
	var got []string
	for range 20 {
		doc := MustOK(t, f.get(t, path)).Doc(t)
		got = append(got, doc.Find(testid(views.TestPeriod)).AttrOr("data-period", ""))
		path = doc.Find(testid(views.TestPeriodPrev)).AttrOr("href", "")
		if path == "" {
			break
		}
	}
	if len(got) != 13 || got[0] != "2026-11-22" || got[12] != "2026-11-10" {
		t.Errorf("periods along the Previous links %v, want 2026-11-22 back to 2026-11-10", got)
	}
}

func TestBoardRedirectsToFirstView(t *testing.T) {
	f := MustFixture(t)
	r := f.get(t, "/boards/lap")
	if r.Status != http.StatusFound || r.Header.Get("Location") != "/boards/lap/week" {
		t.Fatalf("got %d %q", r.Status, r.Header.Get("Location"))
	}
}

func TestBoardPage(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"alice","value":12.5,"name":"Alice"}`)
	f.MustWrite(t, "points", `{"member":"bob","value":20}`)
	f.MustWrite(t, "points", `{"member":"carol","value":12.5}`) // ties with alice, later
	f.MustWriteAt(t, testNow.Add(-10*time.Hour-30*time.Minute), "points", `{"member":"dave","value":1}`)

	doc := MustOK(t, f.get(t, "/boards/points/week")).Doc(t)
	if got, want := tableRows(doc.Selection), []string{"1 bob 20", "2 alice 12.5", "3 carol 12.5", "4 dave 1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if name := doc.Find(`[data-member="alice"] ` + testid(views.TestMember) + " a").Text(); name != "Alice" {
		t.Errorf("alice shows as %q", name)
	}
	if href := doc.Find(`[data-member="bob"] a`).AttrOr("href", ""); href != "/boards/points/week/members/bob" {
		t.Errorf("bob's card link %q", href)
	}
	if cur := doc.Find(testid(views.TestViewTabs) + ` a[aria-current="page"]`); cur.Text() != "Week" {
		t.Errorf("current tab %q", cur.Text())
	}
	if p := doc.Find(testid(views.TestPeriod)); p.AttrOr("data-period", "") != "2026-11-16" {
		t.Errorf("period %q", p.AttrOr("data-period", ""))
	}
	if doc.Find(testid(views.TestPeriodNext)).Length() != 0 || doc.Find(testid(views.TestFinal)).Length() != 0 {
		t.Error("the current period has no next link and no final badge")
	}
	if prev := doc.Find(testid(views.TestPeriodPrev)).AttrOr("href", ""); prev != "/boards/points/week?period=2026-11-09" {
		t.Errorf("previous link %q", prev)
	}
	if csv := doc.Find(testid(views.TestCSV)).AttrOr("href", ""); csv != "/boards/points/week.csv" {
		t.Errorf("csv link %q", csv)
	}
	live := doc.Find("#" + views.IDLiveStatus)
	if live.AttrOr("data-ws", "") != "/ws/points/week?limit=100" || live.AttrOr("data-table", "") != views.TableID("points", "week", 100) {
		t.Errorf("live status %v", live.Nodes)
	}
	if doc.Find("#"+views.TableID("points", "week", 100)+" table th[scope=col]").Length() != 3 {
		t.Error("the table has column headers")
	}

	// Yesterday is closed (lateness 1h) and shows only dave.
	doc = MustOK(t, f.get(t, "/boards/points/day?period=2026-11-21")).Doc(t)
	if got := tableRows(doc.Selection); fmt.Sprint(got) != "[1 dave 1]" {
		t.Errorf("yesterday's rows %v", got)
	}
	if doc.Find(testid(views.TestFinal)).Length() != 1 {
		t.Error("yesterday is final")
	}
	if next := doc.Find(testid(views.TestPeriodNext)).AttrOr("href", ""); next != "/boards/points/day" {
		t.Errorf("next link %q", next)
	}
	if doc.Find("#"+views.IDLiveStatus).Length() != 0 {
		t.Error("a past period is not live")
	}
	if href := doc.Find(`[data-member="dave"] a`).AttrOr("href", ""); href != "/boards/points/day/members/dave?period=2026-11-21" {
		t.Errorf("card link of a past period %q", href)
	}

	// A period nobody wrote to.
	doc = MustOK(t, f.get(t, "/boards/points/day?period=2026-11-10")).Doc(t)
	if doc.Find(testid(views.TestEmpty)).Length() != 1 {
		t.Error("an empty period says so")
	}
}

func TestBoardPagePagination(t *testing.T) {
	f := MustFixture(t)
	var events []string
	for i := range 150 {
		events = append(events, fmt.Sprintf(`{"member":"m%03d","value":%d}`, i, 1000-i))
	}
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[`+strings.Join(events, ",")+`]}`))
	doc := MustOK(t, f.get(t, "/boards/points/all")).Doc(t)
	if n := doc.Find(testid(views.TestRow)).Length(); n != 100 {
		t.Errorf("page 1 has %d rows", n)
	}
	next := doc.Find(testid(views.TestPageNext)).AttrOr("href", "")
	if next != "/boards/points/all?page=2" {
		t.Fatalf("next page link %q", next)
	}
	doc = MustOK(t, f.get(t, next)).Doc(t)
	rows := tableRows(doc.Selection)
	if len(rows) != 50 || rows[0] != "101 m100 900" {
		t.Errorf("page 2: %d rows, first %q", len(rows), rows[0])
	}
	if doc.Find(testid(views.TestPageNext)).Length() != 0 || doc.Find(testid(views.TestPagePrev)).AttrOr("href", "") != "/boards/points/all" {
		t.Error("page 2 links back to page 1 and nowhere further")
	}
	if doc.Find("#"+views.IDLiveStatus).Length() != 0 {
		t.Error("only the first page is live")
	}
}

func TestPageErrorsArePages(t *testing.T) {
	f := MustFixture(t)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/boards/nope", 404},
		{"/boards/nope/week", 404},
		{"/boards/points/hour", 404},
		{"/boards/points/week?page=0", 422},
		{"/boards/points/week?page=x", 422},
		{"/boards/points/week?period=2026-11", 422},
		{"/boards/points/week?period=yesterday", 422},
		{"/boards/points/week/members/nobody", 404},
		{"/boards/points/week/members/alice?period=bad", 422},
		{"/boards/points/week/members?member=", 422},
		{"/embed/points/week?limit=51", 422},
		{"/embed/points/week?limit=0", 422},
		{"/embed/points/week?theme=pink", 422},
		{"/embed/points/nope", 404},
		{"/boards/points/nope.csv", 404},
		{"/static/nope.js", 404},
		{"/no/such/page", 404},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := f.get(t, tc.path)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			doc := r.Doc(t)
			if got := doc.Find(testid(views.TestErrorStatus)).Text(); got != fmt.Sprint(tc.status) {
				t.Errorf("error page shows %q", got)
			}
		})
	}
	// The API keeps its JSON errors.
	if r := f.get(t, "/api/v1/boards/nope/week"); r.Status != 404 || r.ErrorCode(t) != "not_found" {
		t.Errorf("api: %d %s", r.Status, r.Body)
	}
}

// TestMemberSearchLeadsToCard: the board page's search takes an id or a
// name: an exact id or a single match opens the rank card, several
// matches list the choices, none says so and links back to the board.
func TestMemberSearchLeadsToCard(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"al/ice","value":3,"name":"Alice"}`)
	f.MustWrite(t, "points", `{"member":"al","value":2,"name":"Ålvaro <b>"}`)
	f.MustWrite(t, "points", `{"member":"zoe","value":1,"name":"Zoë"}`)
	for q, loc := range map[string]string{
		"al%2Fice": "/boards/points/week/members/al%2Fice?period=2026-11-09", // exact id
		"al":       "/boards/points/week/members/al?period=2026-11-09",       // exact id among several matches
		"ZOE":      "/boards/points/week/members/zoe?period=2026-11-09",      // one match, by name without accents
	} {
		r := f.get(t, "/boards/points/week/members?member="+q+"&period=2026-11-09")
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != loc {
			t.Errorf("%s: got %d %q, want %s", q, r.Status, r.Header.Get("Location"), loc)
		}
	}
	several := MustOK(t, f.get(t, "/boards/points/week/members?member=A"))
	doc := several.Doc(t)
	if got := doc.Find(testid(views.TestMatches) + " a").Length(); got != 2 {
		t.Errorf("choices: %d links in %s", got, several.Body)
	}
	if !strings.Contains(several.Body, "Ålvaro &lt;b&gt;") || !strings.Contains(several.Body, `href="/boards/points/week/members/al%2Fice"`) {
		t.Errorf("choices page: %s", several.Body)
	}
	none := f.get(t, "/boards/points/week/members?member=nobody")
	if none.Status != http.StatusNotFound || !strings.Contains(none.Body, `data-testid="search-no-match"`) || !strings.Contains(none.Body, `href="/boards/points/week"`) {
		t.Errorf("no match: %d %s", none.Status, none.Body)
	}
}

func TestRankCard(t *testing.T) {
	f := MustFixture(t)
	for i, m := range []string{"a", "b", "c", "d", "e", "f"} {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":%q,"value":%d}`, m, 60-10*i))
	}
	f.MustWriteAt(t, testNow.Add(-10*time.Hour-30*time.Minute), "points", `{"member":"d","value":5,"name":"Dee"}`) // yesterday too
	doc := MustOK(t, f.get(t, "/boards/points/week/members/d")).Doc(t)
	checks := map[string]string{
		views.TestCardRank:  "#4",
		views.TestCardScore: "35",
		views.TestCardGap:   "5.1 points to pass #3", // one decimal: 0.1 more than c
	}
	for id, want := range checks {
		if got := strings.TrimSpace(doc.Find(testid(id)).Text()); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if got := strings.TrimSpace(doc.Find(testid(views.TestCardOf)).Text()); got != "of 6" {
		t.Errorf("rank of %q", got)
	}
	if h := doc.Find("h1").Text(); !strings.Contains(h, "Dee") {
		t.Errorf("heading %q", h)
	}
	if got := tableRows(doc.Find(testid(views.TestNeighbours))); fmt.Sprint(got) != "[1 a 60 2 b 50 3 c 40 4 d 35 5 e 20 6 f 10]" {
		t.Errorf("neighbours %v", got)
	}
	if doc.Find(testid(views.TestNeighbours)+" tr.self").AttrOr("data-member", "") != "d" {
		t.Error("the member's own row is marked")
	}
	var perView []string
	doc.Find(testid(views.TestCardViews) + " tbody tr").Each(func(_ int, s *goquery.Selection) {
		var cells []string
		s.Children().Each(func(_ int, c *goquery.Selection) { cells = append(cells, strings.Join(strings.Fields(c.Text()), " ")) })
		perView = append(perView, strings.Join(cells, " | "))
	})
	if want := "[Day today | #4 of 6 | 30 Week this week | #4 of 6 | 35 All time | #4 of 6 | 35]"; fmt.Sprint(perView) != want {
		t.Errorf("views %v\nwant %s", perView, want)
	}
	// One week with a score: no chart with a lone dot, but why there is none.
	if doc.Find(testid(views.TestChart)).Length() != 0 || !strings.Contains(doc.Find(testid(views.TestChartFew)).Text(), "only one of the last 12 weeks") {
		t.Error("a one-week chart is drawn, or not explained")
	}
	var lines []string
	doc.Find(testid(views.TestCardLine)).Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	if fmt.Sprint(lines) != "[New this week]" { // the headline says the gap; 4 of 6 is not the top half
		t.Errorf("lines %q", lines)
	}
	// The day view: d was on yesterday's board too.
	doc = MustOK(t, f.get(t, "/boards/points/day/members/d")).Doc(t)
	lines = nil
	doc.Find(testid(views.TestCardLine)).Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	if !contains(lines, "Down 3 places since yesterday (#1)") {
		t.Errorf("day lines %q", lines)
	}
	doc = MustOK(t, f.get(t, "/boards/points/week/members/a")).Doc(t)
	if got := strings.TrimSpace(doc.Find(testid(views.TestCardGap)).Text()); got != "Leading this week" {
		t.Errorf("leader's gap %q", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestEmbed(t *testing.T) {
	f := MustFixture(t)
	for i := range 12 {
		f.MustWrite(t, "lap", fmt.Sprintf(`{"member":"r%02d","value":%d.125}`, i, 60+i))
	}
	r := MustOK(t, f.get(t, "/embed/lap/week?limit=5&theme=dark"))
	doc := r.Doc(t)
	if got := tableRows(doc.Selection); len(got) != 5 || got[0] != "1 r00 60.125" {
		t.Errorf("rows %v", got)
	}
	if !doc.Find("html").HasClass("theme-dark") {
		t.Error("dark theme")
	}
	if doc.Find(`head base[target="_blank"]`).Length() != 1 || doc.Find(`[data-member="r00"] a`).Length() != 1 {
		t.Error("widget links open the site in a new tab")
	}
	if live := doc.Find("#" + views.IDLiveStatus); live.AttrOr("data-ws", "") != "/ws/lap/week?limit=5" {
		t.Errorf("live feed %q", live.AttrOr("data-ws", ""))
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors *") {
		t.Errorf("embed CSP %q", csp)
	}
	if r.Header.Get("X-Frame-Options") != "" {
		t.Error("embeds may be framed")
	}
	if n := MustOK(t, f.get(t, "/embed/lap/week")).Doc(t).Find(testid(views.TestRow)).Length(); n != 10 {
		t.Errorf("default limit shows %d rows", n)
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := MustFixture(t)
	for _, path := range []string{"/", "/boards/points/week", "/boards/points/week?period=2026-11-09", "/boards/nope"} {
		r := f.get(t, path)
		csp := r.Header.Get("Content-Security-Policy")
		if strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") == "" {
			t.Errorf("%s: headers %v", path, r.Header)
		}
		if !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: scripts not limited to this origin: %q", path, csp)
		}
		// No inline script: every script is a file of this origin.
		r.Doc(t).Find("script").Each(func(_ int, s *goquery.Selection) {
			if src := s.AttrOr("src", ""); !strings.HasPrefix(src, "/static/") || strings.TrimSpace(s.Text()) != "" {
				t.Errorf("%s: script %q is not a static file", path, src)
			}
		})
	}
}

func TestNamesRenderInert(t *testing.T) {
	f := MustFixture(t)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	f.MustWrite(t, "points", fmt.Sprintf(`{"member":"x\"><svg onload=alert(3)>","value":5,"name":%q}`, evil))
	for _, path := range []string{"/", "/boards/points/week", "/embed/points/week", "/boards/points/week/members/x%22%3E%3Csvg%20onload=alert(3)%3E"} {
		doc := MustOK(t, f.get(t, path)).Doc(t)
		if n := doc.Find("img, svg[onload], [onerror]").Length(); n != 0 {
			t.Errorf("%s: %d injected elements", path, n)
		}
		doc.Find("script").Each(func(_ int, s *goquery.Selection) {
			if strings.Contains(s.Text(), "alert") {
				t.Errorf("%s: injected script", path)
			}
		})
		if !strings.Contains(doc.Text(), evil) {
			t.Errorf("%s: the name is shown as text", path)
		}
	}
}

func TestCSVExport(t *testing.T) {
	f := MustFixture(t)
	// Three chunks of the export, loaded through the store: no request
	// deadline, which miniredis under -race on a busy machine can miss.
	var events []ranking.Event
	for i := range 2100 {
		events = append(events, ranking.Event{Member: fmt.Sprintf("m%04d", i), Value: int64(900-i%1000) * 10})
	}
	for i := 0; i < len(events); i += ranking.MaxBatch {
		res, err := f.store.Apply(context.Background(), "points", events[i:min(i+ranking.MaxBatch, len(events))], ranking.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("load: %s: %v", r.Member, r.Err)
			}
		}
	}
	f.MustWrite(t, "points", `{"member":"=cmd","value":1000,"name":"@SUM(A1)"}`)
	f.MustWrite(t, "points", `{"member":"-minus","value":999.5,"name":"+plus, \"quoted\""}`)
	r := MustOK(t, f.get(t, "/boards/points/all.csv"))
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename="points-all-all.csv"` {
		t.Errorf("disposition %q", cd)
	}
	lines := strings.Split(strings.TrimSuffix(r.Body, "\n"), "\n")
	// m0900 and m1900 added 0, which leaves a member absent.
	if len(lines) != 2101 {
		t.Fatalf("%d lines, want header + 2100", len(lines))
	}
	for i, want := range []string{"rank,member,name,score", "1,'=cmd,'@SUM(A1),1000", `2,'-minus,"'+plus, ""quoted""",999.5`, "3,m0000,,900"} {
		if lines[i] != want {
			t.Errorf("line %d = %q, want %q", i, lines[i], want)
		}
	}
	if lines[2100] != "2100,m1999,,-99" {
		t.Errorf("last line %q", lines[2100])
	}
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], fmt.Sprint(i)+",") {
			t.Fatalf("line %d: %q", i, lines[i])
		}
	}
	// A past period by id; an empty one is just the header.
	if r := MustOK(t, f.get(t, "/boards/points/day.csv?period=2026-11-01")); r.Body != "rank,member,name,score\n" {
		t.Errorf("empty export %q", r.Body)
	}
	if r := f.get(t, "/boards/points/day.csv?period=2026-11"); r.Status != 422 {
		t.Errorf("bad period: %d", r.Status)
	}
}

func TestStaticFiles(t *testing.T) {
	f := MustFixture(t)
	for path, ct := range map[string]string{"/static/app.css": "text/css", "/static/app.js": "javascript", "/static/favicon.svg": "image/svg+xml"} {
		r := MustOK(t, f.get(t, path))
		if !strings.Contains(r.Header.Get("Content-Type"), ct) || len(r.Body) == 0 {
			t.Errorf("%s: %q", path, r.Header.Get("Content-Type"))
		}
	}
}

// TestCompareTable: ?members= on the board page shows the listed members
// ranked on the whole board as a standings table (names and avatars, not
// ids; movement; the gap to the listed member above), the unranked ones
// named; the add form takes an id or a name.
func TestCompareTable(t *testing.T) {
	f := MustFixture(t)
	for i, m := range []string{"a", "b", "c", "d"} {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":%q,"value":%d,"name":"Name %s"}`, m, 40-10*i, strings.ToUpper(m)))
	}
	f.MustWrite(t, "points", `{"member":"e","value":1,"name":"Élise"}`)
	r := MustOK(t, f.get(t, "/boards/points/week?members=d,ghost,b"))
	doc := r.Doc(t)
	var rows []string
	doc.Find(testid(views.TestCompareRow)).Each(func(_ int, s *goquery.Selection) {
		rows = append(rows, strings.Join([]string{s.AttrOr("data-member", ""), s.Find("[data-live-rank], td.rank").First().Contents().First().Text(),
			s.Find(testid(views.TestMove) + " [aria-hidden]").Text(), s.Find(".avatar").Text(), s.Find("th a").Text(),
			s.Find(testid(views.TestCompareGap) + " .visually-hidden").Text(), s.Find("td.score").Text()}, "/"))
	})
	if got := strings.Join(rows, " | "); got != "b/2 /new/NB/Name B//30 | d/4 /new/ND/Name D/20 points behind Name B/10" {
		t.Errorf("compare rows %q", got)
	}
	if n := doc.Find(testid(views.TestCompare) + " code").Length(); n != 0 {
		t.Errorf("the compare table shows %d ids in monospace", n)
	}
	if !strings.Contains(doc.Find(testid(views.TestCompare)+" p.muted").Text(), "Not ranked in this period") || doc.Find(testid(views.TestCompare)+" p.muted span").Text() != "ghost" {
		t.Errorf("unranked not named: %s", r.Body)
	}
	for add, loc := range map[string]string{
		"c":     "/boards/points/week?members=d%2Cb%2Cc",
		"ELISE": "/boards/points/week?members=d%2Cb%2Ce",
	} {
		got := f.get(t, "/boards/points/week?members=d,b&add="+add)
		if got.Status != http.StatusSeeOther || got.Header.Get("Location") != loc {
			t.Errorf("add %s: %d %q, want %s", add, got.Status, got.Header.Get("Location"), loc)
		}
	}
	several := MustOK(t, f.get(t, "/boards/points/week?members=d&add=name")).Body
	if !strings.Contains(several, "matches several members") || !strings.Contains(several, `href="/boards/points/week?members=d%2Ca"`) {
		t.Errorf("ambiguous add: %s", several)
	}
	none := MustOK(t, f.get(t, "/boards/points/week?members=d&add=zzz")).Body
	if !strings.Contains(none, "Nobody on Points has a name or id starting with “zzz”") {
		t.Errorf("no match: %s", none)
	}
	if r := f.get(t, "/boards/points/week?members=a,bad%01"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("bad member: %d", r.Status)
	}
}

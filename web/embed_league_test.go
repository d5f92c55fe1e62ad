package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
)

// embedRows renders a league widget's table as "member:zone" lines, with
// the named line where one is drawn and a "*" on the highlighted row.
func embedRows(doc *goquery.Document) string {
	var out []string
	doc.Find(testid(views.TestCohortTable) + " tbody tr").Each(func(_ int, tr *goquery.Selection) {
		m, _ := tr.Attr("data-member")
		if tr.HasClass("self") {
			m += "*"
		}
		out = append(out, m+":"+tr.Find(testid(views.TestScore)).Text())
		if l := tr.Find(testid(views.TestZoneLine)); l.Length() > 0 {
			out = append(out, "|"+strings.Join(strings.Fields(l.Text()), " ")+"|")
		}
	})
	return strings.Join(out, " ")
}

// TestEmbedLeague: the widget of a member's group draws and names both
// lines, highlights the member, counts down, refreshes like the group
// page, links to the group and may be framed; a member who has not
// played gets a sentence and the league; bad parameters change nothing.
func TestEmbedLeague(t *testing.T) {
	lf := mustLeagueFixture(t, leagueTestBoards)
	// Three bronze groups promote a, b, f, g, k and l to silver.
	lf.write(t, "lg", "a=9", "b=8", "c=1", "d=1", "e=1", "f=9", "g=8", "h=1", "i=1", "j=1", "k=9", "l=8")
	lf.at(testNow.Add(24 * time.Hour))
	lf.write(t, "lg", "a=50", "b=40", "f=30.5", "g=20", "k=10")

	r := MustOK(t, lf.get(t, "/embed/lg/league?me=f&theme=dark"))
	if csp := r.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors *") || r.Header.Get("X-Frame-Options") != "" {
		t.Errorf("the league widget may not be framed: %q, X-Frame-Options %q", csp, r.Header.Get("X-Frame-Options"))
	}
	if cc := r.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "public, max-age=1") {
		t.Errorf("Cache-Control %q", cc)
	}
	doc := r.Doc(t)
	if got, want := embedRows(doc), "a:50 b:40 |▲ Promotion zone ends here| f*:30.5 |▼ Demotion zone starts below| g:20 k:10"; got != want {
		t.Errorf("rows\n got %s\nwant %s", got, want)
	}
	if got, want := strings.Join(strings.Fields(doc.Find(".embed-title").Text()), " "), "Daily league · League · Silver league · group 1"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if got, want := text(doc, views.TestLeaguePlace), "F is #3 of 5: stays in Silver league if the round ends like this."; got != want {
		t.Errorf("place %q, want %q", got, want)
	}
	if got, want := strings.Join(doc.Find(testid(views.TestZoneRules)+" li").Map(func(_ int, e *goquery.Selection) string { return e.Text() }), " "), "Promotion zone: the top 2 players move up to Gold league. Demotion zone: the bottom 2 players move down to Bronze league."; got != want {
		t.Errorf("zones\n got %s\nwant %s", got, want)
	}
	if got := doc.Find(`tr[data-member="g"] ` + testid(views.TestCohortZone)).Text(); got != ", Moves down to Bronze league" {
		t.Errorf("g's zone in words %q", got)
	}
	if doc.Find(testid(views.TestCountdown)).Length() != 1 {
		t.Error("no time left in the round")
	}
	// The group's table follows its live feed, the widget's table of
	// this round's group (the same for every ?me=).
	if u := doc.Find("#"+views.IDLiveStatus).AttrOr("data-ws", ""); u != "/ws/lg/league/silver/1?round=2026-11-23&widget=1" {
		t.Errorf("live feed %q", u)
	}
	if doc.Find("#"+views.IDCohortLive+" > table tbody tr").Length() != 5 || doc.Find("body").AttrOr("data-me", "") != "f" {
		t.Error("the live table is not the group's, or the widget does not name its member")
	}
	if a := doc.Find(testid(views.TestFullGroup)); a.AttrOr("href", "") != "/boards/lg/league/silver/1?me=f" || a.AttrOr("target", "") != "_blank" || strings.TrimSpace(a.Text()) != "Full group →" {
		t.Errorf("full group link %q target %q", a.AttrOr("href", ""), a.AttrOr("target", ""))
	}
	if !doc.Find("html").HasClass("theme-dark") {
		t.Error("theme not applied")
	}

	// c played yesterday only.
	absent := MustOK(t, lf.get(t, "/embed/lg/league?me=c")).Doc(t)
	if got := text(absent, views.TestLeagueAbsent); got != "c hasn't played this round yet." {
		t.Errorf("absent %q", got)
	}
	if a := absent.Find(testid(views.TestFullGroup)); a.AttrOr("href", "") != "/boards/lg/league" || absent.Find(testid(views.TestCohortTable)).Length() != 0 {
		t.Errorf("absent links to %q", a.AttrOr("href", ""))
	}

	before := lf.dump()
	for path, status := range map[string]int{
		"/embed/lg/league":                                http.StatusUnprocessableEntity,
		"/embed/lg/league?me=":                            http.StatusUnprocessableEntity,
		"/embed/lg/league?me=" + strings.Repeat("x", 300): http.StatusUnprocessableEntity,
		"/embed/lg/league?me=f&theme=neon":                http.StatusUnprocessableEntity,
		"/embed/points/league?me=f":                       http.StatusNotFound,
		"/embed/nope/league?me=f":                         http.StatusNotFound,
	} {
		r := lf.get(t, path)
		if r.Status != status {
			t.Errorf("%s: %d, want %d", path, r.Status, status)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors *") {
			t.Errorf("%s: an error in a frame is not shown: %q", path, csp)
		}
	}
	lf.MustUnchanged(t, before)
}

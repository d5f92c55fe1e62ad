package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
)

// cohortRows renders a group's table as "member:zone-cell" lines, with a
// "|" where a zone line is drawn.
func cohortRows(doc *goquery.Document) string {
	var out []string
	doc.Find(testid(views.TestCohortTable) + " tbody tr").Each(func(_ int, tr *goquery.Selection) {
		m, _ := tr.Attr("data-member")
		cell := strings.Join(strings.Fields(tr.Find(testid(views.TestCohortZone)).Text()), " ")
		out = append(out, m+":"+cell)
		if tr.HasClass("line-promotion") || tr.HasClass("line-demotion") {
			out = append(out, "|")
		}
	})
	return strings.Join(out, " ")
}

func TestLeaguePages(t *testing.T) {
	lf := mustLeagueFixture(t, leagueTestBoards)
	leagueDay(t, lf)
	// Silver next day: m1 and m2 were promoted; with six more players in
	// silver the group has both zones.
	lf.at(testNow.Add(24 * time.Hour))
	lf.write(t, "lg", "m1=1", "m2=9", "m3=2")
	if _, err := lf.store.DecideLeagues(context.Background()); err != nil {
		t.Fatal(err)
	}

	if a := MustOK(t, lf.get(t, "/boards/lg/day")).Doc(t).Find(testid(views.TestLeagueLink)); a.AttrOr("href", "") != "/boards/lg/league" {
		t.Errorf("the board page links to its league at %q", a.AttrOr("href", ""))
	}
	if n := MustOK(t, lf.get(t, "/boards/points/day")).Doc(t).Find(testid(views.TestLeagueLink)).Length(); n != 0 {
		t.Errorf("a board without a league links to one")
	}
	ov := MustOK(t, lf.get(t, "/boards/lg/league")).Doc(t)
	var tiers []string
	ov.Find(testid(views.TestLeagueTier)).Each(func(_ int, s *goquery.Selection) {
		tiers = append(tiers, strings.Join(s.Find("h2, p, li").Map(func(_ int, e *goquery.Selection) string { return strings.TrimSpace(e.Text()) }), " "))
	})
	if got, want := strings.Join(tiers, " / "), "Gold league Nobody yet / Silver league 2 players in 1 group Group 1 · 2 players / Bronze league 1 player in 1 group Group 1 · 1 player"; got != want {
		t.Errorf("tiers\n got %s\nwant %s", got, want)
	}
	if ov.Find(testid(views.TestCountdown)).Length() != 1 || ov.Find(testid(views.TestLeagueFind)).Length() != 1 {
		t.Error("the overview has no countdown or no find form")
	}

	// Find my league: a player goes to its group with itself highlighted;
	// a stranger gets a sentence.
	r := lf.get(t, "/boards/lg/league?member=m2")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/boards/lg/league/silver/1?me=m2" {
		t.Fatalf("find m2: %d %s", r.Status, r.Header.Get("Location"))
	}
	nobody := MustOK(t, lf.get(t, "/boards/lg/league?member=nobody")).Doc(t)
	if got := text(nobody, views.TestLeagueFindErr); got != "“nobody” has not played this round." {
		t.Errorf("find nobody: %q", got)
	}

	// Yesterday's bronze group: zones named, the line after the promotion
	// zone, outcomes once decided, me highlighted.
	old := MustOK(t, lf.get(t, "/boards/lg/league/bronze/1?round=2026-11-22&me=m3")).Doc(t)
	if got, want := cohortRows(old), "m1:Promoted to Silver league m2:Promoted to Silver league | m3:Stayed in Bronze league m4:Stayed in Bronze league m5:Stayed in Bronze league"; got != want {
		t.Errorf("yesterday\n got %s\nwant %s", got, want)
	}
	if self := old.Find("tr.self"); self.Length() != 1 || self.AttrOr("data-member", "") != "m3" {
		t.Errorf("me: %d rows highlighted", self.Length())
	}
	if got := text(old, views.TestRoundStatus); !strings.Contains(got, "final") {
		t.Errorf("closed round status %q", got)
	}
	if got := text(old, views.TestZoneRules); got != "Promotion zone: the top 2 players move up to Silver league." {
		t.Errorf("bronze zones %q", got)
	}
	if s := old.Find(testid(views.TestScore)).First().Text(); s != "9" {
		t.Errorf("score %q", s)
	}
}

// TestLeagueMiddleTierZones: a middle tier's group draws both lines and
// names both zones; the live round counts down.
func TestLeagueMiddleTierZones(t *testing.T) {
	lf := mustLeagueFixture(t, leagueTestBoards)
	// Three bronze groups promote a, b, f, g, k and l.
	lf.write(t, "lg", "a=9", "b=8", "c=1", "d=1", "e=1", "f=9", "g=8", "h=1", "i=1", "j=1", "k=9", "l=8")
	lf.at(testNow.Add(24 * time.Hour))
	lf.write(t, "lg", "a=50", "b=40", "f=30", "g=20", "k=10")
	cur := MustOK(t, lf.get(t, "/boards/lg/league/silver/1?me=f")).Doc(t)
	if got, want := cohortRows(cur), "a:Moves up to Gold league b:Moves up to Gold league | f:Stays in Silver league | g:Moves down to Bronze league k:Moves down to Bronze league"; got != want {
		t.Errorf("silver\n got %s\nwant %s", got, want)
	}
	if got, want := strings.Join(cur.Find(testid(views.TestZoneRules)+" li").Map(func(_ int, e *goquery.Selection) string { return e.Text() }), " "), "Promotion zone: the top 2 players move up to Gold league. Demotion zone: the bottom 2 players move down to Bronze league."; got != want {
		t.Errorf("zones\n got %s\nwant %s", got, want)
	}
	if cur.Find(testid(views.TestCountdown)).Length() != 1 || cur.Find("#"+views.IDLiveStatus).AttrOr("data-ws", "") != "/ws/lg/league/silver/1?round=2026-11-23" {
		t.Error("a current group has no countdown or does not follow its live feed")
	}

	csv := MustOK(t, lf.get(t, "/boards/lg/league/silver/1.csv"))
	if want := "rank,member,name,score,zone,outcome\n1,a,A,50,promotion,\n2,b,B,40,promotion,\n3,f,F,30,safe,\n4,g,G,20,demotion,\n5,k,K,10,demotion,\n"; csv.Body != want || !strings.HasPrefix(csv.Header.Get("Content-Type"), "text/csv") {
		t.Errorf("csv\n got %q\nwant %q", csv.Body, want)
	}

	// The rank card names the member's tier, group rank and zone.
	card := MustOK(t, lf.get(t, "/boards/lg/day/members/g")).Doc(t)
	if got, want := strings.Join(card.Find(testid(views.TestCardLeague)+" > *").Map(func(_ int, e *goquery.Selection) string { return strings.Join(strings.Fields(e.Text()), " ") }), " / "), "League · Monday 23 Nov 2026 / Silver league · #4 of 5 in group 1 / In the demotion zone: G moves down to Bronze league if the round ends like this. / See the group"; got != want {
		t.Errorf("card\n got %s\nwant %s", got, want)
	}
	// c did not play today: its card has no league section.
	if n := MustOK(t, lf.get(t, "/boards/lg/all/members/c")).Doc(t).Find(testid(views.TestCardLeague)).Length(); n != 0 {
		t.Errorf("c's card has %d league sections", n)
	}

	for path, status := range map[string]int{
		"/boards/points/league":               http.StatusNotFound,
		"/boards/lg/league/platinum/1":        http.StatusNotFound,
		"/boards/lg/league/silver/2":          http.StatusNotFound,
		"/boards/lg/league/silver/x":          http.StatusUnprocessableEntity,
		"/boards/lg/league?round=tomorrowish": http.StatusUnprocessableEntity,
	} {
		if r := lf.get(t, path); r.Status != status {
			t.Errorf("%s: %d, want %d", path, r.Status, status)
		}
	}
}

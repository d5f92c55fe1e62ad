package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
)

// TestSearchTellsNamesakesApart: a name several members match lists each
// with avatar, rank and score in the board's format, the id only as a
// quiet second line; a member without a score in the period says so.
// A suggestion picked by name sends its id, which opens that card. No
// match keeps the search box, filled with what was searched.
func TestSearchTellsNamesakesApart(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"ana1","value":30.5,"name":"Ana Sato"}`)
	f.MustWrite(t, "points", `{"member":"ana2","value":10,"name":"Ana Sato"}`)
	f.MustWriteAt(t, testNow.Add(-7*24*time.Hour), "points", `{"member":"ana3","value":5,"name":"Ana Satori"}`)

	doc := MustOK(t, f.get(t, "/boards/points/week/members?member=ana+sato")).Doc(t)
	var got []string
	doc.Find(testid(views.TestMatches) + " li").Each(func(_ int, s *goquery.Selection) {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s|%d",
			s.Find(".match-who a").Text(), s.Find(".match-who a").AttrOr("href", ""), s.Find(testid(views.TestMatchID)).Text(),
			strings.Join(strings.Fields(s.Find(testid(views.TestMatchRank)).Text()), " "), strings.TrimPrefix(s.Find(testid(views.TestMatchScore)).Text(), "Score: "),
			s.Find(".avatar").Length()))
	})
	want := []string{
		"Ana Sato|/boards/points/week/members/ana1|Member id: ana1|#1 of 2|30.5|1",
		"Ana Sato|/boards/points/week/members/ana2|Member id: ana2|#2 of 2|10|1",
		"Ana Satori|/boards/points/week/members/ana3|Member id: ana3|no score this week||1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("matches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if doc.Find("code, .id").Length() != 0 {
		t.Error("ids in monospace")
	}
	if doc.Find(`form[action="/boards/points/week/members"] input[name=member]`).AttrOr("value", "") != "ana sato" {
		t.Error("no search box to try again")
	}

	r := f.get(t, "/boards/points/week/members?member=Ana+Sato&id=ana2&period=2026-11-16")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/boards/points/week/members/ana2?period=2026-11-16" {
		t.Errorf("a picked suggestion: %d %q", r.Status, r.Header.Get("Location"))
	}
	if r := f.get(t, "/boards/points/week/members?member=Ana&id=a%01"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a bad id: %d", r.Status)
	}

	none := f.get(t, "/boards/points/week/members?member=xyzzy&period=2026-11-09")
	if none.Status != http.StatusNotFound {
		t.Fatalf("no match: %d", none.Status)
	}
	nd := none.Doc(t)
	if !strings.Contains(nd.Find(testid(views.TestNoMatch)).Text(), "“xyzzy”") {
		t.Errorf("no match does not say what was searched: %q", nd.Find(testid(views.TestNoMatch)).Text())
	}
	form := nd.Find(`form[action="/boards/points/week/members"]`)
	if form.Find(`input[name=member]`).AttrOr("value", "") != "xyzzy" || form.Find(`input[name=period]`).AttrOr("value", "") != "2026-11-09" ||
		form.Find("label").Text() == "" || form.Find("button[type=submit]").Length() != 1 {
		t.Error("no match: no labelled search box that keeps the period")
	}
}

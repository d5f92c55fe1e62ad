package web_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestMeBarFollowsTheBoard: the board page hands the pinned bar the
// member API of the period and segment shown and the board's way of
// writing scores; the member list's gaps are written as the board means
// them (a lap time's gap in seconds).
func TestMeBarFollowsTheBoard(t *testing.T) {
	f := MustFixtureOf(t, `
timezone: UTC
boards:
  - {id: lap, title: Fastest lap, format: duration, order: asc, update: best, decimals: 3, max_score: 36000, views: [week]}
  - {id: points, title: Points, views: [week]}
`, web.Options{WriteRate: -1})
	f.MustWrite(t, "lap", `{"member":"ann","value":182.165,"name":"Ann"}`)
	f.MustWrite(t, "lap", `{"member":"bob","value":177.25,"name":"Bob"}`)
	f.MustWrite(t, "lap", `{"member":"cy","value":250,"name":"Cy"}`)
	doc := MustOK(t, f.get(t, "/boards/lap/week?members=ann,bob,cy")).Doc(t)
	bar := doc.Find(testid(views.TestMeBar))
	got := strings.Join(bar.Map(func(_ int, s *goquery.Selection) string {
		return strings.Join([]string{s.AttrOr("data-me-bar", ""), s.AttrOr("data-me-query", ""), s.AttrOr("data-me-table", ""),
			s.AttrOr("data-page-size", ""), s.AttrOr("data-score-format", ""), s.AttrOr("data-decimals", ""), s.AttrOr("data-order", "")}, " ")
	}), "")
	if want := "/api/v1/boards/lap/week/members/ ?around=1 standings-lap-week-100 100 duration 3 asc"; got != want {
		t.Errorf("bar %q, want %q", got, want)
	}
	if _, hidden := bar.Attr("hidden"); !hidden {
		t.Error("the bar shows without JavaScript")
	}
	var gaps []string
	doc.Find(testid(views.TestCompareGap)).Each(func(_ int, s *goquery.Selection) { gaps = append(gaps, s.Find(".visually-hidden").Text()) })
	if got := strings.Join(gaps, " | "); got != " | 4.915 s behind Bob | 1:07.835 behind Ann" {
		t.Errorf("gaps %q", got)
	}
	if got := doc.Find("a[data-friends-link]").AttrOr("href", ""); got != "/boards/lap/week" {
		t.Errorf("You & friends link %q", got)
	}
	// A past period's bar reads that period.
	past := MustOK(t, f.get(t, "/boards/points/week?period=2026-11-09")).Doc(t)
	if got := past.Find(testid(views.TestMeBar)).AttrOr("data-me-query", ""); got != "?around=1&period=2026-11-09" {
		t.Errorf("past bar query %q", got)
	}
}

package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// wordsBoards has a country segment, an hour view in a named zone and a
// long lateness, so that yesterday is still closing at testNow.
const wordsBoards = `
timezone: Europe/Paris
boards:
  - {id: points, title: Points, segments: [country, skill_tier], views: [hour, day, week, all], lateness: 48h}
`

// squash is a selection's text with its white space collapsed.
func squash(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// TestBoardPageWords: the board page speaks to people: segments by
// their names ("Country: France", "Points — France"), the zone in words,
// JSON away from CSV under "For developers", Results outside the More
// menu, no "needs JavaScript" line, a calm late-scores line and
// breadcrumbs that end on a link.
func TestBoardPageWords(t *testing.T) {
	f := MustFixtureOf(t, wordsBoards, web.Options{WriteRate: -1})
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey,
		`{"events":[{"member":"ann","value":5,"name":"Ann","segments":{"country":"FR","skill_tier":"gold"}},{"member":"bob","value":7,"name":"Bob","segments":{"country":"de"}}]}`))

	doc := MustOK(t, f.get(t, "/boards/points/hour?segment=country:FR")).Doc(t)
	if got := squash(doc.Find("h1")); got != "Points — France · Hour" {
		t.Errorf("heading %q", got)
	}
	picker := doc.Find(testid(views.TestSegmentPicker))
	if got := squash(picker.Find("label")); got != "Group" {
		t.Errorf("picker label %q (two segment names)", got)
	}
	var groups []string
	picker.Find("optgroup").Each(func(_ int, g *goquery.Selection) {
		groups = append(groups, g.AttrOr("label", "")+": "+strings.Join(g.Find("option").Map(func(_ int, o *goquery.Selection) string { return o.Text() }), ", "))
	})
	if got := strings.Join(groups, " | "); got != "Country: France, Germany | Skill Tier: gold" {
		t.Errorf("picker groups %q", got)
	}
	if picker.Find("button[type=submit][data-submit]").Length() != 1 {
		t.Error("the picker has no Show button for pages without JavaScript")
	}
	if got := squash(doc.Find(".period-label .range")); got != "Times in Paris time (UTC+01:00)" {
		t.Errorf("zone line %q", got)
	}
	if got := squash(doc.Find(".crumbs")); strings.HasSuffix(got, "/") {
		t.Errorf("breadcrumbs %q end in a slash", got)
	}

	// CSV is for people; JSON sits apart, for developers.
	for _, sel := range []string{".exports", ".more-menu"} {
		if got := squash(doc.Find(sel)); got != "CSV Widget" {
			t.Errorf("%s: %q", sel, got)
		}
	}
	dev := doc.Find(testid(views.TestDevLinks))
	if got := squash(dev); !strings.HasPrefix(got, "For developers: this board as JSON") {
		t.Errorf("developer links %q", got)
	}
	if got := dev.Find(testid(views.TestJSON)).AttrOr("href", ""); got != "/api/v1/boards/points/hour?segment=country%3AFR" {
		t.Errorf("JSON link %q", got)
	}
	// Results is one tap away on a phone too: outside the More menu.
	if doc.Find(".actions > "+testid(views.TestResultsLink)).Length() != 1 || doc.Find(".more-menu a[href$=results]").Length() != 0 {
		t.Error("Results is not beside the More menu")
	}

	// Without JavaScript nothing says what is missing; a noscript line
	// says how the page updates.
	if got := squash(doc.Find("#" + views.IDLiveStatus)); got != "" {
		t.Errorf("live status %q", got)
	}
	if strings.Contains(doc.Text(), "need JavaScript") || !strings.Contains(doc.Find("noscript").Text(), "Updated when you reload") {
		t.Error("the no-script wording")
	}

	// A closing period's late-scores line is an info line, not a warning.
	closing := MustOK(t, f.get(t, "/boards/points/day?period=2026-11-21")).Doc(t).Find(testid(views.TestClosing))
	if closing.Length() != 1 || closing.HasClass("notice") || !closing.HasClass("info") {
		t.Errorf("late-scores line class %q", closing.AttrOr("class", "(none)"))
	}
}

// TestSegmentWords: segment names and values in words, countries by
// name from their ISO 3166 code in either case; other values as written.
func TestSegmentWords(t *testing.T) {
	f := MustFixtureOf(t, wordsBoards, web.Options{WriteRate: -1})
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey,
		`{"events":[{"member":"ann","value":5,"name":"Ann","segments":{"country":"gb","skill_tier":"gold"}},{"member":"bob","value":7,"segments":{"country":"XX"}}]}`))
	for _, c := range []struct{ path, heading string }{
		{"/boards/points/day?segment=country:gb", "Points — United Kingdom · Day"},
		{"/boards/points/day?segment=country:XX", "Points — Country: XX · Day"},
		{"/boards/points/day?segment=skill_tier:gold", "Points — Skill Tier: gold · Day"},
	} {
		if got := squash(MustOK(t, f.get(t, c.path)).Doc(t).Find("h1")); got != c.heading {
			t.Errorf("%s: heading %q, want %q", c.path, got, c.heading)
		}
	}
	utc := MustOK(t, f.get(t, "/boards/points/hour")).Doc(t)
	if utc.Find(".period-label .range").Length() != 1 {
		t.Error("no zone line on the hour board")
	}
	g := MustFixture(t) // UTC
	if got := squash(MustOK(t, g.get(t, "/boards/points/day")).Doc(t).Find(".crumbs")); got != "Boards" {
		t.Errorf("breadcrumbs %q", got)
	}
}

// TestEmbedMe: ?me= highlights that member's row (server-side, so it
// shows without JavaScript); an invalid member is refused like any
// other parameter; the widget links to its full board.
func TestEmbedMe(t *testing.T) {
	f := MustFixtureOf(t, wordsBoards, web.Options{WriteRate: -1})
	f.MustWrite(t, "points", `{"member":"ann","value":5,"name":"Ann","segments":{"country":"FR"}}`)
	f.MustWrite(t, "points", `{"member":"bob","value":7,"name":"Bob"}`)
	doc := MustOK(t, f.get(t, "/embed/points/week?me=ann")).Doc(t)
	var self []string
	doc.Find("tr.self").Each(func(_ int, s *goquery.Selection) { self = append(self, s.AttrOr("data-member", "")) })
	if strings.Join(self, ",") != "ann" {
		t.Errorf("highlighted rows %v", self)
	}
	if got := doc.Find("body").AttrOr("data-me", ""); got != "ann" {
		t.Errorf("data-me %q", got)
	}
	if MustOK(t, f.get(t, "/embed/points/week")).Doc(t).Find("tr.self").Length() != 0 {
		t.Error("a widget without me= highlights a row")
	}
	if got := doc.Find(testid(views.TestFullBoard)).AttrOr("href", ""); got != "/boards/points/week" {
		t.Errorf("full board link %q", got)
	}
	seg := MustOK(t, f.get(t, "/embed/points/week?segment=country:FR")).Doc(t)
	if got := seg.Find(testid(views.TestFullBoard)).AttrOr("href", ""); got != "/boards/points/week?segment=country%3AFR" {
		t.Errorf("segment full board link %q", got)
	}
	before := f.dump()
	for _, bad := range []string{"/embed/points/week?me=a%01b", "/embed/points/week?me=" + strings.Repeat("x", 129), "/boards/points/week/widget?me=a%01b"} {
		r := f.get(t, bad)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d", bad, r.Status)
		}
	}
	f.MustUnchanged(t, before)
}

// TestWidgetBuilderControls: the builder chooses the view, the segment
// and a member to highlight, all in a plain GET form that works without
// JavaScript (a view= leads to that view's builder); its Update button is
// there for pages without JavaScript and its Copy button only with it.
func TestWidgetBuilderControls(t *testing.T) {
	f := MustFixtureOf(t, wordsBoards, web.Options{WriteRate: -1})
	f.MustWrite(t, "points", `{"member":"ann","value":5,"name":"Ann","segments":{"country":"FR"}}`)
	doc := MustOK(t, f.get(t, "/boards/points/week/widget?segment=country:FR&me=ann&limit=5")).Doc(t)
	form := doc.Find(testid(views.TestWidgetForm))
	if got := form.Find(testid(views.TestWidgetView)+" option[selected]").AttrOr("value", ""); got != "week" {
		t.Errorf("selected view %q", got)
	}
	if got := form.Find(testid(views.TestWidgetView) + " option").Length(); got != 4 {
		t.Errorf("%d views offered", got)
	}
	if got := squash(form.Find(testid(views.TestWidgetSegment) + " option[selected]")); got != "France" {
		t.Errorf("selected segment %q", got)
	}
	if got := form.Find(testid(views.TestWidgetMe)).AttrOr("value", ""); got != "ann" {
		t.Errorf("member field %q", got)
	}
	if form.Find("button[type=submit]").Length() != 1 {
		t.Error("no Update button without JavaScript")
	}
	if _, hidden := doc.Find(testid(views.TestWidgetCopy)).Attr("hidden"); !hidden {
		t.Error("the Copy button shows without JavaScript")
	}
	src := doc.Find(testid(views.TestWidgetPreview)).AttrOr("src", "")
	if src != "/embed/points/week?limit=5&me=ann&segment=country%3AFR&theme=auto" {
		t.Errorf("preview %q", src)
	}
	if !strings.Contains(doc.Find(testid(views.TestWidgetSnippet)).Text(), strings.ReplaceAll(src, "&", "&amp;")) {
		t.Errorf("snippet %q", doc.Find(testid(views.TestWidgetSnippet)).Text())
	}
	if got := squash(doc.Find(".crumbs")); got != "Boards / Points — France" {
		t.Errorf("breadcrumbs %q", got)
	}

	r := f.get(t, "/boards/points/week/widget?view=day&limit=5&me=ann")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/boards/points/day/widget?limit=5&me=ann" {
		t.Errorf("choosing a view: %d to %q", r.Status, r.Header.Get("Location"))
	}
	if r := f.get(t, "/boards/points/week/widget?view=week&limit=5"); r.Status != http.StatusOK {
		t.Errorf("the same view: %d", r.Status)
	}
	if r := f.get(t, "/boards/points/week/widget?view=nosuch"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("an unknown view: %d", r.Status)
	}
	if r := f.get(t, "/boards/points/week/widget?me="); r.Status != http.StatusOK {
		t.Errorf("an empty member field: %d", r.Status)
	}
}

// TestBreadcrumbsEndOnALink: no page's breadcrumbs end in a bare " /".
func TestBreadcrumbsEndOnALink(t *testing.T) {
	f := mustResults(t)
	for _, path := range []string{"/boards/points/day", "/boards/points/day/members/ann", "/boards/points/day/results", "/boards/points/day/widget", "/boards/points/day/members?member=nobody"} {
		r := f.get(t, path)
		crumbs := r.Doc(t).Find(".crumbs")
		if crumbs.Length() == 0 {
			continue
		}
		if got := squash(crumbs); strings.HasSuffix(got, "/") || !crumbs.Children().Last().Is("a") {
			t.Errorf("%s: breadcrumbs %q", path, got)
		}
	}
}

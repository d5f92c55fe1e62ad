package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// cardBoards has a lap board of times and a points board whose periods
// take late scores for two days.
const cardBoards = `
timezone: UTC
boards:
  - id: points
    title: Points
    views: [day, week, all]
    lateness: 48h
  - id: laps
    title: Laps
    order: asc
    update: best
    decimals: 3
    max_score: 3600
    format: duration
    views: [week, all]
`

func cardLines(doc *goquery.Document) []string {
	var lines []string
	doc.Find(testid(views.TestCardLine)).Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	return lines
}

func text(doc *goquery.Document, id string) string {
	return strings.Join(strings.Fields(doc.Find(testid(id)).Text()), " ")
}

// TestCardPreviousNeverDeadEnds: "← Previous" from a card walks through a
// week the member did not play: that week's card says so in words and
// keeps Previous, Next and the way back; the week before it is a card
// again. This week without a score is a live card waiting for one. An id
// the board never saw stays not found.
func TestCardPreviousNeverDeadEnds(t *testing.T) {
	f := MustFixtureOf(t, cardBoards, web.Options{WriteRate: -1})
	f.MustWriteAt(t, testNow.Add(-14*24*time.Hour), "points", `{"member":"ana","value":5,"name":"Ana Sato"}`) // week of 2 Nov
	f.MustWrite(t, "points", `{"member":"ana","value":7,"name":"Ana Sato"}`)                                  // week of 16 Nov
	f.MustWriteAt(t, testNow.Add(-7*24*time.Hour), "points", `{"member":"bob","value":1}`)                    // week of 9 Nov

	now := MustOK(t, f.get(t, "/boards/points/week/members/ana")).Doc(t)
	prev := now.Find(testid(views.TestPeriodPrev)).AttrOr("href", "")
	if prev != "/boards/points/week/members/ana?period=2026-11-09" {
		t.Fatalf("previous %q", prev)
	}
	skipped := MustOK(t, f.get(t, prev)).Doc(t)
	if got := text(skipped, views.TestCardNotPlayed); !strings.HasPrefix(got, "Ana Sato didn't play in the week of 9 Nov.") {
		t.Errorf("skipped week says %q", got)
	}
	if skipped.Find(testid(views.TestCardNotPlayed)+` a[href="/boards/points/week/members/ana"]`).Length() != 1 ||
		skipped.Find(testid(views.TestCardNotPlayed)+` a[href="/boards/points/week?period=2026-11-09"]`).Length() != 1 {
		t.Error("the skipped week does not lead to the current card and to that week's board")
	}
	if got := skipped.Find(testid(views.TestPeriodNext)).AttrOr("href", ""); got != "/boards/points/week/members/ana" {
		t.Errorf("next from the skipped week %q", got)
	}
	older := skipped.Find(testid(views.TestPeriodPrev)).AttrOr("href", "")
	if got := text(MustOK(t, f.get(t, older)).Doc(t), views.TestCardRank); got != "#1" {
		t.Errorf("the week before: rank %q (%s)", got, older)
	}

	future := MustOK(t, f.get(t, "/boards/points/week/members/ana?period=2026-11-30")).Doc(t)
	if got := text(future, views.TestCardNotPlayed); !strings.HasPrefix(got, "The week of 30 Nov 2026 hasn't started yet.") {
		t.Errorf("a week to come says %q", got)
	}

	// This week: bob has no score yet; his card waits live for one.
	r := MustOK(t, f.get(t, "/boards/points/week/members/bob"))
	bob := r.Doc(t)
	if got := text(bob, views.TestCardNotRanked); got != "No score this week yet. The card fills in with the first one." {
		t.Errorf("bob this week %q", got)
	}
	if bob.Find("#"+views.CardID("points", "week")).Length() != 1 || !strings.Contains(r.Body, "/ws/points/week?member=bob") {
		t.Error("bob's card does not follow the live feed")
	}
	if r.Header.Get("Cache-Control") == "" {
		t.Error("no cache policy")
	}

	for _, path := range []string{"/boards/points/week/members/ghost", "/boards/points/week/members/ghost?period=2026-11-09"} {
		if r := f.get(t, path); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d", path, r.Status)
		}
	}
}

// TestCardLatestSaysWhatIsStillTrue: the Latest tile names both members;
// once the member has passed back, it says when it happened and where
// the member is now instead of a pass that no longer holds.
func TestCardLatestSaysWhatIsStillTrue(t *testing.T) {
	f := MustFixtureOf(t, cardBoards, web.Options{WriteRate: -1})
	f.MustWrite(t, "points", `{"member":"nora","value":1,"name":"Nora Müller"}`)
	f.MustWrite(t, "points", `{"member":"ana","value":10,"name":"Ana Sato"}`)
	f.MustWrite(t, "points", `{"member":"nora","value":14}`) // 15: passes ana
	card := "/boards/points/week/members/ana"
	if got := text(MustOK(t, f.get(t, card)).Doc(t), views.TestPassed); got != "Nora Müller passed Ana Sato for #1 · just now" {
		t.Errorf("latest %q", got)
	}
	f.MustWrite(t, "points", `{"member":"ana","value":10}`) // 20: ahead again
	if got := text(MustOK(t, f.get(t, card)).Doc(t), views.TestPassed); got != "Nora Müller passed Ana Sato for #1 just now; Ana Sato is ahead again, at #1" {
		t.Errorf("latest after passing back %q", got)
	}
}

// TestCardWords: the gap of a board of times reads as seconds faster; a
// past day still taking late scores is provisional with its note, not a
// result; chips name the period as people say it; the member id is a
// quiet line, not monospace beside the name; all time draws no chart.
func TestCardWords(t *testing.T) {
	f := MustFixtureOf(t, cardBoards, web.Options{WriteRate: -1})
	f.MustWrite(t, "laps", `{"member":"a","value":62.25,"name":"Ada"}`)
	f.MustWrite(t, "laps", `{"member":"b","value":62.659,"name":"Bo"}`)
	lap := MustOK(t, f.get(t, "/boards/laps/week/members/b")).Doc(t)
	if got := text(lap, views.TestCardGap); got != "0.410 s faster to pass #1" {
		t.Errorf("lap gap %q", got)
	}

	yesterday := testNow.Add(-24 * time.Hour)
	for i, m := range []string{"a", "b", "c", "d"} {
		f.MustWriteAt(t, yesterday, "points", fmt.Sprintf(`{"member":%q,"value":%d,"name":"%s"}`, m, 50-10*i, strings.ToUpper(m)))
	}
	past := MustOK(t, f.get(t, "/boards/points/day/members/b?period=2026-11-21")).Doc(t)
	if got := strings.TrimSpace(past.Find("dl.headline dt").Last().Text()); got != "Provisional" {
		t.Errorf("a day taking late scores is labelled %q", got)
	}
	if got := text(past, views.TestCardGap); got != "#2, 10 points behind #1" {
		t.Errorf("provisional gap %q", got)
	}
	if got := text(past, views.TestCardLate); got != "Late scores may still arrive until Tue 24 Nov 00:00 UTC, so this can still change." {
		t.Errorf("late note %q", got)
	}
	if got := fmt.Sprint(cardLines(past)); got != "[In the top half of Saturday 21 Nov New on Saturday 21 Nov]" {
		t.Errorf("provisional lines %s", got)
	}
	if strings.Contains(past.Find("main").Text(), "Finished") || strings.Contains(past.Find("main").Text(), "Won") {
		t.Error("a provisional card speaks of a result")
	}

	if got := text(past, views.TestCardMemberID); got != "Member id: b" {
		t.Errorf("member id line %q", got)
	}
	if past.Find("h1 .id").Length() != 0 || strings.TrimSpace(past.Find("h1").Text()) != "B" {
		t.Errorf("heading %q", past.Find("h1").Text())
	}
	if got := past.Find("#" + views.IDViewsHeading).Text(); got != "Ranks right now" {
		t.Errorf("views heading %q", got)
	}
	all := MustOK(t, f.get(t, "/boards/points/all/members/b")).Doc(t)
	if all.Find(testid(views.TestChart)+", "+testid(views.TestChartFew)).Length() != 0 {
		t.Error("all time, one period, draws or explains a chart")
	}
}

// TestFinishedCardChips: a final past day says how it finished, in words
// of that day.
func TestFinishedCardChips(t *testing.T) {
	f := MustFixture(t) // lateness 1h: yesterday is final
	yesterday := testNow.Add(-24 * time.Hour)
	for i, m := range []string{"a", "b", "c", "d"} {
		f.MustWriteAt(t, yesterday, "points", fmt.Sprintf(`{"member":%q,"value":%d}`, m, 50-10*i))
	}
	doc := MustOK(t, f.get(t, "/boards/points/day/members/b?period=2026-11-21")).Doc(t)
	if got := fmt.Sprint(cardLines(doc)); got != "[Finished #2 of 4 on Saturday 21 Nov In the top half of Saturday 21 Nov New on Saturday 21 Nov]" {
		t.Errorf("lines %s", got)
	}
	if got := text(doc, views.TestCardGap); got != "Finished #2, 10 points behind #1" {
		t.Errorf("gap %q", got)
	}
}

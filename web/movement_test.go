package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestMovement: rows show their rank change against the previous period
// (▲, ▼, new, with words for screen readers), the list API answers
// previous_rank, an overtake shows in the moves API, the board page's
// ticker and the passed member's rank card.
func TestMovement(t *testing.T) {
	f := MustFixtureOf(t, `
timezone: UTC
boards:
  - {id: points, title: Points, views: [day, all]}
`, web.Options{WriteRate: -1})
	yesterday := testNow.Add(-24 * time.Hour)
	f.MustWriteAt(t, yesterday, "points", `{"member":"alice","value":10,"name":"Alice"}`)
	f.MustWriteAt(t, yesterday, "points", `{"member":"bob","value":5,"name":"Bob"}`)
	f.MustWriteAt(t, yesterday, "points", `{"member":"dan","value":7,"name":"Dan"}`)
	f.MustWrite(t, "points", `{"member":"dan","value":1}`)
	f.MustWrite(t, "points", `{"member":"bob","value":20}`)
	f.MustWrite(t, "points", `{"member":"carol","value":1,"name":"Carol"}`)

	// Today: bob 20 (was #3 yesterday), carol 1 (new), dan 1 (was #2).
	body := MustOK(t, f.get(t, "/api/v1/boards/points/day")).Body
	for _, want := range []string{`"member":"bob","name":"Bob","score":20,"previous_rank":3}`, `"member":"dan","name":"Dan","score":1,"previous_rank":2}`, `"member":"carol","name":"Carol","score":1,"previous_rank":null}`} {
		if !strings.Contains(body, want) {
			t.Errorf("day page lacks %s: %s", want, body)
		}
	}
	doc := MustOK(t, f.get(t, "/boards/points/day")).Doc(t)
	moves := map[string]string{}
	doc.Find(testid(views.TestRow)).Each(func(_ int, s *goquery.Selection) {
		mv := s.Find(testid(views.TestMove))
		moves[s.AttrOr("data-member", "")] = mv.Find("[aria-hidden]").Text() + "|" + mv.Find(".visually-hidden").Text()
	})
	want := map[string]string{
		"bob":   "▲2|up 2 places since the day before",
		"dan":   "▼1|down 1 place since the day before", // carol ties it and comes first by id
		"carol": "new|new since the day before",
	}
	if fmt.Sprint(moves) != fmt.Sprint(want) {
		t.Errorf("moves %v, want %v", moves, want)
	}

	// All time: bob went from 5 to 25, past dan (8) and alice (10).
	mv := MustOK(t, f.get(t, "/api/v1/boards/points/all/moves")).Body
	if !strings.Contains(mv, `"moves":[{"member":"bob","name":"Bob","passed":"alice","passed_name":"Alice","rank":1,"at":"2026-11-22T10:00:00.000Z"}]`) {
		t.Errorf("moves %s", mv)
	}
	page := MustOK(t, f.get(t, "/boards/points/all")).Doc(t)
	if got := strings.Join(strings.Fields(page.Find(testid(views.TestTicker)).Text()), " "); got != "Bob passed Alice for #1 just now" {
		t.Errorf("ticker %q", got)
	}
	card := MustOK(t, f.get(t, "/boards/points/all/members/alice")).Doc(t)
	if got := strings.TrimSpace(card.Find(testid(views.TestPassed)).Text()); got != "Bob passed Alice for #1 · just now" {
		t.Errorf("alice's card %q", got)
	}
	if n := MustOK(t, f.get(t, "/boards/points/all/members/bob")).Doc(t).Find(testid(views.TestPassed)).Length(); n != 0 {
		t.Error("bob's card says someone passed bob")
	}
	// Past periods have no ticker.
	if n := MustOK(t, f.get(t, "/boards/points/day?period=2026-11-21")).Doc(t).Find(testid(views.TestTicker)).Length(); n != 0 {
		t.Error("a past period has a ticker")
	}
}

// TestMedalsFollowRanks: on a board with shared ties, a second #1 wears
// gold too, and #3 after two #1s is bronze.
func TestMedalsFollowRanks(t *testing.T) {
	f := MustFixture(t)
	for _, b := range []string{`{"member":"a","value":60}`, `{"member":"b","value":60}`, `{"member":"c","value":61}`} {
		f.MustWrite(t, "lap", b)
	}
	doc := MustOK(t, f.get(t, "/boards/lap/all")).Doc(t)
	var got []string
	doc.Find(testid(views.TestRow)).Each(func(_ int, s *goquery.Selection) {
		cls := ""
		for _, c := range strings.Fields(s.AttrOr("class", "")) {
			if strings.HasPrefix(c, "medal-") {
				cls = c
			}
		}
		got = append(got, strings.TrimSpace(s.Find(testid(views.TestRank)).Text())+" "+cls)
	})
	if strings.Join(got, ", ") != "1 medal-1, 1 medal-1, 3 medal-3" {
		t.Errorf("medals %v", got)
	}
}

// TestTickerOrder: the ticker shows the overtakes that matter first (the
// lead changing hands, the podium, the top 10), newest first within each,
// and collapses the rest under "3 more moves", a <details> that opens
// without JavaScript; names link to rank cards.
func TestTickerOrder(t *testing.T) {
	f := MustFixture(t)
	for i := 1; i <= 20; i++ {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%02d","value":%d}`, i, 1000-10*i))
	}
	// Each write moves one member up, past the member now right behind it.
	for _, w := range []struct {
		member string
		add    int
	}{
		{"m12", 45},  // to #8
		{"m15", 15},  // to #14
		{"m20", 200}, // to #1: the lead changes hands
		{"m18", 55},  // to #14
		{"m19", 175}, // to #3
		{"m17", 46},  // to #15
	} {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":%q,"value":%d}`, w.member, w.add))
	}
	tk := MustOK(t, f.get(t, "/boards/points/week")).Doc(t).Find(testid(views.TestTicker))
	movers := func(sel *goquery.Selection) string {
		return strings.Join(sel.Find(testid(views.TestTickerItem)).Map(func(_ int, li *goquery.Selection) string {
			return li.AttrOr("data-mover", "") + strings.TrimSpace(li.Find(".what").Contents().Last().Text())
		}), ", ")
	}
	if got := movers(tk.Find(testid(views.TestTickerTop))); got != "m20for #1, m19for #3, m12for #8" {
		t.Errorf("ticker shows %q", got)
	}
	more := tk.Find("details" + testid(views.TestTickerMore))
	if got := movers(more); got != "m17for #15, m18for #14, m15for #14" {
		t.Errorf("ticker collapses %q", got)
	}
	if got := strings.TrimSpace(more.Find("summary").Text()); got != "3 more moves" {
		t.Errorf("collapsed under %q", got)
	}
	first := tk.Find(testid(views.TestTickerItem)).First()
	if !first.HasClass("lead") || first.Find("a").First().AttrOr("href", "") != "/boards/points/week/members/m20" || first.Find("a").Eq(1).AttrOr("href", "") != "/boards/points/week/members/m01" {
		t.Errorf("first entry %s", first.Text())
	}
}

package web_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestFindInChromium: in a real browser, the board page's search box
// suggests members as you type (names without accents or case), and an
// action posted through the API shows on both of its boards.
func TestFindInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: reads, title: Reads, views: [day, all]}
  - {id: points, title: Points, views: [week, all]}
actions:
  article.read: [{board: reads}, {board: points, value: 5}]
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	for _, b := range []string{`{"member":"e1","value":4,"name":"Élodie"}`, `{"member":"e2","value":2,"name":"Eloïse"}`, `{"member":"z","value":1,"name":"Zoë"}`} {
		MustOK(t, f.do(t, "POST", "/api/v1/boards/reads/scores", writeKey, b))
	}

	t.Run("suggestions", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/reads/day")
		browsertest.Run(t, tab, "type", chromedp.SendKeys(chromedp.CSS("#"+views.IDSearch), "ELO"))
		// The name goes in the field; the id is the quiet second text.
		testsupport.WaitFor(t, "suggestions Élodie=e1|Eloïse=e2", func() bool {
			got := browsertest.Run(t, tab, "read suggestions", chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll('#member-suggestions option')).map(o => o.value + "=" + o.label)`))
			return strings.Join(got, "|") == "Élodie=e1|Eloïse=e2"
		})
	})

	t.Run("an action shows on two boards", func(t *testing.T) {
		MustOK(t, f.do(t, "POST", "/api/v1/actions/article.read", writeKey, `{"member":"newbie","name":"Newbie Ngo","id":"a-1"}`))
		for _, page := range []string{"/boards/reads/all", "/boards/points/week"} {
			navigate(t, tab, srv.URL+page)
			if got := innerText(t, tab, "main table"); !strings.Contains(got, "Newbie Ngo") {
				t.Errorf("%s does not show the action's member: %q", page, got)
			}
		}
	})

	t.Run("compare table", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/reads/all?members=z")
		browsertest.Run(t, tab, "add by name", chromedp.SendKeys(chromedp.CSS(testid(views.TestCompareAdd)), "élodie\n"))
		testsupport.WaitFor(t, "compare rows #1 Élodie e1 4 | #4 Zoë z 1", func() bool {
			rows := browsertest.Run(t, tab, "read compare rows", chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll('[data-testid="compare-row"]')).map(r => ["#" + r.cells[0].firstChild.textContent.trim(), r.querySelector("th a").innerText, r.dataset.member, r.querySelector("td.score").innerText].join(" "))`))
			return strings.Join(rows, " | ") == "#1 Élodie e1 4 | #4 Zoë z 1"
		})
	})

	t.Run("a name opens the card", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/reads/day")
		browsertest.Run(t, tab, "search", chromedp.SendKeys(chromedp.CSS("#"+views.IDSearch), "zoe\n"))
		testsupport.WaitFor(t, "z's card", func() bool {
			return strings.Contains(browsertest.Run(t, tab, "location", chromedp.Location()), "/boards/reads/day/members/z")
		})
	})
	t.Run("a suggestion picked by name opens its card", func(t *testing.T) {
		// "Ana Sato" is also the start of "Ana Satori": the name alone
		// would list both; the picked suggestion's id opens a1's card.
		for _, b := range []string{`{"member":"a1","value":1,"name":"Ana Sato"}`, `{"member":"a2","value":1,"name":"Ana Satori"}`} {
			MustOK(t, f.do(t, "POST", "/api/v1/boards/reads/scores", writeKey, b))
		}
		navigate(t, tab, srv.URL+"/boards/reads/day")
		browsertest.Run(t, tab, "type", chromedp.SendKeys(chromedp.CSS("#"+views.IDSearch), "ana sat"))
		testsupport.WaitFor(t, "two suggestions", func() bool {
			return browsertest.Run(t, tab, "count", chromedp.Evaluate[int](`document.querySelectorAll('#member-suggestions option').length`)) == 2
		})
		// Choosing an option of a datalist sets the field and fires input.
		got := browsertest.Run(t, tab, "pick", chromedp.Evaluate[string](`(() => {
			const i = document.getElementById("`+views.IDSearch+`");
			i.value = "Ana Sato";
			i.dispatchEvent(new InputEvent("input", {bubbles: true, inputType: "insertReplacementText"}));
			return i.value + "|" + i.form.elements.id.value;
		})()`))
		if got != "Ana Sato|a1" {
			t.Fatalf("after the pick: %q", got)
		}
		browsertest.Run(t, tab, "submit", chromedp.Evaluate[bool](`document.getElementById("`+views.IDSearch+`").form.requestSubmit(); true`))
		testsupport.WaitFor(t, "a1's card", func() bool {
			return strings.Contains(browsertest.Run(t, tab, "location", chromedp.Location()), "/boards/reads/day/members/a1")
		})
	})

}

// TestSegmentPickerInChromium: in a real browser, the board page's
// segment picker switches the table to a segment board, which then
// follows that segment live: a write tagged FR appears, one tagged DE
// does not.
func TestSegmentPickerInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, segments: [country], views: [day, all]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	f.MustWrite(t, "points", `{"member":"ann","value":5,"name":"Ann","segments":{"country":"FR"}}`)
	f.MustWrite(t, "points", `{"member":"bob","value":7,"name":"Bob","segments":{"country":"DE"}}`)

	navigate(t, tab, srv.URL+"/boards/points/day")
	if got := innerText(t, tab, "main table"); !strings.Contains(got, "Bob") || !strings.Contains(got, "Ann") {
		t.Fatalf("whole board %q", got)
	}
	// With JavaScript the picker needs no Show button (it stays in the
	// markup for pages without it).
	if hidden := browsertest.Run(t, tab, "show button", chromedp.Evaluate[bool](`document.querySelector('[data-testid="`+views.TestSegmentPicker+`"] button[type=submit]').getBoundingClientRect().height === 0`)); !hidden {
		t.Error("the picker's Show button is visible with JavaScript")
	}
	// Choosing a value submits the picker (app.js); no button press.
	browsertest.Run(t, tab, "pick FR", chromedp.Evaluate[bool](`(e => { e.value = "country:FR"; return e.dispatchEvent(new Event("change")) })(document.getElementById("`+views.IDSegment+`"))`))
	testsupport.WaitFor(t, "the FR board", func() bool {
		// The page is navigating: a read may fail meanwhile.
		ctx, cancel := context.WithTimeout(tab, 2*time.Second)
		defer cancel()
		h1, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search + " " + (document.querySelector("h1") || {}).innerText`))
		return err == nil && strings.Contains(h1, "segment=country%3AFR") && strings.Contains(h1, "France")
	})
	if got := innerText(t, tab, "main table"); strings.Contains(got, "Bob") || !strings.Contains(got, "Ann") {
		t.Fatalf("FR board %q", got)
	}
	testsupport.WaitFor(t, "the live feed", func() bool { return strings.HasPrefix(innerText(t, tab, "#"+views.IDLiveStatus), "Live") })
	f.MustWrite(t, "points", `{"member":"dan","value":50,"name":"Dan","segments":{"country":"DE"}}`)
	f.MustWrite(t, "points", `{"member":"cy","value":9,"name":"Cy","segments":{"country":"FR"}}`)
	testsupport.WaitFor(t, "Cy live", func() bool { return strings.Contains(innerText(t, tab, "main table"), "Cy") })
	if got := innerText(t, tab, "main table"); strings.Contains(got, "Dan") || strings.Contains(got, "Bob") {
		t.Errorf("the FR table shows DE members: %q", got)
	}
}

package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestMeAndFriendsInChromium: "This is me" and "Add to friends" on rank
// cards are kept in the browser; after a reload the board, a rank card's
// neighbours and the widget mark me and my friend; the pinned bar says
// where I stand when my row is scrolled away or on another page, "Jump to
// me" brings my row into view; the "You & friends" view is a styled
// standings table that follows a score change; axe finds nothing serious
// with the bar shown, in light and dark.
func TestMeAndFriendsInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, views: [week, all]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	// m001 leads with 199, m130 trails with 70: rows 1 to 100 on page 1.
	for i := 1; i <= 130; i++ {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%03d","value":%d,"name":"Member %d"}`, i, 200-i, i))
	}
	browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(1280, 800))
	js := func(what, expr string) string {
		return browsertest.Run(t, tab, what, chromedp.Evaluate[string](expr))
	}
	click := func(sel string) {
		t.Helper()
		if got := js("click "+sel, fmt.Sprintf(`(e => e ? (e.click(), "ok") : "missing")(document.querySelector(%s))`, jsQuote(sel))); got != "ok" {
			t.Fatalf("click %s: %s", sel, got)
		}
	}
	rowClass := func(member string) string {
		return js("class of "+member, fmt.Sprintf(`(e => e ? e.className + "|" + ((e.querySelector(".tag") || {}).textContent || "") : "no row")(document.querySelector('tr[data-member="%s"]'))`, member))
	}

	// Set me and a friend with the buttons.
	navigate(t, tab, srv.URL+"/boards/points/week/members/m050")
	click(testid(views.TestMeToggle))
	if got := js("pressed", `document.querySelector('`+testid(views.TestMeToggle)+`').getAttribute("aria-pressed")`); got != "true" {
		t.Errorf("This is me: aria-pressed %q", got)
	}
	navigate(t, tab, srv.URL+"/boards/points/week/members/m048")
	click(testid(views.TestFriendToggle))
	if got := innerText(t, tab, testid(views.TestFriendToggle)); got != "Remove from friends" {
		t.Errorf("friend button says %q", got)
	}
	// A bad stored value of another board is ignored, not trusted.
	js("break another board", `localStorage.setItem("standings.people.other", "{not json"); ""`)

	// The board, after a reload: my row and my friend's are marked.
	navigate(t, tab, srv.URL+"/boards/points/week")
	if got := rowClass("m050"); !strings.Contains(got, "me") || !strings.HasSuffix(got, "|You") {
		t.Errorf("my row on the board: %q", got)
	}
	if got := rowClass("m048"); !strings.Contains(got, "friend") || !strings.HasSuffix(got, "|Friend") {
		t.Errorf("my friend's row on the board: %q", got)
	}
	if got := rowClass("m049"); strings.Contains(got, "me") || strings.Contains(got, "friend") {
		t.Errorf("another row: %q", got)
	}

	// My row is far below the first screen: the bar says where I stand.
	bar := testid(views.TestMeBar)
	browsertest.WaitJS(t, tab, 5*time.Second, "the pinned bar", `!document.querySelector('`+bar+`').hidden`)
	if got := innerText(t, tab, bar+" [data-me-text]"); got != "You: #50 · 150 · 2 to pass #49" {
		t.Errorf("pinned bar %q", got)
	}
	pinned := browsertest.Run(t, tab, "bar box", chromedp.Evaluate[[]float64](`(r => [r.top, r.bottom, innerHeight])(document.querySelector('`+bar+`').getBoundingClientRect())`))
	if pinned[1] > pinned[2] || pinned[0] < pinned[2]/2 {
		t.Errorf("the bar is not pinned to the bottom edge: %v", pinned)
	}
	click(testid(views.TestMeJump))
	browsertest.WaitJS(t, tab, 5*time.Second, "my row in view", `(r => r.top >= 0 && r.bottom <= innerHeight)(document.querySelector('tr[data-member="m050"]').getBoundingClientRect())`)
	browsertest.WaitJS(t, tab, 5*time.Second, "the bar to go", `document.querySelector('`+bar+`').hidden`)
	if got := js("focus", `document.activeElement.closest("tr") ? document.activeElement.closest("tr").dataset.member : ""`); got != "m050" {
		t.Errorf("focus after Jump to me is on %q", got)
	}

	// With the bar shown, axe finds nothing serious, in light and dark.
	if axe := axeSourceOrEmpty(t); axe != "" {
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatal(err)
			}
			js("scroll to the top", `scrollTo(0, 0); ""`)
			browsertest.WaitJS(t, tab, 5*time.Second, "the pinned bar", `!document.querySelector('`+bar+`').hidden`)
			if found := runAxe(t, tab, axe); len(found) > 0 {
				t.Errorf("board with the pinned bar (%s): %s", scheme, strings.Join(found, "\n"))
			}
		}
	}

	// A rank card's neighbours and the widget mark us too.
	navigate(t, tab, srv.URL+"/boards/points/week/members/m049")
	if got := rowClass("m050"); !strings.Contains(got, "me") {
		t.Errorf("my row among m049's neighbours: %q", got)
	}
	if got := rowClass("m048"); !strings.Contains(got, "friend") {
		t.Errorf("my friend among m049's neighbours: %q", got)
	}
	js("befriend m003", `localStorage.setItem("standings.people.points", JSON.stringify({me: "m050", friends: ["m048", "m003"]})); ""`)
	navigate(t, tab, srv.URL+"/embed/points/week?limit=10")
	if got := rowClass("m003"); !strings.Contains(got, "friend") {
		t.Errorf("my friend in the widget: %q", got)
	}

	// Me on another page: the bar reads the member API and "Jump to me"
	// opens the page that has my row.
	js("me on page 2", `localStorage.setItem("standings.people.points", JSON.stringify({me: "m120", friends: ["m048"]})); ""`)
	navigate(t, tab, srv.URL+"/boards/points/week")
	browsertest.WaitJS(t, tab, 10*time.Second, "the pinned bar from the API", `document.querySelector('`+bar+` [data-me-text]').textContent !== ""`)
	if got := innerText(t, tab, bar+" [data-me-text]"); got != "You: #120 · 80 · 2 to pass #119" {
		t.Errorf("pinned bar of a member on page 2: %q", got)
	}
	if got := js("jump href", `document.querySelector('`+testid(views.TestMeJump)+`').getAttribute("href")`); got != "/boards/points/week?page=2#me" {
		t.Errorf("Jump to me leads to %q", got)
	}
	navigate(t, tab, srv.URL+"/boards/points/week?page=2#me") // where the link leads
	browsertest.WaitJS(t, tab, 5*time.Second, "page 2 with my row in view", `(r => r.top >= 0 && r.bottom <= innerHeight)(document.querySelector('tr[data-member="m120"]').getBoundingClientRect())`)

	// You & friends: a link builds the list; the table is styled like the
	// board's and follows a score change.
	navigate(t, tab, srv.URL+"/boards/points/week")
	link := `a[data-friends-link]`
	if got := js("friends link", `document.querySelector('`+link+`').hidden ? "hidden" : document.querySelector('`+link+`').getAttribute("href")`); got != "/boards/points/week?members=m120%2Cm048" {
		t.Fatalf("You & friends link %q", got)
	}
	navigate(t, tab, srv.URL+"/boards/points/week?members=m120%2Cm048") // where the link leads
	browsertest.WaitJS(t, tab, 5*time.Second, "the compare view", `document.querySelectorAll('`+testid(views.TestCompareRow)+`').length === 2`)
	if got := innerText(t, tab, "#"+views.IDCompareTitle); got != "You & friends" {
		t.Errorf("compare heading %q", got)
	}
	look := js("compare look", `(t => [getComputedStyle(t).borderCollapse, getComputedStyle(t.querySelector("caption")).textAlign, document.querySelectorAll("#`+views.IDCompareLive+` .avatar").length, document.querySelectorAll("#`+views.IDCompareLive+` code").length].join(" "))(document.querySelector("#`+views.IDCompareLive+` table"))`)
	if look != "collapse left 2 0" {
		t.Errorf("compare table style %q", look)
	}
	if got := rowClass("m120"); !strings.Contains(got, "me") {
		t.Errorf("my row in You & friends: %q", got)
	}
	testsupport.WaitFor(t, "the live feed", func() bool { return strings.HasPrefix(innerText(t, tab, "#"+views.IDLiveStatus), "Live") })
	f.MustWrite(t, "points", `{"member":"m048","value":100}`)
	testsupport.WaitFor(t, "the compare view to follow", func() bool {
		return js("m048 in the compare view", `(e => e ? e.textContent.trim() : "")(document.querySelector('#`+views.IDCompareLive+` tr[data-member="m048"] td.score'))`) == "252"
	})
	if got := rowClass("m048"); !strings.Contains(got, "friend") {
		t.Errorf("my friend after the refresh: %q", got)
	}
	if axe := axeSourceOrEmpty(t); axe != "" {
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatal(err)
			}
			if found := runAxe(t, tab, axe); len(found) > 0 {
				t.Errorf("You & friends (%s): %s", scheme, strings.Join(found, "\n"))
			}
		}
	}

	// The ticker collapses a move deep in the board, unless it is about a
	// friend.
	for _, m := range []string{"m090", "m010", "m009", "m008", "m007"} {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":%q,"value":3}`, m))
	}
	ticker := func() string {
		return js("ticker", `["ol", "details"].map(s => Array.from(document.querySelectorAll("[data-ticker] > " + s + " li")).map(li => li.dataset.mover + (li.classList.contains("mine") ? "*" : "")).join(",")).join(" | ") + " | " + (document.querySelector("[data-ticker] summary") || {}).textContent`)
	}
	navigate(t, tab, srv.URL+"/boards/points/week")
	if got := ticker(); got != "m048*,m007,m008 | m009,m010,m090 | 3 more moves" {
		t.Errorf("ticker %q", got)
	}
	js("befriend m090", `localStorage.setItem("standings.people.points", JSON.stringify({me: "m120", friends: ["m048", "m090"]})); ""`)
	navigate(t, tab, srv.URL+"/boards/points/week")
	if got := ticker(); got != "m048*,m007,m008,m090* | m009,m010 | 2 more moves" {
		t.Errorf("ticker with a friend's move %q", got)
	}
	// Opened, "2 more moves" stays open when a live frame brings a move.
	testsupport.WaitFor(t, "the live feed", func() bool { return strings.HasPrefix(innerText(t, tab, "#"+views.IDLiveStatus), "Live") })
	click("[data-ticker] summary")
	f.MustWrite(t, "points", `{"member":"m006","value":3}`)
	browsertest.WaitJS(t, tab, 10*time.Second, "the new move", `document.querySelector('[data-ticker] li[data-mover="m006"]') !== null`)
	if got := js("open", `String(document.querySelector("[data-ticker] details").open)`); got != "true" {
		t.Errorf("the opened ticker closed on a live frame")
	}

	// On a 390 px phone the ticker's "just now" stays on one line and the
	// bar fits the screen.
	browsertest.Run(t, tab, "phone", chromedp.EmulateViewport(390, 844))
	navigate(t, tab, srv.URL+"/boards/points/week")
	if got := js("ticker", `Array.from(document.querySelectorAll('[data-ticker] .ago')).map(e => e.getClientRects().length).join(",")`); got == "" || strings.Trim(got, "1,") != "" {
		t.Errorf("ticker times take %q lines", got)
	}
	browsertest.WaitJS(t, tab, 5*time.Second, "the pinned bar", `!document.querySelector('`+bar+`').hidden`)
	if w := browsertest.Run(t, tab, "bar width", chromedp.Evaluate[float64](`(r => r.left < 0 ? 9999 : r.right)(document.querySelector('`+bar+`').getBoundingClientRect())`)); w > 390 {
		t.Errorf("the bar ends at %v px on a 390 px phone", w)
	}
}

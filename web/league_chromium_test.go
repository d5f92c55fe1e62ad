package web_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/views"
)

// TestLeagueGroupInChromium: a group's page draws and names both zones
// and highlights ?me=; it follows a score change without a reload, and
// shows the outcomes once its round has closed and been decided.
func TestLeagueGroupInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	lf := mustLeagueFixture(t, leagueTestBoards)
	// Three bronze groups promote a, b, f, g, k and l; five of them make
	// today's silver group 1.
	lf.write(t, "lg", "a=9", "b=8", "c=1", "d=1", "e=1", "f=9", "g=8", "h=1", "i=1", "j=1", "k=9", "l=8")
	lf.at(testNow.Add(24 * time.Hour))
	lf.write(t, "lg", "a=50", "b=40", "f=30", "g=20", "k=10")
	srv := httptest.NewServer(lf.handler)
	t.Cleanup(srv.Close)
	browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(1280, 900))
	navigate(t, tab, srv.URL+"/boards/lg/league/silver/1?me=f")
	js := func(what, expr string) string {
		return browsertest.Run(t, tab, what, chromedp.Evaluate[string](expr))
	}
	zones := `[...document.querySelectorAll("#` + views.IDCohortLive + ` tbody tr")].map(tr => tr.dataset.member + ":" + tr.dataset.zone).join(" ")`
	if got, want := js("zones", zones), "a:promotion b:promotion f:safe g:demotion k:demotion"; got != want {
		t.Errorf("zones\n got %s\nwant %s", got, want)
	}
	// The lines are drawn (a thick rule after b, and after f).
	if got := js("lines", `[...document.querySelectorAll("tr.line-promotion > td, tr.line-demotion > td")].map(td => getComputedStyle(td).borderBottomWidth).join(" ")`); got != "3px 3px 3px 3px 3px 3px" {
		t.Errorf("zone lines %q", got)
	}
	if got := js("me", `[...document.querySelectorAll("tr.self")].map(tr => tr.dataset.member).join(" ")`); got != "f" {
		t.Errorf("highlighted %q, want f", got)
	}
	if got := innerText(t, tab, testid(views.TestZoneRules)); got == "" {
		t.Error("no zones in words")
	}

	// The live feed, not a reload of the page, brings what follows.
	browsertest.WaitJS(t, tab, 10*time.Second, "live", `document.getElementById("`+views.IDLiveStatus+`").dataset.state === "live"`)
	js("count frames", `window.frames_ = 0; document.addEventListener("standings:frame", () => window.frames_++); "ok"`)
	pageReads := `String(performance.getEntriesByType("resource").filter(e => e.name.includes("/boards/lg/league/")).length)`

	// k climbs to the top: the table follows.
	lf.write(t, "lg", "k=100")
	browsertest.WaitJS(t, tab, 30*time.Second, "k on top", `document.querySelector("#`+views.IDCohortLive+` tbody tr").dataset.member === "k"`)
	if got := js("me after", `[...document.querySelectorAll("tr.self")].map(tr => tr.dataset.member).join(" ")`); got != "f" {
		t.Errorf("highlighted after a live frame %q, want f", got)
	}
	if got := js("frames", `String(window.frames_ > 0)`); got != "true" {
		t.Error("the table changed without a live frame")
	}
	if got := js("page reads", pageReads); got != "0" {
		t.Errorf("the page was read again %s times: the table should come from the live feed", got)
	}
	if got := js("zones after", zones); got != "k:promotion a:promotion b:safe f:demotion g:demotion" {
		t.Errorf("zones after a live frame %s", got)
	}
	if got := js("lines after", `String(document.querySelectorAll("tr.line-promotion, tr.line-demotion").length)`); got != "2" {
		t.Errorf("zone lines after a live frame: %s rows", got)
	}

	// The widget's table of the group follows the same way, its sentence
	// with its member's row.
	navigate(t, tab, srv.URL+"/embed/lg/league?me=f")
	browsertest.WaitJS(t, tab, 10*time.Second, "widget live", `document.getElementById("`+views.IDLiveStatus+`").dataset.state === "live"`)
	lf.write(t, "lg", "g=60")
	browsertest.WaitJS(t, tab, 30*time.Second, "widget follows", `document.querySelector('[data-testid="`+views.TestLeaguePlace+`"]').textContent === "F is #5 of 5: moves down to Bronze league if the round ends like this."`)
	if got := js("widget me", `[...document.querySelectorAll("tr.self")].map(tr => tr.dataset.member).join(" ")`); got != "f" {
		t.Errorf("widget highlights %q, want f", got)
	}
	if got := js("widget reads", `String(performance.getEntriesByType("resource").filter(e => e.name.includes("/embed/")).length)`); got != "0" {
		t.Errorf("the widget was read again %s times", got)
	}

	// The round closes and is decided: the outcomes appear without a
	// manual reload (the last frame brings them and the page is read
	// again, decided and no longer live).
	navigate(t, tab, srv.URL+"/boards/lg/league/silver/1?me=f")
	browsertest.WaitJS(t, tab, 10*time.Second, "live again", `document.getElementById("`+views.IDLiveStatus+`").dataset.state === "live"`)
	lf.at(testNow.Add(48 * time.Hour))
	if _, err := lf.store.DecideLeagues(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitThroughReload(t, tab, 30*time.Second, "outcomes", `document.querySelectorAll('[data-testid="`+views.TestOutcome+`"]').length === 5 && !document.getElementById("`+views.IDLiveStatus+`")`)
	if got, want := js("outcomes", `[...document.querySelectorAll('[data-testid="`+views.TestOutcome+`"]')].map(e => e.textContent).join(" / ")`),
		"Promoted to Gold league / Promoted to Gold league / Stayed in Silver league / Demoted to Bronze league / Demoted to Bronze league"; got != want {
		t.Errorf("outcomes\n got %s\nwant %s", got, want)
	}
	if got := js("status", `document.querySelector('[data-testid="`+views.TestRoundStatus+`"]').textContent`); got != "This round is over: the outcomes below are final." {
		t.Errorf("status %q", got)
	}
	if got := js("me at the end", `[...document.querySelectorAll("tr.self")].map(tr => tr.dataset.member).join(" ")`); got != "f" {
		t.Errorf("highlighted at the end %q, want f", got)
	}
}

// waitThroughReload polls expr until it holds, across the page reloading
// itself (an evaluation cut short by the reload is tried again).
func waitThroughReload(t *testing.T, tab context.Context, within time.Duration, what, expr string) {
	t.Helper()
	end := time.Now().Add(within)
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(tab, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	where, _ := chromedp.Run(tab, chromedp.Evaluate[string](`location.href + " " + document.body.innerText.slice(0, 600)`))
	t.Fatalf("%s: not within %v; the page: %s", what, within, where)
}

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

	// k climbs to the top: the table follows.
	lf.write(t, "lg", "k=100")
	browsertest.WaitJS(t, tab, 30*time.Second, "k on top", `document.querySelector("#`+views.IDCohortLive+` tbody tr").dataset.member === "k"`)
	if got := js("me after", `[...document.querySelectorAll("tr.self")].map(tr => tr.dataset.member).join(" ")`); got != "f" {
		t.Errorf("highlighted after a reload of the table %q, want f", got)
	}

	// The round closes and is decided: the outcomes appear.
	lf.at(testNow.Add(48 * time.Hour))
	if _, err := lf.store.DecideLeagues(context.Background()); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, tab, 30*time.Second, "outcomes", `document.querySelectorAll('[data-testid="`+views.TestOutcome+`"]').length === 5`)
	if got, want := js("outcomes", `[...document.querySelectorAll('[data-testid="`+views.TestOutcome+`"]')].map(e => e.textContent).join(" / ")`),
		"Promoted to Gold league / Promoted to Gold league / Stayed in Silver league / Demoted to Bronze league / Demoted to Bronze league"; got != want {
		t.Errorf("outcomes\n got %s\nwant %s", got, want)
	}
}

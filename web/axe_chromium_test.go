package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/ranking/redistest"
	"github.com/standings/standings/views"
)

// axeSource reads axe-core (make deps installs it from the npm registry;
// STANDINGS_AXE names the file). Without it the test is skipped, unless
// the environment requires every external tool.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("STANDINGS_AXE")
	if path == "" {
		_, here, _, _ := runtime.Caller(0)
		path = filepath.Join(filepath.Dir(here), "..", ".cache", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		if redistest.Required() {
			t.Fatalf("%s=1 but axe-core is not at %s (make deps installs it): %v", redistest.RequireEnv, path, err)
		}
		t.Skipf("axe-core not available at %s (make deps installs it): %v", path, err)
	}
	return string(src)
}

// axeSourceOrEmpty is axeSource for a test that checks more than
// accessibility: "" (and a log line) where axeSource would skip.
func axeSourceOrEmpty(t *testing.T) string {
	t.Helper()
	path := os.Getenv("STANDINGS_AXE")
	if path == "" {
		_, here, _, _ := runtime.Caller(0)
		path = filepath.Join(filepath.Dir(here), "..", ".cache", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		if redistest.Required() {
			t.Fatalf("%s=1 but axe-core is not at %s (make deps installs it): %v", redistest.RequireEnv, path, err)
		}
		t.Logf("axe-core not available at %s: accessibility not checked", path)
		return ""
	}
	return string(src)
}

// runAxe runs axe-core on the open page: its serious and critical
// violations, one line each.
func runAxe(t *testing.T, tab context.Context, axe string) []string {
	t.Helper()
	browsertest.Run(t, tab, "load axe", chromedp.Evaluate[bool](axe+";true"))
	return browsertest.Run(t, tab, "run axe", chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.impact + " " + v.id + ": " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise))
}

// TestAccessibilityInChromium runs axe-core, a maintained accessibility
// engine, in a real browser on the board page, a rank card, the results
// page and the widget, in light and dark: no serious or critical
// violation.
func TestAccessibilityInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	axe := axeSource(t)
	tab := browsertest.MustBrowser(t)
	f := mustResults(t)
	f.MustWrite(t, "points", `{"member":"ann","value":3}`) // an overtake for the ticker
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	// Pages of "zones:" are those of a board with zones: lines in tables
	// and the card's way to the next zone.
	zoned := httptest.NewServer(MustZonesFixture(t).handler)
	t.Cleanup(zoned.Close)
	pages := []string{
		"/boards/points/day",
		"/boards/points/week?members=ann,bob",
		"/boards/points/day/members/ann",
		"/boards/points/day/results",
		"/boards/points/day/recap?period=2026-11-21",
		"/",
		"/boards/nosuch/day",
		"/boards/points/day/members/ann?period=2026-11-20", // a day ann did not play
		"/boards/points/day/members/ann?period=2026-11-21", // a finished day
		"/boards/points/day/members/bob",                   // no score today yet
		"/boards/points/week/members?member=xyzzy",         // no match
		"/boards/points/week?page=0",                       // a refused address
		"/api",
		"/embed/points/week?limit=10&theme=light",
		"/embed/points/week?limit=10&theme=dark",
		"/embed/points/week?limit=10&theme=auto",
		"/embed/points/week?limit=10&theme=dark&me=ann",
		"/boards/points/day/widget?me=ann",
		"/boards/points/week?phone", // at 390 px, More open
		"zones:/boards/points/week",
		"zones:/boards/points/week/members/m05",
		"zones:/embed/points/week?limit=5&theme=dark",
		"zones:/boards/points/week?phone",
	}
	// A league board: a current group with both zones, a closed one with
	// outcomes, the overview and its find form, a rank card's league.
	lg := mustLeagueFixture(t, leagueTestBoards)
	lg.write(t, "lg", "a=9", "b=8", "c=1", "d=1", "e=1", "f=9", "g=8")
	lg.at(testNow.Add(24 * time.Hour))
	lg.write(t, "lg", "a=50", "b=40", "f=30", "g=20", "c=3")
	lgSrv := httptest.NewServer(lg.handler)
	t.Cleanup(lgSrv.Close)
	leaguePages := []string{
		"/boards/lg/league",
		"/boards/lg/league?member=nobody",
		"/boards/lg/league?round=2026-11-22",
		"/boards/lg/league/silver/1?me=f",
		"/boards/lg/league/bronze/1?round=2026-11-22&me=c",
		"/boards/lg/day/members/g",
		"/boards/lg/league/silver/1?phone",
		"/embed/lg/league?me=f&theme=light",
		"/embed/lg/league?me=f&theme=dark",
		"/embed/lg/league?me=f&theme=auto",
		"/embed/lg/league?me=d",
	}
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}, {Name: "prefers-reduced-motion", Value: "reduce"}},
		}); err != nil {
			t.Fatal(err)
		}
		check := func(page string) {
			browsertest.Run(t, tab, "load axe", chromedp.Evaluate[bool](axe+";true"))
			found := browsertest.Run(t, tab, "run axe on "+page, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
				r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
					.map(v => v.impact + " " + v.id + ": " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise))
			if len(found) > 0 {
				t.Errorf("%s (%s): %d serious or critical violations:\n%s", page, scheme, len(found), strings.Join(found, "\n"))
			}
		}
		visit := func(base, page string) {
			phone := strings.HasSuffix(page, "?phone")
			if phone {
				browsertest.Run(t, tab, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
			}
			path := page
			if p, ok := strings.CutPrefix(page, "zones:"); ok {
				base, path = zoned.URL, p
			}
			browsertest.Run(t, tab, "open "+page, chromedp.Navigate(base+strings.TrimSuffix(path, "?phone")))
			if phone {
				browsertest.Run(t, tab, "open More", chromedp.Evaluate[bool](`(d => { if (d) d.open = true; return true })(document.querySelector("details.more"))`))
			}
			check(page)
			if phone {
				browsertest.Run(t, tab, "desktop", chromedp.EmulateViewport(1280, 900))
			}
		}
		for _, page := range pages {
			visit(srv.URL, page)
		}
		for _, page := range leaguePages {
			visit(lgSrv.URL, page)
		}
		// A live board just patched by a frame: a row flashed, a badge.
		browsertest.Run(t, tab, "open the live board", chromedp.Navigate(srv.URL+"/boards/points/day"))
		browsertest.WaitJS(t, tab, 10*time.Second, "the live feed", `document.getElementById("`+views.IDLiveStatus+`").textContent.startsWith("Live")`)
		f.MustWrite(t, "points", `{"member":"ann","value":2}`)
		browsertest.WaitJS(t, tab, 10*time.Second, "a score badge", `!!document.querySelector('tr[data-member="ann"] .delta')`)
		check("/boards/points/day after a live frame")
		// A league group patched by its live feed: f (me) climbs to the top.
		browsertest.Run(t, tab, "open the live group", chromedp.Navigate(lgSrv.URL+"/boards/lg/league/silver/1?me=f"))
		browsertest.WaitJS(t, tab, 10*time.Second, "the group's live feed", `document.getElementById("`+views.IDLiveStatus+`").textContent.startsWith("Live")`)
		lg.write(t, "lg", map[string]string{"light": "f=60", "dark": "f=70"}[scheme])
		browsertest.WaitJS(t, tab, 10*time.Second, "f on top", `document.querySelector("#`+views.IDCohortLive+` tbody tr").dataset.member === "f"`)
		check("/boards/lg/league/silver/1?me=f after a live frame")
	}
	// The check can fail: an image without alt text is critical.
	browsertest.Run(t, tab, "break the page", chromedp.Evaluate[bool](`document.body.insertAdjacentHTML("beforeend", "<img src='/favicon.ico'>"); true`))
	ids := browsertest.Run(t, tab, "run axe", chromedp.Evaluate[[]string](`axe.run(document).then(r => r.violations.filter(v => v.impact === "critical").map(v => v.id))`, chromedp.EvalAwaitPromise))
	if !slices.Contains(ids, "image-alt") {
		t.Errorf("axe did not catch an image without alt text: %v", ids)
	}
}

package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/views"
)

// TestPhoneLayoutsInChromium: at 390 px the API page, the search answers
// and a rank card never scroll sideways (wide tables and examples scroll
// in their own box); the card's Latest tile reads at the size of the gap
// tile; at 1280 px three tiles fill their row.
func TestPhoneLayoutsInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"nora","value":1,"name":"Nora Müller-Oberhauser"}`)
	f.MustWrite(t, "points", `{"member":"ana","value":10,"name":"Ana Sato"}`)
	f.MustWrite(t, "points", `{"member":"nora","value":14}`)
	f.MustWrite(t, "points", `{"member":"ana2","value":3,"name":"Ana Satori"}`)
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)

	overflow := func(path string) {
		t.Helper()
		browsertest.Run(t, tab, "open "+path, chromedp.Navigate(srv.URL+path))
		if got := browsertest.Run(t, tab, "widths", chromedp.Evaluate[string](
			`document.documentElement.scrollWidth > window.innerWidth ? document.documentElement.scrollWidth + " > " + window.innerWidth : ""`)); got != "" {
			t.Errorf("%s scrolls sideways at 390 px: %s", path, got)
		}
	}
	browsertest.Run(t, tab, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	overflow("/api")
	if got := browsertest.Run(t, tab, "example box", chromedp.Evaluate[string](`(() => {
		const pre = document.querySelector('[data-testid="`+views.TestAPIAnswer+`"]');
		return pre ? getComputedStyle(pre).overflowX : "none";
	})()`)); got != "auto" {
		t.Errorf("an example's box %q", got)
	}

	for _, path := range []string{"/boards/points/week/members?member=xyzzy", "/boards/points/week/members?member=ana+sat", "/boards/points/week/members/ana", "/boards/points/week/members/ana?period=2026-11-09"} {
		overflow(path)
	}
	browsertest.Run(t, tab, "open card", chromedp.Navigate(srv.URL+"/boards/points/week/members/ana"))
	sizes := browsertest.Run(t, tab, "tile sizes", chromedp.Evaluate[string](`(() => {
		const gap = document.querySelector('[data-testid="`+views.TestCardGap+`"]');
		const latest = document.querySelector('[data-testid="`+views.TestPassed+`"]');
		if (!gap || !latest) return "missing";
		return getComputedStyle(gap).fontSize + " " + getComputedStyle(latest).fontSize + " " + Math.round(latest.getBoundingClientRect().height / parseFloat(getComputedStyle(latest).lineHeight));
	})()`))
	parts := strings.Fields(sizes)
	if len(parts) != 3 || parts[0] != parts[1] || len(parts[2]) != 1 || parts[2] > "3" {
		t.Errorf("gap font, Latest font, Latest lines: %q", sizes)
	}

	browsertest.Run(t, tab, "desktop", chromedp.EmulateViewport(1280, 900))
	browsertest.Run(t, tab, "open past card", chromedp.Navigate(srv.URL+"/boards/points/day/members/ana?period=2026-11-22"))
	if got := browsertest.Run(t, tab, "tiles fill the row", chromedp.Evaluate[string](`(() => {
		const dl = document.querySelector("dl.headline"), last = dl.lastElementChild;
		return dl.children.length + " " + Math.round(dl.getBoundingClientRect().right - last.getBoundingClientRect().right);
	})()`)); !strings.HasSuffix(got, " 0") || got < "3" {
		t.Errorf("tiles, space right of the last: %q (want 3 or more tiles filling the row)", got)
	}
}

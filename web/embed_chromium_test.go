package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestEmbedFitsInChromium: in a real browser, the widget at docs/api.md's
// recommended 360×420 shows all of its 10 rows without scrolling, and
// theme=auto follows the viewer's colour scheme.
func TestEmbedFitsInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points this week, views: [week, all]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	for i := range 12 {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"member-%02d","value":%d,"name":"A rather long display name %d"}`, i, 100+i, i))
	}
	browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(360, 420))
	navigate(t, tab, srv.URL+"/embed/points/week?limit=10")
	fit := browsertest.Run(t, tab, "measure", chromedp.Evaluate[[]float64](`[
		document.querySelectorAll('[data-testid="`+views.TestRow+`"]').length,
		Math.max(...Array.from(document.querySelectorAll('[data-testid="`+views.TestRow+`"]')).map(r => r.getBoundingClientRect().bottom)),
		window.innerHeight,
		document.scrollingElement.scrollHeight]`))
	if fit[0] != 10 || fit[1] > fit[2] || fit[3] > fit[2] {
		t.Errorf("%v rows, the last ends at %v px, page %v px tall in a %v px frame", fit[0], fit[1], fit[3], fit[2])
	}
	bg := func() string {
		return browsertest.Run(t, tab, "background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	}
	for _, c := range []struct{ scheme, theme, want string }{
		{"dark", "auto", "rgb(23, 26, 33)"},
		{"light", "auto", "rgb(255, 255, 255)"},
		{"dark", "light", "rgb(255, 255, 255)"},
		{"light", "dark", "rgb(23, 26, 33)"},
	} {
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: c.scheme}},
		}); err != nil {
			t.Fatal(err)
		}
		navigate(t, tab, srv.URL+"/embed/points/week?limit=10&theme="+c.theme)
		if got := bg(); got != c.want {
			t.Errorf("%s scheme, theme=%s: background %s, want %s", c.scheme, c.theme, got, c.want)
		}
	}
}

// TestLiveRowsInChromium: when a live frame changes a row's score, the
// row shows the delta (+8) for a moment, and the live status says how
// long ago the last update came.
func TestLiveRowsInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, views: [week, all]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	f.MustWrite(t, "points", `{"member":"ann","value":10,"name":"Ann"}`)
	f.MustWrite(t, "points", `{"member":"bob","value":5,"name":"Bob"}`)
	navigate(t, tab, srv.URL+"/boards/points/week")
	testsupport.WaitFor(t, "the live feed", func() bool { return strings.HasPrefix(innerText(t, tab, "#"+views.IDLiveStatus), "Live") })
	f.MustWrite(t, "points", `{"member":"bob","value":8}`)
	testsupport.WaitFor(t, "bob's +8", func() bool {
		return innerText(t, tab, `tr[data-member="bob"] .delta`) == "+8"
	})
	if got := innerText(t, tab, `tr[data-member="bob"] [data-testid="rank"]`); got != "1" {
		t.Errorf("bob's rank %q after passing ann", got)
	}
	testsupport.WaitFor(t, "the freshness", func() bool {
		return strings.HasPrefix(innerText(t, tab, "#"+views.IDLiveStatus), "Live · updated ")
	})
	if got := innerText(t, tab, `[data-testid="`+views.TestTicker+`"]`); !strings.Contains(got, "Bob passed Ann for #1") {
		t.Errorf("ticker %q", got)
	}
}

// TestIndexLiveInChromium: the index follows its boards: a new leader
// shows without a reload.
func TestIndexLiveInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, views: [week, all]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	f.MustWrite(t, "points", `{"member":"ann","value":10,"name":"Ann"}`)
	navigate(t, tab, srv.URL+"/")
	if got := innerText(t, tab, `[data-testid="`+views.TestLeaders+`"]`); !strings.Contains(got, "Ann") {
		t.Fatalf("leaders %q", got)
	}
	// Leader links are touch targets of at least 24×24 px.
	if h := browsertest.Run(t, tab, "target size", chromedp.Evaluate[float64](`Math.min(...Array.from(document.querySelectorAll('[data-testid="`+views.TestLeaders+`"] li a')).map(a => a.getBoundingClientRect().height))`)); h < 24 {
		t.Errorf("leader links are %v px tall, want 24", h)
	}
	f.MustWrite(t, "points", `{"member":"zed","value":50,"name":"Zed"}`)
	testsupport.WaitFor(t, "Zed on the index", func() bool {
		return strings.Contains(innerText(t, tab, `[data-testid="`+views.TestLeaders+`"] li`), "Zed")
	})
}

// TestPhoneFirstScreenInChromium: on a 390×844 phone the board page shows
// rank 1 (and more) on its first screen; the view tabs do not wrap, and
// the secondary actions sit in a menu.
func TestPhoneFirstScreenInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, views: [hour, day, week, month, all, 7d, 30d]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	for i := range 12 {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%02d","value":%d,"name":"Member number %d"}`, i, 10+i, i))
	}
	browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	navigate(t, tab, srv.URL+"/boards/points/week")
	got := browsertest.Run(t, tab, "measure", chromedp.Evaluate[[]float64](`(() => {
		const rows = Array.from(document.querySelectorAll('[data-testid="`+views.TestRow+`"]'));
		const visible = rows.filter(r => r.getBoundingClientRect().bottom <= window.innerHeight).length;
		const tabs = Array.from(document.querySelectorAll('[data-testid="`+views.TestViewTabs+`"] li')).map(l => l.getBoundingClientRect().top);
		const exports = document.querySelector(".exports");
		return [rows[0].getBoundingClientRect().bottom, window.innerHeight, visible, new Set(tabs).size, exports.getBoundingClientRect().height];
	})()`))
	if got[0] > got[1] || got[2] < 5 {
		t.Errorf("rank 1 ends at %v px of %v; %v rows on the first screen", got[0], got[1], got[2])
	}
	if got[3] != 1 {
		t.Errorf("the view tabs wrap onto %v lines", got[3])
	}
	if got[4] != 0 {
		t.Errorf("the export buttons take %v px above the table", got[4])
	}
}

// TestRowFlashContrastInChromium: a live row's flash keeps text readable:
// text and links on the flash colour have at least 4.5:1 contrast, in the
// light and the dark widget.
func TestRowFlashContrastInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"a","value":1}`)
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	for _, theme := range []string{"light", "dark"} {
		navigate(t, tab, srv.URL+"/embed/points/week?theme="+theme)
		got := browsertest.Run(t, tab, "contrast", chromedp.Evaluate[[]float64](`(() => {
			const cs = getComputedStyle(document.documentElement);
			const rgb = h => { h = h.trim().replace("#", ""); return [0, 2, 4].map(i => parseInt(h.substr(i, 2), 16) / 255); };
			const lum = c => { const [r, g, b] = rgb(c).map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
			const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
			const flash = cs.getPropertyValue("--accent-soft");
			return [ratio(cs.getPropertyValue("--text"), flash), ratio(cs.getPropertyValue("--accent"), flash)];
		})()`))
		if got[0] < 4.5 || got[1] < 4.5 {
			t.Errorf("%s: text %.2f:1 and links %.2f:1 on the row flash, want 4.5:1", theme, got[0], got[1])
		}
	}
}

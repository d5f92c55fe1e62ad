package web_test

import (
	"context"
	"fmt"
	"math"
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

// TestBoardAndWidgetLookInChromium: in a real browser, on a 390 px phone
// the current tab is in view and looks selected (the last tab too), More
// opens over the page, the search keeps its label and button and
// nothing overflows sideways; the widget at 320 px keeps its header to
// two lines with legible initials and markers, names without underline
// and a compact rank column, and keeps its member highlighted across
// live frames; the builder updates its preview and snippet as a control
// changes; every text colour pair reads at 4.5:1 in both themes.
func TestBoardAndWidgetLookInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, views: [hour, day, week, month, all, 7d, 30d]}
  - {id: lap, title: Fastest lap of the long weekend, order: asc, update: best, format: duration, decimals: 3, max_score: 3600, ties: shared, views: [week, all]}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	for i := range 14 {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%02d","value":%d,"name":"Member number %d"}`, i, 10+i, i))
		f.MustWrite(t, "lap", fmt.Sprintf(`{"member":"m%02d","value":%d.5,"name":"A rather long display name %d"}`, i, 150+i, i))
	}
	eval := func(what, js string) []float64 {
		t.Helper()
		return browsertest.Run(t, tab, what, chromedp.Evaluate[[]float64](js))
	}

	t.Run("phone board", func(t *testing.T) {
		browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		for _, view := range []string{"7d", "30d", "hour"} {
			navigate(t, tab, srv.URL+"/boards/points/"+view)
			got := eval("tab", `(() => {
				const ul = document.querySelector('[data-testid="`+views.TestViewTabs+`"] ul').getBoundingClientRect();
				const a = document.querySelector('[data-testid="`+views.TestViewTabs+`"] a[aria-current]');
				const r = a.getBoundingClientRect(), cs = getComputedStyle(a);
				return [r.left - ul.left, ul.right - r.right, parseInt(cs.fontWeight), cs.borderBottomColor === getComputedStyle(document.documentElement).getPropertyValue("--accent").trim() ? 1 : parseFloat(cs.borderBottomWidth)];
			})()`)
			if got[0] < -1 || got[1] < -1 { // subpixel rounding at the strip's end
				t.Errorf("%s: the current tab is out of view (%v px left, %v px right)", view, got[0], got[1])
			}
			if got[2] < 600 || got[3] == 0 {
				t.Errorf("%s: the current tab does not look selected: weight %v, underline %v", view, got[2], got[3])
			}
		}
		got := eval("toolbar", `(() => {
			const vis = e => { const r = e.getBoundingClientRect(); return r.width > 1 && r.height > 1 && r.right <= innerWidth && getComputedStyle(e).visibility !== "hidden" ? 1 : 0; };
			return [
				vis(document.querySelector('form[role=search] label')),
				vis(document.querySelector('form[role=search] button[type=submit]')),
				vis(document.querySelector('[data-testid="`+views.TestResultsLink+`"]')),
				document.scrollingElement.scrollWidth - innerWidth,
			];
		})()`)
		if got[0] != 1 || got[1] != 1 {
			t.Errorf("search label visible %v, button visible %v", got[0], got[1])
		}
		if got[2] != 1 {
			t.Error("Results is not visible on a phone")
		}
		if got[3] > 0 {
			t.Errorf("the page overflows sideways by %v px", got[3])
		}
		// More opens over the page: the table does not move.
		got = eval("more", `(() => {
			const table = document.querySelector('[data-testid="`+views.TestTable+`"]');
			const before = table.getBoundingClientRect().top;
			document.querySelector('[data-testid="`+views.TestMore+`"] summary').click();
			const menu = document.querySelector('[data-testid="`+views.TestMore+`"] .more-menu').getBoundingClientRect();
			return [table.getBoundingClientRect().top - before, menu.height, menu.right <= innerWidth ? 1 : 0, menu.left >= 0 ? 1 : 0];
		})()`)
		if got[0] != 0 || got[1] == 0 || got[2] != 1 || got[3] != 1 {
			t.Errorf("More: table moved %v px, menu %v px tall, inside the screen %v/%v", got[0], got[1], got[2], got[3])
		}
	})

	t.Run("widget at 320 px", func(t *testing.T) {
		browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(320, 600))
		for _, theme := range []string{"light", "dark"} {
			navigate(t, tab, srv.URL+"/embed/lap/week?limit=10&theme="+theme)
			got := eval("widget", `(() => {
				const head = document.querySelector(".embed-head"), title = head.querySelector("a");
				const line = parseFloat(getComputedStyle(title).lineHeight) || 20;
				const px = s => parseFloat(getComputedStyle(document.querySelector(s)).fontSize);
				const link = document.querySelector('[data-testid="`+views.TestMember+`"] a');
				const rank = document.querySelector("thead th.rank").getBoundingClientRect().width;
				const full = document.querySelector('[data-testid="`+views.TestFullBoard+`"]').getBoundingClientRect();
				return [head.getBoundingClientRect().height, line, px(".avatar"), px(".move"),
					getComputedStyle(link).textDecorationLine === "none" ? 1 : 0, rank,
					document.scrollingElement.scrollWidth - innerWidth, full.height > 0 ? 1 : 0];
			})()`)
			// Two lines of text plus the header's padding.
			if got[0] > 2*got[1]+20 {
				t.Errorf("%s: the header is %v px tall (lines of %v px)", theme, got[0], got[1])
			}
			if got[2] < 12 || got[3] < 12 {
				t.Errorf("%s: initials %v px, markers %v px", theme, got[2], got[3])
			}
			if got[4] != 1 {
				t.Errorf("%s: names are underlined", theme)
			}
			if got[5] >= 4.6*16 {
				t.Errorf("%s: rank column %v px wide", theme, got[5])
			}
			if got[6] > 0 || got[7] != 1 {
				t.Errorf("%s: overflow %v px, full board link shown %v", theme, got[6], got[7])
			}
		}
		// The ranks of NEW rows line up whatever their digits.
		xs := eval("markers", `Array.from(document.querySelectorAll('[data-testid="`+views.TestMove+`"]')).map(m => m.getBoundingClientRect().left)`)
		for _, x := range xs {
			if math.Abs(x-xs[0]) > .5 {
				t.Errorf("markers start at %v", xs)
				break
			}
		}
	})

	t.Run("widget highlight across frames", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/embed/points/week?limit=10&me=m05")
		testsupport.WaitFor(t, "the live feed", func() bool { return strings.HasPrefix(innerText(t, tab, "#"+views.IDLiveStatus), "Live") })
		f.MustWrite(t, "points", `{"member":"m05","value":100}`)
		testsupport.WaitFor(t, "m05 on top", func() bool {
			return innerText(t, tab, `tr[data-member="m05"] [data-testid="`+views.TestRank+`"]`) == "1"
		})
		got := browsertest.Run(t, tab, "self", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.self")).map(r => r.dataset.member)`))
		if strings.Join(got, ",") != "m05" {
			t.Errorf("highlighted after a frame: %v", got)
		}
	})

	t.Run("builder without JavaScript", func(t *testing.T) {
		if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		defer chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
		navigate(t, tab, srv.URL+"/boards/points/week/widget")
		got := eval("no script", `[
			document.querySelector('[data-testid="`+views.TestWidgetCopy+`"]').getBoundingClientRect().height,
			document.querySelector('[data-testid="`+views.TestWidgetForm+`"] button[type=submit]').getBoundingClientRect().height]`)
		if got[0] != 0 || got[1] == 0 {
			t.Errorf("without JavaScript: Copy %v px tall, Update %v px tall", got[0], got[1])
		}
	})

	t.Run("builder follows its controls", func(t *testing.T) {
		browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(1280, 900))
		navigate(t, tab, srv.URL+"/boards/points/week/widget")
		if hidden := browsertest.Run(t, tab, "update", chromedp.Evaluate[bool](`document.querySelector('[data-testid="`+views.TestWidgetForm+`"] button[type=submit]').getBoundingClientRect().height === 0`)); !hidden {
			t.Error("the Update button shows with JavaScript")
		}
		browsertest.Run(t, tab, "type a member", chromedp.SendKeys(chromedp.CSS(`[data-testid="`+views.TestWidgetMe+`"]`), "m03"))
		browsertest.Run(t, tab, "rows", chromedp.Evaluate[bool](`(e => { e.value = "5"; return e.dispatchEvent(new Event("input", {bubbles: true})) })(document.querySelector("input[name=limit]"))`))
		testsupport.WaitFor(t, "the preview", func() bool {
			src := browsertest.Run(t, tab, "src", chromedp.Evaluate[string](`document.querySelector('[data-testid="`+views.TestWidgetPreview+`"]').getAttribute("src")`))
			return src == "/embed/points/week?limit=5&me=m03&theme=auto"
		})
		if got := innerText(t, tab, `[data-testid="`+views.TestWidgetSnippet+`"]`); !strings.Contains(got, "limit=5&amp;me=m03") {
			t.Errorf("snippet %q", got)
		}
		browsertest.Run(t, tab, "view", chromedp.Evaluate[bool](`(e => { e.value = "all"; return e.dispatchEvent(new Event("change", {bubbles: true})) })(document.querySelector("select[name=view]"))`))
		testsupport.WaitFor(t, "the all-time builder", func() bool {
			// The change navigates: a read while the page is replaced fails
			// and is asked again.
			ctx, cancel := context.WithTimeout(tab, browsertest.Step)
			defer cancel()
			loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
			return err == nil && strings.HasPrefix(loc, "/boards/points/all/widget?") && strings.Contains(loc, "me=m03")
		})
	})

	t.Run("text contrast", func(t *testing.T) {
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatal(err)
			}
			navigate(t, tab, srv.URL+"/boards/points/week")
			low := browsertest.Run(t, tab, "contrast", chromedp.Evaluate[[]string](`(() => {
				const cs = getComputedStyle(document.documentElement);
				const rgb = h => { h = h.trim().replace("#", ""); return [0, 2, 4].map(i => parseInt(h.substr(i, 2), 16) / 255); };
				const lum = c => { const [r, g, b] = rgb(c).map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
				const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
				const out = [];
				for (const fg of ["--text", "--muted", "--accent", "--ok", "--bad", "--gold", "--silver", "--bronze"])
					for (const bg of ["--bg", "--surface", "--accent-soft"]) {
						const r = ratio(cs.getPropertyValue(fg), cs.getPropertyValue(bg));
						if (r < 4.5) out.push(fg + " on " + bg + " " + r.toFixed(2));
					}
				return out;
			})()`))
			if len(low) > 0 {
				t.Errorf("%s: below 4.5:1: %v", scheme, low)
			}
		}
	})
}

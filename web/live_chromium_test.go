package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// liveProbe is installed in a live page: it counts standings:frame events,
// notes each one after which the watched element lost focus, which rows
// flash (.scored) and when each score badge came and went, by the page's
// own clock (the badge's standingsSince, performance.now()).
const liveProbe = `(() => {
	const p = window.__probe = {frames: 0, lost: 0, flashed: {}, badges: [], focused: null};
	document.addEventListener("standings:frame", () => {
		p.frames++;
		if (p.focused && document.activeElement !== p.focused) p.lost++;
	});
	new MutationObserver(ms => {
		const now = performance.now();
		for (const m of ms) {
			if (m.type === "attributes" && m.target.matches("tr[data-member]") && m.target.classList.contains("scored")) p.flashed[m.target.dataset.member] = true;
			for (const n of m.addedNodes) if (n.classList && n.classList.contains("delta")) p.badges.push({el: n, row: n.closest("tr").dataset.member});
			for (const n of m.removedNodes) for (const b of p.badges) if (b.el === n && b.died === undefined) { b.died = now; b.since = n.standingsSince; }
		}
	}).observe(document.getElementById("main"), {subtree: true, childList: true, attributes: true, attributeFilter: ["class"]});
	return true;
})()`

// TestLiveFramesPatchInPlaceInChromium: live frames patch the table: a
// focused row link keeps its focus across 20 frames, and when its row
// climbs to #1 the focus goes with it; a text selection survives; a score
// badge lives its whole 2.5 s across frames; only the row whose score
// changed flashes (the rows it pushes down do not); frame and rollover
// events are dispatched as other scripts expect; on a lap board (lower
// is better, format: duration) an improvement reads as a green
// "−4.915 s".
func TestLiveFramesPatchInPlaceInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, views: [week]}
  - {id: lap, title: Lap, views: [week], order: asc, update: best, format: duration, decimals: 3}
`, web.Options{WriteRate: -1})
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	for i := range 30 {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%02d","value":%d,"name":"Member %02d"}`, i, 1000-10*i, i))
	}
	js := func(what, expr string) bool {
		t.Helper()
		return browsertest.Run(t, tab, what, chromedp.Evaluate[bool](expr))
	}
	frames := func() int {
		return int(browsertest.Run(t, tab, "frames", chromedp.Evaluate[float64](`window.__probe.frames`)))
	}
	// write writes and waits for the frame that shows it.
	write := func(body, shows string) {
		t.Helper()
		n := frames()
		f.MustWrite(t, "points", body)
		browsertest.WaitJS(t, tab, 10*time.Second, "a frame after "+body, fmt.Sprintf(`window.__probe.frames > %d && (%s)`, n, shows))
	}
	score := func(member string) string {
		return fmt.Sprintf(`document.querySelector('tr[data-member="%s"] [data-live-score]').textContent`, member)
	}

	navigate(t, tab, srv.URL+"/boards/points/week")
	browsertest.WaitJS(t, tab, 10*time.Second, "the live feed", `document.getElementById("`+views.IDLiveStatus+`").textContent.startsWith("Live")`)
	js("the probe", liveProbe)
	js("focus a row link", `(() => {
		const a = document.querySelector('tr[data-member="m15"] th a');
		a.focus();
		window.__probe.focused = a;
		const name = document.querySelector('tr[data-member="m20"] th a').firstChild;
		getSelection().setBaseAndExtent(name, 0, name, name.length);
		return document.activeElement === a;
	})()`)

	// 20 frames that change rows around the focused one, some of them
	// moving past it.
	for i := range 20 {
		m := 16 + i%14
		write(fmt.Sprintf(`{"member":"m%02d","value":%d}`, m, 7+i), score(fmt.Sprintf("m%02d", m))+` !== "`+fmt.Sprint(1000-10*m)+`"`)
	}
	if !js("focus kept", `document.activeElement === window.__probe.focused && window.__probe.lost === 0`) {
		t.Fatalf("focus left the row link during 20 frames: %v frames lost it", browsertest.Run(t, tab, "lost", chromedp.Evaluate[float64](`window.__probe.lost`)))
	}
	if !js("selection kept", `getSelection().toString() === "Member 20"`) {
		t.Errorf("the selection is %q", browsertest.Run(t, tab, "selection", chromedp.Evaluate[string](`getSelection().toString()`)))
	}

	// The focused row climbs to #1: the focus goes with it, and only it
	// flashes, not the 15 rows it pushes down.
	js("reset", `(() => { window.__probe.flashed = {}; return true; })()`)
	write(`{"member":"m15","value":5000}`, `document.querySelector('tr[data-member="m15"] [data-live-rank]').textContent === "1"`)
	if !js("focus moved with its row", `document.activeElement === window.__probe.focused && document.activeElement.closest("tr").dataset.member === "m15"`) {
		t.Error("the focus did not move with its row")
	}
	if got := browsertest.Run(t, tab, "flashed", chromedp.Evaluate[[]string](`Object.keys(window.__probe.flashed)`)); strings.Join(got, " ") != "m15" {
		t.Errorf("rows that flashed: %v, want m15 only", got)
	}
	// The badge of that climb lives its 2.5 s while other frames come.
	for i := range 4 {
		write(fmt.Sprintf(`{"member":"m2%d","value":3}`, i), "true")
	}
	browsertest.WaitJS(t, tab, 10*time.Second, "the climb's badge to go", `window.__probe.badges.some(b => b.row === "m15" && b.died !== undefined)`)
	life := browsertest.Run(t, tab, "badge life", chromedp.Evaluate[[]float64](`(() => {
		const b = window.__probe.badges.find(b => b.row === "m15");
		return [b.died - b.since, window.__probe.frames];
	})()`))
	if life[0] < 2500 {
		t.Errorf("the badge lived %.0f ms, want 2,500", life[0])
	}

	// standings:frame names the patched table; a frame of another period
	// dispatches a cancelable standings:rollover with the page's period,
	// board and view, and a listener that cancels it keeps the page.
	if !js("frame event", `(() => {
		window.__frameEl = null;
		document.addEventListener("standings:frame", e => { window.__frameEl = e.detail.el; });
		document.addEventListener("standings:rollover", e => { e.preventDefault(); window.__rollover = e.detail; });
		window.__stay = true;
		return true;
	})()`) {
		t.Fatal("listeners")
	}
	write(`{"member":"m28","value":1}`, `window.__frameEl === document.getElementById("`+views.TableID("points", "week", web.PageSize)+`")`)
	js("an old page", `(() => { document.getElementById("`+views.TableID("points", "week", web.PageSize)+`").dataset.period = "2000-W01"; return true; })()`)
	f.MustWrite(t, "points", `{"member":"m27","value":1}`)
	browsertest.WaitJS(t, tab, 10*time.Second, "the rollover event", `!!window.__rollover`)
	if got := browsertest.Run(t, tab, "rollover", chromedp.Evaluate[[]string](`[window.__rollover.period, window.__rollover.board, window.__rollover.view, String(window.__stay)]`)); strings.Join(got, " ") != "2000-W01 points week true" {
		t.Errorf("rollover detail and page %v", got)
	}

	// A lap board: 3:02.165 improved to 2:57.250 is a green −4.915 s.
	lap := func(v string) {
		f.MustWrite(t, "lap", `{"member":"ingrid","value":`+v+`,"name":"Ingrid"}`)
	}
	f.MustWrite(t, "lap", `{"member":"other","value":150,"name":"Other"}`)
	lap("182.165")
	navigate(t, tab, srv.URL+"/boards/lap/week")
	browsertest.WaitJS(t, tab, 10*time.Second, "the live feed", `document.getElementById("`+views.IDLiveStatus+`").textContent.startsWith("Live")`)
	lap("177.250")
	browsertest.WaitJS(t, tab, 10*time.Second, "the lap badge", `!!document.querySelector('tr[data-member="ingrid"] .delta')`)
	got := browsertest.Run(t, tab, "lap badge", chromedp.Evaluate[[]string](`(() => {
		const b = document.querySelector('tr[data-member="ingrid"] .delta');
		return [b.textContent, b.className, getComputedStyle(b).color, document.querySelector('tr[data-member="ingrid"] [data-live-score]').textContent];
	})()`))
	if got[0] != "−4.915 s" || got[1] != "delta up" || got[2] != "rgb(20, 122, 58)" || got[3] != "2:57.250" {
		t.Errorf("lap improvement shows %q", got)
	}
}

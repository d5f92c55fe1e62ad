package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/ranking/redistest"
	"github.com/standings/standings/views"
)

// browserStep bounds every browser step of these tests.
const browserStep = 15 * time.Second

// mustChromium starts a headless Chromium and opens one tab; it skips the
// test when there is no Chromium, unless STANDINGS_REQUIRE_REDIS=1 asks
// for the whole real setup.
func mustChromium(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("STANDINGS_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		if redistest.Required() {
			t.Fatalf("%s=1 but Chromium is not available at %s (set STANDINGS_CHROMIUM): %v", redistest.RequireEnv, path, err)
		}
		t.Skipf("Chromium not available at %s (set STANDINGS_CHROMIUM): %v", path, err)
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
	)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(ctx) }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("start Chromium: %v", err)
		}
	case <-time.After(browserStep):
		cancel()
		t.Fatal("start Chromium: no answer")
	}
	return ctx
}

// browse runs one browser action with browserStep.
func browse[T any](t *testing.T, tab context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserStep)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func navigate(t *testing.T, tab context.Context, url string) {
	t.Helper()
	res := browse(t, tab, "open "+url, chromedp.NavigateResponse(url))
	if res == nil || res.Status != http.StatusOK {
		t.Fatalf("open %s: %v", url, res)
	}
}

func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// innerText is the visible text of the first element sel matches.
func innerText(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return browse(t, tab, "read "+sel, chromedp.Evaluate[string](fmt.Sprintf(`(e => e ? e.innerText.trim() : "")(document.querySelector(%s))`, jsQuote(sel))))
}

// TestResultPagesInChromium: the countdown ticks in a real browser, the
// results page shows a podium, and a past final week's page leads to its
// result.
func TestResultPagesInChromium(t *testing.T) {
	tab := mustChromium(t)
	f := mustResults(t)
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)

	t.Run("countdown ticks", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/points/day")
		sel := testid(views.TestCountdown)
		first := innerText(t, tab, sel)
		if !strings.HasPrefix(first, "Ends in ") {
			t.Fatalf("countdown %q", first)
		}
		// Redis's clock stands still here; the browser's does not.
		deadline := time.Now().Add(browserStep)
		for {
			got := innerText(t, tab, sel)
			if got != first {
				if !strings.HasPrefix(got, "Ends in ") {
					t.Fatalf("countdown went from %q to %q", first, got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("countdown stayed %q", first)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("podium", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/points/day/results")
		names := browse(t, tab, "read the podium", chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('[data-testid="result"]')[0].querySelectorAll('[data-testid="podium-row"] [data-testid="member"]')).map(a => a.innerText.trim())`))
		if got := strings.Join(names, "|"); got != "Ann <b>&</b>|Bob|cy" {
			t.Errorf("podium %q", got)
		}
	})

	t.Run("final week leads to its result", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/points/week?period=2026-11-09")
		if got := innerText(t, tab, testid(views.TestFinalTitle)); got != "Final results — Week of 9 Nov 2026" {
			t.Errorf("heading %q", got)
		}
		ctx, cancel := context.WithTimeout(tab, browserStep)
		defer cancel()
		res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(testid(views.TestResultLink))))
		if err != nil || res == nil || res.Status != http.StatusOK {
			t.Fatalf("follow the result link: %v %v", res, err)
		}
		loc := browse(t, tab, "location", chromedp.Location())
		if !strings.HasSuffix(loc, "/boards/points/week/results#2026-11-09") {
			t.Fatalf("landed on %s", loc)
		}
		if got := innerText(t, tab, `[id="2026-11-09"] h2`); got != "Week of 9 Nov 2026" {
			t.Errorf("the linked result is %q", got)
		}
	})
}

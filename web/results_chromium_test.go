package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/views"
)

func navigate(t *testing.T, tab context.Context, url string) {
	t.Helper()
	res := browsertest.Run(t, tab, "open "+url, chromedp.NavigateResponse(url))
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
	return browsertest.Run(t, tab, "read "+sel, chromedp.Evaluate[string](fmt.Sprintf(`(e => e ? e.innerText.trim() : "")(document.querySelector(%s))`, jsQuote(sel))))
}

// TestResultPagesInChromium: the countdown ticks in a real browser, the
// results page shows a podium, and a past final week's page leads to its
// result.
func TestResultPagesInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
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
		var got string
		testsupport.WaitFor(t, "the countdown to tick from "+first, func() bool {
			got = innerText(t, tab, sel)
			return got != first
		})
		if !strings.HasPrefix(got, "Ends in ") {
			t.Fatalf("countdown went from %q to %q", first, got)
		}
	})

	t.Run("podium", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/points/day/results")
		names := browsertest.Run(t, tab, "read the podium", chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('[data-testid="result"]')[0].querySelectorAll('[data-testid="podium-row"] [data-testid="member"]')).map(a => a.innerText.trim())`))
		if got := strings.Join(names, "|"); got != "Ann <b>&</b>|Bob|cy" {
			t.Errorf("podium %q", got)
		}
	})

	t.Run("final day leads to its result", func(t *testing.T) {
		navigate(t, tab, srv.URL+"/boards/points/day?period=2026-11-20")
		if got := innerText(t, tab, testid(views.TestFinalTitle)); got != "Final results — Friday 20 Nov 2026" {
			t.Errorf("heading %q", got)
		}
		ctx, cancel := context.WithTimeout(tab, browsertest.Step)
		defer cancel()
		res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(testid(views.TestResultLink))))
		if err != nil || res == nil || res.Status != http.StatusOK {
			t.Fatalf("follow the result link: %v %v", res, err)
		}
		loc := browsertest.Run(t, tab, "location", chromedp.Location())
		if !strings.HasSuffix(loc, "/boards/points/day/results#2026-11-20") {
			t.Fatalf("landed on %s", loc)
		}
		if got := innerText(t, tab, `[id="2026-11-20"] h2`); got != "Friday 20 Nov 2026" {
			t.Errorf("the linked result is %q", got)
		}
	})
}

// TestRolloverInChromium: when the open board's day ends, the page stays,
// announces who led when it closed (the board's format, a status region),
// links the recap and the new day, and moves on by itself.
func TestRolloverInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	f := MustFixture(t)
	for _, ev := range []string{`{"member":"ann","value":30,"name":"Ann"}`, `{"member":"bob","value":20}`, `{"member":"cy","value":10}`} {
		f.MustWrite(t, "points", ev)
	}
	// Two seconds before the day ends, on Redis's clock.
	f.mr.SetTime(day(23).Add(-2 * time.Second))
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	navigate(t, tab, srv.URL+"/boards/points/day")
	browsertest.Run(t, tab, "mark the page", chromedp.Evaluate[bool](`window.samePage = true`))
	sel := testid(views.TestRolloverAnnounced)
	var text string
	testsupport.WaitFor(t, "the winners announced", func() bool {
		text = innerText(t, tab, sel)
		return strings.Contains(text, "Moving on")
	})
	for _, want := range []string{"The day has ended", "Leading when the day closed: Ann with 30", "Go to the new day", "See the recap"} {
		if !strings.Contains(text, want) {
			t.Errorf("announcement %q lacks %q", text, want)
		}
	}
	if !browsertest.Run(t, tab, "still the same page", chromedp.Evaluate[bool](`window.samePage === true`)) {
		t.Fatal("the page reloaded instead of announcing")
	}
	role := browsertest.Run(t, tab, "role", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%s).getAttribute("role")`, jsQuote(sel))))
	if role != "status" {
		t.Errorf("role %q", role)
	}
	recap := browsertest.Run(t, tab, "recap link", chromedp.Evaluate[string](fmt.Sprintf(`Array.from(document.querySelectorAll(%s + " a")).map(a => a.getAttribute("href")).join(" ")`, jsQuote(sel))))
	if !strings.Contains(recap, "/boards/points/day/recap?period=2026-11-22") {
		t.Errorf("links %q", recap)
	}
}

// Package browsertest starts the headless Chromium that the browser tests
// drive. Only *_test.go files import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/standings/standings/ranking/redistest"
)

// Step bounds every browser step: opening a tab, one action.
const Step = 15 * time.Second

// startLimit bounds starting Chromium, the slowest step on a loaded
// machine (other test packages run beside this one).
const startLimit = time.Minute

// browsers bounds the Chromiums one test process runs at once: each is
// several processes, and parallel tests on two cores would otherwise
// start them all together and starve each other past their limits.
var browsers = make(chan struct{}, 2)

// Path is the Chromium the tests run: $STANDINGS_CHROMIUM, or
// /usr/bin/chromium.
func Path() string {
	if p := os.Getenv("STANDINGS_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// MustBrowser starts one headless Chromium for tb, with opts after the
// defaults, and returns its context (the first tab). It skips tb when there
// is no Chromium, unless redistest.RequireEnv asks for the whole real setup.
func MustBrowser(tb testing.TB, opts ...chromedp.ExecAllocatorOption) context.Context {
	tb.Helper()
	path := Path()
	if _, err := exec.LookPath(path); err != nil {
		if redistest.Required() {
			tb.Fatalf("%s=1 but Chromium is not available at %s (apt-get install chromium, or set STANDINGS_CHROMIUM): %v", redistest.RequireEnv, path, err)
		}
		tb.Skipf("Chromium not available at %s (set STANDINGS_CHROMIUM, or %s=1 to fail instead): %v", path, redistest.RequireEnv, err)
	}
	browsers <- struct{}{}
	tb.Cleanup(func() { <-browsers })
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
	}, opts...)...)
	tb.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(alloc)
	tb.Cleanup(cancel)
	// The first Run binds the browser's life to its context, so it gets no
	// deadline of its own; the wait for it is bounded here instead.
	bounded(tb, "start Chromium", startLimit, cancel, func() error { return chromedp.Do(ctx) })
	return ctx
}

// NewTab opens a tab in browser, closed when tb ends.
func NewTab(tb testing.TB, browser context.Context) context.Context {
	tb.Helper()
	tab, cancel := chromedp.NewContext(browser)
	tb.Cleanup(cancel)
	bounded(tb, "open a tab", Step, cancel, func() error { return chromedp.Do(tab) })
	return tab
}

// Run runs one browser action in tab within Step, failing tb on error.
func Run[T any](tb testing.TB, tab context.Context, what string, a chromedp.Action[T]) T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tab, Step)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	return v
}

// WaitJS waits until the JavaScript expression expr is true in tab's page,
// failing tb after within. The browser polls, so no round trip is wasted.
func WaitJS(tb testing.TB, tab context.Context, within time.Duration, what, expr string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tab, within+Step)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within))); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// bounded runs f, failing tb (and calling cancel) if it takes longer than
// limit.
func bounded(tb testing.TB, what string, limit time.Duration, cancel func(), f func() error) {
	tb.Helper()
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	select {
	case err := <-errc:
		if err != nil {
			tb.Fatalf("%s: %v", what, err)
		}
	case <-time.After(limit):
		cancel()
		tb.Fatalf("%s: no answer within %v", what, limit)
	}
}

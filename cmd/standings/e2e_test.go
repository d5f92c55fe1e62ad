package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	goredis "github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/ranking/redistest"
	"github.com/standings/standings/views"
)

// stepTimeout bounds every browser step and every HTTP call of these tests.
const stepTimeout = browsertest.Step

// The boards of the browser tests: points has a previous hour that is
// still open (lateness 3h) so that a late event can go there; sprint's
// previous hour is final at once (lateness 0); arena holds hostile names.
const browserBoards = `
boards:
  - id: points
    title: Points
    views: [hour, day, all]
    lateness: 3h
  - id: sprint
    title: Sprint
    views: [hour, day]
    lateness: 0s
  - id: arena
    title: Arena
    views: [day, all]
`

// Hostile member ids and names: each must show as the literal text.
const (
	xssScript = `<script>window.__pwned=1</script>`
	xssImg    = `<img src=x onerror="window.__pwned=1">`
	xssSVG    = `"><svg onload=window.__pwned=1>`
)

// TestBrowser drives the real wiring, on a real Redis, from one headless
// Chromium: each subtest opens its own tab and reads what a person sees.
func TestBrowser(t *testing.T) {
	browser := mustBrowser(t)
	redis := mustOwnRedis(t)
	boards, now := awayFromPeriodEnds(t, redis.Addr, browserBoards)
	m := mustRunWith(t, redis.Addr, boards)

	hourNow, hourPrev := now.Format("2006-01-02T15"), now.Add(-time.Hour).Format("2006-01-02T15")
	hourStart := time.Date(now.Year(), now.Month(), now.Day(), now.Hour(), 0, 0, 0, now.Location())
	for _, ev := range []map[string]any{
		{"member": "carol", "name": "Carol", "value": 70},
		{"member": "alice", "name": "Alice", "value": 50},
		{"member": "bob", "value": 30},
		{"member": "dave", "value": 30}, // ties with bob, later: ranks after him
		{"member": "erin", "value": 10},
		{"member": "frank", "value": 5},
		// Late, inside the lateness: the previous hour only (and all time),
		// in its middle.
		{"member": "lena", "name": "Lena", "value": 40, "at": hourStart.Add(-30 * time.Minute).UTC().Format(time.RFC3339)},
	} {
		mustWrite(t, m, "points", ev)
	}
	mustWrite(t, m, "sprint", map[string]any{"member": "sam", "value": 3})
	mustWrite(t, m, "arena", map[string]any{"member": xssScript, "value": 30})
	mustWrite(t, m, "arena", map[string]any{"member": "img-attack", "name": xssImg, "value": 20})
	mustWrite(t, m, "arena", map[string]any{"member": xssSVG, "value": 10})

	pointsHour := []row{
		{Rank: "1", Member: "carol", Name: "Carol", Score: "70"},
		{Rank: "2", Member: "alice", Name: "Alice", Score: "50"},
		{Rank: "3", Member: "bob", Name: "bob", Score: "30"},
		{Rank: "4", Member: "dave", Name: "dave", Score: "30"},
		{Rank: "5", Member: "erin", Name: "erin", Score: "10"},
		{Rank: "6", Member: "frank", Name: "frank", Score: "5"},
	}

	t.Run("index to board", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		open(t, tab, m.URL+"/")
		boards := evalJS[[]string](t, tab, fmt.Sprintf(
			`Array.from(document.querySelectorAll(%s)).map(e => e.getAttribute("data-board"))`,
			jsString(testid(views.TestBoardList)+" "+testid(views.TestBoardItem))))
		if strings.Join(boards, ",") != "points,sprint,arena" {
			t.Errorf("index lists boards %q, want points, sprint, arena", boards)
		}
		item := testid(views.TestBoardItem) + `[data-board="points"]`
		if got := textOf(t, tab, item+" h2"); got != "Points" {
			t.Errorf("board title on the index = %q, want Points", got)
		}
		// The card opens the board's main view: the day, not the volatile hour.
		click(t, tab, item+" h2 a")
		assertPath(t, tab, "/boards/points/day", "")
		assertTabs(t, tab, []string{"Hour", "Day", "All time"}, "Day")

		open(t, tab, m.URL+"/boards/points/hour")
		assertRows(t, tab, testid(views.TestTable), pointsHour)
		assertTabs(t, tab, []string{"Hour", "Day", "All time"}, "Hour")
		if got := attrOf(t, tab, testid(views.TestPeriod), "data-period"); got != hourNow {
			t.Errorf("period shown = %q, want the current hour %q", got, hourNow)
		}
		assertAbsent(t, tab, testid(views.TestFinal), "a final badge on the current hour")

		// The board's own URL leads to its first view too.
		open(t, tab, m.URL+"/boards/points")
		assertPath(t, tab, "/boards/points/hour", "")
	})

	t.Run("views and periods", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		open(t, tab, m.URL+"/boards/points/hour")

		clickLink(t, tab, testid(views.TestViewTabs), "All time")
		assertPath(t, tab, "/boards/points/all", "")
		assertTabs(t, tab, []string{"Hour", "Day", "All time"}, "All time")
		assertRows(t, tab, testid(views.TestTable), []row{
			{Rank: "1", Member: "carol", Name: "Carol", Score: "70"},
			{Rank: "2", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "3", Member: "lena", Name: "Lena", Score: "40"},
			{Rank: "4", Member: "bob", Name: "bob", Score: "30"},
			{Rank: "5", Member: "dave", Name: "dave", Score: "30"},
			{Rank: "6", Member: "erin", Name: "erin", Score: "10"},
			{Rank: "7", Member: "frank", Name: "frank", Score: "5"},
		})
		assertAbsent(t, tab, testid(views.TestPeriodPrev), "a previous link on all time")

		clickLink(t, tab, testid(views.TestViewTabs), "Day")
		assertPath(t, tab, "/boards/points/day", "")
		if got, want := attrOf(t, tab, testid(views.TestPeriod), "data-period"), now.Format("2006-01-02"); got != want {
			t.Errorf("day view shows period %q, want today %q", got, want)
		}

		clickLink(t, tab, testid(views.TestViewTabs), "Hour")
		assertPath(t, tab, "/boards/points/hour", "")
		click(t, tab, testid(views.TestPeriodPrev))
		assertPath(t, tab, "/boards/points/hour", "period="+hourPrev)
		if got := attrOf(t, tab, testid(views.TestPeriod), "data-period"); got != hourPrev {
			t.Errorf("previous shows period %q, want %q", got, hourPrev)
		}
		assertRows(t, tab, testid(views.TestTable), []row{{Rank: "1", Member: "lena", Name: "Lena", Score: "40"}})
		// lateness 3h: the previous hour still takes late events.
		assertAbsent(t, tab, testid(views.TestFinal), "a final badge on an hour still open to late events")

		click(t, tab, testid(views.TestPeriodNow))
		assertPath(t, tab, "/boards/points/hour", "")
		assertRows(t, tab, testid(views.TestTable), pointsHour)
		assertAbsent(t, tab, testid(views.TestPeriodNow), "a current link on the current period")

		// sprint has lateness 0: its previous hour is closed, and empty.
		open(t, tab, m.URL+"/boards/sprint/hour")
		assertAbsent(t, tab, testid(views.TestFinal), "a final badge on the current hour")
		click(t, tab, testid(views.TestPeriodPrev))
		assertPath(t, tab, "/boards/sprint/hour", "period="+hourPrev)
		// The badge is styled in capitals; its text is the word.
		if got := textOf(t, tab, testid(views.TestFinal)); !strings.EqualFold(got, "final") {
			t.Errorf("final badge of a closed hour = %q, want final", got)
		}
		if got := textOf(t, tab, testid(views.TestTable)+" "+testid(views.TestEmpty)); got == "" {
			t.Error("an empty past period shows no empty-table message")
		}
		click(t, tab, testid(views.TestPeriodNext))
		assertPath(t, tab, "/boards/sprint/hour", "")
		assertRows(t, tab, testid(views.TestTable), []row{{Rank: "1", Member: "sam", Name: "sam", Score: "3"}})
	})

	t.Run("rank card", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		open(t, tab, m.URL+"/boards/points/hour")
		click(t, tab, testid(views.TestRow)+`[data-member="alice"] `+testid(views.TestMember)+" a")
		assertPath(t, tab, "/boards/points/hour/members/alice", "")
		assertCard(t, tab, card{
			Rank: "#2", Score: "50", Top: "In the top half this hour", Total: "6", Gap: "21 points to pass #1",
			Views: map[string]string{"Hour": "#2 of 6", "Day": "#2", "All time": "#2 of 7"},
		})
		if got := textOf(t, tab, "h1"); !strings.HasPrefix(got, "Alice") {
			t.Errorf("card heading = %q, want Alice", got)
		}
		self := evalJS[[]string](t, tab, fmt.Sprintf(
			`Array.from(document.querySelectorAll(%s)).map(r => r.getAttribute("data-member"))`,
			jsString(testid(views.TestNeighbours)+" "+testid(views.TestRow)+".self")))
		if strings.Join(self, ",") != "alice" {
			t.Errorf("neighbours highlight %q, want alice", self)
		}

		// The member search leads to the rank card too.
		open(t, tab, m.URL+"/boards/points/hour")
		browsertest.Run(t, tab, "type in the member search", chromedp.SendKeys(chromedp.CSS(testid(views.TestSearch)), "dave"))
		click(t, tab, `form[role="search"] button[type="submit"]`)
		// The form sends the period shown, the current one included.
		assertPath(t, tab, "/boards/points/hour/members/dave", "", "period="+hourNow)
		if got := attrOf(t, tab, testid(views.TestPeriod), "data-period"); got != hourNow {
			t.Errorf("card found by search shows period %q, want the current hour %q", got, hourNow)
		}
		assertCard(t, tab, card{
			Rank: "#4", Score: "30", Total: "6", Gap: "1 point to pass #3",
			Views: map[string]string{"Hour": "#4 of 6", "All time": "#5 of 7"},
		})
	})

	t.Run("embed on another site", func(t *testing.T) {
		embedURL := m.URL + "/embed/points/hour?limit=5&theme=dark"
		boardURL := m.URL + "/boards/points/hour"
		host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!DOCTYPE html><title>A fan site</title><h1>Our league</h1>
<iframe name="widget" src="%s" width="400" height="300"></iframe>
<iframe name="page" src="%s" width="400" height="300"></iframe>`, embedURL, boardURL)
		}))
		defer host.Close()
		if sameOrigin(host.URL, m.URL) {
			t.Fatalf("the host page %s must be another origin than the app %s", host.URL, m.URL)
		}
		tab := browsertest.NewTab(t, browser)
		open(t, tab, host.URL)
		frames := childFrames(t, tab)

		widget, ok := frames["widget"]
		if !ok {
			t.Fatalf("no widget frame in %v", frames)
		}
		if widget.URL != embedURL || widget.UnreachableURL != "" {
			t.Fatalf("widget frame: url %q (unreachable %q), want it to load %s", widget.URL, widget.UnreachableURL, embedURL)
		}
		got := evalInFrame[[]row](t, tab, widget.ID, rowsJS(testid(views.TestEmbed)+" "+testid(views.TestTable)))
		if !sameRows(got, pointsHour[:5]) {
			t.Errorf("widget rows (limit=5):\n got %v\nwant %v", got, pointsHour[:5])
		}
		if !evalInFrame[bool](t, tab, widget.ID, `document.documentElement.classList.contains("theme-dark")`) {
			t.Error("widget with theme=dark is not dark")
		}

		// frame-ancestors 'none' (and X-Frame-Options: DENY): the browser
		// refuses to show the board page in a frame, showing its own error
		// page instead.
		board, ok := frames["page"]
		if !ok {
			t.Fatalf("no board page frame in %v", frames)
		}
		if board.URL == boardURL || !strings.HasPrefix(board.URL, "chrome-error://") {
			t.Errorf("board page frame: url %q, want the browser's error page (the page must not be framed)", board.URL)
		}
		if evalInFrame[bool](t, tab, board.ID, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(testid(views.TestTable)))) {
			t.Error("the framed board page shows its table: framing is not forbidden")
		}
	})

	t.Run("hostile names render inert", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		want := []row{
			{Rank: "1", Member: xssScript, Name: xssScript, Score: "30"},
			{Rank: "2", Member: "img-attack", Name: xssImg, Score: "20"},
			{Rank: "3", Member: xssSVG, Name: xssSVG, Score: "10"},
		}
		open(t, tab, m.URL+"/boards/arena/day")
		assertInert(t, tab)
		got := readRows(t, tab, testid(views.TestTable))
		if !sameRows(got, want) {
			t.Fatalf("board rows:\n got %v\nwant %v", got, want)
		}
		for i, r := range got {
			open(t, tab, r.Href)
			assertInert(t, tab)
			if h := textOf(t, tab, "h1"); !strings.HasPrefix(h, want[i].Name) {
				t.Errorf("rank card of %q: heading %q, want it to start with the literal name", want[i].Member, h)
			}
			if rank := textOf(t, tab, testid(views.TestCardRank)); rank != "#"+want[i].Rank {
				t.Errorf("rank card of %q: rank %q, want #%s", want[i].Member, rank, want[i].Rank)
			}
		}
		open(t, tab, m.URL+"/embed/arena/day")
		assertInert(t, tab)
		if got := readRows(t, tab, testid(views.TestTable)); !sameRows(got, want) {
			t.Errorf("embed rows:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("without javascript", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		browsertest.Run(t, tab, "disable scripts", chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tt, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}))
		open(t, tab, m.URL+"/boards/points/hour")
		assertRows(t, tab, testid(views.TestTable), pointsHour)
		// Without JavaScript the page says how it updates, not what it lacks.
		if got := textOf(t, tab, "#"+views.IDLiveStatus); got != "" {
			t.Errorf("live status without JavaScript = %q", got)
		}
		if got := textOf(t, tab, testid(views.TestLiveNoScript)); got != "Updated when you reload" {
			t.Errorf("no-script note = %q", got)
		}
		clickLink(t, tab, testid(views.TestViewTabs), "All time")
		assertPath(t, tab, "/boards/points/all", "")
		if rows := readRows(t, tab, testid(views.TestTable)); len(rows) != 7 {
			t.Errorf("all time without JavaScript shows %d rows, want 7", len(rows))
		}
		browsertest.Run(t, tab, "type in the member search", chromedp.SendKeys(chromedp.CSS(testid(views.TestSearch)), "lena"))
		click(t, tab, `form[role="search"] button[type="submit"]`)
		assertPath(t, tab, "/boards/points/all/members/lena", "", "period=all")
		if got := textOf(t, tab, testid(views.TestCardRank)); got != "#3" {
			t.Errorf("rank card without JavaScript: rank %q, want #3", got)
		}
	})
}

// mustBrowser starts one headless Chromium, of a desktop's window size,
// for the test.
func mustBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.MustBrowser(t, chromedp.WindowSize(1280, 800))
}

// open loads url in the tab and expects it to answer 200.
func open(t *testing.T, tab context.Context, url string) {
	t.Helper()
	res := browsertest.Run(t, tab, "open "+url, chromedp.NavigateResponse(url))
	if res == nil || res.Status != http.StatusOK {
		t.Fatalf("open %s: %v", url, statusOf(res))
	}
}

// click clicks the first element that sel matches, waits for the page it
// leads to and expects that page to answer 200.
func click(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	if !exists(t, tab, sel) {
		t.Fatalf("click: nothing matches %s on %s", sel, location(t, tab))
	}
	ctx, cancel := context.WithTimeout(tab, stepTimeout)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	if res == nil || res.Status != http.StatusOK {
		t.Fatalf("click %s: the page answered %s", sel, statusOf(res))
	}
}

// clickLink clicks the link inside scope whose text is label.
func clickLink(t *testing.T, tab context.Context, scope, label string) {
	t.Helper()
	hrefs := evalJS[[]string](t, tab, fmt.Sprintf(
		`Array.from(document.querySelectorAll(%s)).filter(a => a.innerText.trim() === %s).map(a => a.getAttribute("href"))`,
		jsString(scope+" a"), jsString(label)))
	if len(hrefs) != 1 {
		t.Fatalf("want one link %q in %s on %s, found %d", label, scope, location(t, tab), len(hrefs))
	}
	click(t, tab, scope+` a[href=`+jsString(hrefs[0])+`]`)
}

func statusOf(res *network.Response) string {
	if res == nil {
		return "no response"
	}
	return fmt.Sprintf("%d %s", res.Status, res.StatusText)
}

// evalJS evaluates a JavaScript expression in the tab's page and decodes
// its JSON value.
func evalJS[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	return browsertest.Run(t, tab, "evaluate "+expr, chromedp.Evaluate[T](expr))
}

// evalInFrame evaluates expr in an isolated world of one frame of the tab,
// so that it reads any frame, cross-origin and error pages included.
func evalInFrame[T any](t *testing.T, tab context.Context, frame cdp.FrameID, expr string) T {
	t.Helper()
	return browsertest.Run(t, tab, "evaluate in frame: "+expr, func(ctx context.Context, tt *chromedp.Target) (T, error) {
		var v T
		w, err := cdp.Call(ctx, tt, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: "standings-test"})
		if err != nil {
			return v, err
		}
		res, err := cdp.Call(ctx, tt, runtime.Evaluate, runtime.EvaluateParams{
			Expression: expr, ContextID: w.ExecutionContextID, ReturnByValue: new(true),
		})
		switch {
		case err != nil:
			return v, err
		case res.ExceptionDetails != nil:
			return v, fmt.Errorf("exception: %s", res.ExceptionDetails.Text)
		}
		err = json.Unmarshal(res.Result.Value, &v)
		return v, err
	})
}

// childFrames returns the tab's child frames by name.
func childFrames(t *testing.T, tab context.Context) map[string]*cdp.Frame {
	t.Helper()
	tree := browsertest.Run(t, tab, "read the frame tree", func(ctx context.Context, tt *chromedp.Target) (page.GetFrameTreeResult, error) {
		return cdp.Call(ctx, tt, page.GetFrameTree, cdp.Empty{})
	})
	frames := map[string]*cdp.Frame{}
	for _, c := range tree.FrameTree.ChildFrames {
		frames[c.Frame.Name] = c.Frame
	}
	return frames
}

// testid is the CSS selector of a data-testid value.
func testid(id string) string { return `[data-testid="` + id + `"]` }

// jsString quotes s as a JavaScript (and CSS) string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func exists(t *testing.T, tab context.Context, sel string) bool {
	t.Helper()
	return evalJS[bool](t, tab, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(sel)))
}

func assertAbsent(t *testing.T, tab context.Context, sel, what string) {
	t.Helper()
	if exists(t, tab, sel) {
		t.Errorf("%s: found %s on %s", what, sel, location(t, tab))
	}
}

// textOf is the visible text of the first element sel matches ("" when
// there is none).
func textOf(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return evalJS[string](t, tab, fmt.Sprintf(`(e => e ? e.innerText.trim() : "")(document.querySelector(%s))`, jsString(sel)))
}

func attrOf(t *testing.T, tab context.Context, sel, name string) string {
	t.Helper()
	return evalJS[string](t, tab, fmt.Sprintf(`(e => e ? (e.getAttribute(%s) || "") : "")(document.querySelector(%s))`, jsString(name), jsString(sel)))
}

func location(t *testing.T, tab context.Context) string {
	t.Helper()
	return browsertest.Run(t, tab, "read the location", chromedp.Location())
}

// assertPath checks the tab's path and query (one of queries).
func assertPath(t *testing.T, tab context.Context, path string, queries ...string) {
	t.Helper()
	u, err := url.Parse(location(t, tab))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != path || !slices.Contains(queries, u.RawQuery) {
		t.Errorf("at %s, want path %s and query one of %q", u.RequestURI(), path, queries)
	}
}

// row is one row of a standings table as a person reads it.
type row struct {
	Rank   string `json:"rank"`
	Member string `json:"member"`
	Name   string `json:"name"`
	Score  string `json:"score"`
	Href   string `json:"href"`
}

func (r row) String() string { return fmt.Sprintf("#%s %q (%q) %s", r.Rank, r.Name, r.Member, r.Score) }

// rowsJS reads the rows of the first table scope matches.
func rowsJS(scope string) string {
	return fmt.Sprintf(`(() => {
  const table = document.querySelector(%s);
  if (!table) return [];
  const text = (r, sel) => { const e = r.querySelector(sel); return e ? e.innerText.trim() : ""; };
  return Array.from(table.querySelectorAll(%s)).map(r => {
    const a = r.querySelector(%s);
    return {rank: text(r, %s), member: r.getAttribute("data-member") || "", name: a ? a.innerText.trim() : "",
      score: text(r, %s), href: a ? a.href : ""};
  });
})()`, jsString(scope), jsString(testid(views.TestRow)), jsString(testid(views.TestMember)+" a"),
		jsString(testid(views.TestRank)), jsString(testid(views.TestScore)))
}

func readRows(t *testing.T, tab context.Context, scope string) []row {
	t.Helper()
	return evalJS[[]row](t, tab, rowsJS(scope))
}

// sameRows compares what a person sees: rank, member, name and score.
func sameRows(got, want []row) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Rank != w.Rank || g.Member != w.Member || g.Name != w.Name || g.Score != w.Score {
			return false
		}
	}
	return true
}

func assertRows(t *testing.T, tab context.Context, scope string, want []row) {
	t.Helper()
	if got := readRows(t, tab, scope); !sameRows(got, want) {
		t.Errorf("rows of %s:\n got %v\nwant %v", location(t, tab), got, want)
	}
}

// assertTabs checks the view tabs' labels and which one is current.
func assertTabs(t *testing.T, tab context.Context, labels []string, current string) {
	t.Helper()
	type link struct {
		Label   string `json:"label"`
		Current bool   `json:"current"`
	}
	got := evalJS[[]link](t, tab, fmt.Sprintf(
		`Array.from(document.querySelectorAll(%s)).map(a => ({label: a.innerText.trim(), current: a.getAttribute("aria-current") === "page"}))`,
		jsString(testid(views.TestViewTabs)+" a")))
	var gotLabels, gotCurrent []string
	for _, l := range got {
		gotLabels = append(gotLabels, l.Label)
		if l.Current {
			gotCurrent = append(gotCurrent, l.Label)
		}
	}
	if strings.Join(gotLabels, "|") != strings.Join(labels, "|") || len(gotCurrent) != 1 || gotCurrent[0] != current {
		t.Errorf("tabs %q with current %q, want %q with current %q", gotLabels, gotCurrent, labels, current)
	}
}

// card is what a rank card's headline and views table say.
type card struct {
	Rank, Score, Top, Total, Gap string
	Views                        map[string]string // view label -> prefix of its rank cell
}

func assertCard(t *testing.T, tab context.Context, want card) {
	t.Helper()
	if got := textOf(t, tab, testid(views.TestCardRank)); got != want.Rank {
		t.Errorf("card rank = %q, want %q", got, want.Rank)
	}
	if got := textOf(t, tab, testid(views.TestCardScore)); got != want.Score {
		t.Errorf("card score = %q, want %q", got, want.Score)
	}
	if got := textOf(t, tab, testid(views.TestCardOf)); got != "of "+want.Total {
		t.Errorf("card rank of = %q, want of %s", got, want.Total)
	}
	if got := textOf(t, tab, testid(views.TestCardGap)); got != want.Gap {
		t.Errorf("card gap = %q, want %q", got, want.Gap)
	}
	lines := evalJS[[]string](t, tab, fmt.Sprintf(`Array.from(document.querySelectorAll(%s)).map(e => e.innerText.trim())`, jsString(testid(views.TestCardLine))))
	for _, l := range lines {
		if l == want.Gap {
			t.Errorf("card lines %q repeat the headline's gap %q", lines, want.Gap)
		}
	}
	if want.Top != "" && !slices.Contains(lines, want.Top) {
		t.Errorf("card lines %q, want one saying %q", lines, want.Top)
	}
	cells := evalJS[map[string]string](t, tab, fmt.Sprintf(`Object.fromEntries(Array.from(document.querySelectorAll(%s)).map(r => [r.getAttribute("data-view"), r.querySelector("td").innerText.trim()]))`,
		jsString(testid(views.TestCardViews)+" tbody tr")))
	for label, prefix := range want.Views {
		if !strings.HasPrefix(cells[label], prefix) {
			t.Errorf("card views: %s says %q, want %q", label, cells[label], prefix)
		}
	}
	// A chart needs two periods with a score; before that the card says so.
	if !exists(t, tab, "svg"+testid(views.TestChart)) && !exists(t, tab, testid(views.TestChartFew)) {
		t.Error("card has neither a score chart (svg) nor a word on why")
	}
}

// assertInert checks that no hostile markup ran or became an element.
func assertInert(t *testing.T, tab context.Context) {
	t.Helper()
	if pwned := evalJS[string](t, tab, `typeof window.__pwned`); pwned != "undefined" {
		t.Errorf("%s: window.__pwned is %s: a member name ran as script", location(t, tab), pwned)
	}
	injected := evalJS[[]string](t, tab, `Array.from(document.querySelectorAll('img[src="x"], svg[onload], [onerror], [onload], script:not([src])')).map(e => e.outerHTML)`)
	if len(injected) > 0 {
		t.Errorf("%s: member names became elements: %q", location(t, tab), injected)
	}
}

func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && ua.Host == ub.Host
}

// mustRunOwnRedis starts a redis-server of the test's own (so that no other
// test's data shows on the boards) and the real wiring on it with boards.
func mustRunOwnRedis(t *testing.T, boards string) *Main {
	t.Helper()
	return mustRunWith(t, mustOwnRedis(t).Addr, boards)
}

// mustRunWith runs the real wiring on the Redis at addr with a boards file
// holding boards.
func mustRunWith(t *testing.T, addr, boards string) *Main {
	t.Helper()
	path := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(path, []byte(boards), 0o600); err != nil {
		t.Fatal(err)
	}
	return MustRun(t, "--config", path, "--redis", "redis://"+addr)
}

// mustOwnRedis starts a redis-server for the test alone; it skips the test
// when Redis is missing (redistest.Main has already failed the run if Redis
// is required).
func mustOwnRedis(t *testing.T) *redistest.Server {
	t.Helper()
	if err := redistest.Available(); err != nil {
		t.Skipf("Redis not available: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	srv, err := redistest.StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

var apiClient = &http.Client{Timeout: stepTimeout}

// post sends a JSON body with the write key MustRun sets.
func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer test-key")
	req.Header.Set("Content-Type", "application/json")
	res, err := apiClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

func mustWrite(t *testing.T, m *Main, board string, ev map[string]any) {
	t.Helper()
	if code, body := post(t, m.URL+"/api/v1/boards/"+board+"/scores", ev); code != http.StatusOK {
		t.Fatalf("write %v to %s: %d %s", ev, board, code, body)
	}
}

// awayFromPeriodEnds returns boards in a time zone whose hours (and so
// days) end at least half an hour after now, Redis's clock at redisAddr,
// and now in that zone: UTC's hours end on the hour, Asia/Kolkata's
// (UTC+5:30) at half past. A test then reads the periods it wrote in from
// start to end, whatever the wall clock: a real Redis's clock, which decides
// periods, cannot be pinned.
func awayFromPeriodEnds(t *testing.T, redisAddr, boards string) (string, time.Time) {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer rdb.Close()
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatalf("Redis's clock: %v", err)
	}
	zone := "UTC"
	if now.UTC().Minute() >= 30 {
		zone = "Asia/Kolkata"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	return "timezone: " + zone + "\n" + boards, now.In(loc)
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// liveBoards: points sums scores (the default update), so a second write of
// a member adds to its score.
const liveBoards = `
boards:
  - id: points
    title: Points
    views: [day, all]
`

// liveWait bounds every wait for the live feed; a frame normally takes
// about one tick (200 ms).
const liveWait = 10 * time.Second

// TestLiveBrowser: two app instances on one Redis. Pages served by B follow
// scores posted through A, in place (no reload), in a real browser.
func TestLiveBrowser(t *testing.T) {
	browser := mustBrowser(t)
	redis := mustOwnRedis(t)
	// The day view must not roll over (which reloads the page) mid-test.
	boards, _ := awayFromPeriodEnds(t, redis.Addr, liveBoards)
	// Both instances read the same boards file, as a deployment would.
	config := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(config, []byte(boards), 0o600); err != nil {
		t.Fatal(err)
	}
	a := MustRun(t, "--config", config, "--redis", "redis://"+redis.Addr)
	b := MustRun(t, "--config", config, "--redis", "redis://"+redis.Addr)
	if a.URL == b.URL {
		t.Fatalf("both instances serve %s", a.URL)
	}
	mustWrite(t, a, "points", map[string]any{"member": "alice", "name": "Alice", "value": 50})
	mustWrite(t, a, "points", map[string]any{"member": "bob", "name": "Bob", "value": 40})

	// Each part builds on the scores of the one before: stop at the first
	// that fails rather than report its consequences.
	if !t.Run("board page", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		open(t, tab, b.URL+"/boards/points/day")
		table := "#" + views.TableID("points", "day", web.PageSize)
		if got := attrOf(t, tab, "#"+views.IDLiveStatus, "data-table"); "#"+got != table {
			t.Fatalf("the live status follows table %q, want %q", got, table)
		}
		assertRows(t, tab, table, []row{
			{Rank: "1", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "2", Member: "bob", Name: "Bob", Score: "40"},
		})
		waitLive(t, tab)
		markPage(t, tab)
		watchFlashes(t, tab)

		// A new member below the others: only its row flashes.
		mustWrite(t, a, "points", map[string]any{"member": "carol", "name": "Carol", "value": 30})
		browsertest.WaitJS(t, tab, liveWait, "carol appears on B's page", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(table+` tr[data-member="carol"]`)))
		assertRows(t, tab, table, []row{
			{Rank: "1", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "2", Member: "bob", Name: "Bob", Score: "40"},
			{Rank: "3", Member: "carol", Name: "Carol", Score: "30"},
		})
		assertFlashed(t, tab, table, map[string]bool{"carol": true, "alice": false, "bob": false})
		assertNotReloaded(t, tab)

		// A member overtakes: its row flashes; the row it pushes down
		// only slides, and the one that kept its place does neither.
		mustWrite(t, a, "points", map[string]any{"member": "bob", "value": 25})
		browsertest.WaitJS(t, tab, liveWait, "bob leads on B's page", fmt.Sprintf(`(document.querySelector(%s) || {}).dataset?.member === "bob"`,
			jsString(table+" "+testid(views.TestRow))))
		assertRows(t, tab, table, []row{
			{Rank: "1", Member: "bob", Name: "Bob", Score: "65"},
			{Rank: "2", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "3", Member: "carol", Name: "Carol", Score: "30"},
		})
		assertFlashed(t, tab, table, map[string]bool{"bob": true, "alice": false, "carol": false})
		assertNotReloaded(t, tab)
		if state := attrOf(t, tab, "#"+views.IDLiveStatus, "data-state"); state != "live" {
			t.Errorf("live status %q after updates, want live", state)
		}
	}) {
		return
	}

	if !t.Run("rank card", func(t *testing.T) {
		tab := browsertest.NewTab(t, browser)
		open(t, tab, b.URL+"/boards/points/day/members/carol")
		head := "#" + views.CardID("points", "day")
		rank, score := head+" "+testid(views.TestCardRank), head+" "+testid(views.TestCardScore)
		if got, got2 := textOf(t, tab, rank), textOf(t, tab, score); got != "#3" || got2 != "30" {
			t.Fatalf("carol's card on B: rank %q score %q, want #3 and 30", got, got2)
		}
		waitLive(t, tab)
		markPage(t, tab)

		mustWrite(t, a, "points", map[string]any{"member": "carol", "value": 40})
		browsertest.WaitJS(t, tab, liveWait, "carol's rank changes on B's card",
			fmt.Sprintf(`(e => !!e && e.innerText.trim() === "#1")(document.querySelector(%s))`, jsString(rank)))
		if got := textOf(t, tab, score); got != "70" {
			t.Errorf("card score %q after the write, want 70", got)
		}
		if got := textOf(t, tab, head+" "+testid(views.TestCardGap)); got == "" || strings.Contains(got, "to pass") {
			t.Errorf("card gap %q for the leader, want it to say carol leads", got)
		}
		if !evalJS[bool](t, tab, fmt.Sprintf(`document.querySelector(%s).classList.contains("changed")`, jsString(head+" dl.headline"))) {
			t.Error("the changed headline is not highlighted")
		}
		// The whole card is live from one snapshot: the neighbours agree
		// with the headline (carol's own row says #1 and 70 too).
		self := head + " " + testid(views.TestNeighbours) + " tr.self"
		if r, sc := textOf(t, tab, self+" "+testid(views.TestRank)), textOf(t, tab, self+" "+testid(views.TestScore)); r != "1" || sc != "70" {
			t.Errorf("the neighbours say carol is %q with %q while the headline says #1 with 70", r, sc)
		}
		assertNotReloaded(t, tab)
	}) {
		return
	}

	t.Run("embed", func(t *testing.T) {
		mustWrite(t, a, "points", map[string]any{"member": "erin", "value": 10})
		mustWrite(t, a, "points", map[string]any{"member": "frank", "value": 5})
		mustWrite(t, a, "points", map[string]any{"member": "gus", "value": 1})
		tab := browsertest.NewTab(t, browser)
		open(t, tab, b.URL+"/embed/points/all?limit=5")
		table := "#" + views.TableID("points", "all", 5)
		assertRows(t, tab, table, []row{
			{Rank: "1", Member: "carol", Name: "Carol", Score: "70"},
			{Rank: "2", Member: "bob", Name: "Bob", Score: "65"},
			{Rank: "3", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "4", Member: "erin", Name: "erin", Score: "10"},
			{Rank: "5", Member: "frank", Name: "frank", Score: "5"},
		})
		waitLive(t, tab)
		markPage(t, tab)
		watchFlashes(t, tab)

		mustWrite(t, a, "points", map[string]any{"member": "dora", "name": "Dora", "value": 60})
		browsertest.WaitJS(t, tab, liveWait, "dora appears in B's widget", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(table+` tr[data-member="dora"]`)))
		// Still five rows: frank drops out.
		assertRows(t, tab, table, []row{
			{Rank: "1", Member: "carol", Name: "Carol", Score: "70"},
			{Rank: "2", Member: "bob", Name: "Bob", Score: "65"},
			{Rank: "3", Member: "dora", Name: "Dora", Score: "60"},
			{Rank: "4", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "5", Member: "erin", Name: "erin", Score: "10"},
		})
		// Only the new row flashes; the rows it pushes down slide.
		assertFlashed(t, tab, table, map[string]bool{"dora": true, "alice": false, "erin": false, "carol": false, "bob": false})
		assertNotReloaded(t, tab)
	})
}

// waitLive waits for the page's live status to say it follows the feed.
func waitLive(t *testing.T, tab context.Context) {
	t.Helper()
	browsertest.WaitJS(t, tab, liveWait, "the page goes live", fmt.Sprintf(`(e => !!e && e.dataset.state === "live")(document.getElementById(%s))`, jsString(views.IDLiveStatus)))
}

// markPage sets a marker that a reload would lose.
func markPage(t *testing.T, tab context.Context) {
	t.Helper()
	browsertest.Run(t, tab, "mark the page", chromedp.Evaluate[int](`window.__marker = 1`))
}

func assertNotReloaded(t *testing.T, tab context.Context) {
	t.Helper()
	if marker := evalJS[int](t, tab, `window.__marker || 0`); marker != 1 {
		t.Error("the page reloaded instead of updating in place")
	}
}

// watchFlashes records, in the page, each row that flashes (.scored: its
// score changed) until assertFlashed reads and forgets them; the flash
// itself lasts 1.6 s, which a slow test could miss.
func watchFlashes(t *testing.T, tab context.Context) {
	t.Helper()
	evalJS[bool](t, tab, `(() => {
		window.__flashed = {};
		const flash = (tr, was) => {
			if (tr.matches && tr.matches("tr[data-member]") && tr.classList.contains("scored") && !/\bscored\b/.test(was || "")) window.__flashed[tr.dataset.member] = true;
		};
		new MutationObserver(ms => ms.forEach(m => {
			if (m.type === "attributes") flash(m.target, m.oldValue);
			m.addedNodes.forEach(n => flash(n, ""));
		})).observe(document.body, {subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ["class"], childList: true});
		return true;
	})()`)
}

// assertFlashed checks which rows of a table flashed since the last check
// (rows that are new flash as they appear).
func assertFlashed(t *testing.T, tab context.Context, table string, want map[string]bool) {
	t.Helper()
	got := evalJS[map[string]bool](t, tab, fmt.Sprintf(
		`(() => { const f = Object.fromEntries(Array.from(document.querySelectorAll(%s)).map(r => [r.dataset.member, !!window.__flashed[r.dataset.member]])); window.__flashed = {}; return f; })()`,
		jsString(table+" tr[data-member]")))
	for member, flashed := range want {
		if m, ok := got[member]; !ok || m != flashed {
			t.Errorf("row %s: flashed=%v (present %v), want flashed=%v", member, m, ok, flashed)
		}
	}
}

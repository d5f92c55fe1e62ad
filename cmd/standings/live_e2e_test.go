package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/standings/standings/views"
)

const liveBoards = `
boards:
  - id: points
    title: Points
    views: [day, all]
`

// TestLiveBrowser: two app instances on one Redis. Pages served by B follow
// scores posted through A, without reloading, in a real browser.
func TestLiveBrowser(t *testing.T) {
	browser := mustBrowser(t)
	redis := mustOwnRedis(t)
	a := mustRunWith(t, redis.Addr, liveBoards)
	b := mustRunWith(t, redis.Addr, liveBoards)
	mustWrite(t, a, "points", map[string]any{"member": "alice", "name": "Alice", "value": 50})
	mustWrite(t, a, "points", map[string]any{"member": "bob", "name": "Bob", "value": 40})

	t.Run("board page", func(t *testing.T) {
		tab := newTab(t, browser)
		open(t, tab, b.URL+"/boards/points/day")
		run(t, tab, "wait for live", chromedp.Poll[bool](`document.getElementById(`+jsString(views.IDLiveStatus)+`).dataset.state === "live"`, chromedp.WithPollingTimeout(10*time.Second)))
		run(t, tab, "mark the page", chromedp.Evaluate[int](`window.__marker = 1`))
		mustWrite(t, a, "points", map[string]any{"member": "carol", "name": "Carol", "value": 60})
		run(t, tab, "carol appears", chromedp.Poll[bool](`!!document.querySelector('tr[data-member="carol"]')`, chromedp.WithPollingTimeout(10*time.Second)))
		if marker := evalJS[int](t, tab, `window.__marker || 0`); marker != 1 {
			t.Error("the page reloaded instead of updating in place")
		}
		assertRows(t, tab, testid(views.TestTable), []row{
			{Rank: "1", Member: "carol", Name: "Carol", Score: "60"},
			{Rank: "2", Member: "alice", Name: "Alice", Score: "50"},
			{Rank: "3", Member: "bob", Name: "Bob", Score: "40"},
		})
		if !evalJS[bool](t, tab, `document.querySelector('tr[data-member="carol"]').classList.contains("moved")`) {
			t.Error("the new row is not highlighted")
		}
		if !evalJS[bool](t, tab, `document.querySelector('tr[data-member="bob"]').classList.contains("moved")`) {
			t.Error("bob moved from #2 to #3 and is not highlighted")
		}
	})

	t.Run("rank card", func(t *testing.T) {
		tab := newTab(t, browser)
		open(t, tab, b.URL+"/boards/points/day/members/bob")
		run(t, tab, "wait for live", chromedp.Poll[bool](`document.getElementById(`+jsString(views.IDLiveStatus)+`).dataset.state === "live"`, chromedp.WithPollingTimeout(10*time.Second)))
		run(t, tab, "mark the page", chromedp.Evaluate[int](`window.__marker = 1`))
		mustWrite(t, a, "points", map[string]any{"member": "bob", "value": 100})
		sel := jsString("#" + views.CardID("points", "day") + " " + testid(views.TestCardRank))
		run(t, tab, "bob's rank changes", chromedp.Poll[bool](`document.querySelector(`+sel+`).textContent.trim() === "#1"`, chromedp.WithPollingTimeout(10*time.Second)))
		if got := textOf(t, tab, testid(views.TestCardScore)); got != "140" {
			t.Errorf("score %q, want 140", got)
		}
		if marker := evalJS[int](t, tab, `window.__marker || 0`); marker != 1 {
			t.Error("the card reloaded instead of updating in place")
		}
	})

	t.Run("embed", func(t *testing.T) {
		tab := newTab(t, browser)
		open(t, tab, b.URL+"/embed/points/all?limit=5")
		run(t, tab, "wait for live", chromedp.Poll[bool](`document.getElementById(`+jsString(views.IDLiveStatus)+`).dataset.state === "live"`, chromedp.WithPollingTimeout(10*time.Second)))
		mustWrite(t, a, "points", map[string]any{"member": "dora", "name": "Dora", "value": 500})
		run(t, tab, "dora leads", chromedp.Poll[bool](fmt.Sprintf(`(document.querySelector(%s) || {}).dataset?.member === "dora"`, jsString(testid(views.TestRow))), chromedp.WithPollingTimeout(10*time.Second)))
	})
}

package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/static"
	"github.com/standings/standings/views"
)

// TestDiffFramesPatchTheTableInChromium: static/app.js itself, in
// Chromium, applies the live frames of random workloads (those of
// TestDiffFramesRebuildTheWholeFragment: a whole fragment first, then
// diffs, and a whole fragment whenever a diff cannot say the change) as
// they come over a websocket. After every frame the table it shows equals
// the whole fragment of that moment: rows in order with their ranks, rank
// changes, names, scores and zone lines, the ticker and the caption.
// What the script adds of its own (a flash, a score badge) is left out,
// and no diff may send the page back for a whole table. The Go model of
// the page (livemodel_test.go) mirrors the script; this checks the script.
// A league group's table, which goes whole every frame, is checked the
// same way: its rows, zones, outcomes and the round's status.
func TestDiffFramesPatchTheTableInChromium(t *testing.T) {
	t.Parallel() // its own Chromium and its own server
	tab := browsertest.MustBrowser(t)
	feed := &frameFeed{}
	srv := httptest.NewServer(feed)
	t.Cleanup(srv.Close)
	const steps = 200
	randomTableRuns(t, func(t *testing.T, b *ranking.Board, r *randomTables) {
		first, prev := r.step(t)
		diffs := 0
		playFrames(t, tab, srv.URL, feed, first, steps, func() (frame, full []byte) {
			full, st := r.step(t)
			frame = diffOf(prev, st)
			if frame == nil {
				frame = full
			} else {
				diffs++
			}
			prev = st
			return frame, full
		})
		if diffs < steps*3/4 {
			t.Errorf("%d of %d frames were diffs: the workload misses the case", diffs, steps)
		}
	})
	seed := rand.Uint64()
	t.Run(fmt.Sprintf("league group/seed=%d", seed), func(t *testing.T) {
		r := &randomCohort{rng: rand.New(rand.NewPCG(seed, 8)), scores: map[string]int64{}}
		statuses := 0
		playFrames(t, tab, srv.URL, feed, r.step(t), steps, func() (frame, full []byte) {
			full = r.step(t)
			if r.status != "" {
				statuses++
			}
			return full, full
		})
		if statuses == 0 || statuses == steps {
			t.Errorf("the round's status showed in %d of %d frames: the workload misses the case", statuses, steps)
		}
	})
}

// playFrames opens a live page showing first, sends it as the feed's first
// frame, then steps frames of next, and fails t when, after any of them,
// the page's table differs from the whole fragment (full) of that moment,
// or when the page connected again (it asks for a whole table so when a
// diff does not fit it).
func playFrames(t *testing.T, tab context.Context, url string, feed *frameFeed, first []byte, steps int, next func() (frame, full []byte)) {
	t.Helper()
	frames := feed.start(string(first))
	browsertest.Run(t, tab, "open the page", chromedp.Navigate(url+"/page"))
	browsertest.WaitJS(t, tab, 10*time.Second, "the live feed", `document.getElementById("live-status").dataset.state === "live"`)
	browsertest.Run(t, tab, "the probe", chromedp.Evaluate[chromedp.Void](diffProbe))
	check := func(i int, frame, full []byte) {
		t.Helper()
		select {
		case frames <- string(frame):
		case <-time.After(browsertest.Step):
			t.Fatalf("frame %d: the page's feed is not listening", i)
		}
		why := browsertest.Run(t, tab, fmt.Sprintf("frame %d", i),
			chromedp.Evaluate[string](fmt.Sprintf(`window.__diffCheck(%d, %s)`, i+1, jsonString(full)), chromedp.EvalAwaitPromise))
		if why != "" {
			t.Fatalf("after frame %d (diff %v): %s\nframe %s", i, frame[0] == '{', why, frame)
		}
	}
	check(0, first, first) // the hub's first frame is whole
	for i := 1; i <= steps; i++ {
		frame, full := next()
		check(i, frame, full)
	}
	if n := feed.connections(); n != 1 {
		t.Errorf("the page connected %d times: a diff sent it back for a whole table", n)
	}
}

// randomCohort is a random workload of a league group's live table: up to
// 12 members score, join and leave; the zones follow; the round's status
// comes and goes (the table never turns final, which reloads the page).
type randomCohort struct {
	rng    *rand.Rand
	scores map[string]int64
	status string
}

func (r *randomCohort) step(t testing.TB) []byte {
	t.Helper()
	for range 1 + r.rng.IntN(3) {
		m := fmt.Sprintf("m%02d", r.rng.IntN(12))
		if r.rng.IntN(8) == 0 {
			delete(r.scores, m)
		} else {
			r.scores[m] += r.rng.Int64N(300)
		}
	}
	if r.rng.IntN(15) == 0 {
		if r.status == "" {
			r.status = "This round is over. Outcomes are being decided and appear here shortly."
		} else {
			r.status = ""
		}
	}
	members := slices.Collect(maps.Keys(r.scores))
	slices.SortFunc(members, func(a, b string) int {
		if c := cmp.Compare(r.scores[b], r.scores[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	tb := views.CohortTable{Heading: "Gold league · group 1", Status: r.status}
	n := len(members)
	for i, m := range members {
		row := views.CohortRow{Row: views.Row{Rank: int64(i + 1), Member: m, Name: "Member " + m, Score: fmt.Sprint(r.scores[m]), CardURL: "/c/" + m, Initials: "M", Hue: hue(m)}, Zone: "safe", ZoneText: "Stays"}
		switch {
		case n >= 6 && i < 3:
			row.Zone, row.ZoneText = "promotion", "Moves up"
		case n >= 6 && i >= n-2:
			row.Zone, row.ZoneText = "demotion", "Moves down"
		}
		switch {
		case n >= 6 && i == 2:
			row.LineAfter = "promotion"
		case n >= 6 && i == n-3:
			row.LineAfter = "demotion"
		}
		tb.Rows = append(tb.Rows, row)
	}
	return []byte(mustString(t, views.CohortLive(tb)))
}

// diffProbe counts standings:frame events, and defines
// window.__diffCheck(n, html): once n frames came, "" when the live table
// shows what the whole fragment html shows, else the first difference.
// Both sides are written out alike: attributes sorted, the classes the
// script adds (a flash, "me", friends) and its own nodes (a score badge)
// left out.
const diffProbe = `(() => {
	const p = window.__probe = {frames: 0};
	document.addEventListener("standings:frame", () => { p.frames++; });
	const client = ["scored", "changed", "me", "friend"];
	const ser = n => {
		if (n.nodeType === 3) return n.nodeValue;
		if (n.nodeType !== 1 || n.standingsKeep) return "";
		const attrs = Array.from(n.attributes, a => {
			if (a.name !== "class") return [a.name, a.value];
			return [a.name, a.value.split(/\s+/).filter(c => c && !client.includes(c)).sort().join(" ")];
		}).filter(a => !(a[0] === "class" && a[1] === "")).sort((a, b) => a[0] < b[0] ? -1 : 1);
		return "<" + n.nodeName.toLowerCase() + attrs.map(a => " " + a[0] + "=" + JSON.stringify(a[1])).join("") + ">" +
			Array.from(n.childNodes, ser).join("") + "</" + n.nodeName.toLowerCase() + ">";
	};
	const compare = html => {
		const tpl = document.createElement("template");
		tpl.innerHTML = html;
		const want = tpl.content.firstElementChild;
		const got = want && document.getElementById(want.id);
		if (!got) return "no element for " + (want ? want.id : "the fragment");
		if (ser(got) === ser(want)) return "";
		const gr = got.querySelectorAll("tr[data-member]"), wr = want.querySelectorAll("tr[data-member]");
		for (let i = 0; i < Math.max(gr.length, wr.length); i++) {
			const a = gr[i] ? ser(gr[i]) : "(no row)", b = wr[i] ? ser(wr[i]) : "(no row)";
			if (a !== b) return "row " + i + " of " + gr.length + " (want " + wr.length + "):\n" + a + "\nwant\n" + b;
		}
		return "the table:\n" + ser(got) + "\nwant\n" + ser(want);
	};
	window.__diffCheck = (n, html) => new Promise(resolve => {
		const until = Date.now() + 10000;
		const poll = () => {
			if (p.frames >= n) return resolve(compare(html));
			const state = document.getElementById("live-status").dataset.state;
			if (state !== "live") return resolve("the feed is " + state + " after " + p.frames + " frames");
			if (Date.now() > until) return resolve("only " + p.frames + " frames came");
			setTimeout(poll, 1);
		};
		poll();
	});
})()`

// frameFeed serves a page holding a live table, static/app.js, and the
// page's websocket, which sends the frames of the latest start.
type frameFeed struct {
	mu     sync.Mutex
	page   string
	frames chan string
	conns  int
}

// start serves a page showing the whole fragment first, and returns where
// its frames go.
func (f *frameFeed) start(first string) chan<- string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Live</title>` +
		`<script src="/static/app.js" defer></script></head><body>` +
		`<span id="live-status" data-ws="/ws/b/day"></span><main id="main">` + first + `</main></body></html>`
	f.frames = make(chan string)
	f.conns = 0
	return f.frames
}

func (f *frameFeed) connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}

func (f *frameFeed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/page":
		f.mu.Lock()
		page := f.page
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	case "/static/app.js":
		js, err := fs.ReadFile(static.FS, "app.js")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(js)
	case "/ws/b/day":
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		f.mu.Lock()
		f.conns++
		frames := f.frames
		f.mu.Unlock()
		ctx := c.CloseRead(r.Context())
		for {
			select {
			case <-ctx.Done():
				return
			case frame := <-frames:
				wctx, cancel := context.WithTimeout(ctx, browsertest.Step)
				err := c.Write(wctx, websocket.MessageText, []byte(frame))
				cancel()
				if err != nil {
					return
				}
			}
		}
	default:
		http.NotFound(w, r)
	}
}

// jsonString is s as a JavaScript string literal.
func jsonString(s []byte) string {
	out, _ := json.Marshal(string(s)) // a string always encodes
	return string(out)
}

package web

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// fakeRender counts renders by topic and renders the key itself; members
// in ranked render as ranked, any other member as not ranked.
type fakeRender struct {
	mu      sync.Mutex
	renders map[topicKey]int
	looked  [][]string // members of each Scored call
	ranked  map[string]bool
	version int // bumped to make every render differ
}

func newFakeRender() *fakeRender {
	return &fakeRender{renders: map[topicKey]int{}, ranked: map[string]bool{}}
}

func (f *fakeRender) render(_ context.Context, key topicKey) (rendered, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renders[key]++
	if key.notRanked || (key.member != "" && !f.ranked[key.member]) {
		return rendered{frame: []byte("not ranked")}, nil
	}
	return rendered{frame: fmt.Appendf(nil, "%v v%d", key, f.version), ranked: true}, nil
}

func (f *fakeRender) scored(_ context.Context, _, _ string, _ ranking.Segment, members []string) ([]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looked = append(f.looked, slices.Clone(members))
	out := make([]bool, len(members))
	for i, m := range members {
		out[i] = f.ranked[m]
	}
	return out, nil
}

func (f *fakeRender) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.renders {
		n += r
	}
	return n
}

// MustHub is a hub that is not started: the test calls tickNow, so that
// nothing depends on timing.
func MustHub(tb testing.TB, f *fakeRender, maxRenders int) *hub {
	tb.Helper()
	h := newHub(f.render, f.scored, nil, hubLimits{tick: time.Nanosecond, maxRenders: maxRenders, maxConns: 1 << 20, maxPerClient: 1 << 20},
		slog.New(slog.DiscardHandler), newMetrics())
	tb.Cleanup(h.close)
	return h
}

// tickNow is one tick: a fresh budget, then a flush.
func (h *hub) tickNow() {
	h.mu.Lock()
	h.budget = h.limits.maxRenders
	h.mu.Unlock()
	h.flush(context.Background(), false)
}

// joinNew adds a new client to key.
func (h *hub) joinNew(tb testing.TB, key topicKey) *client {
	tb.Helper()
	c := newClient()
	if !h.join(key, c) {
		tb.Fatal("join refused")
	}
	tb.Cleanup(func() { h.leave(c); h.wg.Done() })
	return c
}

// take returns the whole fragment waiting in c's mailbox, or "" when none.
func (c *client) take() string {
	select {
	case f := <-c.mailbox:
		return string(f.full)
	default:
		return ""
	}
}

func TestHubRenderBudgetServesWatchedAndOldestFirst(t *testing.T) {
	f := newFakeRender()
	const budget, topics = 4, 30
	h := MustHub(t, f, budget)
	var clients []*client
	for i := range topics {
		clients = append(clients, h.joinNew(t, topicKey{board: "b", view: "day", member: fmt.Sprintf("m%d", i)}))
	}
	f.mu.Lock()
	for i := range topics {
		f.ranked[fmt.Sprintf("m%d", i)] = true
	}
	f.mu.Unlock()
	// A board's top 10, watched by more than any one member's card.
	top := h.joinNew(t, topicKey{board: "b", view: "day", limit: 10})
	h.joinNew(t, topicKey{board: "b", view: "day", limit: 10})
	// Every tick everything changes: still at most the budget renders a
	// tick, the watched table renders every tick, and every member topic
	// within ceil(topics/(budget/2)) ticks.
	waited := make([]int, topics)
	worst := 0
	for tick := range 5 * topics / budget {
		f.mu.Lock()
		f.version++
		f.mu.Unlock()
		h.markAll()
		before := f.total()
		h.tickNow()
		if n := f.total() - before; n > budget {
			t.Fatalf("tick %d: %d renders, budget %d", tick, n, budget)
		}
		if tick > topics/budget && top.take() == "" {
			// (the first ticks sort the member viewers out of the
			// shared not-ranked topic)
			t.Errorf("tick %d: no frame for the top 10", tick)
		}
		for i, c := range clients {
			if c.take() != "" {
				waited[i] = 0
			} else {
				waited[i]++
				worst = max(worst, waited[i])
			}
		}
	}
	if limit := (topics + budget/2 - 1) / (budget / 2); worst > limit {
		t.Errorf("a topic waited %d ticks for a render; with %d topics and %d a tick none should wait over %d", worst, topics, budget, limit)
	}
}

func TestHubNotRankedViewersShareOneTopic(t *testing.T) {
	f := newFakeRender()
	h := MustHub(t, f, 64)
	table := h.joinNew(t, topicKey{board: "b", view: "day", limit: 10})
	const ghosts = 2500
	var cs []*client
	for i := range ghosts {
		cs = append(cs, h.joinNew(t, topicKey{board: "b", view: "day", member: fmt.Sprintf("ghost-%d", i)}))
	}
	// Several viewers of one member count once.
	twin := h.joinNew(t, topicKey{board: "b", view: "day", member: "ghost-7"})
	for tick := range 6 {
		f.mu.Lock()
		f.version++
		f.mu.Unlock()
		before := f.total()
		h.markChanged(changeOf("b", "day"))
		h.tickNow()
		if n := f.total() - before; n > 2 {
			t.Fatalf("tick %d: %d renders for a table and %d not-ranked viewers", tick, n, ghosts)
		}
		if table.take() == "" {
			t.Fatalf("tick %d: no frame for the table viewer", tick)
		}
	}
	// Every member was looked up, new ones first, and never more than
	// scoredPerCheck at once.
	seen := map[string]bool{}
	for _, call := range f.looked {
		if len(call) > scoredPerCheck {
			t.Fatalf("%d members in one look-up", len(call))
		}
		for _, m := range call {
			seen[m] = true
		}
	}
	if len(seen) != ghosts {
		t.Fatalf("%d members looked up, want %d", len(seen), ghosts)
	}
	for i, c := range append(cs, twin) {
		if got := c.take(); got != "not ranked" {
			t.Fatalf("ghost %d: frame %q", i, got)
		}
	}
	if len(h.topics) != 2 {
		t.Errorf("%d topics, want the table and one not-ranked topic", len(h.topics))
	}

	// ghost-7 scores: both its viewers get its own headline within a few
	// ticks (a sweep of the ring takes ghosts/scoredPerCheck ticks).
	f.mu.Lock()
	f.ranked["ghost-7"] = true
	f.mu.Unlock()
	h.markChanged(changeOf("b", "day"))
	for range ghosts/scoredPerCheck + 2 {
		h.tickNow()
	}
	for _, c := range []*client{cs[7], twin} {
		if got := c.take(); !strings.Contains(got, "ghost-7") {
			t.Errorf("ghost-7's viewer got %q", got)
		}
	}
	if cs[8].take() != "" {
		t.Errorf("another ghost got a frame")
	}

	// Removed again (or a new period): back to the shared topic.
	f.mu.Lock()
	f.ranked["ghost-7"] = false
	f.mu.Unlock()
	h.markChanged(changeOf("b", "day"))
	h.tickNow()
	if got := twin.take(); got != "not ranked" {
		t.Errorf("after the member lost its score: %q", got)
	}
	if len(h.topics) != 2 {
		t.Errorf("%d topics after the member lost its score", len(h.topics))
	}
}

func TestHubForgetsLeavingViewers(t *testing.T) {
	f := newFakeRender()
	h := MustHub(t, f, 64)
	var cs []*client
	for i := range 300 {
		c := newClient()
		h.join(topicKey{board: "b", view: "day", member: fmt.Sprintf("g%d", i)}, c)
		cs = append(cs, c)
	}
	h.tickNow()
	for _, c := range cs {
		h.leave(c)
		h.wg.Done()
	}
	if len(h.topics) != 0 || len(h.byView) != 0 {
		t.Errorf("%d topics, %d views left", len(h.topics), len(h.byView))
	}
	before := f.total()
	h.markAll()
	h.tickNow()
	if f.total() != before {
		t.Errorf("renders with nobody watching")
	}
}

func changeOf(board, view string) ranking.Change {
	return ranking.Change{Board: board, Periods: []ranking.ViewPeriod{{View: view, Period: "p"}}}
}

func TestHubRefusalsInHandshakeAreBounded(t *testing.T) {
	h := MustHub(t, newFakeRender(), 64)
	var dones []func()
	for range maxRefusing {
		done, ok := h.refuse()
		if !ok {
			t.Fatalf("refusal %d turned away", len(dones)+1)
		}
		dones = append(dones, done)
	}
	if _, ok := h.refuse(); ok {
		t.Fatal("more refusals in their handshake than maxRefusing")
	}
	dones[0]()
	if _, ok := h.refuse(); !ok {
		t.Fatal("a finished refusal did not free its place")
	}
}

func TestHubAdmitCountsPerClientAndTotal(t *testing.T) {
	h := newHub(nil, nil, nil, hubLimits{tick: time.Second, maxRenders: 1, maxConns: 3, maxPerClient: 2}, slog.New(slog.DiscardHandler), newMetrics())
	for _, step := range []struct {
		addr   string
		ok     bool
		reason string
	}{
		{"a", true, ""}, {"a", true, ""}, {"a", false, reasonPerClient},
		{"b", true, ""}, {"c", false, reasonTotal},
	} {
		if ok, reason := h.admit(step.addr); ok != step.ok || reason != step.reason {
			t.Fatalf("admit %s: %v %q, want %v %q", step.addr, ok, reason, step.ok, step.reason)
		}
	}
	h.release("a")
	if ok, _ := h.admit("c"); !ok {
		t.Fatal("a released slot was not free")
	}
	h.release("b")
	h.release("c")
	h.release("a")
	if h.conns != 0 || len(h.perClient) != 0 {
		t.Errorf("%d connections, %v left", h.conns, h.perClient)
	}
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.7":          "203.0.113.7",
		"::ffff:203.0.113.7":   "203.0.113.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := clientKey(in); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHubSegmentTopics: a segment board's topics are their own; a change
// names the segment boards it touched, and only their topics (and the
// board's own, when named) render again.
func TestHubSegmentTopics(t *testing.T) {
	f := newFakeRender()
	h := MustHub(t, f, 64)
	fr := ranking.Segment{Name: "country", Value: "FR"}
	de := ranking.Segment{Name: "country", Value: "DE"}
	whole := h.joinNew(t, topicKey{board: "b", view: "day", limit: 10})
	frTop := h.joinNew(t, topicKey{board: "b", view: "day", segment: fr, limit: 10})
	deTop := h.joinNew(t, topicKey{board: "b", view: "day", segment: de, limit: 10})
	h.tickNow()
	for _, c := range []*client{whole, frTop, deTop} {
		if c.take() == "" {
			t.Fatal("no snapshot")
		}
	}
	if len(h.topics) != 3 {
		t.Fatalf("%d topics, want 3", len(h.topics))
	}
	f.version++
	h.markChanged(ranking.Change{Board: "b", Periods: []ranking.ViewPeriod{{View: "day", Period: "2026-01-01"}, {View: "day", Period: "2026-01-01", Segment: de}}})
	h.tickNow()
	if whole.take() == "" || deTop.take() == "" {
		t.Error("the board and DE did not get the change")
	}
	if got := frTop.take(); got != "" {
		t.Errorf("FR got a frame for a DE change: %q", got)
	}
	if n := f.renders[topicKey{board: "b", view: "day", segment: fr, limit: 10}]; n != 1 {
		t.Errorf("FR rendered %d times, want 1 (its snapshot)", n)
	}
}

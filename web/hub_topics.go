package web

// The live hub's topics: what viewers watch, how changes mark them dirty,
// and how a topic gains and loses viewers (hub.go has the loop).

import (
	"slices"
	"time"

	"github.com/standings/standings/ranking"
)

// topicKey names one live fragment: a board view's top limit rows, one
// member's rank card headline in the current period (member set), or the
// headline every member without a score there shares (notRanked), each
// on the board itself or on one of its segment boards (segment set); or
// a league group's table (cohort set, view empty).
type topicKey struct {
	board, view string
	segment     ranking.Segment
	limit       int
	member      string
	notRanked   bool
	cohort      cohortAddr
}

// cohortAddr is a league group of one round, as a live topic: its table
// as the group page shows it, or as the league widget does (widget).
// The round is always named, so that a topic never slides into the next
// round's group of the same number.
type cohortAddr struct {
	round, tier string
	number      int
	widget      bool
}

// isCohort says whether a topic is a league group's table.
func (k topicKey) isCohort() bool { return k.cohort.number > 0 }

// boardCohorts is the board view under which a board's group topics are
// indexed: a change of any of the board's views may have placed or scored
// a member of any of its groups (the league's round is not one of the
// views a change names).
func boardCohorts(board string) boardView { return boardView{board: board} }

// boardView is the part of a topic key that a change names.
type boardView struct {
	board, view string
	segment     ranking.Segment
}

// viewOf is the board view (of the board or a segment board) of a topic.
func (k topicKey) viewOf() boardView { return boardView{k.board, k.view, k.segment} }

// notRankedKey is the shared "not ranked" topic of a board view.
func notRankedKey(bv boardView) topicKey {
	return topicKey{board: bv.board, view: bv.view, segment: bv.segment, notRanked: true}
}

// topic is a fragment with at least one viewer.
type topic struct {
	key      topicKey
	clients  map[*client]struct{}
	dirty    bool        // something changed since the last render
	since    time.Time   // when it became dirty: the oldest renders first
	frame    *frame      // the last render, sent to every viewer
	table    *tableState // what frame shows of a table, for the next diff
	rendered time.Time   // when the last render ended (zero: never)
	pending  []*client   // joined since the last render; owe a snapshot

	// A notRanked topic follows, for each member its viewers asked for,
	// whether that member has started scoring: members are looked up in
	// batches, new ones first, then round the ring after every change.
	watched   map[string]*watch
	fresh     []string // members not looked up yet
	ring      []string // every watched member (and some gone: stale)
	cursor    int      // next ring position to look up
	sweepLeft int      // ring positions still to look up since the last change
	stale     int      // ring entries of members nobody watches any more
}

// watch is the viewers of one member in a notRanked topic.
type watch struct {
	clients map[*client]struct{}
	settled bool // looked up and without a score: its viewers get the frame
}

// markChanged marks the topics of the changed board views dirty.
func (h *hub) markChanged(ch ranking.Change) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, vp := range ch.Periods {
		for t := range h.byView[boardView{ch.Board, vp.View, vp.Segment}] {
			t.mark(now)
		}
	}
	for t := range h.byView[boardCohorts(ch.Board)] {
		t.mark(now)
	}
}

func (h *hub) markAll() {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.topics {
		t.mark(now)
	}
}

// mark makes a topic dirty; a notRanked one looks all its members up again
// (any of them may be the one that just scored).
func (t *topic) mark(now time.Time) {
	if t.key.notRanked {
		t.sweepLeft = len(t.ring)
	}
	if !t.dirty {
		t.dirty, t.since = true, now
	}
}

// due says whether a dirty topic renders now: a topic that never rendered
// at once (onlyNew: a wake-up for those), any other once a tick.
func (t *topic) due(now time.Time, tick time.Duration, onlyNew bool) bool {
	switch {
	case !t.dirty:
		return false
	case t.rendered.IsZero():
		return true
	case onlyNew:
		return false
	}
	return now.Sub(t.rendered) >= tick-tick/10
}

// pick takes up to k members to look up: new ones first, then the next
// ones round the ring while a sweep is under way.
func (t *topic) pick(k int) []string {
	var out []string
	seen := map[string]struct{}{}
	take := func(m string) {
		if _, ok := t.watched[m]; !ok {
			return // nobody watches it any more
		}
		if _, dup := seen[m]; !dup {
			seen[m] = struct{}{}
			out = append(out, m)
		}
	}
	i := 0
	for ; i < len(t.fresh) && len(out) < k; i++ {
		take(t.fresh[i])
	}
	t.fresh = slices.Clip(t.fresh[i:])
	for t.sweepLeft > 0 && len(out) < k && len(t.ring) > 0 {
		t.sweepLeft--
		if t.cursor >= len(t.ring) {
			t.cursor = 0
		}
		take(t.ring[t.cursor])
		t.cursor++
	}
	return out
}

// topicFor returns the topic of key, creating it (dirty, to render at once).
func (h *hub) topicFor(key topicKey) *topic {
	if t, ok := h.topics[key]; ok {
		return t
	}
	t := &topic{key: key, clients: map[*client]struct{}{}, dirty: true, since: time.Now()}
	if key.notRanked {
		t.watched = map[string]*watch{}
	}
	h.topics[key] = t
	bv := key.viewOf()
	if h.byView[bv] == nil {
		h.byView[bv] = map[*topic]struct{}{}
	}
	h.byView[bv][t] = struct{}{}
	select {
	case h.wake <- struct{}{}:
	default:
	}
	return t
}

// forget deletes a topic; nothing renders for it any more.
func (h *hub) forget(t *topic) {
	delete(h.topics, t.key)
	bv := t.key.viewOf()
	delete(h.byView[bv], t)
	if len(h.byView[bv]) == 0 {
		delete(h.byView, bv)
	}
}

// watchOf returns the viewers of member m in notRanked topic t, creating
// the entry (to be looked up first) when m is new.
func (t *topic) watchOf(m string) *watch {
	w, ok := t.watched[m]
	if !ok {
		w = &watch{clients: map[*client]struct{}{}}
		t.watched[m] = w
		t.fresh = append(t.fresh, m)
		t.ring = append(t.ring, m)
		if !t.dirty {
			t.dirty, t.since = true, time.Now()
		}
	}
	return w
}

// enter adds a viewer to a table or member topic; it gets the current
// fragment at once when the topic has a fresh one, else with the next
// render.
func (h *hub) enter(t *topic, c *client) {
	c.topic = t
	t.clients[c] = struct{}{}
	if t.frame != nil && !t.dirty {
		c.offer(t.frame)
	} else {
		t.pending = append(t.pending, c)
	}
}

// unwatch removes a viewer from notRanked topic t; the ring forgets gone
// members in batches, so that leaving costs O(1).
func (h *hub) unwatch(t *topic, c *client) {
	delete(t.clients, c)
	w, ok := t.watched[c.member]
	if !ok {
		return
	}
	delete(w.clients, c)
	if len(w.clients) > 0 {
		return
	}
	delete(t.watched, c.member)
	t.stale++
	if t.stale > len(t.watched)+64 {
		t.ring = t.ring[:0]
		for m := range t.watched {
			t.ring = append(t.ring, m)
		}
		t.cursor, t.stale = 0, 0
		t.sweepLeft = min(t.sweepLeft, len(t.ring))
	}
}

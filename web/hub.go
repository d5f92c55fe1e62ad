package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/standings/standings/ranking"
	"golang.org/x/sync/errgroup"
)

// Live feed defaults; Options override them.
const (
	DefaultLiveTick     = 200 * time.Millisecond // at most one render per topic per tick
	DefaultWriteTimeout = 5 * time.Second        // one frame to one client
	DefaultPingInterval = 25 * time.Second       // keeps idle connections (and proxies) alive
	// DefaultLiveMaxRenders bounds the topic renders of one tick, whatever
	// viewers ask for; topics left over wait for a later tick (see flush).
	DefaultLiveMaxRenders = 64
	// DefaultLiveMaxConns bounds the open live connections of one instance.
	DefaultLiveMaxConns = 10000
	// DefaultLiveMaxPerClient bounds the open live connections of one
	// client address (an IPv6 address counts by its /64).
	DefaultLiveMaxPerClient = 20
	// refreshEvery re-renders every watched topic now and then, whatever
	// the feed said: pub/sub loses messages across a reconnect, and a
	// period can roll over without any write.
	refreshEvery = 5 * time.Second
	// renderParallel bounds the renders of one tick in flight at once.
	renderParallel = 8
	// scoredPerCheck is how many followed members a "not ranked" topic
	// looks up in one render: one read, however many viewers.
	scoredPerCheck = ranking.MaxScored
	// maxRefusing bounds the refused connections still in their close
	// handshake (which waits for the client's reply); beyond it a refusal
	// is an HTTP 429 before the upgrade, so refusing costs no more than a
	// request.
	maxRefusing = 256
)

// Close reasons with status 1013 (try again later). static/app.js tells
// "too slow" (come back at once) from the limits (back off for long).
const (
	reasonTooSlow   = "too slow: reconnect"
	reasonPerClient = "too many live connections from this address"
	reasonTotal     = "server at its live connection limit"
)

// topicKey names one live fragment: a board view's top limit rows, one
// member's rank card headline in the current period (member set), or the
// headline every member without a score there shares (notRanked), each
// on the board itself or on one of its segment boards (segment set).
type topicKey struct {
	board, view string
	segment     ranking.Segment
	limit       int
	member      string
	notRanked   bool
}

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
	dirty    bool      // something changed since the last render
	since    time.Time // when it became dirty: the oldest renders first
	frame    []byte    // the last rendered bytes, sent to every viewer
	rendered time.Time // when the last render ended (zero: never)
	pending  []*client // joined since the last render; owe a snapshot

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

// client is one websocket viewer. The hub never waits for it: frames go
// into a one-slot mailbox where a newer frame replaces an unsent one.
type client struct {
	mailbox chan []byte
	closing chan struct{} // closed by the hub at shutdown
	topic   *topic        // where it is now; the hub's mutex guards it
	member  string        // the member it follows ("" for a table)
}

func newClient() *client {
	return &client{mailbox: make(chan []byte, 1), closing: make(chan struct{})}
}

// offer puts frame in the mailbox, replacing a frame not yet sent. Only the
// hub calls it, under its lock, so there is one producer.
func (c *client) offer(frame []byte) {
	select {
	case c.mailbox <- frame:
		return
	default:
	}
	select {
	case <-c.mailbox:
	default:
	}
	select {
	case c.mailbox <- frame:
	default:
	}
}

// renderFunc renders a topic's fragment from fresh reads. ranked is false
// when a member topic's member has no score in the current period.
type renderFunc func(ctx context.Context, key topicKey) (frame []byte, ranked bool, err error)

// scoredFunc reports which of members have a score in a board view's
// current period (of the board or a segment board), in one read.
type scoredFunc func(ctx context.Context, board, view string, seg ranking.Segment, members []string) ([]bool, error)

// Feed is where the live feed hears of changes: the ranking change feed
// (*ranking.Store). Its subscriptions never wait for the hub: one the hub
// falls behind on is closed, and the hub subscribes again.
type Feed interface {
	Subscribe(ctx context.Context) (*ranking.Subscription, error)
}

// hubLimits bound what viewers can make a hub do.
type hubLimits struct {
	tick         time.Duration
	maxRenders   int // topic renders per tick
	maxConns     int // live connections in all
	maxPerClient int // live connections of one client address
}

// hub fans rendered fragments out to websocket viewers. Its maps belong to
// its mutex; renders and network writes happen outside it.
type hub struct {
	render renderFunc
	scored scoredFunc
	feed   Feed
	// invalidate, when set, hears every change message (nil: anything may
	// have changed) before the topics are marked: what renders keep
	// across ticks (live cards' charts) is dropped there.
	invalidate func(*ranking.Change)
	limits     hubLimits
	tick       time.Duration
	logger     *slog.Logger
	metrics    *metrics

	mu        sync.Mutex
	topics    map[topicKey]*topic
	byView    map[boardView]map[*topic]struct{} // what a change marks dirty
	clients   map[*client]struct{}
	conns     int            // admitted connections
	perClient map[string]int // admitted connections by client address
	refusing  int            // refused connections in their close handshake
	budget    int            // renders left in this tick
	closed    bool

	renderWarned time.Time // the last render failure logged (one per 30 s)

	wake chan struct{} // a topic was created and has never rendered
	wg   sync.WaitGroup
	stop context.CancelFunc
}

func newHub(render renderFunc, scored scoredFunc, f Feed, limits hubLimits, logger *slog.Logger, m *metrics) *hub {
	return &hub{
		render: render, scored: scored, feed: f, limits: limits, tick: limits.tick, logger: logger, metrics: m,
		topics: map[topicKey]*topic{}, byView: map[boardView]map[*topic]struct{}{},
		clients: map[*client]struct{}{}, perClient: map[string]int{},
		budget: limits.maxRenders,
		wake:   make(chan struct{}, 1),
	}
}

// start runs the hub's loop until close.
func (h *hub) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.run(ctx)
	}()
}

// run follows the change feed and renders dirty topics once per tick.
func (h *hub) run(ctx context.Context) {
	ticker := time.NewTicker(h.tick)
	defer ticker.Stop()
	refresh := time.NewTicker(refreshEvery)
	defer refresh.Stop()
	var changes <-chan ranking.Change
	var sub *ranking.Subscription
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()
	retry := time.NewTimer(0)
	defer retry.Stop()
	var lastWarn time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-retry.C:
			s, err := h.feed.Subscribe(ctx)
			if err != nil {
				if ctx.Err() == nil && time.Since(lastWarn) > 30*time.Second {
					lastWarn = time.Now()
					h.logger.Warn("live updates: subscribing to the change feed failed; retrying every second", "err", err)
				}
				retry.Reset(time.Second)
				continue
			}
			sub, changes = s, s.C()
			// Anything may have changed while we were not listening.
			h.invalidateKept(nil)
			h.markAll()
		case ch, ok := <-changes:
			if !ok {
				wait := time.Second // the connection failed: go-redis is reconnecting
				if sub.Dropped() {
					// This loop fell behind (long renders): the feed is fine,
					// and markAll on subscribing covers what was lost.
					h.metrics.feedDropped.Inc()
					wait = 0
				}
				sub, changes = nil, nil
				retry.Reset(wait)
				continue
			}
			h.invalidateKept(&ch)
			h.markChanged(ch)
		case <-refresh.C:
			h.invalidateKept(nil)
			h.markAll()
		case <-ticker.C:
			h.mu.Lock()
			h.budget = h.limits.maxRenders
			h.mu.Unlock()
			h.flush(ctx, false)
		case <-h.wake:
			h.flush(ctx, true)
		}
	}
}

func (h *hub) invalidateKept(ch *ranking.Change) {
	if h.invalidate != nil {
		h.invalidate(ch)
	}
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

// job is one render of a flush: the topic and, for a notRanked one, the
// members it looks up.
type job struct {
	t       *topic
	members []string
}

// flush renders the topics that are due, at most the tick's budget of
// them: half to the most watched (a board's top-N with its many viewers
// keeps its frame every tick, however many topics others open), the rest
// to those dirty the longest (every topic renders within
// topics/(budget/2) ticks: none starves).
func (h *hub) flush(ctx context.Context, onlyNew bool) {
	now := time.Now()
	h.mu.Lock()
	var due []*topic
	for _, t := range h.topics {
		if t.due(now, h.tick, onlyNew) {
			due = append(due, t)
		}
	}
	due = choose(due, max(h.budget, 0))
	h.budget -= len(due)
	jobs := make([]job, len(due))
	for i, t := range due {
		t.dirty = false
		jobs[i] = job{t: t}
		if t.key.notRanked {
			jobs[i].members = t.pick(scoredPerCheck)
			if len(t.fresh) > 0 || t.sweepLeft > 0 {
				t.dirty, t.since = true, now // the rest next tick, behind the others
			}
		}
	}
	h.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	g := errgroup.Group{}
	g.SetLimit(renderParallel)
	for _, j := range jobs {
		g.Go(func() error {
			rctx, cancel := context.WithTimeout(ctx, StoreTimeout)
			defer cancel()
			frame, ranked, err := h.render(rctx, j.t.key)
			var scored []bool
			if err == nil && len(j.members) > 0 {
				scored, err = h.scored(rctx, j.t.key.board, j.t.key.view, j.t.key.segment, j.members)
			}
			h.metrics.liveRenders.Inc()
			h.deliver(j, frame, ranked, scored, err)
			return nil
		})
	}
	g.Wait()
}

// choose returns up to n of the due topics: the n/2 most watched, then the
// oldest dirty.
func choose(due []*topic, n int) []*topic {
	if len(due) <= n {
		return due
	}
	byAge := func(a, b *topic) int { return a.since.Compare(b.since) }
	slices.SortFunc(due, func(a, b *topic) int {
		if d := len(b.clients) - len(a.clients); d != 0 {
			return d
		}
		return byAge(a, b)
	})
	popular := n / 2
	slices.SortFunc(due[popular:], byAge)
	return due[:n]
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

// deliver sends a fresh render to the topic's viewers: to all of them when
// it differs from the last one, else only to those owed a snapshot. A
// member topic whose member has no score hands its viewers to the shared
// notRanked topic; a notRanked topic hands the viewers of members that now
// have one to their member topics.
func (h *hub) deliver(j job, frame []byte, ranked bool, scored []bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := j.t
	t.rendered = time.Now()
	if err != nil {
		t.mark(t.rendered) // try again next tick
		if len(j.members) > 0 {
			t.fresh = append(j.members, t.fresh...)
		}
		if !errors.Is(err, context.Canceled) && time.Since(h.renderWarned) > 30*time.Second {
			h.renderWarned = time.Now()
			h.logger.Warn("live updates: render failed", "board", t.key.board, "view", t.key.view, "err", err)
		}
		return
	}
	if h.topics[t.key] != t {
		return // its last viewer left during the render
	}
	if t.key.member != "" && !ranked {
		h.demote(t, frame)
		return
	}
	if t.key.notRanked {
		h.settle(t, frame, j.members, scored)
		return
	}
	if !bytes.Equal(frame, t.frame) {
		t.frame = frame
		for c := range t.clients {
			c.offer(frame)
		}
	} else {
		for _, c := range t.pending {
			if _, ok := t.clients[c]; ok {
				c.offer(frame)
			}
		}
	}
	t.pending = nil
}

// settle applies a notRanked topic's render and look-up: members with a
// score move to their own topics, the others' viewers get the frame.
func (h *hub) settle(t *topic, frame []byte, members []string, scored []bool) {
	if !bytes.Equal(frame, t.frame) {
		t.frame = frame
		for _, w := range t.watched {
			if w.settled {
				for c := range w.clients {
					c.offer(frame)
				}
			}
		}
	}
	for i, m := range members {
		w, ok := t.watched[m]
		switch {
		case !ok:
		case i < len(scored) && scored[i]:
			h.promote(t, m, w)
		case !w.settled:
			w.settled = true
			for c := range w.clients {
				c.offer(t.frame)
			}
		}
	}
	if len(t.clients) == 0 {
		h.forget(t)
	}
}

// promote moves the viewers of member m from the notRanked topic t to m's
// own topic.
func (h *hub) promote(t *topic, m string, w *watch) {
	mt := h.topicFor(topicKey{board: t.key.board, view: t.key.view, segment: t.key.segment, member: m})
	for c := range w.clients {
		h.unwatch(t, c)
		h.enter(mt, c)
	}
}

// demote moves the viewers of member topic t, whose member has no score in
// the current period, to the shared notRanked topic; frame (the headline
// without a score) is theirs at once.
func (h *hub) demote(t *topic, frame []byte) {
	nt := h.topicFor(notRankedKey(t.key.viewOf()))
	w := nt.watchOf(t.key.member)
	w.settled = true
	for c := range t.clients {
		c.topic = nt
		nt.clients[c] = struct{}{}
		w.clients[c] = struct{}{}
	}
	for c := range w.clients {
		c.offer(frame)
	}
	h.forget(t)
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

// join adds a viewer to a topic. A member's viewer whose member has no
// topic yet joins the board view's notRanked topic, which looks the member
// up (with the others) and moves it on when the member has a score: naming
// members that never scored costs one render a tick, however many.
func (h *hub) join(key topicKey, c *client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1) // under the lock, so close never waits while one is added
	h.clients[c] = struct{}{}
	h.metrics.liveViewers.Inc()
	c.member = key.member
	if key.member != "" {
		if _, ok := h.topics[key]; !ok {
			t := h.topicFor(notRankedKey(key.viewOf()))
			w := t.watchOf(key.member)
			w.clients[c] = struct{}{}
			t.clients[c] = struct{}{}
			c.topic = t
			if w.settled && t.frame != nil {
				c.offer(t.frame)
			}
			return true
		}
	}
	h.enter(h.topicFor(key), c)
	return true
}

// leave removes a viewer; a topic nobody watches is forgotten, so nothing
// is rendered for it.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	h.metrics.liveViewers.Dec()
	t := c.topic
	if t == nil {
		return
	}
	if t.key.notRanked {
		h.unwatch(t, c)
	} else {
		delete(t.clients, c)
	}
	if len(t.clients) == 0 {
		h.forget(t)
	}
}

// admit takes a live connection slot for a client address, or says why
// not (a close reason). A refused connection is no viewer: it never joins.
func (h *hub) admit(addr string) (ok bool, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	label := ""
	switch {
	case h.perClient[addr] >= h.limits.maxPerClient:
		reason, label = reasonPerClient, "per_client"
	case h.conns >= h.limits.maxConns:
		reason, label = reasonTotal, "total"
	default:
		h.conns++
		h.perClient[addr]++
		return true, ""
	}
	h.metrics.liveRefused.WithLabelValues(label).Inc()
	return false, reason
}

// release frees the slot admit took.
func (h *hub) release(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns--
	if h.perClient[addr]--; h.perClient[addr] <= 0 {
		delete(h.perClient, addr)
	}
}

// refuse reports whether a refused connection may be upgraded to be told
// why (done must then be called); false when too many refusals are
// already in their close handshake.
func (h *hub) refuse() (done func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refusing >= maxRefusing {
		return nil, false
	}
	h.refusing++
	return func() {
		h.mu.Lock()
		h.refusing--
		h.mu.Unlock()
	}, true
}

// close stops the loop and tells every viewer to go (1012: service
// restart); it waits for their connections to be closed.
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	for c := range h.clients {
		close(c.closing)
	}
	h.mu.Unlock()
	if h.stop != nil {
		h.stop()
	}
	h.wg.Wait()
}

// serve runs one viewer's connection until it ends: it writes frames from
// the mailbox, pings, and closes with 1013 when the client cannot keep up
// (a frame not taken within the write timeout) or 1012 at shutdown.
func (h *hub) serve(ctx context.Context, conn *websocket.Conn, key topicKey, writeTimeout, pingInterval time.Duration) {
	c := newClient()
	if !h.join(key, c) {
		conn.Close(websocket.StatusServiceRestart, "server restarting")
		return
	}
	defer h.wg.Done()
	defer h.leave(c)
	ctx = conn.CloseRead(ctx) // answers pings and close frames; ends with the connection
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			conn.CloseNow()
			return
		case <-c.closing:
			conn.Close(websocket.StatusServiceRestart, "server restarting")
			return
		case frame := <-c.mailbox:
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := conn.Write(wctx, websocket.MessageText, frame)
			cancel()
			if err != nil {
				h.drop(conn, err)
				return
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				h.drop(conn, err)
				return
			}
		}
	}
}

// drop ends a connection that failed or fell behind, saying 1013 (try
// again later) when the close frame can still be sent.
func (h *hub) drop(conn *websocket.Conn, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		h.metrics.liveDropped.Inc()
		conn.Close(websocket.StatusTryAgainLater, reasonTooSlow)
		return
	}
	conn.CloseNow()
}

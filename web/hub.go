package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
	// refreshEvery re-renders every watched topic now and then, whatever
	// the feed said: pub/sub loses messages across a reconnect, and a
	// period can roll over without any write.
	refreshEvery = 5 * time.Second
	// renderParallel bounds the renders of one tick in flight at once.
	renderParallel = 8
)

// topicKey names one live fragment: a board view's top limit rows, or
// (member set) one member's rank card headline in the current period.
type topicKey struct {
	board, view string
	limit       int
	member      string
}

// topic is a fragment with at least one viewer.
type topic struct {
	key      topicKey
	clients  map[*client]struct{}
	dirty    bool      // something changed since the last render
	frame    []byte    // the last rendered bytes, sent to every viewer
	rendered time.Time // when frame was rendered
	pending  []*client // joined since the last render; owe a snapshot
}

// client is one websocket viewer. The hub never waits for it: frames go
// into a one-slot mailbox where a newer frame replaces an unsent one.
type client struct {
	mailbox chan []byte
	closing chan struct{} // closed by the hub at shutdown
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

// renderFunc renders a topic's fragment from fresh reads.
type renderFunc func(ctx context.Context, key topicKey) ([]byte, error)

// feed is where changes come from: the ranking change feed.
type feed interface {
	Subscribe(ctx context.Context) (*ranking.Subscription, error)
}

// hub fans rendered fragments out to websocket viewers. Its maps belong to
// its mutex; renders and network writes happen outside it.
type hub struct {
	render  renderFunc
	feed    feed
	tick    time.Duration
	logger  *slog.Logger
	metrics *metrics

	mu      sync.Mutex
	topics  map[topicKey]*topic
	clients map[*client]struct{}
	closed  bool

	renderWarned time.Time // the last render failure logged (one per 30 s)

	wake chan struct{} // a topic was created and has never rendered
	wg   sync.WaitGroup
	stop context.CancelFunc
}

func newHub(render renderFunc, f feed, tick time.Duration, logger *slog.Logger, m *metrics) *hub {
	return &hub{
		render: render, feed: f, tick: tick, logger: logger, metrics: m,
		topics: map[topicKey]*topic{}, clients: map[*client]struct{}{},
		wake: make(chan struct{}, 1),
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
			h.markAll()
		case ch, ok := <-changes:
			if !ok {
				sub, changes = nil, nil
				retry.Reset(time.Second)
				continue
			}
			h.markChanged(ch)
		case <-refresh.C:
			h.markAll()
		case <-ticker.C:
			h.flush(ctx, false)
		case <-h.wake:
			h.flush(ctx, true)
		}
	}
}

// markChanged marks the topics of the changed board views dirty.
func (h *hub) markChanged(ch ranking.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.topics {
		if t.key.board != ch.Board {
			continue
		}
		for _, vp := range ch.Periods {
			if vp.View == t.key.view {
				t.dirty = true
				break
			}
		}
	}
}

func (h *hub) markAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.topics {
		t.dirty = true
	}
}

// flush renders the topics that need it: dirty ones rendered at least a
// tick ago, and new ones at once (onlyNew: a wake-up for new topics).
func (h *hub) flush(ctx context.Context, onlyNew bool) {
	now := time.Now()
	h.mu.Lock()
	var due []*topic
	for _, t := range h.topics {
		switch {
		case t.frame == nil && (t.dirty || len(t.pending) > 0):
		case onlyNew:
			continue
		case t.dirty && now.Sub(t.rendered) >= h.tick-h.tick/10:
		default:
			continue
		}
		t.dirty = false
		due = append(due, t)
	}
	h.mu.Unlock()
	if len(due) == 0 {
		return
	}
	g := errgroup.Group{}
	g.SetLimit(renderParallel)
	for _, t := range due {
		g.Go(func() error {
			rctx, cancel := context.WithTimeout(ctx, StoreTimeout)
			frame, err := h.render(rctx, t.key)
			cancel()
			h.metrics.liveRenders.Inc()
			h.deliver(t, frame, err)
			return nil
		})
	}
	g.Wait()
}

// deliver sends a fresh render to the topic's viewers: to all of them when
// it differs from the last one, else only to those owed a snapshot.
func (h *hub) deliver(t *topic, frame []byte, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.rendered = time.Now()
	if err != nil {
		t.dirty = true // try again next tick
		if !errors.Is(err, context.Canceled) && time.Since(h.renderWarned) > 30*time.Second {
			h.renderWarned = time.Now()
			h.logger.Warn("live updates: render failed", "board", t.key.board, "view", t.key.view, "err", err)
		}
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

// join adds a viewer to a topic; it gets the current fragment at once when
// the hub has a fresh one, else with the next render.
func (h *hub) join(key topicKey, c *client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1) // under the lock, so close never waits while one is added
	h.clients[c] = struct{}{}
	t, ok := h.topics[key]
	if !ok {
		t = &topic{key: key, clients: map[*client]struct{}{}, dirty: true}
		h.topics[key] = t
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
	t.clients[c] = struct{}{}
	if t.frame != nil && !t.dirty {
		c.offer(t.frame)
	} else {
		t.pending = append(t.pending, c)
	}
	h.metrics.liveViewers.Inc()
	return true
}

// leave removes a viewer; a topic nobody watches is forgotten, so nothing
// is rendered for it.
func (h *hub) leave(key topicKey, c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	h.metrics.liveViewers.Dec()
	if t, ok := h.topics[key]; ok {
		delete(t.clients, c)
		if len(t.clients) == 0 {
			delete(h.topics, key)
		}
	}
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
	defer h.leave(key, c)
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
		conn.Close(websocket.StatusTryAgainLater, "too slow: reconnect")
		return
	}
	conn.CloseNow()
}

package web

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/standings/standings/ranking"
)

// The live hub.
//
// `hub.go` has the loop and the feed (`Options.Feed`, required),
// `hub_topics.go` the topics, `hub_render.go` the ticks' renders,
// `hub_diff.go` the diff frames, `hub_conns.go` the viewers and their
// websockets.
//
// A topic is a (board, view, limit) top-N table, or a (board, view, member)
// card headline, with at least one viewer, each of the board or of one
// segment board (the key holds the segment); or a league group's table
// (board, round, tier, number, page or widget), which any change of its
// board marks dirty and which always goes whole (at most cohort_size rows). One goroutine follows the change
// feed and marks the topics of a changed (board, view, segment) dirty (a
// change line `view@name=value:period` names a segment board); every tick
// (`LiveTick`, 200 ms) it renders each dirty topic once from a fresh read
// (in parallel, at most 8 at a time) and, when the bytes differ from the last
// frame, offers the same frame to every viewer. A frame is the whole
// fragment and, for a table, a diff from the topic's previous frame (rows
// keyed by member, rows gone, runs of rank changes, the ticker and podium
// when they changed: `hub_diff.go`), both made once per tick for every
// viewer; frames are numbered, and a viewer's writer sends the diff only
// when the last frame it wrote is the diff's base, else the whole fragment
// (a new viewer, or one whose mailbox dropped a frame). A card's headline
// is always whole: small, and it changes all at once. A new viewer gets the
// last frame at once when it is current, else the next render; a topic that
// never rendered is rendered on a wake-up, not at the next tick. Topics
// nobody watches are deleted, so nothing renders for them. When the loop
// falls behind the feed, the subscription is dropped
// (`standings_feed_dropped_total`) and the hub subscribes again at once,
// marking every topic dirty. Every 5 s all
// topics are marked dirty: pub/sub loses messages across a reconnect, and a
// period can roll over without a write (the browser reloads when a frame's
// `data-period` differs from the page's).
//
// Work per tick is bounded whatever viewers ask for. At most
// `LiveMaxRenders` (64) topics render per tick: half the budget goes to the
// most-watched dirty topics, the rest to those dirty longest, so none starves.
// A `?member=M` viewer joins M's own topic only if it exists; otherwise it
// joins the one shared "not ranked" topic of its (board, view), whose render
// asks `Store.Scored` (one `ZMSCORE`, up to 1,000 members, new ones first,
// then round-robin) which of its members now have a score and moves them,
// with their viewers, to topics of their own; a member topic whose member
// loses its score moves its viewers back. So 2,000 viewers naming ghosts
// cost about one cheap read per tick. Topics are indexed by (board, view), so
// a change touches only its own.
//
// A member topic renders the whole card body (`Server.renderLive`) from
// one `Store.RankCard` read, as the card page does: the store keeps the
// chart's final points (`ranking/chart_cache.go`), so a re-render asks
// Redis for the current periods only.
//
// Admission: at most `STANDINGS_LIVE_MAX_CONNS` live sockets per instance and
// `STANDINGS_LIVE_MAX_PER_CLIENT` per client address (the TCP peer, or the
// rightmost untrusted `X-Forwarded-For` hop behind `STANDINGS_TRUSTED_PROXIES`;
// IPv6 grouped by /64). Over a cap the socket is accepted and closed with 1013
// and a reason (a browser sees close codes, not handshake statuses); with 256
// such closes in flight, further ones get a plain 429 before the upgrade.
//
// Each viewer has a one-slot mailbox where a newer frame replaces an unsent
// one (so a diff may be skipped: the viewer then gets the next frame
// whole), and a goroutine that writes it with a write timeout (5 s); a viewer
// that does not take a frame in time is dropped with 1013 (when the close
// frame can still be sent: a fully stalled TCP peer just loses the
// connection). Pings every 25 s keep idle connections alive. `Server.Close`
// closes every viewer with 1012 and waits for them; `cmd/standings` calls it
// before shutting down HTTP. The hub's maps belong to its mutex; renders and
// network writes happen outside it.
//
// The socket negotiates permessage-deflate without context takeover, for
// frames of 4 KiB or more (whole fragments): a diff is cheaper to send as
// it is than to deflate with a freshly reset compressor, and context
// takeover would keep a 1.2 MB compressor per viewer.
//
// `static/app.js` (no dependencies) connects when a page has
// `#live-status[data-ws]` and patches the element whose id the frame
// carries in place: rows by member (morphed, moved with the fewest moves,
// focus and text selection kept), the blocks (`data-live-block`) and the
// caption; only rows whose score changed flash (`.scored`), with the
// server's score change as a badge for 2.5 s. It dispatches
// `standings:frame` after each frame and `standings:rollover` (reloading
// unless cancelled) when a frame or the countdown says the period ended;
// it shows Live / Reconnecting, and reconnects with jittered backoff (at
// once when a diff does not fit the page, for a whole fragment).

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
	// DefaultLiveRefresh re-renders every watched topic now and then,
	// whatever the feed said: pub/sub loses messages across a reconnect,
	// and a period can roll over without any write.
	DefaultLiveRefresh = 5 * time.Second
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

// Feed is where the live feed hears of changes: the ranking change feed
// (*ranking.Store). Its subscriptions never wait for the hub: one the hub
// falls behind on is closed, and the hub subscribes again.
type Feed interface {
	Subscribe(ctx context.Context) (*ranking.Subscription, error)
}

// hubLimits bound what viewers can make a hub do.
type hubLimits struct {
	tick         time.Duration
	refresh      time.Duration // every watched topic re-renders this often
	maxRenders   int           // topic renders per tick
	maxConns     int           // live connections in all
	maxPerClient int           // live connections of one client address
}

// hub fans rendered fragments out to websocket viewers. Its maps belong to
// its mutex; renders and network writes happen outside it.
type hub struct {
	render    renderFunc
	scored    scoredFunc
	feed      Feed
	limits    hubLimits
	wholeOnly bool // no diff frames (Options.LiveWholeFrames)
	tick      time.Duration
	logger    *slog.Logger
	metrics   *metrics

	mu        sync.Mutex
	topics    map[topicKey]*topic
	byView    map[boardView]map[*topic]struct{} // what a change marks dirty
	clients   map[*client]struct{}
	conns     int            // admitted connections
	perClient map[string]int // admitted connections by client address
	refusing  int            // refused connections in their close handshake
	budget    int            // renders left in this tick
	seq       uint64         // the last frame's number
	closed    bool

	renderWarned time.Time // the last render failure logged (one per 30 s)

	wake chan struct{} // a topic was created and has never rendered
	wg   sync.WaitGroup
	stop context.CancelFunc
}

func newHub(render renderFunc, scored scoredFunc, f Feed, limits hubLimits, logger *slog.Logger, m *metrics) *hub {
	if limits.refresh <= 0 {
		limits.refresh = DefaultLiveRefresh
	}
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
	refresh := time.NewTicker(h.limits.refresh)
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
			h.markChanged(ch)
		case <-refresh.C:
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

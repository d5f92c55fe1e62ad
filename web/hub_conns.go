package web

// The live hub's viewers: admission limits, joining and leaving, and the
// websocket each one is written to.

import (
	"context"
	"errors"
	"time"

	"github.com/coder/websocket"
)

// client is one websocket viewer. The hub never waits for it: frames go
// into a one-slot mailbox where a newer frame replaces an unsent one (the
// viewer then gets that frame whole: see frame.bytesFor).
type client struct {
	mailbox chan *frame
	closing chan struct{} // closed by the hub at shutdown
	topic   *topic        // where it is now; the hub's mutex guards it
	member  string        // the member it follows ("" for a table)
}

func newClient() *client {
	return &client{mailbox: make(chan *frame, 1), closing: make(chan struct{})}
}

// frame is one render of a topic, shared by all its viewers: the whole
// fragment and, for a table, the diff from the topic's frame numbered
// base (web/hub_diff.go).
type frame struct {
	seq  uint64 // unique in the hub
	base uint64 // the frame diff applies to (0: none)
	full []byte
	diff []byte
}

// bytesFor is what a viewer whose last frame was numbered sent gets: the
// diff when it applies to that frame, else the whole fragment (a new
// viewer, or one whose mailbox had a frame replaced and so missed a diff).
func (f *frame) bytesFor(sent uint64) []byte {
	if f.diff != nil && f.base != 0 && f.base == sent {
		return f.diff
	}
	return f.full
}

// offer puts frame in the mailbox, replacing a frame not yet sent. Only the
// hub calls it, under its lock, so there is one producer.
func (c *client) offer(frame *frame) {
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
	var sent uint64 // the last frame written: what a diff must apply to
	for {
		select {
		case <-ctx.Done():
			conn.CloseNow()
			return
		case <-c.closing:
			conn.Close(websocket.StatusServiceRestart, "server restarting")
			return
		case f := <-c.mailbox:
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := conn.Write(wctx, websocket.MessageText, f.bytesFor(sent))
			cancel()
			if err != nil {
				h.drop(conn, err)
				return
			}
			sent = f.seq
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

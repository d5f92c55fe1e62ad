package web

// The live hub's renders: each tick, the due topics within the budget are
// rendered and the frames handed to their viewers.

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/standings/standings/ranking"
	"golang.org/x/sync/errgroup"
)

// renderFunc renders a topic's fragment from fresh reads.
type renderFunc func(ctx context.Context, key topicKey) (rendered, error)

// rendered is one render of a topic.
type rendered struct {
	frame []byte      // the whole fragment
	table *tableState // a table's rows and blocks, for the next frame's diff; nil for a card
	// ranked is false when a member topic's member has no score in the
	// current period.
	ranked bool
}

// scoredFunc reports which of members have a score in a board view's
// current period (of the board or a segment board), in one read.
type scoredFunc func(ctx context.Context, board, view string, seg ranking.Segment, members []string) ([]bool, error)

// job is one render of a flush: the topic, what its last frame showed
// (the diff's base) and, for a notRanked one, the members it looks up.
type job struct {
	t       *topic
	prev    *tableState
	prevSeq uint64
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
		jobs[i] = job{t: t, prev: t.table}
		if t.frame != nil {
			jobs[i].prevSeq = t.frame.seq
		}
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
			r, err := h.render(rctx, j.t.key)
			var scored []bool
			if err == nil && len(j.members) > 0 {
				scored, err = h.scored(rctx, j.t.key.board, j.t.key.view, j.t.key.segment, j.members)
			}
			var diff []byte
			if err == nil && r.table != nil && j.prev != nil && !h.wholeOnly {
				// Diffed once here, outside the lock, for every viewer.
				if diff = diffOf(j.prev, r.table); len(diff) >= len(r.frame) {
					diff = nil
				}
			}
			h.metrics.liveRenders.Inc()
			h.deliver(j, r, diff, scored, err)
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

// deliver sends a fresh render to the topic's viewers: to all of them when
// it differs from the last one, else only to those owed a snapshot. The
// frame is the whole fragment and, when diff is set, the diff from the
// topic's previous frame: each viewer's writer sends the diff only to a
// viewer whose last frame was that one (frame.bytesFor). A member topic
// whose member has no score hands its viewers to the shared notRanked
// topic; a notRanked topic hands the viewers of members that now have one
// to their member topics.
func (h *hub) deliver(j job, r rendered, diff []byte, scored []bool, err error) {
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
	if t.key.member != "" && !r.ranked {
		h.demote(t, h.newFrame(r.frame))
		return
	}
	if t.key.notRanked {
		h.settle(t, r.frame, j.members, scored)
		return
	}
	if t.frame == nil || !bytes.Equal(r.frame, t.frame.full) {
		f := h.newFrame(r.frame)
		if diff != nil && t.frame != nil && t.frame.seq == j.prevSeq {
			f.base, f.diff = j.prevSeq, diff
		}
		t.frame, t.table = f, r.table
		for c := range t.clients {
			c.offer(f)
		}
	} else {
		for _, c := range t.pending {
			if _, ok := t.clients[c]; ok {
				c.offer(t.frame)
			}
		}
	}
	t.pending = nil
}

// newFrame numbers a whole fragment; numbers are unique in the hub, so
// that a viewer that moves between topics never takes a diff for its own.
func (h *hub) newFrame(full []byte) *frame {
	h.seq++
	return &frame{seq: h.seq, full: full}
}

// settle applies a notRanked topic's render and look-up: members with a
// score move to their own topics, the others' viewers get the frame.
func (h *hub) settle(t *topic, full []byte, members []string, scored []bool) {
	if t.frame == nil || !bytes.Equal(full, t.frame.full) {
		t.frame = h.newFrame(full)
		for _, w := range t.watched {
			if w.settled {
				for c := range w.clients {
					c.offer(t.frame)
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
func (h *hub) demote(t *topic, f *frame) {
	nt := h.topicFor(notRankedKey(t.key.viewOf()))
	w := nt.watchOf(t.key.member)
	w.settled = true
	for c := range t.clients {
		c.topic = nt
		nt.clients[c] = struct{}{}
		w.clients[c] = struct{}{}
	}
	for c := range w.clients {
		c.offer(f)
	}
	h.forget(t)
}

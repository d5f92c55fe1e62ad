package ranking

import (
	"context"
	"slices"
	"sync"
)

// writeGroup sends the single writes (Store.Write) of one board that
// arrive while one of its writes is out in one apply.lua call when that
// one lands: group commit. A call's fixed part (reading the board's views
// and periods, setting up the script, the change message) costs Redis
// several events' worth, so concurrent single writers share it instead of
// each paying it.
//
// A write that finds no call out goes at once, on its own, with its
// caller's context: a lone writer waits for nobody and nothing changes for
// it. Waiting writes leave together (at most scriptChunk, one script call)
// in the order they came; each event still changes all of its views or
// none, and keeps its own result: a refused event refuses no other, as in
// a batch. A caller whose context ends while its write waits gets "not
// applied" at once and its write is taken out; once its call has left,
// the outcome is unknown, as for a lone call whose context ends. A call's
// deadline is the latest of its writes' (latestDeadline).
//
// Each (board, shard, keyed) has its own group: a sharded board's shards
// are written in parallel, and writes that all carry idempotency ids are
// kept apart from others, since runWrite resends only a call whose every
// event has one.
type writeGroup struct {
	apply func(ctx context.Context, events []Event) ([]WriteResult, error)
	solo  bool // every write on its own (Options.SoloWrites)

	mu      sync.Mutex
	out     bool          // a call is out
	waiting []*groupWrite // writes for the next call

	sent func(n int) // test hook: called with the size of each grouped call
}

// groupWrite is one waiting write; state and done change under the
// group's mutex.
type groupWrite struct {
	ctx   context.Context
	ev    Event
	state int // writeWaiting, writeDropped or writeSent
	res   WriteResult
	err   error
	done  chan struct{}
}

const (
	writeWaiting = iota
	writeDropped // its context ended before its call left: not applied
	writeSent
)

// groupKey names a writeGroup.
type groupKey struct {
	board string
	shard int
	keyed bool
}

// writeGroupOf returns the group of ev's single writes to board b.
func (s *Store) writeGroupOf(b *Board, ev Event) *writeGroup {
	k := groupKey{board: b.ID, keyed: ev.ID != ""}
	if b.Sharded() {
		k.shard = ShardOf(ev.Member, b.Shards)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.writes[k]
	if g == nil {
		g = &writeGroup{solo: s.soloWrites, apply: func(ctx context.Context, events []Event) ([]WriteResult, error) {
			return s.Apply(ctx, b.ID, events, ApplyOptions{})
		}}
		s.writes[k] = g
	}
	return g
}

// write applies ev, alone or in a call with other waiting writes, and
// returns its result (a refusal in its Err) or the call's error.
func (g *writeGroup) write(ctx context.Context, ev Event) (WriteResult, error) {
	if g.solo {
		return first(g.apply(ctx, []Event{ev}))
	}
	g.mu.Lock()
	if !g.out {
		g.out = true
		g.mu.Unlock()
		res, err := first(g.apply(ctx, []Event{ev}))
		g.landed()
		return res, err
	}
	w := &groupWrite{ctx: ctx, ev: ev, done: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.mu.Unlock()
	select {
	case <-w.done:
		return w.res, w.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch w.state {
	case writeWaiting:
		g.waiting = slices.DeleteFunc(g.waiting, func(x *groupWrite) bool { return x == w })
		return WriteResult{}, unavailableWrite(ctx.Err(), OutcomeNotApplied)
	case writeDropped:
		return WriteResult{}, unavailableWrite(ctx.Err(), OutcomeNotApplied)
	}
	select {
	case <-w.done: // landed meanwhile: its answer is known
		return w.res, w.err
	default:
		return WriteResult{}, unavailableWrite(ctx.Err(), OutcomeUnknown)
	}
}

// first is the result of a call of one event.
func first(res []WriteResult, err error) (WriteResult, error) {
	if err != nil {
		return WriteResult{}, err
	}
	return res[0], nil
}

// landed ends a call: the writes waiting for it leave together on a new
// goroutine, which lands in turn; else the group has no call out.
func (g *writeGroup) landed() {
	g.mu.Lock()
	var batch []*groupWrite
	for len(batch) == 0 && len(g.waiting) > 0 {
		n := min(len(g.waiting), scriptChunk)
		for _, w := range g.waiting[:n] {
			if w.ctx.Err() != nil {
				w.state = writeDropped // its caller has gone: never sent
				w.err = unavailableWrite(w.ctx.Err(), OutcomeNotApplied)
				close(w.done)
				continue
			}
			w.state = writeSent
			batch = append(batch, w)
		}
		rest := copy(g.waiting, g.waiting[n:])
		clear(g.waiting[rest:])
		g.waiting = g.waiting[:rest]
	}
	if len(batch) == 0 {
		g.out = false
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	go func() {
		g.send(batch)
		g.landed()
	}()
}

// send applies the events of batch in one call and wakes each caller.
func (g *writeGroup) send(batch []*groupWrite) {
	if g.sent != nil {
		g.sent(len(batch))
	}
	events := make([]Event, len(batch))
	ctxs := make([]context.Context, len(batch))
	for i, w := range batch {
		events[i], ctxs[i] = w.ev, w.ctx
	}
	ctx, cancel := latestDeadline(ctxs)
	defer cancel()
	res, err := g.applyEach(ctx, events)
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, w := range batch {
		if err != nil {
			w.err = err
		} else {
			w.res = res[i]
		}
		close(w.done)
	}
}

// applyEach applies a grouped call's events. A panic there fails the
// call's writes with EINTERNAL instead of the process: a lone write's
// panic stays in its request, as the HTTP server recovers it.
func (g *writeGroup) applyEach(ctx context.Context, events []Event) (res []WriteResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, Errorf(EINTERNAL, "the write failed: %v", r)
		}
	}()
	return g.apply(ctx, events)
}

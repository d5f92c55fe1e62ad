package web

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/standings/standings/ranking"
)

// pageCache shares reads of current periods between requests for one short
// tick: however many people load a busy board at once, Redis answers each
// (board, view, segment, slice) at most once per tick. Past periods and member reads
// are not cached. A write through this instance drops its board's entries
// at once, so a client that writes and then reads sees its write; writes
// through other instances show within a tick.
type pageCache struct {
	store   pageReader
	moves   movesReader    // nil: overtakes cannot be read
	choices segmentChooser // nil: segment values cannot be read
	tick    time.Duration

	cache *tickCache[any] // *ranking.Page, movesRead or [][]string

	mu  sync.Mutex
	gen map[string]uint64 // board -> generation, bumped by every local write
}

// movesRead is a cached Moves answer.
type movesRead struct {
	moves  []ranking.Move
	period ranking.Period
}

// maxCacheEntries bounds the cache: expired entries are swept beyond it,
// and a read that still does not fit is not kept.
const maxCacheEntries = 4096

func newPageCache(store pageReader, tick time.Duration) *pageCache {
	pc := &pageCache{store: store, tick: tick, gen: map[string]uint64{}}
	pc.cache = newTickCache(tick, pc.generation, maxCacheEntries, func(string, any) int { return 1 })
	pc.moves, _ = store.(movesReader)
	pc.choices, _ = store.(segmentChooser)
	return pc
}

// Page reads like the store does; current periods ("") come from the
// cache when a read of the same slice of the same (segment) board is
// younger than a tick. Reads without previous ranks (exports) are not
// shared: the cache holds pages as pages show them.
func (pc *pageCache) Page(ctx context.Context, boardID, viewName string, q ranking.PageQuery) (*ranking.Page, error) {
	if q.Period != "" || q.NoPrevRanks || pc.tick <= 0 {
		return pc.store.Page(ctx, boardID, viewName, q)
	}
	key := boardID + "\x00" + viewName + "\x00" + q.Segment.String() + "\x00" + strconv.Itoa(q.Offset) + "\x00" + strconv.Itoa(q.Limit)
	v, err := pc.get(boardID, key, func() (any, error) {
		return pc.store.Page(ctx, boardID, viewName, q)
	})
	if err != nil {
		return nil, err
	}
	return v.(*ranking.Page), nil
}

// Moves reads a view's overtakes like the store does, shared for a tick.
func (pc *pageCache) Moves(ctx context.Context, boardID, viewName string, limit int) ([]ranking.Move, ranking.Period, error) {
	if pc.moves == nil {
		return nil, ranking.Period{}, ranking.Errorf(ranking.EINTERNAL, "no overtakes reader")
	}
	if pc.tick <= 0 {
		return pc.moves.Moves(ctx, boardID, viewName, limit)
	}
	key := "\x01moves\x00" + boardID + "\x00" + viewName + "\x00" + strconv.Itoa(limit)
	v, err := pc.get(boardID, key, func() (any, error) {
		ms, p, err := pc.moves.Moves(ctx, boardID, viewName, limit)
		return movesRead{ms, p}, err
	})
	if err != nil {
		return nil, ranking.Period{}, err
	}
	mr := v.(movesRead)
	return mr.moves, mr.period, nil
}

// SegmentChoices reads the first values of each segment name like the
// store does, shared for a tick (the board page's picker).
func (pc *pageCache) SegmentChoices(ctx context.Context, boardID string, n int) ([][]string, error) {
	if pc.choices == nil {
		return nil, ranking.Errorf(ranking.EINTERNAL, "no segment values reader")
	}
	if pc.tick <= 0 {
		return pc.choices.SegmentChoices(ctx, boardID, n)
	}
	v, err := pc.get(boardID, "\x02choices\x00"+boardID+"\x00"+strconv.Itoa(n), func() (any, error) {
		return pc.choices.SegmentChoices(ctx, boardID, n)
	})
	if err != nil {
		return nil, err
	}
	return v.([][]string), nil
}

// get answers key from the cache when a read younger than a tick of the
// board's current generation holds it, else reads once and keeps the
// answer.
func (pc *pageCache) get(boardID, key string, read func() (any, error)) (any, error) {
	return pc.cache.get(boardID, key, func() (any, bool, error) {
		v, err := read()
		return v, true, err
	})
}

// generation is a board's count of local writes: entries of an older one
// are stale.
func (pc *pageCache) generation(boardID string) uint64 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.gen[boardID]
}

// Invalidate drops the cached reads of a board after a local write.
func (pc *pageCache) Invalidate(boardID string) {
	pc.mu.Lock()
	pc.gen[boardID]++
	pc.mu.Unlock()
}

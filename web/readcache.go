package web

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/standings/standings/ranking"
	"golang.org/x/sync/singleflight"
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

	mu      sync.Mutex
	entries map[string]cacheEntry
	gen     map[string]uint64 // board -> generation, bumped by every local write
	flight  singleflight.Group
}

type cacheEntry struct {
	val     any // *ranking.Page or movesRead
	gen     uint64
	expires time.Time
}

// movesRead is a cached Moves answer.
type movesRead struct {
	moves  []ranking.Move
	period ranking.Period
}

// maxCacheEntries bounds the cache; expired entries are swept beyond it.
const maxCacheEntries = 4096

func newPageCache(store pageReader, tick time.Duration) *pageCache {
	pc := &pageCache{store: store, tick: tick, entries: map[string]cacheEntry{}, gen: map[string]uint64{}}
	pc.moves, _ = store.(movesReader)
	pc.choices, _ = store.(segmentChooser)
	return pc
}

// PageIn reads like the store does; current periods ("") come from the
// cache when a read of the same slice of the same (segment) board is
// younger than a tick.
func (pc *pageCache) PageIn(ctx context.Context, boardID, viewName string, seg ranking.Segment, period string, offset, limit int) (*ranking.Page, error) {
	if period != "" || pc.tick <= 0 {
		return pc.store.PageIn(ctx, boardID, viewName, seg, period, offset, limit)
	}
	key := boardID + "\x00" + viewName + "\x00" + seg.String() + "\x00" + strconv.Itoa(offset) + "\x00" + strconv.Itoa(limit)
	v, err := pc.get(boardID, key, func() (any, error) {
		return pc.store.PageIn(ctx, boardID, viewName, seg, period, offset, limit)
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
// board's current generation holds it, else reads once (singleflight)
// and keeps the answer.
func (pc *pageCache) get(boardID, key string, read func() (any, error)) (any, error) {
	now := time.Now()
	pc.mu.Lock()
	gen := pc.gen[boardID]
	if e, ok := pc.entries[key]; ok && e.gen == gen && now.Before(e.expires) {
		pc.mu.Unlock()
		return e.val, nil
	}
	pc.mu.Unlock()
	v, err, _ := pc.flight.Do(key+"\x00"+strconv.FormatUint(gen, 10), func() (any, error) {
		val, err := read()
		if err != nil {
			return nil, err
		}
		pc.mu.Lock()
		defer pc.mu.Unlock()
		if len(pc.entries) >= maxCacheEntries {
			for k, e := range pc.entries {
				if !now.Before(e.expires) {
					delete(pc.entries, k)
				}
			}
			if len(pc.entries) >= maxCacheEntries {
				clear(pc.entries)
			}
		}
		pc.entries[key] = cacheEntry{val: val, gen: gen, expires: time.Now().Add(pc.tick)}
		return val, nil
	})
	return v, err
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

package web

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// tickCache keeps values for one tick under their board's write
// generation: a value serves every request for its key until it is a tick
// old or a local write moves the board's generation on. Concurrent misses
// of one key wait for a single build. Each entry costs cost(key, value)
// against limit: expired entries are swept when a new one would not fit,
// and one that still does not fit is not kept, so anonymous requests for
// ever new keys cannot grow it.
type tickCache[V any] struct {
	tick  time.Duration
	gen   func(boardID string) uint64
	cost  func(key string, v V) int
	limit int

	mu      sync.Mutex
	entries map[string]tickEntry[V]
	used    int // the entries' cost
	flight  singleflight.Group
}

type tickEntry[V any] struct {
	val     V
	gen     uint64
	cost    int
	expires time.Time
}

func newTickCache[V any](tick time.Duration, gen func(string) uint64, limit int, cost func(string, V) int) *tickCache[V] {
	return &tickCache[V]{tick: tick, gen: gen, cost: cost, limit: limit, entries: map[string]tickEntry[V]{}}
}

// get answers key (a read of boardID) with a value younger than a tick of
// the board's current generation, else builds it once and keeps it when
// build says so (a failure is never kept).
func (tc *tickCache[V]) get(boardID, key string, build func() (V, bool, error)) (V, error) {
	gen := tc.gen(boardID)
	now := time.Now()
	tc.mu.Lock()
	if e, ok := tc.entries[key]; ok && e.gen == gen && now.Before(e.expires) {
		tc.mu.Unlock()
		return e.val, nil
	}
	tc.mu.Unlock()
	v, err, _ := tc.flight.Do(key+"\x00"+strconv.FormatUint(gen, 10), func() (any, error) {
		val, keep, err := build()
		if err == nil && keep {
			tc.keep(key, tickEntry[V]{val: val, gen: gen, cost: tc.cost(key, val), expires: time.Now().Add(tc.tick)})
		}
		return val, err
	})
	val, _ := v.(V)
	return val, err
}

// keep stores e within the limit: expired entries go first; when it still
// does not fit, it is not kept.
func (tc *tickCache[V]) keep(key string, e tickEntry[V]) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if old, ok := tc.entries[key]; ok {
		tc.used -= old.cost
		delete(tc.entries, key)
	}
	if tc.used+e.cost > tc.limit {
		now := time.Now()
		for k, old := range tc.entries {
			if !now.Before(old.expires) {
				tc.used -= old.cost
				delete(tc.entries, k)
			}
		}
		if tc.used+e.cost > tc.limit {
			return
		}
	}
	tc.entries[key] = e
	tc.used += e.cost
}

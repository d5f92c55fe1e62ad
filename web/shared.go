package web

import (
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/singleflight"
)

// answerCache keeps the whole answers of current-period pages (board
// pages, embeds) for one tick: however many people watch a board, each
// page is read, rendered, hashed and compressed once per tick, and every
// request in between gets the same bytes (and the same ETag, so a
// revalidating client or CDN gets a 304). A write through this instance
// drops its board's answers at once, like the page reads (pageCache). An
// answer is at most two ticks old: rendered from reads at most a tick
// old, and kept for a tick.
type answerCache struct {
	tick time.Duration
	gen  func(boardID string) uint64 // the board's write generation (pageCache)

	mu      sync.Mutex
	entries map[string]answerEntry
	bytes   int // held by entries
	flight  singleflight.Group
}

type answerEntry struct {
	a       *answer
	gen     uint64
	expires time.Time
}

// maxAnswerBytes bounds the memory of kept answers: anyone can ask for
// any page of any board and segment, so entries beyond it are not kept.
const maxAnswerBytes = 32 << 20

func newAnswerCache(tick time.Duration, gen func(string) uint64) *answerCache {
	return &answerCache{tick: tick, gen: gen, entries: map[string]answerEntry{}}
}

// keeps says whether answers are kept (built to be served again).
func (ac *answerCache) keeps() bool { return ac.tick > 0 }

// serve answers with the kept answer of key (a page of boardID) when one
// younger than a tick holds it, else builds it once (concurrent requests
// for it wait for the same build) and keeps it when it is a 200. With no
// tick, every request builds its own.
func (ac *answerCache) serve(c echo.Context, boardID, key string, build func() (*answer, error)) error {
	a, err := ac.get(boardID, key, build)
	if err != nil {
		return err
	}
	return serveAnswer(c, a)
}

func (ac *answerCache) get(boardID, key string, build func() (*answer, error)) (*answer, error) {
	if ac.tick <= 0 {
		return build()
	}
	gen := ac.gen(boardID)
	now := time.Now()
	ac.mu.Lock()
	if e, ok := ac.entries[key]; ok && e.gen == gen && now.Before(e.expires) {
		ac.mu.Unlock()
		return e.a, nil
	}
	ac.mu.Unlock()
	v, err, _ := ac.flight.Do(key+"\x00"+strconv.FormatUint(gen, 10), func() (any, error) {
		a, err := build()
		if err != nil || a.status != 200 || !a.kept {
			return a, err
		}
		ac.keep(key, answerEntry{a: a, gen: gen, expires: time.Now().Add(ac.tick)})
		return a, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*answer), nil
}

// keep stores an entry within maxAnswerBytes: expired entries go first;
// when it still does not fit, it is not kept.
func (ac *answerCache) keep(key string, e answerEntry) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if old, ok := ac.entries[key]; ok {
		ac.bytes -= old.a.size() + len(key)
		delete(ac.entries, key)
	}
	need := e.a.size() + len(key)
	if ac.bytes+need > maxAnswerBytes {
		now := time.Now()
		for k, old := range ac.entries {
			if !now.Before(old.expires) {
				ac.bytes -= old.a.size() + len(k)
				delete(ac.entries, k)
			}
		}
		if ac.bytes+need > maxAnswerBytes {
			return
		}
	}
	ac.entries[key] = e
	ac.bytes += need
}

// shareKey names a page's kept answer by the parameters it depends on;
// ok is false when the request asks for something not shared: a past
// period (cached by clients and CDNs instead, for a day) or a
// per-request part (a search, a member list). Parameters are taken as
// sent: a bad one makes the build fail, and failures are not kept.
func shareKey(c echo.Context, page string, params ...string) (string, bool) {
	q := c.QueryParams()
	for _, p := range []string{"period", "q", "members", "add"} {
		if q.Has(p) {
			return "", false
		}
	}
	key := page + "\x00" + c.Param("board") + "\x00" + c.Param("view")
	for _, p := range params {
		key += "\x00" + q.Get(p)
	}
	return key, true
}

package web

import (
	"time"

	"github.com/labstack/echo/v4"
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
	tick  time.Duration
	cache *tickCache[*answer]
}

// maxAnswerBytes bounds the memory of kept answers: anyone can ask for
// any page of any board and segment, so entries beyond it are not kept.
const maxAnswerBytes = 32 << 20

func newAnswerCache(tick time.Duration, gen func(string) uint64) *answerCache {
	return &answerCache{tick: tick, cache: newTickCache(tick, gen, maxAnswerBytes, func(key string, a *answer) int {
		return a.size() + len(key)
	})}
}

// keeps says whether answers are kept (built to be served again).
func (ac *answerCache) keeps() bool { return ac.tick > 0 }

// serve answers with the kept answer of key (a page of boardID) when one
// younger than a tick holds it, else builds it once (concurrent requests
// for it wait for the same build) and keeps it when it is a 200. With no
// tick, every request builds its own.
func (ac *answerCache) serve(c echo.Context, boardID, key string, build func() (*answer, error)) error {
	var a *answer
	var err error
	if ac.tick <= 0 {
		a, err = build()
	} else {
		a, err = ac.cache.get(boardID, key, func() (*answer, bool, error) {
			a, err := build()
			return a, err == nil && a.status == 200 && a.kept, err
		})
	}
	if err != nil {
		return err
	}
	return serveAnswer(c, a)
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
	// The page names its own address (og:url), so each host gets its own.
	key := page + "\x00" + origin(c) + "\x00" + c.Param("board") + "\x00" + c.Param("view")
	for _, p := range params {
		key += "\x00" + q.Get(p)
	}
	return key, true
}

package web

import (
	"container/list"
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
)

// Preview images (og:image) of rank cards and recaps. Each request reads
// what the image shows, as its page would (one small read); the image is
// drawn only when that content was not drawn lately: the previewCache keys
// images by everything they show, so a changed score is a new image and
// an unchanged one is served from memory, with the page's Cache-Control
// and an ETag of its bytes.

// previewCache keeps the latest images drawn, least recently used out
// first, within maxPreviews entries and maxPreviewBytes; drawing runs at
// most maxPreviewDraws at a time and once per key however many ask.
type previewCache struct {
	painter *views.Painter
	draws   *semaphore.Weighted
	flight  singleflight.Group

	mu      sync.Mutex
	entries map[string]*list.Element // of *previewEntry
	order   *list.List               // most recently used first
	used    int
}

type previewEntry struct {
	key  string
	png  []byte
	etag string
}

// Bounds of the preview cache. An image is 10-30 KB, so the cache holds
// at most a few MB; four canvases of 0.75 MB are drawn at once at most.
const (
	maxPreviews     = 512
	maxPreviewBytes = 16 << 20
	maxPreviewDraws = 4
)

// newPreviewCache parses the preview fonts; they are embedded, so a
// failure is a broken build, not a condition to serve in.
func newPreviewCache() *previewCache {
	p, err := views.NewPainter()
	if err != nil {
		panic("web: preview fonts: " + err.Error())
	}
	return &previewCache{painter: p, draws: semaphore.NewWeighted(maxPreviewDraws), entries: map[string]*list.Element{}, order: list.New()}
}

// get answers the image of key, drawing it when it is not kept.
func (pc *previewCache) get(ctx context.Context, key string, draw func(*views.Painter) ([]byte, error)) (*previewEntry, error) {
	if e := pc.lookup(key); e != nil {
		return e, nil
	}
	v, err, _ := pc.flight.Do(key, func() (any, error) {
		if err := pc.draws.Acquire(ctx, 1); err != nil {
			return nil, err
		}
		defer pc.draws.Release(1)
		png, err := draw(pc.painter)
		if err != nil {
			return nil, err
		}
		e := &previewEntry{key: key, png: png, etag: etagOf(png)}
		pc.keep(e)
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*previewEntry), nil
}

func (pc *previewCache) lookup(key string) *previewEntry {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	el, ok := pc.entries[key]
	if !ok {
		return nil
	}
	pc.order.MoveToFront(el)
	return el.Value.(*previewEntry)
}

// keep adds e, dropping the least recently used beyond the bounds.
func (pc *previewCache) keep(e *previewEntry) {
	cost := len(e.png) + len(e.key)
	if cost > maxPreviewBytes {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if _, ok := pc.entries[e.key]; ok {
		return
	}
	pc.entries[e.key] = pc.order.PushFront(e)
	pc.used += cost
	for pc.order.Len() > maxPreviews || pc.used > maxPreviewBytes {
		old := pc.order.Remove(pc.order.Back()).(*previewEntry)
		delete(pc.entries, old.key)
		pc.used -= len(old.png) + len(old.key)
	}
}

// len is how many images are kept (tests).
func (pc *previewCache) len() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.order.Len()
}

// previewKey names an image by its kind and everything it shows.
func previewKey(kind string, parts ...string) string {
	return kind + "\x00" + strings.Join(parts, "\x00")
}

// servePreview writes an image as pages are written (serveAnswer): a 200
// with its ETag and the period's Cache-Control, or a 304. It is not
// gzipped: a PNG is compressed already.
func (s *Server) servePreview(c echo.Context, final bool, key string, draw func(*views.Painter) ([]byte, error)) error {
	e, err := s.previews.get(c.Request().Context(), key, draw)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("ETag", e.etag)
	h.Set("Cache-Control", cacheControl(final))
	if match(c.Request().Header.Get("If-None-Match"), e.etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "image/png", e.png)
}

// handleRankPreview serves GET /boards/{board}/{view}/members/{member}/preview.png?period=&segment=:
// the rank card's preview image (its name, rank of total, score, board,
// view and period).
func (s *Server) handleRankPreview(c echo.Context) error {
	var store memberReader = s.store
	b, view, member, seg, err := s.memberPath(c)
	if err != nil {
		return err
	}
	v, _ := b.View(view)
	card, err := store.Member(c.Request().Context(), b.ID, view, member, ranking.MemberQuery{Segment: seg, Period: c.QueryParam("period")})
	if err != nil {
		return err
	}
	rp := views.RankPreview{
		Name:   displayName(card.Name, card.Member),
		Rank:   "#" + grouped(card.Rank),
		Of:     "of " + grouped(card.Total),
		Score:  scoreWords(b, card.Score),
		Board:  boardTitle(b, seg) + " · " + viewLabel(v),
		Period: periodLabel(v, card.Period, s.cfg.Calendar.Location()),
	}
	key := previewKey("card", b.ID, view, seg.String(), card.Period.ID, member, rp.Name, rp.Rank, rp.Of, rp.Score, rp.Board, rp.Period)
	return s.servePreview(c, card.Final, key, func(p *views.Painter) ([]byte, error) { return p.RankCard(rp) })
}

// recapPodium is how many places a recap image shows.
const recapPodium = 3

// handleRecapPreview serves GET /boards/{board}/{view}/recap.png?period=&segment=:
// a period's preview image (its podium with scores and how many took
// part); without a period, the current one so far. A period nobody
// scored in (or no longer kept) is 404.
func (s *Server) handleRecapPreview(c echo.Context) error {
	var store pageReader = s.reads
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	v, _ := b.View(view)
	pg, err := store.Page(c.Request().Context(), b.ID, view, ranking.PageQuery{Segment: seg, Period: c.QueryParam("period"), Limit: recapPodium})
	if err != nil {
		return err
	}
	loc := s.cfg.Calendar.Location()
	if pg.Total == 0 {
		return ranking.Errorf(ranking.ENOTFOUND, "nobody has a score in %s of %s", periodInline(v, pg.Period, loc), boardTitle(b, seg))
	}
	rp := views.RecapPreview{
		Board:  boardTitle(b, seg) + " · " + viewLabel(v),
		Period: periodLabel(v, pg.Period, loc),
		Total:  memberCount(pg.Total),
	}
	parts := []string{b.ID, view, seg.String(), pg.Period.ID, rp.Board, rp.Period, rp.Total}
	for _, e := range pg.Entries {
		pl := views.PreviewPlace{Rank: e.Rank, Name: displayName(e.Name, e.Member), Score: scoreText(b, e.Score)}
		rp.Podium = append(rp.Podium, pl)
		parts = append(parts, e.Member, pl.Name, pl.Score, grouped(pl.Rank))
	}
	return s.servePreview(c, pg.Final, previewKey("recap", parts...), func(p *views.Painter) ([]byte, error) { return p.Recap(rp) })
}

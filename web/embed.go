package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// MaxEmbedLimit is the most rows a widget shows (contract: 50).
const MaxEmbedLimit = 50

// handleEmbed serves GET /embed/{board}/{view}?limit=10&theme=light&segment=&me=:
// a compact widget of the current period's top (of the board or of one
// of its segment boards), for iframes on other sites; me highlights one
// member for the host site. The same widget is shared for a tick
// (answerCache).
func (s *Server) handleEmbed(c echo.Context) error {
	key, _ := shareKey(c, "embed", "limit", "theme", "segment", "me")
	return s.answers.serve(c, c.Param("board"), key, func() (*answer, error) { return s.embed(c, s.answers.keeps()) })
}

// embed reads and renders a widget (keep: to be served again).
func (s *Server) embed(c echo.Context, keep bool) (*answer, error) {
	var store pageReader = s.reads
	limit, err := intParam(c, "limit", 10, 1, MaxEmbedLimit)
	if err != nil {
		return nil, err
	}
	theme, err := themeParam(c, "light")
	if err != nil {
		return nil, err
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return nil, err
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return nil, err
	}
	me, err := meParam(c)
	if err != nil {
		return nil, err
	}
	v, _ := b.View(view)
	pg, err := store.Page(c.Request().Context(), b.ID, view, ranking.PageQuery{Segment: seg, Limit: limit})
	if err != nil {
		return nil, err
	}
	id := views.TableID(b.ID, view, limit)
	p := views.EmbedPage{
		Live:       &views.Live{URL: liveURL(b.ID, view, seg, "limit", strconv.Itoa(limit)), TableID: id},
		Title:      boardTitle(b, seg),
		ViewLabel:  viewLabel(v),
		Theme:      theme,
		BoardURL:   withQuery(boardPath(b.ID, view), "segment", seg.String()),
		Table:      s.table(b, v, seg, pg, id, ""),
		NotDurable: s.notDurable,
		Me:         me,
	}
	for i := range p.Table.Rows {
		p.Table.Rows[i].Self = me != "" && p.Table.Rows[i].Member == me
	}
	p.Description = embedDescription(b, v, seg, pg.Period, limit, s.cfg.Calendar.Location())
	if v.Kind != ranking.All && v.Kind != ranking.Window {
		p.Countdown = s.countdown(v, pg.Period, pg.Now)
	}
	return s.renderAnswer(c, http.StatusOK, views.Embed(p), cacheCurrent, keep)
}

// meParam reads a widget's ?me=: the member id it highlights, "" when
// absent or empty (the builder's form sends an empty field).
func meParam(c echo.Context) (string, error) {
	me := c.QueryParam("me")
	if me == "" {
		return "", nil
	}
	if err := ranking.ValidateMember(me); err != nil {
		return "", ranking.Errorf(ranking.EINVALID, "me must be a member id: %s", ranking.ErrorMessage(err))
	}
	return me, nil
}

// themeParam reads a widget's ?theme=: light, dark or auto (the viewer's
// colour scheme); def when absent.
func themeParam(c echo.Context, def string) (string, error) {
	switch theme := c.QueryParam("theme"); theme {
	case "":
		return def, nil
	case "light", "dark", "auto":
		return theme, nil
	default:
		return "", ranking.Errorf(ranking.EINVALID, "theme must be light, dark or auto (the viewer's colour scheme), got %q", theme)
	}
}

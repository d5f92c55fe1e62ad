package web

import (
	"fmt"
	"html"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// widgetHeight is the frame height that shows limit widget rows without
// scrolling (header, countdown and the link to the board included; see
// the embed Chromium test).
func widgetHeight(limit int) int { return 160 + 26*limit }

// handleWidgetPage serves GET /boards/{board}/{view}/widget?limit=&theme=
// &width=&height=&segment=&me=&view=: the embed builder, a live preview of
// the widget beside the iframe snippet to paste, from a plain GET form
// (app.js follows its controls). A view= naming another view leads to
// that view's builder, so that the form can choose the view without
// JavaScript.
func (s *Server) handleWidgetPage(c echo.Context) error {
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	if other := c.QueryParam("view"); other != "" && other != view {
		if _, ok := b.View(other); !ok {
			return ranking.Errorf(ranking.EINVALID, "view must be one of the board's views, got %q", other)
		}
		q := c.QueryParams()
		q.Del("view")
		to := boardPath(b.ID, other) + "/widget"
		if len(q) > 0 {
			to += "?" + q.Encode()
		}
		return c.Redirect(http.StatusSeeOther, to)
	}
	v, _ := b.View(view)
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", 10, 1, MaxEmbedLimit)
	if err != nil {
		return err
	}
	width, err := intParam(c, "width", 360, 200, 1200)
	if err != nil {
		return err
	}
	height, err := intParam(c, "height", widgetHeight(limit), 150, 2000)
	if err != nil {
		return err
	}
	theme, err := themeParam(c, "auto")
	if err != nil {
		return err
	}
	me, err := meParam(c)
	if err != nil {
		return err
	}
	picker, err := s.segmentPicker(c.Request().Context(), b, v, seg, "", "")
	if err != nil {
		return err
	}
	src := withQuery(embedPath(b.ID, v.Name), "limit", strconv.Itoa(limit), "theme", theme, "segment", seg.String(), "me", me)
	title := boardTitle(b, seg) + " · " + viewLabel(v)
	p := views.WidgetPage{
		Layout:     s.layout("Widget · " + title),
		BoardTitle: boardTitle(b, seg), BoardURL: withQuery(boardPath(b.ID, v.Name), "segment", seg.String()),
		ViewLabel: viewLabel(v), FormURL: boardPath(b.ID, v.Name) + "/widget", Segment: seg.String(),
		Picker: picker, Me: me,
		Limit: limit, Theme: theme, Width: width, Height: height, Fit: widgetHeight(limit),
		PreviewURL: src,
		Snippet: fmt.Sprintf(`<iframe src="%s" title="%s" width="%d" height="%d" style="border:0" loading="lazy"></iframe>`,
			html.EscapeString(absURL(c, src)), html.EscapeString(title), width, height),
	}
	p.Description = widgetDescription(title)
	for _, ov := range b.Views {
		p.Views = append(p.Views, views.Option{Value: ov.Name, Label: viewLabel(ov), Selected: ov.Name == v.Name})
	}
	return s.renderPage(c, http.StatusOK, views.Widget(p))
}

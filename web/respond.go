package web

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/standings/standings/views"
)

// renderPage renders a component into a pooled buffer and only then writes
// it, so that a failed render never sends half a page.
func (s *Server) renderPage(c echo.Context, status int, comp templ.Component) error {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := renderComponent(c, comp, buf); err != nil {
		return err
	}
	return serveAnswer(c, newAnswer(status, echo.MIMETextHTMLCharsetUTF8, c.Response().Header().Get("Cache-Control"), buf.Bytes(), false))
}

// renderAnswer renders a component into an answer that owns its bytes (the
// pooled buffer goes back before the answer is written); keep makes one
// that can be served again (see answerCache).
func (s *Server) renderAnswer(c echo.Context, status int, comp templ.Component, cache string, keep bool) (*answer, error) {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := renderComponent(c, comp, buf); err != nil {
		return nil, err
	}
	body := buf.Bytes()
	if !keep {
		body = bytes.Clone(body) // a kept answer copies it itself
	}
	return newAnswer(status, echo.MIMETextHTMLCharsetUTF8, cache, body, keep), nil
}

// renderComponent renders a component. Rendering is CPU work on data already read;
// the error funnel renders after the request's deadline was released, so
// it must not be canceled. The page learns its own address (og:url).
func renderComponent(c echo.Context, comp templ.Component, w io.Writer) error {
	return comp.Render(views.WithPageURL(context.WithoutCancel(c.Request().Context()), pageURL(c)), w)
}

// layout is the shared part of every page model.
func (s *Server) layout(title string) views.Layout {
	return views.Layout{Title: title, NotDurable: s.notDurable}
}

// renderErrorPage is the HTML face of the error funnel.
func (s *Server) renderErrorPage(c echo.Context, status int, detail errorDetail) error {
	p := views.ErrorPage{Layout: s.layout(http.StatusText(status)), Status: status, HomeURL: "/"}
	switch status {
	case http.StatusNotFound:
		p.Heading, p.Message, p.Ways = s.notFoundWords(c, detail)
		for _, b := range s.cfg.Boards {
			p.Boards = append(p.Boards, views.Link{Label: b.Title, URL: boardPath(b.ID, b.Views[0].Name)})
		}
	case http.StatusServiceUnavailable:
		p.Heading = "Scores unavailable"
		p.Message = "The score store cannot be reached right now. Nothing is lost; try again in a moment."
		p.RetryURL = c.Request().URL.RequestURI()
	case http.StatusUnprocessableEntity, http.StatusBadRequest:
		p.Heading, p.Message = "This address asks for something we cannot show", capitalize(detail.Message)+"."
		if b, ok := s.cfg.Board(c.Param("board")); ok {
			p.Ways = []views.Link{{Label: "Back to " + b.Title, URL: boardPath(b.ID, b.Views[0].Name)}}
		}
	case http.StatusInternalServerError:
		p.Heading, p.Message = "Something went wrong", "The error was logged."
		p.RetryURL = c.Request().URL.RequestURI()
	default:
		p.Heading, p.Message = http.StatusText(status), detail.Message
	}
	p.Description = errorDescription(p)
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "2")
	}
	return s.renderPage(c, status, views.Error(p))
}

// notFoundWords says in plain words what a page address names that does
// not exist, with the page the reader probably wanted.
func (s *Server) notFoundWords(c echo.Context, detail errorDetail) (heading, message string, ways []views.Link) {
	board, view, member := c.Param("board"), c.Param("view"), c.Param("member")
	b, ok := s.cfg.Board(board)
	switch {
	case board == "":
		return "Page not found", "There is no page at this address.", nil
	case !ok:
		return "Board not found", "There is no board called “" + board + "”. These are the boards there are:", nil
	}
	home := []views.Link{{Label: "Back to " + b.Title, URL: boardPath(b.ID, b.Views[0].Name)}}
	v, ok := b.View(strings.TrimSuffix(view, ".csv"))
	switch {
	case view == "":
		return "Page not found", "There is no page at this address.", home
	case !ok:
		var names []string
		for _, ov := range b.Views {
			names = append(names, viewLabel(ov))
		}
		return "View not found", b.Title + " has no view “" + view + "”. Its views are " + strings.Join(names, ", ") + ".", home
	case member != "":
		back := []views.Link{{Label: "Back to " + b.Title + " · " + viewLabel(v), URL: withQuery(boardPath(b.ID, v.Name), "period", c.QueryParam("period"), "segment", c.QueryParam("segment"))}}
		return "Not ranked", "“" + member + "” has no score in this period of " + b.Title + ".", back
	}
	return "Not found", capitalize(detail.Message) + ".", home
}

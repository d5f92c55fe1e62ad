package web

import (
	"bytes"
	"context"
	"fmt"
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
		p.Heading, p.Message = invalidWords(c, detail)
		if b, ok := s.cfg.Board(c.Param("board")); ok {
			p.Ways = []views.Link{{Label: "Back to " + b.Title, URL: boardPath(b.ID, b.Views[0].Name)}}
		}
	case http.StatusInternalServerError:
		p.Heading, p.Message = "Something went wrong", "The error was logged."
		p.RetryURL = c.Request().URL.RequestURI()
	default:
		p.Heading, p.Message = "We can't show that page", "Try again in a moment, or start from the list of boards."
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
		return "We couldn't find that page", "There is no page at this address.", nil
	case !ok:
		return "We couldn't find that board", "There is no board called “" + board + "”. These are the boards there are:", nil
	}
	home := []views.Link{{Label: "Back to " + b.Title, URL: boardPath(b.ID, b.Views[0].Name)}}
	v, ok := b.View(strings.TrimSuffix(view, ".csv"))
	switch {
	case view == "":
		return "We couldn't find that page", "There is no page at this address.", home
	case !ok:
		var names []string
		for _, ov := range b.Views {
			names = append(names, viewLabel(ov))
		}
		return "We couldn't find that leaderboard", b.Title + " has no view “" + view + "”. Its views are " + strings.Join(names, ", ") + ".", home
	case member != "":
		back := []views.Link{{Label: "Back to " + b.Title + " · " + viewLabel(v), URL: withQuery(boardPath(b.ID, v.Name), "period", c.QueryParam("period"), "segment", c.QueryParam("segment"))}}
		return "We couldn't find that member", "“" + member + "” has no score in this period of " + b.Title + ".", back
	}
	return "We couldn't find that page", "There is nothing at this address.", home
}

// invalidWords says in plain words what is wrong with a page address the
// error funnel refused (the API keeps the precise message): which part of
// it, and what would work.
func invalidWords(c echo.Context, detail errorDetail) (heading, message string) {
	msg := detail.Message
	q := func(name string) string { return "“" + c.QueryParam(name) + "”" }
	has := func(prefix string) bool { return strings.HasPrefix(msg, prefix) }
	switch {
	case strings.Contains(msg, "is given") && strings.Contains(msg, "times"):
		return "This address repeats itself", "A setting appears more than once in this address. Open the page from the board again."
	case strings.Contains(msg, "; in the query"):
		return "We can't read that address", "The address separates its settings with ; instead of &. Check the link, or open the page from the board again."
	case strings.Contains(msg, "escape"):
		return "We can't read that address", "The address has a broken escape (a % not followed by two hexadecimal digits). Check the link, or open the page from the board again."
	case has("page must"):
		return "We can't show that page", "That page number isn't valid: pages start at 1."
	case has("period") || has("invalid period"):
		// The parameter that named it: a page's period, a league's round,
		// a results list's before.
		name := "period"
		for _, p := range periodParams {
			if c.QueryParam(p) != "" {
				name = p
				break
			}
		}
		return "We can't show that date", q(name) + " isn't a date we can read. Use ← Previous and Next → on the board to go back and forth in time."
	case has("limit must"):
		return "We can't show that many rows", fmt.Sprintf("A widget shows 1 to %d rows; %s is outside that.", MaxEmbedLimit, q("limit"))
	case has("theme must"):
		return "We don't know that theme", "The theme can be light, dark or auto; " + q("theme") + " isn't one of them."
	case has("type a name"):
		return "Nothing to search for", "Type a name to find someone on the board."
	case strings.Contains(msg, "segment"):
		return "We can't narrow the board that way", "This board can't be filtered by " + q("segment") + ". Open the board and choose from its list."
	case has("member") || has("name"):
		return "That isn't a name we can look up", "Names and member ids can't contain control characters or be longer than the board allows. Try searching for the name on the board."
	}
	return "We can't show that page", "Something in this address isn't something we can show. Open the page from the board again."
}

package web

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// PageSize is the number of rows a board page shows (contract: 100).
const PageSize = 100

// contentSecurity sets a Content-Security-Policy: scripts run only from
// this origin's static files (pages have no inline script, so no
// per-request nonce: the same page is the same bytes, which ETags and
// caches can share), inline styles and handlers never run, and only
// /embed/ may be framed by other sites.
func (s *Server) contentSecurity(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		frame := "'none'"
		if strings.HasPrefix(c.Request().URL.Path, "/embed/") {
			frame = "*"
		}
		c.Response().Header().Set("Content-Security-Policy",
			"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
				"connect-src 'self'; font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors "+frame)
		return next(c)
	}
}

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
// it must not be canceled.
func renderComponent(c echo.Context, comp templ.Component, w io.Writer) error {
	return comp.Render(context.WithoutCancel(c.Request().Context()), w)
}

// layout is the shared part of every page model.
func (s *Server) layout(title string) views.Layout {
	return views.Layout{Title: title, NotDurable: s.notDurable}
}

// viewLabel names a view in tabs and headings.
func viewLabel(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "Hour"
	case ranking.Day:
		return "Day"
	case ranking.Week:
		return "Week"
	case ranking.Month:
		return "Month"
	case ranking.All:
		return "All time"
	}
	if v.Days == 1 {
		return "Last day"
	}
	return fmt.Sprintf("Last %d days", v.Days)
}

// periodPhrase says which period a sentence is about: "this week",
// "the week of 16 Nov 2026".
func periodPhrase(v ranking.View, p ranking.Period, current bool, loc *time.Location) string {
	if current {
		switch v.Kind {
		case ranking.Hour:
			return "this hour"
		case ranking.Day:
			return "today"
		case ranking.Week:
			return "this week"
		case ranking.Month:
			return "this month"
		case ranking.All:
			return "of all time"
		}
		return fmt.Sprintf("in the last %d days", v.Days)
	}
	return "in " + periodInline(v, p, loc)
}

// periodInline names a period inside a sentence: "the week of 16 Nov 2026",
// "Monday 16 Nov 2026".
func periodInline(v ranking.View, p ranking.Period, loc *time.Location) string {
	switch v.Kind {
	case ranking.Week:
		return "the week of " + p.Start.In(loc).Format("2 Jan 2006")
	case ranking.Window:
		return "the " + periodLabel(v, p, loc)
	case ranking.All:
		return "all time"
	}
	return periodLabel(v, p, loc)
}

// previousPhrase names the period before the current one: "last week".
func previousPhrase(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "last hour"
	case ranking.Day, ranking.Window:
		return "yesterday"
	case ranking.Week:
		return "last week"
	case ranking.Month:
		return "last month"
	}
	return ""
}

// periodLabel and periodRange describe a period to a person.
func periodLabel(v ranking.View, p ranking.Period, loc *time.Location) string {
	s := p.Start.In(loc)
	switch v.Kind {
	case ranking.Hour:
		return s.Format("Mon 2 Jan 2006, 15:04") + "–" + p.End.In(loc).Format("15:04")
	case ranking.Day:
		return s.Format("Monday 2 Jan 2006")
	case ranking.Week:
		return "Week of " + s.Format("2 Jan 2006")
	case ranking.Month:
		return s.Format("January 2006")
	case ranking.All:
		return "All time"
	}
	last := p.End.In(loc).Add(-time.Second)
	return fmt.Sprintf("%d days to %s", v.Days, last.Format("2 Jan 2006"))
}

func periodRange(v ranking.View, p ranking.Period, loc *time.Location) string {
	switch v.Kind {
	case ranking.Week, ranking.Window:
		first, last := p.Start.In(loc), p.End.In(loc).Add(-time.Second)
		if first.Year() != last.Year() {
			return first.Format("2 Jan 2006") + " – " + last.Format("2 Jan 2006")
		}
		return first.Format("2 Jan") + " – " + last.Format("2 Jan 2006")
	case ranking.Hour:
		return "Local time, " + p.Start.In(loc).Format("MST -07:00")
	}
	return ""
}

// periodNav builds previous / next / current links for period p of a view
// read at Redis's now. Navigation stops where retention ends and at the
// current period; future periods are reachable by URL but not linked.
func (s *Server) periodNav(b *ranking.Board, v ranking.View, st ranking.Standing, link func(period string) string) views.PeriodNav {
	cal := s.cfg.Calendar
	loc := cal.Location()
	p := st.Period
	nav := views.PeriodNav{ID: p.ID, Label: periodLabel(v, p, loc), Range: periodRange(v, p, loc), Final: st.Final}
	if v.Kind == ranking.All {
		nav.IsCurrent, nav.Timeless = true, true
		return nav
	}
	cur := cal.PeriodAt(v, st.Now)
	nav.IsCurrent = p.ID == cur.ID
	nav.CurrentURL = link("")
	oldest := cal.Shift(v, cur, -b.Keep)
	if prev := cal.Prev(v, p); !prev.Start.Before(oldest.Start) {
		nav.PrevURL = link(prev.ID)
	}
	if p.Start.Before(cur.Start) {
		next := cal.Next(v, p)
		if next.ID == cur.ID {
			nav.NextURL = link("")
		} else {
			nav.NextURL = link(next.ID)
		}
	}
	return nav
}

// Paths of the pages. Member ids are path-escaped; period ids go in the
// query, where an absent period means the current one (and a live page).

func boardPath(board, view string) string {
	return "/boards/" + url.PathEscape(board) + "/" + url.PathEscape(view)
}

func cardPath(board, view, member string) string {
	return boardPath(board, view) + "/members/" + url.PathEscape(member)
}

func withQuery(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// rows turns entries into table rows linking to rank cards in the period
// shown (no period in the link when it is the current one), on the same
// (segment) board.
func rows(b *ranking.Board, view string, seg ranking.Segment, period string, es []ranking.Entry, self string) []views.Row {
	out := make([]views.Row, 0, len(es))
	v, _ := b.View(view)
	for _, e := range es {
		name := e.Name
		if name == "" {
			name = e.Member
		}
		out = append(out, views.Row{
			Rank: e.Rank, Member: e.Member, Name: name, Score: scoreText(b, e.Score),
			CardURL:  withQuery(cardPath(b.ID, view, e.Member), "period", period, "segment", seg.String()),
			Self:     self != "" && e.Member == self,
			Move:     moveOf(v, e),
			Initials: initials(name), Hue: hue(e.Member),
		})
	}
	return out
}

// htmlWanted reports whether errors of this request are pages for people
// rather than the contract's JSON.
func htmlWanted(c echo.Context) bool {
	p := c.Request().URL.Path
	for _, prefix := range []string{"/api/", "/ws/", "/healthz", "/readyz", "/metrics"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return true
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

// initials are up to two letters of a display name for its avatar: the
// first letters of its first and last words ("Leila Haddad" -> "LH").
func initials(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return "?"
	}
	first := func(w string) string {
		r, _ := utf8.DecodeRuneInString(w)
		return strings.ToUpper(string(r))
	}
	if len(words) == 1 {
		return first(words[0])
	}
	return first(words[0]) + first(words[len(words)-1])
}

// hue picks one of the avatar colours from the member id (FNV-1a), so a
// member keeps its colour everywhere.
func hue(member string) int64 {
	h := fnv.New32a()
	h.Write([]byte(member))
	return int64(h.Sum32() % 12)
}

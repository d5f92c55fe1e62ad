package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// What a page says of itself to search engines and link previews: its
// meta description (one plain sentence of what it shows) and its address.
// The sentences are built here so that every page words them alike.

// origin is the scheme and host the request came to, as the embed snippet
// names the site: pages have no configured public address.
func origin(c echo.Context) string {
	return c.Scheme() + "://" + c.Request().Host
}

// absURL is path (with its query) on the site the request came to.
func absURL(c echo.Context, path string) string { return origin(c) + path }

// canonicalParams are the query parameters that choose what a page shows;
// the rest (searches, member lists, forms) are left out of its og:url.
var canonicalParams = []string{"period", "segment", "page"}

// pageURL is the page's absolute address for og:url: its path and the
// parameters that choose what it shows.
func pageURL(c echo.Context) string {
	q := c.QueryParams()
	keep := url.Values{}
	for _, p := range canonicalParams {
		if v := q.Get(p); v != "" {
			keep.Set(p, v)
		}
	}
	u := absURL(c, c.Request().URL.EscapedPath())
	if len(keep) > 0 {
		u += "?" + keep.Encode()
	}
	return u
}

// grouped writes n with thousands separators: 1,204.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scoreWords is a score as a sentence says it: "1024 points", "3:14.727".
func scoreWords(b *ranking.Board, v int64) string {
	s := scoreText(b, v)
	if b.Format == "duration" {
		return s
	}
	one, many := unitWords(b)
	if s == "1" {
		return s + " " + one
	}
	return s + " " + many
}

// memberCount is "1 member", "1,204 members".
func memberCount(n int64) string {
	return grouped(n) + " " + either(n, "member", "members")
}

// boardDescription describes a page of a board's period: who leads, out
// of how many.
func boardDescription(b *ranking.Board, v ranking.View, seg ranking.Segment, pg *ranking.Page, current bool, loc *time.Location) string {
	what := boardTitle(b, seg) + " standings " + periodPhrase(v, pg.Period, current, loc)
	switch {
	case pg.Total == 0 && current:
		return what + ": nobody has scored yet."
	case pg.Total == 0:
		return what + ": nobody scored."
	case pg.Offset > 0 || len(pg.Entries) == 0:
		return fmt.Sprintf("%s: ranks %s to %s of %s.", what, grouped(int64(pg.Offset)+1), grouped(int64(pg.Offset+len(pg.Entries))), memberCount(pg.Total))
	}
	lead := pg.Entries[0]
	verb := "led by"
	if pg.Final {
		verb = "won by"
	}
	return fmt.Sprintf("%s: %s, %s %s with %s.", what, memberCount(pg.Total), verb, displayName(lead.Name, lead.Member), scoreWords(b, lead.Score))
}

// cardDescription describes a member's rank card.
func cardDescription(b *ranking.Board, v ranking.View, seg ranking.Segment, card *ranking.Card, name string, current bool, loc *time.Location) string {
	verb := "is"
	if !current {
		verb = "was"
	}
	return fmt.Sprintf("%s %s #%s of %s on %s %s, with %s.", name, verb, grouped(card.Rank), grouped(card.Total),
		boardTitle(b, seg), periodPhrase(v, card.Period, current, loc), scoreWords(b, card.Score))
}

// indexDescription describes the index: which boards there are.
func indexDescription(cfg *ranking.Config) string {
	titles := make([]string, 0, len(cfg.Boards))
	for _, b := range cfg.Boards {
		titles = append(titles, b.Title)
	}
	return "Live leaderboards of " + andList(titles) + ": the current standings, each member's rank card and past results."
}

// resultsDescription describes a view's results page.
func resultsDescription(b *ranking.Board, v ranking.View) string {
	return "Past results of " + b.Title + " · " + viewLabel(v) + ": who won each finished period, with the podium and the full standings."
}

// searchDescription describes the member search's list of matches.
func searchDescription(b *ranking.Board, query string, found int) string {
	if found == 0 {
		return "No member of " + b.Title + " is called “" + query + "”."
	}
	return fmt.Sprintf("%d members of %s whose name matches “%s”.", found, b.Title, query)
}

// widgetDescription describes the embed builder.
func widgetDescription(title string) string {
	return "Put the live " + title + " standings on your own site: choose the widget's size and theme, then copy its snippet."
}

// embedDescription describes a widget.
func embedDescription(b *ranking.Board, v ranking.View, seg ranking.Segment, p ranking.Period, limit int, loc *time.Location) string {
	return fmt.Sprintf("The top %d of %s %s, updated live.", limit, boardTitle(b, seg), periodPhrase(v, p, true, loc))
}

// apiDescription describes the API page.
const apiDescription = "The Standings JSON API: read boards, standings, rank cards and results, and send scores, with examples."

// errorDescription describes an error page by its message.
func errorDescription(p views.ErrorPage) string {
	msg := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.Message), ":"))
	if msg == "" {
		return p.Heading + "."
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return p.Heading + ": " + msg
}

// andList joins names as a sentence does: "A, B and C".
func andList(names []string) string {
	switch len(names) {
	case 0:
		return "no boards"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

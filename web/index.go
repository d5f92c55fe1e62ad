package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// leadersShown is how many leaders the index shows per board.
const leadersShown = 3

// handleIndex serves GET /: every board with its views and current leaders.
func (s *Server) handleIndex(c echo.Context) error {
	var store pageReader = s.reads
	ctx := c.Request().Context()
	p := views.IndexPage{Layout: s.layout("Leaderboards")}
	for _, b := range s.cfg.Boards {
		sum := views.BoardSummary{ID: b.ID, Title: b.Title, Description: describe(b)}
		for _, v := range b.Views {
			sum.Views = append(sum.Views, views.Link{Label: viewLabel(v), URL: boardPath(b.ID, v.Name)})
		}
		v := b.Views[0]
		sum.LeadersOf = periodPhrase(v, ranking.Period{}, true, nil)
		pg, err := store.Page(ctx, b.ID, v.Name, "", 0, leadersShown)
		switch {
		case err == nil:
			sum.Leaders = rows(b, v.Name, "", pg.Entries, "")
		case ranking.ErrorCode(err) == ranking.EUNAVAILABLE || ctx.Err() == context.DeadlineExceeded:
			// The rest of the page is still useful without Redis.
			sum.Unavailable = true
		default:
			return err
		}
		p.Boards = append(p.Boards, sum)
	}
	return s.renderPage(c, http.StatusOK, views.Index(p))
}

// describe says in a few words how a board ranks.
func describe(b *ranking.Board) string {
	var parts []string
	if b.Order == ranking.Desc {
		parts = append(parts, "Highest first")
	} else {
		parts = append(parts, "Lowest first")
	}
	switch b.Update {
	case ranking.Increment:
		parts = append(parts, "scores add up")
	case ranking.Best:
		parts = append(parts, "best score counts")
	case ranking.Latest:
		parts = append(parts, "latest score counts")
	}
	if b.Ties == ranking.TiesShared {
		parts = append(parts, "equal scores share a rank")
	} else {
		parts = append(parts, "ties go to who got there first")
	}
	return strings.Join(parts, " · ")
}

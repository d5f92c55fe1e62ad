package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// memberSearcher finds members by a prefix of their name or id (GET
// /api/v1/boards/{board}/members?q=).
type memberSearcher interface {
	SearchMembers(ctx context.Context, boardID, q string) ([]ranking.MemberName, error)
}

// handleSearchMembers serves GET /api/v1/boards/{board}/members?q=PREFIX.
func (s *Server) handleSearchMembers(c echo.Context) error {
	var store memberSearcher = s.store
	b, err := s.board(c)
	if err != nil {
		return err
	}
	found, err := store.SearchMembers(c.Request().Context(), b.ID, c.QueryParam("q"))
	if err != nil {
		return err
	}
	type match struct {
		Member string  `json:"member"`
		Name   *string `json:"name"`
	}
	out := make([]match, len(found))
	for i, m := range found {
		out[i] = match{m.Member, nameOf(m.Name)}
	}
	return render(c, http.StatusOK, struct {
		Members []match `json:"members"`
	}{out})
}

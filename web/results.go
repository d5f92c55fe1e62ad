package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// resultsReader reads recorded period results (GET .../{view}/results and
// .../{view}/results/{period}). Results come as their stored JSON, served
// byte for byte so the digest always matches what is served.
type resultsReader interface {
	Results(ctx context.Context, boardID, viewName, before string, limit int) ([]json.RawMessage, error)
	Result(ctx context.Context, boardID, viewName, period string) (json.RawMessage, error)
}

// handleResults serves GET /api/v1/boards/{board}/{view}/results?limit=&before=.
func (s *Server) handleResults(c echo.Context) error {
	var store resultsReader = s.store
	limit, err := intParam(c, "limit", 20, 1, ranking.MaxResultsLimit)
	if err != nil {
		return err
	}
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	list, err := store.Results(c.Request().Context(), b.ID, view, c.QueryParam("before"), limit)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"results":[`)
	for i, r := range list {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(r)
	}
	buf.WriteString("]}\n")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

// handleResult serves GET /api/v1/boards/{board}/{view}/results/{period}.
func (s *Server) handleResult(c echo.Context) error {
	var store resultsReader = s.store
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	period, err := pathParam(c, "period")
	if err != nil {
		return err
	}
	r, err := store.Result(c.Request().Context(), b.ID, view, period)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, r)
}

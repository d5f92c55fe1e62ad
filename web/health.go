package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

type statusJSON struct {
	Status string `json:"status"`
}

// handleHealthz serves GET /healthz: the process is alive.
func (s *Server) handleHealthz(c echo.Context) error {
	return render(c, http.StatusOK, statusJSON{"ok"})
}

// handleReadyz serves GET /readyz: Redis answers. Any failure to reach it
// is 503 unavailable, whatever its cause.
func (s *Server) handleReadyz(c echo.Context) error {
	var store pinger = s.store
	if err := store.Ping(c.Request().Context()); err != nil {
		if ranking.ErrorCode(err) != ranking.EUNAVAILABLE {
			s.logger.Warn("readiness check failed", "err", err)
		}
		return ranking.Errorf(ranking.EUNAVAILABLE, "the score store (Redis) is unavailable")
	}
	return render(c, http.StatusOK, statusJSON{"ok"})
}

package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// DefaultWriteRate is the events per second each API key may write when
// STANDINGS_WRITE_RATE is not set (contract section 13).
const DefaultWriteRate = 1000

// rateLimiter keeps the write budgets of API keys; *ranking.Store keeps
// them in Redis, shared by every instance.
type rateLimiter interface {
	TakeRate(ctx context.Context, apiKey string, rate, burst, cost int) (ranking.Limit, error)
}

// apiKeyContextKey holds the API key a request authenticated with.
const apiKeyContextKey = "api-key"

// takeRate charges n events to the budget of the request's API key: one
// round trip to Redis, made after the request is checked and before it
// writes. Over the budget it is a 429 with Retry-After, and nothing is
// written.
func (s *Server) takeRate(c echo.Context, n int) error {
	if s.limiter == nil || n == 0 {
		return nil
	}
	key, _ := c.Get(apiKeyContextKey).(string)
	lim, err := s.limiter.TakeRate(c.Request().Context(), key, s.writeRate, 2*s.writeRate, n)
	if err != nil {
		return err
	}
	if lim.Allowed {
		return nil
	}
	secs := max(1, int64((lim.RetryAfter+time.Second-1)/time.Second))
	c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return &apiError{Status: http.StatusTooManyRequests, Code: codeRateLimited,
		Message: "this API key is over its write rate of " + strconv.Itoa(s.writeRate) + " events per second; retry after " + strconv.FormatInt(secs, 10) + "s"}
}

package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// Error codes of the web layer, beside the ranking ones.
const (
	codeUnauthorized = "unauthorized"
	codeForbidden    = "forbidden"
	codeTooLarge     = "too_large"
	codeRateLimited  = "rate_limited" // 429: an API key over its write rate
)

// apiError is an error decided by the web layer itself, with its status:
// malformed bodies (400), authentication (401, 403), slow bodies (408),
// oversized bodies (413), non-JSON bodies (415), write rate (429).
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

// malformed is a 400 invalid_argument: the body is not the JSON we take.
func malformed(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: ranking.EINVALID, Message: msg}
}

// errorBody is the contract's error shape.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code string `json:"code"`
	// Outcome is said by a write Redis failed (contract section 14):
	// "unknown" (it may still be applied) or "not_applied".
	Outcome string `json:"outcome,omitempty"`
	Message string `json:"message"`
}

// statusOf maps a ranking error code to its HTTP status.
var statusOf = map[string]int{
	ranking.EINVALID:     http.StatusUnprocessableEntity,
	ranking.ENOTFOUND:    http.StatusNotFound,
	ranking.ECONFLICT:    http.StatusConflict,
	ranking.EUNAVAILABLE: http.StatusServiceUnavailable,
	ranking.EINTERNAL:    http.StatusInternalServerError,
}

// classify is the one mapping from any error to status, code and a message
// safe to show. Internal and unavailable errors are logged here and only
// here, at a bounded rate (an outage under load fails every request).
func (s *Server) classify(c echo.Context, err error) (int, errorDetail) {
	status, detail := errorOf(err)
	var he *echo.HTTPError
	req := c.Request()
	switch {
	case detail.Code == ranking.EINTERNAL && !errors.Is(err, context.Canceled) && !errors.As(err, &he):
		s.errLog.log(slog.LevelError, "internal error", "method", safeMethod(req.Method), "path", req.URL.Path, "err", err)
	case detail.Code == ranking.EUNAVAILABLE:
		s.errLog.log(slog.LevelWarn, "request failed: Redis unavailable", "method", safeMethod(req.Method), "path", req.URL.Path, "err", err)
	}
	return status, detail
}

// errorOf maps an error to its status, code and a message safe to show,
// without logging, so that metrics can ask too.
func errorOf(err error) (int, errorDetail) {
	var ae *apiError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return ae.Status, errorDetail{Code: ae.Code, Message: ae.Message}
	case errors.As(err, &he):
		return echoError(he)
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, errorDetail{Code: ranking.EUNAVAILABLE, Message: "the score store (Redis) is unavailable; try again shortly"}
	}
	code := ranking.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status, code = http.StatusInternalServerError, ranking.EINTERNAL
	}
	if code == ranking.EINTERNAL {
		if errors.Is(err, context.Canceled) {
			// The caller went away; nobody reads the answer.
			return status, errorDetail{Code: code, Message: "request canceled"}
		}
		return status, errorDetail{Code: code, Message: "internal error"}
	}
	return status, errorDetail{Code: code, Outcome: ranking.ErrorOutcome(err), Message: ranking.ErrorMessage(err)}
}

// echoError maps the router's own errors (unknown route, wrong method)
// into the contract's codes. The contract has no code for 405; it keeps its
// status and Allow header and says invalid_argument.
func echoError(he *echo.HTTPError) (int, errorDetail) {
	msg := http.StatusText(he.Code)
	if m, ok := he.Message.(string); ok && m != "" {
		msg = m
	}
	switch {
	case he.Code == http.StatusNotFound:
		return he.Code, errorDetail{Code: ranking.ENOTFOUND, Message: "no such route"}
	case he.Code == http.StatusUnauthorized:
		return he.Code, errorDetail{Code: codeUnauthorized, Message: msg}
	case he.Code == http.StatusForbidden:
		return he.Code, errorDetail{Code: codeForbidden, Message: msg}
	case he.Code == http.StatusRequestEntityTooLarge:
		return he.Code, errorDetail{Code: codeTooLarge, Message: msg}
	case he.Code == http.StatusServiceUnavailable:
		return he.Code, errorDetail{Code: ranking.EUNAVAILABLE, Message: msg}
	case he.Code >= 500:
		return http.StatusInternalServerError, errorDetail{Code: ranking.EINTERNAL, Message: "internal error"}
	default:
		return he.Code, errorDetail{Code: ranking.EINVALID, Message: msg}
	}
}

// handleError is Echo's error handler: every error any handler or the
// router returns goes out through here in the contract's shape.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, detail := s.classify(c, err)
	if detail.Code == ranking.EUNAVAILABLE || detail.Code == ranking.EINTERNAL {
		s.metrics.redisErrors.Inc()
	}
	if status == http.StatusServiceUnavailable {
		// Pages and API alike: a client may come back shortly.
		c.Response().Header().Set("Retry-After", "2")
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="standings"`)
	}
	if htmlWanted(c) {
		if err := s.renderErrorPage(c, status, detail); err != nil {
			s.logger.Error("writing error page", "err", err)
		}
		return
	}
	if err := render(c, status, errorBody{detail}); err != nil {
		s.logger.Error("writing error response", "err", err)
	}
}

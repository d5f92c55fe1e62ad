package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// MaxBody is the largest request body accepted (contract: 1 MiB).
const MaxBody = 1 << 20

// StoreTimeout bounds the store calls of one request, so that an unreachable
// Redis answers 503 quickly instead of hanging the caller.
const StoreTimeout = 2 * time.Second

// securityHeaders sets the headers every response carries. Only /embed/
// pages may be framed by other sites (contentSecurity sets the CSP,
// frame-ancestors included; X-Frame-Options is for older browsers).
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(c.Request().URL.Path, "/embed/") {
			h.Set("X-Frame-Options", "DENY")
		}
		return next(c)
	}
}

// limitBody refuses bodies over MaxBody: at once when Content-Length says
// so, and otherwise when reading crosses the limit (decodeJSON reports it).
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > MaxBody {
			return tooLarge()
		}
		if req.Body != nil {
			req.Body = http.MaxBytesReader(c.Response(), req.Body, MaxBody)
		}
		return next(c)
	}
}

func tooLarge() *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, Message: "request body is larger than 1 MiB"}
}

// baseContextKey keeps a request's context before requestTimeout, for
// handlers that stream (CSV) and give each store call its own deadline.
const baseContextKey = "base-context"

// requestTimeout gives every request's store calls StoreTimeout.
func (s *Server) requestTimeout(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(baseContextKey, c.Request().Context())
		ctx, cancel := context.WithTimeout(c.Request().Context(), StoreTimeout)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// DefaultBodyTimeout is how long a client has to send a request body.
const DefaultBodyTimeout = 10 * time.Second

// readBody reads the whole request body, within the body timeout, before
// requestTimeout starts the store's deadline: a slow upload is the
// client's delay, answered 408, never a 503 blamed on Redis.
func (s *Server) readBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		if err := checkContentType(req.Header.Get(echo.HeaderContentType)); err != nil {
			return err
		}
		rc := http.NewResponseController(c.Response())
		_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) // not supported by test recorders
		data, err := io.ReadAll(req.Body)
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			return bodyError(err)
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		return next(c)
	}
}

// isTimeout says whether a read failed on its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func bodyTimeout() *apiError {
	return &apiError{Status: http.StatusRequestTimeout, Code: ranking.EINVALID, Message: "the request body did not arrive in time; send it faster or in smaller requests"}
}

// checkQuery refuses a query string with a bad escape: url.Values would
// silently drop the pair, and "?limit=%zz" would quietly mean the default.
func (s *Server) checkQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, err := url.ParseQuery(c.Request().URL.RawQuery); err != nil {
			return ranking.Errorf(ranking.EINVALID, "bad escape in the query string (a %% must start %%XX with two hex digits)")
		}
		return next(c)
	}
}

// checkContentType takes JSON bodies: application/json or any +json type,
// and also no type or application/x-www-form-urlencoded, which is what
// `curl -d` sends; the body is parsed as JSON either way. Anything else
// (multipart forms, text, XML) is a client sending the wrong thing: 415.
func checkContentType(ct string) error {
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-www-form-urlencoded") {
		return nil
	}
	return &apiError{Status: http.StatusUnsupportedMediaType, Code: ranking.EINVALID, Message: fmt.Sprintf("request bodies are JSON: want Content-Type application/json, got %q", ct)}
}

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
	"slices"
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
		if !kindIn(c).frameable() {
			h.Set("X-Frame-Options", "DENY")
		}
		return next(c)
	}
}

func tooLarge() *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, Message: "request body is larger than 1 MiB"}
}

// DefaultBodyMemory bounds the request body bytes held at once by all
// requests together (Options.BodyMemory).
const DefaultBodyMemory = 32 << 20

// bodyWait is how long a body waits for its share of the body memory
// before the request is refused with 429.
const bodyWait = time.Second

// baseContextKey keeps a request's context before the store deadline, for
// handlers that stream (CSV) and give each store call its own deadline.
const baseContextKey = "base-context"

// takesBody says whether the matched route reads a request body (routes
// registered with postBody).
func (s *Server) takesBody(c echo.Context) bool {
	return s.bodyRoutes[c.Request().Method+" "+c.Path()]
}

// ignoreBody hides the body of a request to a route that takes none, so
// that nothing buffers it; routes that take one read it in readBody, after
// authorization. An answer to a request whose body was not read whole
// (refused before it, or cut short) closes the connection and reads no
// more of it: net/http would otherwise read up to 256 KiB of the rest
// before it sends the answer, so that a client that stalls mid-body would
// wait for its 401 or 408 until a read timeout, or for ever once readBody
// has lifted the connection's read deadline.
func (s *Server) ignoreBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		if !s.takesBody(c) {
			req.Body, req.ContentLength = http.NoBody, 0
			c.Response().Header().Set(echo.HeaderConnection, "close")
			err := next(c)
			if !c.IsWebSocket() { // a live feed's connection goes on
				noMoreReads(c)
			}
			return err
		}
		err := next(c)
		if c.Get(bodyReadKey) == nil {
			c.Response().Header().Set(echo.HeaderConnection, "close")
			noMoreReads(c)
		}
		return err
	}
}

// noMoreReads ends reading from a request's connection, which closes
// after the answer.
func noMoreReads(c echo.Context) {
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now()) // not supported by test recorders
}

// bodyReadKey marks a request whose body readBody read whole.
const bodyReadKey = "body-read"

// requestTimeout gives the store calls of a request without a body
// StoreTimeout; readBody starts it for the others once the body is in.
func (s *Server) requestTimeout(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.takesBody(c) {
			return next(c)
		}
		return withStoreDeadline(c, next)
	}
}

func withStoreDeadline(c echo.Context, next echo.HandlerFunc) error {
	c.Set(baseContextKey, c.Request().Context())
	ctx, cancel := context.WithTimeout(c.Request().Context(), StoreTimeout)
	defer cancel()
	c.SetRequest(c.Request().WithContext(ctx))
	return next(c)
}

// DefaultBodyTimeout is how long a client has to send a request body.
const DefaultBodyTimeout = 10 * time.Second

// readBody reads the whole request body of a route that takes one, at most
// limit bytes, within the body timeout, before the store's deadline
// starts: a slow upload is the client's delay, answered 408, never a 503
// blamed on Redis. It runs after authorization, so anonymous clients never
// get a byte read, and it holds a share of the server's body memory while
// the request lasts, so that slow uploads together hold a bounded amount.
func (s *Server) readBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Body == nil || req.Body == http.NoBody {
				c.Set(bodyReadKey, true)
				return withStoreDeadline(c, next)
			}
			if req.ContentLength > limit {
				return tooLarge()
			}
			if err := checkContentType(req.Header.Get(echo.HeaderContentType)); err != nil {
				return err
			}
			need := limit
			if req.ContentLength >= 0 {
				need = req.ContentLength
			}
			if err := s.takeBodyMemory(c, need); err != nil {
				return err
			}
			defer s.bodyMemory.Release(need)
			body := http.MaxBytesReader(c.Response(), req.Body, limit)
			// Room for the whole body and the one byte that tells an
			// oversized one: the buffer never grows past its share.
			buf := bytes.NewBuffer(make([]byte, 0, need+bytes.MinRead))
			rc := http.NewResponseController(c.Response())
			_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) // not supported by test recorders
			_, err := buf.ReadFrom(body)
			_ = rc.SetReadDeadline(time.Time{})
			if err != nil {
				return bodyError(err)
			}
			req.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
			c.Set(bodyReadKey, true)
			return withStoreDeadline(c, next)
		}
	}
}

// takeBodyMemory waits up to bodyWait for n bytes of the body memory; the
// caller releases them. Over the budget the request is refused with 429
// and Retry-After, its body unread.
func (s *Server) takeBodyMemory(c echo.Context, n int64) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), bodyWait)
	defer cancel()
	if err := s.bodyMemory.Acquire(ctx, n); err != nil {
		if c.Request().Context().Err() != nil {
			return context.Canceled // the client went away
		}
		c.Response().Header().Set("Retry-After", "1")
		return &apiError{Status: http.StatusTooManyRequests, Code: codeRateLimited, Message: "too many request bodies are arriving at once; try again in a moment"}
	}
	return nil
}

// isTimeout says whether a read failed on its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func bodyTimeout() *apiError {
	return &apiError{Status: http.StatusRequestTimeout, Code: ranking.EINVALID, Message: "the request body did not arrive in time; send it faster or in smaller requests"}
}

// periodParams are the query parameters that name a period (section 3's
// forms) on every route that takes them.
var periodParams = []string{"period", "before", "round"}

// checkQuery refuses a query string with a bad escape (url.Values would
// silently drop the pair, and "?limit=%zz" would quietly mean the default)
// and any parameter given twice, known to the route or not: "first one
// wins" would let "?limit=2&limit=1001" pass a check the other order fails.
func (s *Server) checkQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := url.ParseQuery(c.Request().URL.RawQuery)
		if err != nil {
			if strings.Contains(err.Error(), "semicolon") {
				return ranking.Errorf(ranking.EINVALID, "a ; in the query string: separate parameters with &")
			}
			return ranking.Errorf(ranking.EINVALID, "bad escape in the query string (a %% must start %%XX with two hex digits)")
		}
		names := make([]string, 0, len(q))
		for name, vs := range q {
			if len(vs) > 1 {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			return ranking.Errorf(ranking.EINVALID, "query parameter %q is given %d times; give it once", names[0], len(q[names[0]]))
		}
		// What needs no board is checked here, before any board is looked
		// up: a period's form (whether it names one period of the view is
		// the store's check), a segment's form and value (its name is the
		// board's), and an API member list's length.
		for _, name := range periodParams {
			if v := q.Get(name); v != "" {
				if err := s.cfg.Calendar.CheckPeriodValue(v); err != nil {
					return err
				}
			}
		}
		if v := q.Get("segment"); v != "" {
			name, value, ok := strings.Cut(v, ":")
			if !ok {
				return ranking.Errorf(ranking.EINVALID, "segment %q must be NAME:VALUE", v)
			}
			if err := ranking.ValidateSegmentValue(name, value); err != nil {
				return err
			}
		}
		if q.Has("members") && strings.HasPrefix(c.Request().URL.Path, "/api/") {
			n := 0
			if v := q.Get("members"); v != "" {
				n = strings.Count(v, ",") + 1
			}
			if n == 0 || n > ranking.MaxMembersList {
				return ranking.Errorf(ranking.EINVALID, "members must list 1 to %d member ids, got %d", ranking.MaxMembersList, n)
			}
		}
		return next(c)
	}
}

// headBody answers HEAD like GET without the body: every GET route is also
// registered for HEAD (routes.go), and this drops what the handler and the
// error funnel write, below compression, so the headers stay the GET's.
func (s *Server) headBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method != http.MethodHead {
			return next(c)
		}
		res := c.Response()
		w := res.Writer
		res.Writer = headWriter{w}
		defer func() { res.Writer = w }()
		return next(c)
	}
}

// headWriter discards a body; net/http does so too for HEAD, but only at
// the wire, and tests and wrappers see what the handler wrote.
type headWriter struct{ http.ResponseWriter }

func (w headWriter) Write(p []byte) (int, error) { return len(p), nil }

func (w headWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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

// contentSecurity sets a Content-Security-Policy: scripts run only from
// this origin's static files (pages have no inline script, so no
// per-request nonce: the same page is the same bytes, which ETags and
// caches can share), inline styles and handlers never run, and only
// /embed/ may be framed by other sites.
func (s *Server) contentSecurity(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		frame := "'none'"
		if kindIn(c).frameable() {
			frame = "*"
		}
		c.Response().Header().Set("Content-Security-Policy",
			"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
				"connect-src 'self'; font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors "+frame)
		return next(c)
	}
}

package web

import (
	"strings"

	"github.com/labstack/echo/v4"
)

// kind is the kind of route a request is for: it decides the shape of its
// errors, whether other sites may frame it and whether it is compressed.
// It is decided once per request, by enterRoom, from the rooms of
// routes.go; the middleware and the error funnel read it from there.
type kind uint8

const (
	kindPage    kind = iota // HTML for people
	kindEmbed               // an HTML table other sites frame
	kindStatic              // stylesheet, script, icons
	kindAPI                 // the JSON API
	kindLive                // the live feed's websocket
	kindOps                 // health checks
	kindMetrics             // Prometheus metrics
)

// html says whether errors are the HTML error page rather than the
// contract's JSON.
func (k kind) html() bool { return k == kindPage || k == kindEmbed || k == kindStatic }

// frameable says whether other sites may frame the answer.
func (k kind) frameable() bool { return k == kindEmbed }

// gzips says whether the compress middleware applies: not to websocket
// upgrades (the live feed's frames are small and sent as they come), nor
// to /metrics, which compresses itself.
func (k kind) gzips() bool { return k != kindLive && k != kindMetrics }

// kindKey is where enterRoom keeps the request's kind in its context.
const kindKey = "route-kind"

// kindOf is the kind of a request path: that of the first room it is in,
// else a page. Requests that no route matches (404, 405) get the kind of
// their path too, so that an unknown API address still answers JSON.
func kindOf(path string) kind {
	for _, r := range rooms {
		if path == r.prefix || (!r.exact && strings.HasPrefix(path, r.prefix)) {
			return r.kind
		}
	}
	return kindPage
}

// enterRoom decides the request's kind, first in the chain.
func (s *Server) enterRoom(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(kindKey, kindOf(c.Request().URL.Path))
		return next(c)
	}
}

// kindIn is the kind enterRoom decided.
func kindIn(c echo.Context) kind {
	k, _ := c.Get(kindKey).(kind)
	return k
}

// htmlWanted reports whether errors of this request are pages for people
// rather than the contract's JSON.
func htmlWanted(c echo.Context) bool { return kindIn(c).html() }

// chain is the middleware every request passes, outermost first: the
// routes' and the escape listener's answers (listener.go) alike.
func (s *Server) chain() []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{s.enterRoom, s.headBody, s.observe, s.ignoreBody, s.securityHeaders, s.compress, s.contentSecurity, s.checkQuery, s.requestTimeout}
}

// chained is h behind the whole chain.
func (s *Server) chained(h echo.HandlerFunc) echo.HandlerFunc {
	mw := s.chain()
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

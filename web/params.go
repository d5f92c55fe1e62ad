package web

import (
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// MaxOffset bounds list offsets (and so page numbers): far beyond any real
// board, and far below where Redis's and Lua's number handling would fail.
const MaxOffset = 1_000_000_000

// pathParam returns a path parameter decoded: Echo routes on the escaped
// path when the request has one (a member id holding "/" or "%"), and then
// hands out escaped values.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", ranking.Errorf(ranking.EINVALID, "%s: bad escape in path", name)
	}
	return u, nil
}

// intParam reads an optional integer query parameter within [lo, hi]
// (lo >= 0). Only plain decimal digits are taken: strconv.Atoi would also
// take "+5", and a sign, spaces, hex or exponents are never what a caller
// meant.
func intParam(c echo.Context, name string, def, lo, hi int) (int, error) {
	s := c.QueryParam(name)
	if s == "" { // absent or empty, as in the contract's "?period=&offset=0"
		return def, nil
	}
	n, ok := parseDigits(s)
	if !ok || n < lo || n > hi {
		return 0, ranking.Errorf(ranking.EINVALID, "%s must be a whole number from %d to %d, got %q", name, lo, hi, s)
	}
	return n, nil
}

// parseDigits parses 1 to 18 decimal digits, which always fit an int64.
func parseDigits(s string) (int, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// segmentParam reads ?segment=NAME:VALUE for board b (absent or empty: the
// whole board). An unknown name or a bad value is 422.
func segmentParam(c echo.Context, b *ranking.Board) (ranking.Segment, error) {
	return b.ParseSegment(c.QueryParam("segment"))
}

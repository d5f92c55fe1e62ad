package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// render encodes v completely, then writes it, so that a failed encoding
// never sends half a body.
func render(c echo.Context, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return send(c, status, echo.MIMEApplicationJSON, buf.Bytes())
}

// send writes a whole answer. A 200 to a GET gets a validator (a weak
// ETag: a hash of the bytes before any compression) and a 304 when the
// client already has them; its Cache-Control is what the handler set
// (cacheFor), else "no-cache" (revalidate every time, cheap with the
// ETag). Any other answer is "no-store".
func send(c echo.Context, status int, ctype string, body []byte) error {
	h := c.Response().Header()
	req := c.Request()
	if status != http.StatusOK || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		h.Set("Cache-Control", "no-store")
		return c.Blob(status, ctype, body)
	}
	sum := sha256.Sum256(body)
	etag := `W/"` + hex.EncodeToString(sum[:12]) + `"`
	h.Set("ETag", etag)
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	if match(req.Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(status, ctype, body)
}

// match reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 asks for If-None-Match).
func match(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// cacheFor lets caches (a CDN, the browser) keep a read: the current
// period for about a second, served stale while revalidating for a few
// more; a final period, which no longer changes, for a day.
func cacheFor(c echo.Context, final bool) {
	v := "public, max-age=1, stale-while-revalidate=5"
	if final {
		v = "public, max-age=86400"
	}
	c.Response().Header().Set("Cache-Control", v)
}

package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"

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

// send writes a whole answer; its Cache-Control is what the handler set
// (cacheFor), else the default of serveAnswer.
func send(c echo.Context, status int, ctype string, body []byte) error {
	return serveAnswer(c, newAnswer(status, ctype, c.Response().Header().Get("Cache-Control"), body, false))
}

// answer is a whole answer ready to write: status, type, bytes, and for
// a 200 its validator. A kept answer (served again to other requests,
// see answerCache) owns a copy of its bytes and their gzip, made once.
type answer struct {
	status int
	ctype  string
	cache  string // Cache-Control of a 200; "" = no-cache
	etag   string // weak ETag of a 200: a hash of the bytes before any compression
	body   []byte
	gz     []byte // gzip of body; kept answers of minGzip bytes or more only
	kept   bool
}

// minGzip is the smallest body worth compressing (the same threshold as
// the compress middleware).
const minGzip = 1024

// newAnswer makes an answer of body. With keep, the answer copies body
// (callers reuse their buffers) and compresses it now, once for every
// request it will serve.
func newAnswer(status int, ctype, cache string, body []byte, keep bool) *answer {
	a := &answer{status: status, ctype: ctype, cache: cache, body: body, kept: keep}
	if status == http.StatusOK {
		a.etag = etagOf(body)
	}
	if keep {
		a.body = bytes.Clone(body)
		if len(body) >= minGzip {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression) // a valid level: no error
			zw.Write(body)                                              // writes to a bytes.Buffer do not fail
			zw.Close()
			a.gz = buf.Bytes()
		}
	}
	return a
}

// etagOf is the weak ETag of a body: a 64-bit xxHash of its bytes. A
// validator only has to tell one version of a page from the next, and
// a collision between the two costs one stale page until the next
// change; xxHash does it at memory speed (a SHA-256 was ~2 % of a rank
// card's CPU).
func etagOf(body []byte) string {
	var b [4 + 16]byte
	copy(b[:], `W/"`)
	h := strconv.AppendUint(b[:3], xxhash.Sum64(body), 16)
	return string(append(h, '"'))
}

// size is what a kept answer holds in memory.
func (a *answer) size() int { return len(a.body) + len(a.gz) + len(a.etag) + len(a.cache) + 64 }

// serveAnswer writes an answer. A 200 to a GET gets its ETag and a 304
// when the client already has the bytes; its Cache-Control is the
// answer's, else "no-cache" (revalidate every time, cheap with the ETag).
// Any other answer is "no-store". A kept answer's gzip goes as it is to
// clients that accept gzip (the compress middleware lets it pass).
func serveAnswer(c echo.Context, a *answer) error {
	res := c.Response()
	h := res.Header()
	req := c.Request()
	if a.status != http.StatusOK || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		h.Set("Cache-Control", "no-store")
		return c.Blob(a.status, a.ctype, a.body)
	}
	h.Set("ETag", a.etag)
	if a.cache != "" {
		h.Set("Cache-Control", a.cache)
	} else if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	if match(req.Header.Get("If-None-Match"), a.etag) {
		return c.NoContent(http.StatusNotModified)
	}
	if len(a.body) >= minGzip && acceptsGzip(req) {
		if a.gz != nil {
			return writeGzip(res, a, a.gz)
		}
		// An answer made for this request alone: compressed whole, then
		// written in one piece with its length (no chunked stream through
		// the compress middleware).
		buf := answerBufs.Get().(*bytes.Buffer)
		zw := getGzip(buf)
		zw.Write(a.body) // writes to a bytes.Buffer do not fail
		zw.Close()
		putGzip(zw)
		err := writeGzip(res, a, buf.Bytes())
		if buf.Cap() <= maxPooledAnswer {
			buf.Reset()
			answerBufs.Put(buf)
		}
		return err
	}
	return c.Blob(a.status, a.ctype, a.body)
}

// writeGzip writes a 200 whose body is gz, the gzip of a.body; the
// compress middleware lets an answer that names its encoding pass.
func writeGzip(res *echo.Response, a *answer, gz []byte) error {
	h := res.Header()
	h.Set(echo.HeaderContentType, a.ctype)
	h.Set(echo.HeaderContentEncoding, "gzip")
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(gz)))
	res.WriteHeader(a.status)
	_, err := res.Write(gz)
	return err
}

// answerBufs pools the output buffers of answers compressed per request
// (a buffer that grew past maxPooledAnswer for one big answer is not
// kept).
var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledAnswer = 256 << 10

// acceptsGzip is the compress middleware's test of Accept-Encoding.
func acceptsGzip(req *http.Request) bool {
	return strings.Contains(req.Header.Get(echo.HeaderAcceptEncoding), "gzip")
}

// match reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 asks for If-None-Match).
func match(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// Cache-Control values: the current period for about a second, served
// stale while revalidating for a few more; a final period, which no
// longer changes, for a day.
const (
	cacheCurrent = "public, max-age=1, stale-while-revalidate=5"
	cacheFinal   = "public, max-age=86400"
)

// cacheControl is the Cache-Control of a read of a period.
func cacheControl(final bool) string {
	if final {
		return cacheFinal
	}
	return cacheCurrent
}

// cacheFor lets caches (a CDN, the browser) keep a read (see cacheControl).
func cacheFor(c echo.Context, final bool) {
	c.Response().Header().Set("Cache-Control", cacheControl(final))
}

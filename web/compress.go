package web

import (
	"bytes"
	"io"
	"net/http"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/labstack/echo/v4"
)

// compress gzips answers of minGzip bytes or more to clients that accept
// gzip (pages, CSV, JSON, the stylesheet and scripts). It costs nothing
// until an answer reaches minGzip bytes: small answers (health checks,
// most errors) pass through without touching a compressor. An answer
// that already names its encoding (a kept answer's gzip, see
// serveAnswer) passes through as it is. Routes whose kind does not
// gzip (rooms.go) are left alone.
func (s *Server) compress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !kindIn(c).gzips() {
			return next(c)
		}
		res := c.Response()
		res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		if !acceptsGzip(c.Request()) {
			return next(c)
		}
		gw := &gzipWriter{w: res.Writer}
		res.Writer = gw
		err := next(c)
		gw.finish()
		// An error is answered by the error funnel after this returns,
		// uncompressed: it has not written anything yet.
		res.Writer = gw.w
		return err
	}
}

// gzipLevel is the compression of answers made per request: the fastest,
// as for most dynamic web content; kept answers, compressed once for many
// requests, use more (newAnswer).
const gzipLevel = gzip.BestSpeed

// gzipWriters pools the compressors of answers made per request, at
// gzipLevel: the compress middleware's and serveAnswer's.
var gzipWriters sync.Pool // *gzip.Writer

// getGzip returns a pooled compressor at gzipLevel writing to w.
func getGzip(w io.Writer) *gzip.Writer {
	zw, _ := gzipWriters.Get().(*gzip.Writer)
	if zw == nil {
		zw, _ = gzip.NewWriterLevel(w, gzipLevel) // a valid level: no error
		return zw
	}
	zw.Reset(w)
	return zw
}

// putGzip gives a closed compressor back to the pool.
func putGzip(zw *gzip.Writer) {
	zw.Reset(nil)
	gzipWriters.Put(zw)
}

// gzipWriter holds back the first minGzip bytes of an answer: a shorter
// answer goes out as it is, a longer one through a pooled gzip.Writer.
type gzipWriter struct {
	w http.ResponseWriter

	code    int          // status held back until the encoding is known (0: none yet)
	buf     bytes.Buffer // body held back
	zw      *gzip.Writer // compressing (nil: not, or not yet)
	through bool         // decided: written as it is
}

func (g *gzipWriter) Header() http.Header { return g.w.Header() }

func (g *gzipWriter) WriteHeader(code int) {
	if g.through || g.zw != nil {
		return
	}
	g.code = code
	h := g.w.Header()
	if code < http.StatusOK || code == http.StatusNoContent || code == http.StatusNotModified || h.Get(echo.HeaderContentEncoding) != "" || compressed(h.Get(echo.HeaderContentType)) {
		g.passThrough()
	}
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	switch {
	case g.through:
		return g.w.Write(p)
	case g.zw != nil:
		return g.zw.Write(p)
	case g.w.Header().Get(echo.HeaderContentEncoding) != "":
		g.passThrough()
		return g.w.Write(p)
	}
	if g.buf.Len()+len(p) < minGzip {
		return g.buf.Write(p)
	}
	g.startGzip()
	return g.zw.Write(p)
}

// compressed says whether answers of a type are compressed already (a
// preview PNG): gzip would cost CPU and save nothing.
func compressed(ctype string) bool {
	return ctype == "image/png" || ctype == "image/jpeg" || ctype == "image/webp"
}

// passThrough decides to write the answer as it is.
func (g *gzipWriter) passThrough() {
	g.through = true
	if g.code != 0 {
		g.w.WriteHeader(g.code)
	}
	if g.buf.Len() > 0 {
		g.w.Write(g.buf.Bytes())
		g.buf.Reset()
	}
}

// startGzip decides to compress: the header goes with Content-Encoding,
// then whatever was held back, through the compressor.
func (g *gzipWriter) startGzip() {
	h := g.w.Header()
	if h.Get(echo.HeaderContentType) == "" {
		h.Set(echo.HeaderContentType, http.DetectContentType(g.buf.Bytes()))
	}
	h.Set(echo.HeaderContentEncoding, "gzip")
	h.Del(echo.HeaderContentLength)
	if g.code == 0 {
		g.code = http.StatusOK
	}
	g.w.WriteHeader(g.code)
	zw := getGzip(g.w)
	g.zw = zw
	if g.buf.Len() > 0 {
		zw.Write(g.buf.Bytes())
		g.buf.Reset()
	}
}

// Flush sends what was written so far (a CSV export streams): from then
// on the answer is compressed, whatever its length.
func (g *gzipWriter) Flush() {
	if !g.through && g.zw == nil && (g.code != 0 || g.buf.Len() > 0) {
		g.startGzip()
	}
	if g.zw != nil {
		g.zw.Flush()
	}
	_ = http.NewResponseController(g.w).Flush()
}

// finish ends the answer: the gzip stream is closed, or what was held
// back is written as it is.
func (g *gzipWriter) finish() {
	switch {
	case g.zw != nil:
		g.zw.Close()
		putGzip(g.zw)
		g.zw = nil
	case !g.through && (g.code != 0 || g.buf.Len() > 0):
		g.passThrough()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.w }

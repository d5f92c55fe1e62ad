package web

import (
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/static"
)

// handleStatic serves GET /static/{file}: the embedded stylesheet, scripts
// and icon. Pages link versioned names (app.<hash>.css), cached for a
// year: a new release links new names. A plain or outdated name is served
// too, with a short cache. Each file's answer (its ETag and gzip) is made
// once, on its first request.
func (s *Server) handleStatic(c echo.Context) error {
	name, versioned := static.Resolve(path.Clean(c.Param("*")))
	a, ok := staticAnswer(name, versioned)
	if !ok {
		return ranking.Errorf(ranking.ENOTFOUND, "no static file %q", name)
	}
	return serveAnswer(c, a)
}

// staticAnswers keeps the answer of each embedded file, versioned and
// not: at most twice the number of files.
var staticAnswers sync.Map // name, versioned → *answer

type staticKey struct {
	name      string
	versioned bool
}

// staticAnswer is the answer for an embedded file; ok is false when
// there is none.
func staticAnswer(name string, versioned bool) (a *answer, ok bool) {
	key := staticKey{name, versioned}
	if a, ok := staticAnswers.Load(key); ok {
		return a.(*answer), true
	}
	data, err := fs.ReadFile(static.FS, name)
	if err != nil {
		return nil, false
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	cache := "public, max-age=300"
	if versioned {
		cache = "public, max-age=31536000, immutable"
	}
	v, _ := staticAnswers.LoadOrStore(key, newAnswer(http.StatusOK, ctype, cache, data, true))
	return v.(*answer), true
}

// handleFavicon serves GET /favicon.ico, which browsers ask for by
// themselves (embeds, files without a page): the icon, an SVG.
func (s *Server) handleFavicon(c echo.Context) error {
	data, err := fs.ReadFile(static.FS, "favicon.svg")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return c.Blob(http.StatusOK, "image/svg+xml", data)
}

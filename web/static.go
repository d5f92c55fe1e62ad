package web

import (
	"io/fs"
	"mime"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/static"
)

// handleStatic serves GET /static/{file}: the embedded stylesheet, scripts
// and icon. Pages link versioned names (app.<hash>.css), cached for a
// year: a new release links new names. A plain or outdated name is served
// too, with a short cache.
func (s *Server) handleStatic(c echo.Context) error {
	name, versioned := static.Resolve(path.Clean(c.Param("*")))
	data, err := fs.ReadFile(static.FS, name)
	if err != nil {
		return ranking.Errorf(ranking.ENOTFOUND, "no static file %q", name)
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	if versioned {
		c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		c.Response().Header().Set("Cache-Control", "public, max-age=300")
	}
	return c.Blob(http.StatusOK, ctype, data)
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

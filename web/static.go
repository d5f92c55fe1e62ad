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
// and icon. They change only with the binary; a short cache keeps a new
// release from mixing with an old stylesheet for long.
func (s *Server) handleStatic(c echo.Context) error {
	name := path.Clean(c.Param("*"))
	data, err := fs.ReadFile(static.FS, name)
	if err != nil {
		return ranking.Errorf(ranking.ENOTFOUND, "no static file %q", name)
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, ctype, data)
}

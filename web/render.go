package web

import (
	"bytes"
	"encoding/json"

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
	return c.Blob(status, echo.MIMEApplicationJSON, buf.Bytes())
}

package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
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

// decodeJSON decodes exactly one JSON value from r into v. Malformed JSON
// and wrong JSON types are 400; an unknown field is 422 (the JSON is valid,
// the content is not what the contract takes), naming the field.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return malformed("malformed JSON: unexpected data after the JSON value")
	}
	return nil
}

func decodeError(err error) error {
	var mbe *http.MaxBytesError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &mbe):
		return tooLarge()
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return malformed(fmt.Sprintf("malformed body: want a JSON %s, got %s", jsonKind(te.Type.Kind().String()), te.Value))
		}
		return malformed(fmt.Sprintf("field %q must be a JSON %s, got %s", field, jsonKind(te.Type.Kind().String()), te.Value))
	case errors.As(err, &se):
		return malformed("malformed JSON: " + se.Error())
	case errors.Is(err, io.EOF):
		return malformed("malformed JSON: empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return malformed("malformed JSON: unexpected end of input")
	}
	// encoding/json reports unknown fields only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return ranking.Errorf(ranking.EINVALID, "unknown field %s", name)
	}
	return malformed("malformed JSON: " + err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	}
	return "number"
}

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

// intParam reads an optional integer query parameter within [lo, hi].
func intParam(c echo.Context, name string, def, lo, hi int) (int, error) {
	s := c.QueryParam(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		if hi == maxInt {
			return 0, ranking.Errorf(ranking.EINVALID, "%s must be an integer >= %d, got %q", name, lo, s)
		}
		return 0, ranking.Errorf(ranking.EINVALID, "%s must be an integer from %d to %d, got %q", name, lo, hi, s)
	}
	return n, nil
}

const maxInt = int(^uint(0) >> 1)

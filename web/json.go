package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/standings/standings/ranking"
)

// decodeJSON decodes exactly one JSON value from r into v, strictly:
//
//   - the body must be valid UTF-8 and its strings valid Unicode (no lone
//     surrogate escapes): 400, where encoding/json would quietly put U+FFFD
//     in their place and two different members would become one;
//   - an object may not repeat a key: 400, since parsers disagree on which
//     copy wins, so the body has no single meaning;
//   - the keys of the top-level object must match v's fields exactly:
//     422 naming the field, where encoding/json matches "MEMBER" to member;
//   - malformed JSON and wrong JSON types are 400.
//
// encoding/json stays the decoder (numbers keep their exact text in a
// json.RawMessage); a pass over the tokens beforehand adds these checks.
// The experimental JSON v2 package has options for them, but its API still
// changes between versions, and this is a few dozen lines of stdlib.
func decodeJSON(r io.Reader, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return bodyError(err)
	}
	if err := checkUnicode(data); err != nil {
		return err
	}
	if err := checkKeys(data, fieldNames(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return malformed("malformed JSON: unexpected data after the JSON value")
	}
	return nil
}

// checkUnicode refuses bodies that are not valid UTF-8 and strings holding
// an escaped surrogate that is not half of a pair (\ud800 alone, \udc00).
func checkUnicode(data []byte) error {
	if !utf8.Valid(data) {
		return malformed("the body is not valid UTF-8")
	}
	in := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !in {
			in = c == '"'
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 >= len(data) || data[i+1] != 'u' {
				i++ // a one-character escape
				continue
			}
			r, ok := hex4(data[i+2:])
			if !ok || !utf16.IsSurrogate(r) {
				i += 5
				continue
			}
			if r < 0xdc00 && i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if low, ok := hex4(data[i+8:]); ok && low >= 0xdc00 && low <= 0xdfff {
					i += 11 // a surrogate pair: one valid character
					continue
				}
			}
			return malformed(fmt.Sprintf("lone surrogate escape %s in a string: not valid Unicode", data[i:i+6]))
		}
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// checkKeys walks the tokens of data: no object may repeat a key, and when
// fields is not nil the top-level object's keys must be among them, exactly.
// Syntax errors are left to the decoder, which reports them better.
func checkKeys(data []byte, fields map[string]bool) error {
	var stack []*keyFrame
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *keyFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			key, ok := tok.(string)
			if !ok { // the closing brace
				stack = stack[:len(stack)-1]
				valueDone(stack)
				continue
			}
			if top.keys[key] {
				return malformed(fmt.Sprintf("malformed JSON: key %q appears twice in one object", key))
			}
			top.keys[key] = true
			if len(stack) == 1 && fields != nil && !fields[key] {
				return ranking.Errorf(ranking.EINVALID, "unknown field %q", key)
			}
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &keyFrame{object: true, wantKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &keyFrame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone(stack)
		default:
			valueDone(stack)
		}
	}
}

// keyFrame is one open object or array of checkKeys's walk.
type keyFrame struct {
	object  bool
	wantKey bool // the next token of this object is a key (or its end)
	keys    map[string]bool
}

// valueDone notes that the innermost object, if any, has its value.
func valueDone(stack []*keyFrame) {
	if n := len(stack); n > 0 && stack[n-1].object {
		stack[n-1].wantKey = true
	}
}

// fieldNames lists the JSON names of the fields of the struct v points to
// (fields of embedded structs included, as encoding/json flattens them),
// nil when v is not a pointer to a struct.
func fieldNames(v any) map[string]bool {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	out := map[string]bool{}
	addFieldNames(t.Elem(), out)
	return out
}

func addFieldNames(t reflect.Type, out map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFieldNames(ft, out)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = true
	}
}

// bodyError maps a failure to read the body.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge()
	case isTimeout(err):
		return bodyTimeout()
	}
	return malformed("reading the body: " + err.Error())
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
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

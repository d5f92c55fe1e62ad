package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// role is what a presented API key may do.
type role int

const (
	roleNone role = iota
	roleWriter
	roleAdmin
)

// requireWriter lets through requests bearing a write or an admin key.
func (s *Server) requireWriter(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, err := s.authenticate(c); err != nil {
			return err
		}
		return next(c)
	}
}

// requireAdmin lets through requests bearing an admin key; a write key is
// known but not enough (403).
func (s *Server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, err := s.authenticate(c)
		if err != nil {
			return err
		}
		if r != roleAdmin {
			return &apiError{Status: http.StatusForbidden, Code: codeForbidden, Message: "this route needs an admin key"}
		}
		return next(c)
	}
}

// authenticate reads "Authorization: Bearer <key>" and returns the key's
// role, or a 401 when the header is missing, malformed or the key unknown.
func (s *Server) authenticate(c echo.Context) (role, error) {
	h := c.Request().Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return roleNone, unauthorized("missing or malformed Authorization header; want \"Bearer <key>\"")
	}
	r := s.roleOf(key)
	if r == roleNone {
		return roleNone, unauthorized("unknown API key")
	}
	c.Set(apiKeyContextKey, key) // the write rate limit is per key
	return r, nil
}

// roleOf compares the key with every configured key in constant time: the
// digests have one length and every comparison runs, matched or not.
func (s *Server) roleOf(key string) role {
	sum := sha256.Sum256([]byte(key))
	admin, writer := 0, 0
	for _, k := range s.adminKeys {
		admin |= subtle.ConstantTimeCompare(sum[:], k[:])
	}
	for _, k := range s.writeKeys {
		writer |= subtle.ConstantTimeCompare(sum[:], k[:])
	}
	switch {
	case admin == 1:
		return roleAdmin
	case writer == 1:
		return roleWriter
	}
	return roleNone
}

func unauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: msg}
}

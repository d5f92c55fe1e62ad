package ranking

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// lib.lua holds the Lua helpers every script shares (exact number
// formatting and parsing, Redis's clock, the change message); it is
// prepended to each script.
//
//go:embed scripts/lib.lua
var libLua string

// newScript returns a script with lib.lua prepended.
func newScript(body string) *redis.Script { return redis.NewScript(libLua + body) }

// boardKey is the key of a board-wide structure: "n" (names), "k" (the
// registry of period keys), "e:<id>" (an idempotency record).
func (s *Store) boardKey(b *Board, name string) string { return s.keyPrefix(b) + name }

// periodKey is the key of one period of one view: kind "z" (the sorted
// set), "x" (exact event times) or "r" (a window's built marker).
func (s *Store) periodKey(b *Board, kind, view, period string) string {
	return s.keyPrefix(b) + kind + ":" + view + ":" + period
}

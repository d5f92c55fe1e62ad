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

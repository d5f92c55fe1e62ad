package ranking

import (
	_ "embed"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// lib.lua holds the Lua helpers the scripts share (exact number
// formatting and parsing, Redis's clock, the change message). Each
// script gets the helpers it uses (libFor).
//
//go:embed scripts/lib.lua
var libLua string

// newScript returns a script with the lib.lua helpers it uses prepended.
func newScript(body string) *redis.Script { return redis.NewScript(libFor(body) + body) }

// libPart is one top-level definition of lib.lua ("local function name"
// or "local name ="), with the comment above it.
type libPart struct {
	name string
	word *regexp.Regexp // the name as a word
	text string
}

var (
	libDef   = regexp.MustCompile(`^local (?:function )?([A-Za-z_][A-Za-z0-9_]*)`)
	libParts = splitLib(libLua)
)

// splitLib cuts lib.lua into its definitions, in order.
func splitLib(lib string) []libPart {
	lines := strings.SplitAfter(lib, "\n")
	var parts []libPart
	var starts []int // each part's first line: its comment's
	for i, l := range lines {
		m := libDef.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		j := i
		for j > 0 && strings.HasPrefix(lines[j-1], "--") {
			j--
		}
		starts = append(starts, j)
		parts = append(parts, libPart{name: m[1], word: regexp.MustCompile(`\b` + m[1] + `\b`)})
	}
	for k := range parts {
		end := len(lines)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		parts[k].text = strings.Join(lines[starts[k]:end], "")
	}
	return parts
}

// libFor is the part of lib.lua body uses: the definitions it names, and
// those they name, in lib.lua's order. A script pays for each definition
// it carries on every call (Lua makes its closure), so it carries only
// its own.
func libFor(body string) string {
	used := make([]bool, len(libParts))
	texts := []string{body}
	for len(texts) > 0 {
		text := texts[len(texts)-1]
		texts = texts[:len(texts)-1]
		for k, p := range libParts {
			if !used[k] && p.word.MatchString(text) {
				used[k] = true
				texts = append(texts, p.text)
			}
		}
	}
	var b strings.Builder
	for k, p := range libParts {
		if used[k] {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

package ranking

import (
	_ "embed"
)

//go:embed scripts/dead.lua
var deadLua string

var deadScript = newScript(deadLua)

// deadRequest builds the KEYS and ARGV of dead.lua for one bad entry.
func (s *Store) deadRequest(b *Board, group, entryID, msg string, values map[string]any) (keys []string, args []any) {
	k := s.keysOf(b)
	keys = []string{k.ingest(), k.dead()}
	args = []any{group, entryID, msg}
	for _, f := range sortedFields(values) {
		args = append(args, f, values[f])
	}
	return keys, args
}

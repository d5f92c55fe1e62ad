package ranking

import (
	_ "embed"
)

// The remove.lua protocol: KEYS and ARGV of a member removal, and the
// reply.

//go:embed scripts/remove.lua
var removeLua string

var removeScript = newScript(removeLua)

// removeRequest builds KEYS and ARGV for remove.lua: every entry of the
// registry as read just before, with its z and x keys declared.
func (s *Store) removeRequest(b *Board, member string, entries []string) (keys []string, args []any) {
	keys = make([]string, 2, 2+2*len(entries))
	keys[0], keys[1] = s.boardKey(b, "k"), s.boardKey(b, "n")
	args = make([]any, 0, 3+len(entries))
	args = append(args, member, s.Channel(), b.ID)
	for _, e := range entries {
		keys = append(keys, s.keyPrefix(b)+"z:"+e, s.keyPrefix(b)+"x:"+e)
		args = append(args, e)
	}
	return keys, args
}

// removeChanged is remove.lua's answer when the registry changed between
// the read and the call.
const removeChanged = -1

package ranking

import (
	_ "embed"
	"strings"
	"time"
)

// The remove.lua protocol: KEYS and ARGV of a member removal, and the
// reply.

//go:embed scripts/remove.lua
var removeLua string

var removeScript = newScript(removeLua)

// removeRequest builds KEYS and ARGV for remove.lua: the all view's day
// snapshots around now (the app's estimate of Redis's clock), and every
// entry of the member's shard's registry as read just before, with its z
// and x keys declared. listed is the count of the member's results index,
// read on a sharded board's own tag ("" on a board of one shard: the
// script counts).
func (s *Store) removeRequest(b *Board, member string, entries []string, listed string, now time.Time) (keys []string, args []any) {
	keys = make([]string, 6, 14+2*len(entries))
	k := s.memberKeys(b, member)
	keys[0], keys[1], keys[2], keys[3], keys[4], keys[5] = k.registry(), k.names(), k.outbox(), k.memberResults(member), k.nameIndex(), k.finalVersion()
	keys = append(keys, k.indexBounds(), k.indexBlocks())
	args = make([]any, 0, 13+len(entries))
	args = append(args, member, s.Channel(), b.ID, foldSearch(member), listed)
	if all, ok := b.View("all"); ok {
		args = append(args, itoa(SnapshotTop), string(b.Ties))
		keys, args = s.snapshotDaysArgs(b, k, all.Name, now, keys, args)
	} else {
		args = append(args, "0")
	}
	for _, e := range entries {
		keys = append(keys, k.registered(e), k.registeredExact(e))
		args = append(args, e)
	}
	// A league board also forgets the member's last round and its seat in
	// each retained round (the rounds' standings are registry entries).
	if b.League != nil {
		keys = append(keys, k.leagueMember(member))
		for _, e := range entries {
			if round, ok := strings.CutPrefix(e, leagueViewName+":"); ok {
				keys = append(keys, k.leaguePlaces(round), k.leagueRound(round))
			}
		}
	}
	return keys, args
}

// removeReply is remove.lua's answer.
type removeReply struct {
	removed int64 // period keys the member left; removeChanged: retry
	listed  int64 // recorded results listing the member
	nowMS   int64 // Redis's clock at the removal
}

// decodeRemove decodes remove.lua's {removed, listed, now_ms}.
func decodeRemove(raw []any) (removeReply, error) {
	if len(raw) != 3 {
		return removeReply{}, Errorf(EINTERNAL, "remove: unexpected reply %v", raw)
	}
	return removeReply{removed: asInt(raw[0]), listed: asInt(raw[1]), nowMS: asInt(raw[2])}, nil
}

// remove.lua's removed count when it changed nothing: the registry
// changed between the read and the call (removeChanged), or no snapshot
// day listed holds Redis's now (removeClock).
const (
	removeChanged = -1
	removeClock   = -2
)

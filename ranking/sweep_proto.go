package ranking

import (
	_ "embed"
)

// The sweep.lua protocol: KEYS and ARGV of one step of the walk that
// forgets members with no score left, and the reply.

//go:embed scripts/sweep.lua
var sweepLua string

var sweepScript = newScript(sweepLua)

// sweepRequest builds KEYS and ARGV for sweep.lua on the board or shard
// whose keys k builds: the z key of every declared registry entry, and the
// watched entries.
func (s *Store) sweepRequest(k boardKeys, plan sweepPlan, count int) (keys []string, args []any) {
	keys = make([]string, 0, 7+len(plan.declared))
	keys = append(keys, k.sweep(), k.names(), k.nameIndex(), k.memberSegments(), k.registry(), k.indexBounds(), k.indexBlocks())
	for _, e := range plan.declared {
		keys = append(keys, k.registered(e))
	}
	args = make([]any, 0, 4+len(plan.watched))
	args = append(args, itoa(plan.fromMS), itoa(plan.untilMS), count, len(plan.watched))
	for _, e := range plan.watched {
		args = append(args, e)
	}
	return keys, args
}

// sweepReply is sweep.lua's answer.
type sweepReply struct {
	stale     bool // nothing changed: the registry or the clock moved on
	met       int  // distinct members looked up
	forgotten int  // members forgotten
	cycled    bool // the call ended a walk over n, ni, sm and nb
}

// decodeSweep decodes sweep.lua's {status, phase, met, forgotten, cycled}.
func decodeSweep(raw []any) (sweepReply, error) {
	if len(raw) != 5 {
		return sweepReply{}, Errorf(EINTERNAL, "sweep: unexpected reply %v", raw)
	}
	if asInt(raw[0]) == -1 {
		return sweepReply{stale: true}, nil
	}
	return sweepReply{met: int(asInt(raw[2])), forgotten: int(asInt(raw[3])), cycled: asInt(raw[4]) == 1}, nil
}

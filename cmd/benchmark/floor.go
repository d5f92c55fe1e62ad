package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

// The floor contenders measure the least Redis work of any exact, atomic
// ingest: one script call per 100 events that reads each member's old code
// in every view (ZMSCORE), adds the event's value with a fresh tie-break
// part and writes every view back with one multi-pair ZADD, copying the
// board's code to the member's segment boards (as apply.lua does for a
// member that always carries the same segment values). Codes go to ZADD
// as integer text, as apply.lua sends them: a Lua number argument is
// formatted with %.17g by Redis 7.0, several times dearer; numbers are
// read with s + 0, as apply.lua reads them (tonumber parses twice). It
// keeps no member records, idempotency ids, names, overtakes, expiries or
// period checks and answers nothing: it is not a way to run a board, only
// the floor under Store.Apply's Redis CPU. It shows what the exact design itself costs
// next to plain ZINCRBY, apart from everything else apply.lua does.
//
// It writes the board's own codes (ranking.ViewCode): (Hi − score) × Span
// + tie units since the period's start, with the board's tie units per
// view. Equal scores tie for as long as they do on the board (an hour in
// the all view) and Redis orders them by member as it does there: a
// skiplist insert costs more inside a large group of equal codes, where a
// member lands by name rather than next to the last insert, so a floor
// with finer ties than the board's would be cheaper than any exact ingest
// of this board can be.
//
// In the ingest suite it writes the board's own period keys, which every
// contender writing the board also writes. A sorted set's writes cost
// more the longer its history (docs/benchmarks.md): keys of its own,
// written by the floor alone, would have a shorter history than the
// board's, which takes the events of four contenders, and make the floor
// cheaper than it is. The segment suite's floors keep keys of their own,
// as each of its boards takes one contender's events.
var floorScript = redis.NewScript(`
local nv, ns = tonumber(ARGV[1]), tonumber(ARGV[2])
local hi, span, tie = {}, {}, {}
for k = 1, nv do
  local a = 3 * k
  hi[k], span[k], tie[k] = ARGV[a] + 0, ARGV[a + 1] + 0, ARGV[a + 2] + 0
end
local members, values, groups, at = {}, {}, {}, {}
local n, a = 0, 3 + 3 * nv
while a <= #ARGV do
  local m, v = ARGV[a], ARGV[a + 1] + 0
  local i = at[m]
  if i then
    values[i] = values[i] + v
  else
    n = n + 1
    at[m], members[n], values[n] = n, m, v
    if ns > 0 then
      local g = {}
      for s = 1, ns do g[s] = ARGV[a + 1 + s] + 0 end
      groups[n] = g
    end
  end
  a = a + 2 + ns
end
for k = 1, nv do
  local old = redis.call('ZMSCORE', KEYS[k], unpack(members))
  local out, seg = {}, {}
  local top, sp, t = hi[k], span[k], tie[k]
  for i = 1, n do
    local v = values[i]
    if old[i] then v = v + top - math.floor((old[i] + 0) / sp) end
    local code = string.format('%d', (top - v) * sp + t)
    out[2 * i - 1], out[2 * i] = code, members[i]
    for s = 1, ns do
      local g = groups[i][s]
      local u = seg[g]
      if not u then u = {}; seg[g] = u end
      u[#u + 1] = code
      u[#u + 1] = members[i]
    end
  end
  redis.call('ZADD', KEYS[k], unpack(out))
  for g, u in pairs(seg) do redis.call('ZADD', KEYS[nv + (g - 1) * nv + k], unpack(u)) end
end
return n
`)

// floorWork sends ingestBatch events per floorScript call to board's views,
// each with nseg (0..2) segment values drawn as segmentWork draws them (a
// member's country and team are fixed). It writes the board's own period
// keys, or with a prefix keys of the same names under it (segment boards'
// keys are those keys followed by the segment's tag).
func floorWork(rdb *redis.Client, store *ranking.Store, board, prefix string, nseg int) func(*eventGen) work {
	return func(g *eventGen) work {
		return func(ctx context.Context) (int, error) {
			now := time.Now()
			ks := make([]string, 0, len(benchViews))
			argv := make([]any, 0, 2+3*len(benchViews)+ingestBatch*(2+nseg))
			argv = append(argv, len(benchViews), nseg)
			for _, v := range benchViews {
				vc, err := store.ViewCode(board, v, now)
				if err != nil {
					return 0, err
				}
				if !vc.Desc {
					return 0, fmt.Errorf("floor: board %s is not desc", board)
				}
				ks = append(ks, prefix+vc.Key)
				argv = append(argv, vc.Hi, vc.Span, vc.Tie(now))
			}
			group := map[string]int{}
			var names []string
			for range ingestBatch {
				k := g.rnd.IntN(len(g.members))
				argv = append(argv, g.members[k], 1+g.rnd.Int64N(maxEventVal))
				for s := range nseg {
					name := "@country=c" + strconv.Itoa(k%benchCountries)
					if s == 1 {
						name = "@team=t" + strconv.Itoa(k%benchTeams)
					}
					gi, ok := group[name]
					if !ok {
						gi = len(names) + 1
						group[name] = gi
						names = append(names, name)
					}
					argv = append(argv, gi)
				}
			}
			all := append(make([]string, 0, len(ks)*(1+len(names))), ks...)
			for _, name := range names {
				for _, k := range ks {
					all = append(all, k+name)
				}
			}
			n, err := floorScript.Run(ctx, rdb, all, argv...).Int()
			if err != nil {
				return 0, err
			}
			if n < 1 || n > ingestBatch {
				return 0, fmt.Errorf("floor script wrote %d members of %d events", n, ingestBatch)
			}
			return ingestBatch, nil
		}
	}
}

// incrFloorScript is the other exact design: no old code is read; a member's
// last event time (one hash field) gives the change of its tie-break part
// in each view it is in (codes of floorScript's shape on keys of its own:
// (2^30 − score) × 2^22 + the board's tie units since the period's start),
// so each view takes one ZINCRBY (or a ZADD where the member is not in the
// view's period yet). Exact only while every
// event writes every view at its own time and nothing is removed; like
// floorScript it answers nothing, keeps nothing else and sends numbers as
// integer text.
var incrFloorScript = redis.NewScript(`
local tnow, nv = tonumber(ARGV[1]), tonumber(ARGV[2])
local start, unit, tie = {}, {}, {}
for k = 1, nv do
  start[k], unit[k] = ARGV[1 + 2 * k] + 0, ARGV[2 + 2 * k] + 0
  tie[k] = math.floor((tnow - start[k]) / unit[k])
end
local members, values, at = {}, {}, {}
local n = 0
for a = 3 + 2 * nv, #ARGV, 2 do
  local m, v = ARGV[a], ARGV[a + 1] + 0
  local i = at[m]
  if i then values[i] = values[i] + v else n = n + 1; at[m], members[n], values[n] = n, m, v end
end
local span, top = 4194304, 1073741824 -- as floorScript's
local last = redis.call('HMGET', KEYS[nv + 1], unpack(members))
local set = {}
for i = 1, n do
  local m, lt = members[i], tonumber(last[i])
  for k = 1, nv do
    if lt and lt >= start[k] then
      local was = math.floor((lt - start[k]) / unit[k])
      redis.call('ZINCRBY', KEYS[k], string.format('%d', tie[k] - was - values[i] * span), m)
    else
      redis.call('ZADD', KEYS[k], string.format('%d', (top - values[i]) * span + tie[k]), m)
    end
  end
  set[2 * i - 1], set[2 * i] = m, ARGV[1]
end
redis.call('HSET', KEYS[nv + 1], unpack(set))
return n
`)

// incrFloorWork sends ingestBatch events per incrFloorScript call.
func incrFloorWork(rdb *redis.Client) func(*eventGen) work {
	return func(g *eventGen) work {
		keys := newViewKeys("incrfloor:")
		return func(ctx context.Context) (int, error) {
			now := time.Now()
			ks := keys.at(now)
			argv := make([]any, 0, 2+2*len(ks)+2*ingestBatch)
			argv = append(argv, now.UnixMilli(), len(ks))
			for i, start := range keys.starts {
				argv = append(argv, start.UnixMilli(), tieUnits()[i].Milliseconds())
			}
			for range ingestBatch {
				m, v := g.next()
				argv = append(argv, m, v)
			}
			n, err := incrFloorScript.Run(ctx, rdb, append(append([]string{}, ks...), "incrfloor:last"), argv...).Int()
			if err != nil {
				return 0, err
			}
			if n < 1 || n > ingestBatch {
				return 0, fmt.Errorf("incr floor script wrote %d members of %d events", n, ingestBatch)
			}
			return ingestBatch, nil
		}
	}
}

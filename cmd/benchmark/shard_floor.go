package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
)

// The least Redis work of an exact rank card's current standings, with
// the chart's final periods kept by the app (as both boards' cards keep
// them): per view's current period, the member's shard reads its total,
// code and rank, and on the headline its neighbours and their names; on a
// sharded board every other shard also counts the entries before the
// member's codes (ties at the same code included) and reads the
// headline's neighbours around them. One call per shard, the other shards
// after the member's (they need its codes). Measured beside the cards,
// its ratio is the floor of sharded3_card_cpu_vs_unsharded.
//
// ARGV[4] "rows" also answers the headline's rows as a card shows them:
// each neighbour's code (WITHSCORES, which Redis writes out with %.17g)
// and name. Without it the neighbours and names are read, not answered.
// The reply is {per view the member's code (own) or the total (other),
// the rows (member, code, name) flat}; the own call's codes go to the
// other shards from ARGV[5].
const cardFloorLua = `
local mode, member, around, rows = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == 'rows'
local n = #KEYS - 1
local names = KEYS[#KEYS]
local with = rows and {'WITHSCORES'} or {} -- ZRANGE's last argument, if any
local out, shown = {}, {}
local function show(flat)
  if #flat == 0 then return end
  if not rows then
    redis.call('HMGET', names, unpack(flat))
    return
  end
  local ms = {}
  for k = 1, #flat, 2 do ms[#ms + 1] = flat[k] end
  local nm = redis.call('HMGET', names, unpack(ms))
  for k = 1, #ms do
    shown[#shown + 1] = ms[k]
    shown[#shown + 1] = flat[2 * k]
    shown[#shown + 1] = nm[k]
  end
end
for i = 1, n do
  local z = KEYS[i]
  local total = redis.call('ZCARD', z)
  if mode == 'own' then
    local code = redis.call('ZSCORE', z, member)
    local r = code and redis.call('ZRANK', z, member)
    out[i] = code or false
    if i == 1 and r then
      show(redis.call('ZRANGE', z, math.max(r - around, 0), r + around, unpack(with)))
    end
  else
    local code = ARGV[4 + i]
    if code ~= '' then
      redis.call('ZCOUNT', z, '-inf', '(' .. code)
      redis.call('ZCOUNT', z, code, code)
      if i == 1 then
        local flat = redis.call('ZRANGE', z, '(' .. code, '+inf', 'BYSCORE', 'LIMIT', 0, around + 1, unpack(with))
        local below = redis.call('ZRANGE', z, '(' .. code, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, around, unpack(with))
        for _, m in ipairs(below) do flat[#flat + 1] = m end
        show(flat)
      end
    end
    out[i] = total
  end
end
return {out, shown}
`

// cardFloor measures cardFloorLua's CPU per card on board (all masters),
// the headline the week view's current period as the cards read it, its
// rows answered as a card shows them when rows is set.
func (e *env) cardFloor(ctx context.Context, masters []*redis.Client, cfg *ranking.Config, store *ranking.Store, prefix, board string, members []string, around int, rows bool) (float64, error) {
	per, err := e.cardFloorPerMaster(ctx, masters, cfg, store, prefix, board, members, around, rows)
	var total float64
	for _, us := range per {
		total += us
	}
	return total, err
}

// cardFloorPerMaster is cardFloor with each master's CPU per card.
func (e *env) cardFloorPerMaster(ctx context.Context, masters []*redis.Client, cfg *ranking.Config, store *ranking.Store, prefix, board string, members []string, around int, rows bool) ([]float64, error) {
	b, _ := cfg.Board(board)
	now, err := store.Now(ctx)
	if err != nil {
		return nil, err
	}
	// Each shard's keys of the current periods, the week first, found
	// on the masters (the key layout is docs/design.md's).
	var ids []string
	views := []string{"week"}
	for _, v := range b.Views {
		if v.Name != "week" {
			views = append(views, v.Name)
		}
	}
	for _, name := range views {
		v, _ := b.View(name)
		ids = append(ids, name+":"+cfg.Calendar.PeriodAt(v, now).ID)
	}
	type shard struct {
		m    *redis.Client
		keys []string
	}
	byTag := map[string]*shard{}
	for _, m := range masters {
		found, err := m.Keys(ctx, prefix+"{"+board+"*}:z:"+ids[0]).Result()
		if err != nil {
			return nil, err
		}
		for _, k := range found {
			tag := strings.TrimSuffix(k, "z:"+ids[0])
			sh := &shard{m: m}
			for _, id := range ids {
				sh.keys = append(sh.keys, tag+"z:"+id)
			}
			sh.keys = append(sh.keys, tag+"n")
			byTag[tag] = sh
		}
	}
	if len(byTag) != b.Shards {
		return nil, fmt.Errorf("card floor: found %d shards of board %s, want %d", len(byTag), board, b.Shards)
	}
	tagOf := func(member string) string {
		return prefix + "{" + b.ShardTag(ranking.ShardOf(member, b.Shards)) + "}:"
	}
	script := redis.NewScript(cardFloorLua)
	show := ""
	if rows {
		show = "rows"
	}
	us, _, err := e.readCPUPerMaster(ctx, masters, func(ctx context.Context, rng *rand.Rand) error {
		member := members[rng.IntN(len(members))]
		own := tagOf(member)
		sh := byTag[own]
		reply, err := script.Run(ctx, sh.m, sh.keys, "own", member, around, show).Slice()
		if err != nil {
			return err
		}
		if len(reply) != 2 {
			return fmt.Errorf("card floor: reply of %d items", len(reply))
		}
		codes, _ := reply[0].([]any)
		if shown, _ := reply[1].([]any); rows && codes[0] != nil && len(shown) == 0 {
			return fmt.Errorf("card floor: no rows answered for %s", member)
		}
		args := []any{"other", member, around, show}
		for _, c := range codes {
			s, _ := c.(string)
			args = append(args, s)
		}
		for tag, o := range byTag {
			if tag != own {
				if err := script.Run(ctx, o.m, o.keys, args...).Err(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return us, err
}

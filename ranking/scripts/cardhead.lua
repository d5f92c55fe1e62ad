-- cardhead.lua: the headline of a rank card, the one part of its read that
-- depends on what it reads (the neighbours lie around the member's rank,
-- the period is the candidate holding Redis's now). It runs inside the
-- card's MULTI/EXEC beside the plain reads of the card's other periods,
-- so the whole card is one snapshot (card.go: Store.RankCard).
--
-- Go       card.go: cardTx, newCardSlot
-- KEYS     1 the names hash n, then per headline candidate its sorted set
--          z:<view>[@<name>=<value>]:<period>, then the window markers
--          r:… of the candidates that have one (ARGV), then on a board
--          with shared ties the sorted sets of the card's other periods
--          (their standings are read here: a shared rank needs the code)
-- ARGV     member, around, ties ("first"|"shared"), ncand, per candidate
--          its entry: "<m>" (an explicit or the all period: holds any
--          now) or "<m> <start_ms> <end_ms>", m being 0 or the 1-based
--          index of its window marker among the markers in KEYS, then (shared ties) the
--          number of other sorted sets at the end of KEYS
-- Returns  {now_ms, 0} when no candidate holds Redis's now (the caller
--          retries with candidates around now_ms);
--          {now_ms, -2, c} when candidate c holds it but is a window
--          nobody built (the caller builds it, or reads it unchecked);
--          else {now_ms, c, standings, total, pos, code, rank, first_rank,
--          m1, code1, name1, ...}: pos 0 (and nothing after it) when the
--          member has no score; rank its rank (shared ties counted); the
--          neighbours and the member in rank order, from first_rank;
--          standings per other sorted set (shared ties), flat (total,
--          rank (0 = absent), code).

local member, around, shared = ARGV[1], tonumber(ARGV[2]), ARGV[3] == 'shared'
local ncand = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local c, mark = 0, 0
for i = 1, ncand do
  local e = ARGV[4 + i]
  local m, lo, hi = string.match(e, '^(%d+) (%-?%d+) (%-?%d+)$')
  if not m or (now >= tonumber(lo) and now < tonumber(hi)) then
    c, mark = i, tonumber(m or e)
    break
  end
end
if c == 0 then return {now, 0} end
if mark > 0 and redis.call('EXISTS', KEYS[1 + ncand + mark]) == 0 then return {now, -2, c} end

-- rank_of is the rank of code in z at 0-based position pos: 1 + the
-- members ranked strictly before it (shared ties), or pos + 1.
local function rank_of(z, code, pos)
  if shared then return redis.call('ZCOUNT', z, '-inf', '(' .. code) + 1 end
  return pos + 1
end

local standings = {}
if shared then
  local ns = tonumber(ARGV[5 + ncand])
  for k = #KEYS - ns + 1, #KEYS do
    local z = KEYS[k]
    local total = redis.call('ZCARD', z)
    local code = total > 0 and redis.call('ZSCORE', z, member)
    local n = #standings
    if code then
      standings[n + 1], standings[n + 2], standings[n + 3] = total, rank_of(z, code), code
    else
      standings[n + 1], standings[n + 2], standings[n + 3] = total, 0, false
    end
  end
end

local hkey = KEYS[1 + c]
local total = redis.call('ZCARD', hkey)
local r = total > 0 and redis.call('ZRANK', hkey, member)
if not r then return {now, c, standings, total, 0} end
local lo = r - around
if lo < 0 then lo = 0 end
local flat = redis.call('ZRANGE', hkey, lo, r + around, 'WITHSCORES')
local code = flat[2 * (r - lo) + 2] -- the member's own entry
local out = {now, c, standings, total, r + 1, code, rank_of(hkey, code, r), rank_of(hkey, flat[2], lo)}
append_entries(out, flat, KEYS[1])
return out

-- sweep.lua: one bounded step of the walk that forgets members who have no
-- score left in any retained period of the board (contract 14): their
-- display name and its folded form in n, their entries in the search
-- index (ni and its blocks nb), and their segment member record in sm.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, redis_now.)
--
-- The walk visits n, then ni, then sm, then nb (a member may be in one and
-- not the others: no name, or a record left by a removal), each with a
-- SCAN cursor kept in the hash sw (fields "phase" 1..4 and "cursor"), one
-- SCAN of about count entries per call (in nb, of about one block, at
-- most 1 KB). Every member it meets is looked up in each
-- declared period key (ZMSCORE, members still unresolved only); one found
-- in none is forgotten in the same call, so a write cannot slip in between
-- the check and the delete. A member's name entry goes from ni or the
-- blocks; its id entry (its folded id, which Lua cannot compute) goes
-- when the walk meets it in ni or nb.
--
-- Go reads the registry k first and declares the z key of every live entry
-- of the board's own views (segment boards need none: every event that
-- gives a member a segment score gives it one in the board's same period,
-- kept as long). Entries can appear after that read only for periods a
-- write or a window build may still create; Go lists those it did not
-- declare as watched, and the script changes nothing and answers -1 when
-- one of them is live in k now, or when Redis's now is outside the time
-- span Go's lists were made for (Go reads again).
--
-- Go       sweep_proto.go: sweepRequest, decodeSweep
-- KEYS     (one shard's, on a sharded board: each shard walks its own
--          members) 1 the cursor hash sw, 2 the names hash n, 3 the
--          search index ni, 4 the member records sm, 5 the registry k,
--          6 the search index's block bounds nx, 7 its blocks nb, then
--          z:<entry> per declared entry
-- ARGV     from_ms, until_ms (the span of Redis's now the lists hold for),
--          count (SCAN hint), nwatch, then nwatch watched registry entries
-- Returns  {status, phase, met, forgotten, cycled}: status 1 (done) or -1
--          (nothing changed: read the registry again); phase the
--          structure walked (1 n, 2 ni, 3 sm, 4 nb); met the distinct
--          members looked up; forgotten those removed; cycled 1 when this
--          call ended a walk of all four

local call = redis.call
local sw, names, ni, sm, reg = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local nx, nb = KEYS[6], KEYS[7]
local from, till, count = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local nwatch = tonumber(ARGV[4])
local now = redis_now()
if now < from or now > till then
  return {-1, 0, 0, 0, 0}
end
if nwatch > 0 then
  local got = call('ZMSCORE', reg, unpack(ARGV, 5, 4 + nwatch))
  for k = 1, nwatch do
    if got[k] and num(got[k]) > now then return {-1, 0, 0, 0, 0} end
  end
end

local state = call('HMGET', sw, 'phase', 'cursor')
local phase, cursor = tonumber(state[1]) or 1, state[2] or '0'
if phase < 1 or phase > 4 then phase, cursor = 1, '0' end

-- The members met, in order, and for the ni and nb phases the entries
-- seen of each (an entry holds the member after its first NUL).
local members, entries = {}, {}
local function meet(m, entry)
  if not entries[m] then
    entries[m] = {}
    members[#members + 1] = m
  end
  if entry then table.insert(entries[m], entry) end
end
local function before_nul(f)
  local sep = string.find(f, '\0', 1, true)
  if sep then return string.sub(f, 1, sep - 1) end
  return f
end

local reply
if phase == 4 then
  reply = call('HSCAN', nb, cursor, 'COUNT', 1)
  local flat = reply[2]
  for k = 2, #flat, 2 do
    for e in string.gmatch(flat[k], '[^\n]+') do
      local sep = string.find(e, '\0', 1, true)
      if sep then meet(string.sub(e, sep + 1), e) end
    end
  end
elseif phase == 2 then
  reply = call('ZSCAN', ni, cursor, 'COUNT', count)
  local flat = reply[2]
  for k = 1, #flat, 2 do
    local e = flat[k]
    local sep = string.find(e, '\0', 1, true)
    if sep then meet(string.sub(e, sep + 1), e) end
  end
else
  reply = call('HSCAN', phase == 1 and names or sm, cursor, 'COUNT', count)
  local flat = reply[2]
  for k = 1, #flat, 2 do meet(before_nul(flat[k])) end
end

-- Liveness: each declared period key answers for the members not found
-- yet; at most #members × (#KEYS - 7) lookups.
local open = members
for zi = 8, #KEYS do
  if #open == 0 then break end
  local got = call('ZMSCORE', KEYS[zi], unpack(open))
  local still = {}
  for k = 1, #open do
    if not got[k] then still[#still + 1] = open[k] end
  end
  open = still
end

local walked_nb = phase == 4
for _, m in ipairs(open) do
  local fold = call('HGET', names, m .. '\0k')
  local drop = entries[m]
  if walked_nb then
    for _, e in ipairs(drop) do idx_del(nx, nb, e) end
    drop = {}
  end
  if #drop > 0 then call('ZREM', ni, unpack(drop)) end
  if fold then
    local e = fold .. '\0' .. m
    if call('ZREM', ni, e) == 0 then idx_del(nx, nb, e) end
  end
  call('HDEL', names, m, m .. '\0k')
  call('HDEL', sm, m, m .. '\0p')
end

local next_cursor, cycled = reply[1], 0
local walked = phase
if next_cursor == '0' then
  phase = phase + 1
  if phase > 4 then phase, cycled = 1, 1 end
end
call('HSET', sw, 'phase', phase, 'cursor', next_cursor)
-- The cursor is worth little once the walk has stopped (a board gone from
-- the boards file): let it go after a day.
call('PEXPIRE', sw, 86400000)
return {1, walked, #members, #open, cycled}

-- card.lua: everything a rank card shows, read in one call so it is one
-- consistent snapshot: the member's row in one period of one view with its
-- neighbours, its score, rank and total in the periods before (the chart),
-- and its standing in the current period of every view of the board.
-- Periods are chosen by Redis's clock among candidates, as read.lua does.
--
-- Go       card.go: cardRequest, decodeCard
-- KEYS[1]       the board's names hash ("<prefix>{board}:n")
-- KEYS[2..]     per period entry in ARGV order (below): its sorted set
--               "z:<view>:<period>", then, only when the entry's check flag
--               is "1", its window marker "r:<view>:<period>"
-- ARGV          view, ties ("first"|"shared"), member, around, n (history
--               length), ncand, nviews, then
--               n+ncand-1 entries of the view, oldest first: the last ncand
--               are the candidates of the headline period, the history is
--               the n entries that end with the chosen one; then
--               per view of the board: view name, ncand, ncand entries;
--               then nsegs, per segment board of the member: name, value,
--               ncand entries of the view (its keys
--               "z:<view>@<name>=<value>:<period>", "r:…");
--               then mover: "" or the member whose newest overtake of
--               the member the caller found in the view's overtakes (its
--               name is answered);
--               then seg_check ("1" or "0") and the member's segment record
--               ("name=value" lines, "" = none) the segment boards above
--               were declared from: with "1", the member record hash "sm"
--               follows the entries' keys and a record that changed since is
--               answered {now_ms, -3, record} (the caller declares the
--               boards of that record and reads again);
--               then kept: one character per entry of the view (the
--               first n+ncand-1 entries), "1" where the caller keeps that
--               period's point (its history answer is then {-1, 0,
--               false}), else "0"; and the final periods' version the
--               caller kept them under: the board's version key "fv" is
--               the last KEYS, and when the version differs every period
--               is read (a removal changed what the caller kept).
--               The view's and the views' keys are those of the segment
--               board read (z:<view>@<name>=<value>:…) for a segment card.
--               An entry is one argument, "<check> <start_ms> <end_ms> <id>":
--               check "1" for a rolling window that must be built (an
--               unbuilt history period reads as absent), else "0"; the
--               period's [start, end) and id. An explicit period is one
--               candidate covering all time.
-- Returns       {now_ms, 0} when some view has no candidate containing now
--               (the caller retries with candidates around now_ms),
--               {now_ms, -2, view, period, segment name, segment value}
--               when a chosen window must be built first ("needs build";
--               the caller runs ensure.lua, or sends check "0" for a window
--               that can no longer be built; the segment is "" "" for the
--               card's own board), else {now_ms, 1, head, history, views,
--               segments, passed, version}:
--               head    {chosen, total, pos (0 = absent), code,
--                        first_rank, m1, code1, name1, ...}: the neighbours
--                        and the member (its name among theirs) in rank
--                        order; history and views
--                        are empty when the member is absent
--               history n × (total, rank (0 = absent, -1 = a window
--                        nobody built: read as absent), code), oldest
--                        first, flat (3n items)
--               views   per view (chosen, total, rank (0 = absent), code),
--                        flat (4 items per view)
--               segments per segment board (total, rank (0 = absent),
--                        code) in the chosen period, flat
--               passed  {} or {the mover's name or false} (mover given)
--               version the board's version key's value, or false
-- A period read twice (the headline's is also in the history and the
-- views) is read once.

local view = ARGV[1]
local ties = ARGV[2]
local member = ARGV[3]
local around = tonumber(ARGV[4])
local n = tonumber(ARGV[5])
local ncand = tonumber(ARGV[6])
local nviews = tonumber(ARGV[7])
local nkey = KEYS[1]

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- The period entries in ARGV order are numbered 1, 2, ...: entry k is
-- ARGV[ea[k]], its sorted set KEYS[ek[k]] and, when checked, its window
-- marker KEYS[ek[k] + 1]. Fields are parsed when used: most entries are
-- only candidates, never read.
local nentries = 0
local a, ki = 8, 2
local ea, ek = {}, {}
local function entry()
  nentries = nentries + 1
  ea[nentries], ek[nentries] = a, ki
  if string.byte(ARGV[a], 1) == 49 then ki = ki + 2 else ki = ki + 1 end -- "1": checked
  a = a + 1
end
local function checked(k) return string.byte(ARGV[ea[k]], 1) == 49 end
local function period_id(k) return string.match(ARGV[ea[k]], '^%d %-?%d+ %-?%d+ (.*)$') end

-- choose returns c (1-based) for the one of the count entries from first
-- whose [start, end) contains now (candidates are consecutive periods), or
-- 0. The middle candidate, the current period by the local estimate, is
-- tried first: it is nearly always the one.
local function contains(k)
  local lo, hi = string.match(ARGV[ea[k]], '^%d (%-?%d+) (%-?%d+)')
  return now >= tonumber(lo) and now < tonumber(hi)
end
local function choose(first, count)
  local mid = math.floor((count + 1) / 2)
  if contains(first + mid - 1) then return mid end
  for c = 1, count do
    if c ~= mid and contains(first + c - 1) then return c end
  end
  return 0
end

-- The view's entries: the history, ending with the ncand candidates of
-- the headline period (entries n .. n+ncand-1).
for _ = 1, n + ncand - 1 do entry() end
local mchosen = choose(n, ncand)
local head = n - 1 + mchosen

local vname, vchosen = {}, {}
for j = 1, nviews do
  vname[j] = ARGV[a]
  local nc = tonumber(ARGV[a + 1])
  a = a + 2
  local first = nentries + 1
  for _ = 1, nc do entry() end
  local c = choose(first, nc)
  if c == 0 then return {now, 0} end
  vchosen[j] = {c, first + c - 1}
end
if mchosen == 0 then return {now, 0} end

-- The member's segment boards: the headline's candidates of each.
local nsegs = tonumber(ARGV[a])
a = a + 1
local segs = {}
for g = 1, nsegs do
  local sg = {name = ARGV[a], value = ARGV[a + 1]}
  a = a + 2
  local first = nentries + 1
  for _ = 1, ncand do entry() end
  sg.e = first + mchosen - 1
  segs[g] = sg
end

local mover = ARGV[a]
local seg_check, seg_guess = ARGV[a + 1] == '1', ARGV[a + 2]
if seg_check then
  local rec = redis.call('HGET', KEYS[ki], member) or ''
  if rec ~= seg_guess then return {now, -3, rec} end
  ki = ki + 1
end
local kept, version_guess = ARGV[a + 3], ARGV[a + 4]
local version = redis.call('GET', KEYS[ki])
if version ~= version_guess then kept = '' end

local function built(k)
  return not checked(k) or redis.call('EXISTS', KEYS[ek[k] + 1]) == 1
end

if not built(head) then return {now, -2, view, period_id(head), '', ''} end
for j = 1, nviews do
  local k = vchosen[j][2]
  if not built(k) then return {now, -2, vname[j], period_id(k), '', ''} end
end
for _, sg in ipairs(segs) do
  if not built(sg.e) then return {now, -2, view, period_id(sg.e), sg.name, sg.value} end
end

-- rank_of is the rank of code in zkey: 1 + members ranked strictly before
-- (shared ties), or the position (first ties).
local function rank_of(zkey, code, pos)
  if ties == 'shared' then
    return redis.call('ZCOUNT', zkey, '-inf', '(' .. code) + 1
  end
  return pos + 1
end

-- standing is the member's {total, rank, code} in entry k; a key is read
-- once. Most of a chart's periods are often empty: they share one table.
local read = {}
local EMPTY, UNBUILT, KEPT = {0, 0, false}, {0, -1, false}, {-1, 0, false}
local function standing(k)
  local zkey = KEYS[ek[k]]
  local s = read[zkey]
  if s then return s end
  if not built(k) then return UNBUILT end
  local total = redis.call('ZCARD', zkey)
  if total == 0 then return EMPTY end
  local r = redis.call('ZRANK', zkey, member)
  if not r then
    s = {total, 0, false}
  else
    local code = redis.call('ZSCORE', zkey, member)
    s = {total, rank_of(zkey, code, r), code}
  end
  read[zkey] = s
  return s
end

local hkey = KEYS[ek[head]]
local total = redis.call('ZCARD', hkey)
local r = redis.call('ZRANK', hkey, member)
if not r then
  return {now, 1, {mchosen, total, 0}, {}, {}, {}, {}, version}
end
local code = redis.call('ZSCORE', hkey, member)
read[hkey] = {total, rank_of(hkey, code, r), code}
local lo = r - around
if lo < 0 then lo = 0 end
local flat = redis.call('ZRANGE', hkey, lo, r + around, 'WITHSCORES')
local hrow = {mchosen, total, r + 1, code, rank_of(hkey, flat[2], lo)}
append_entries(hrow, flat, nkey)

-- history, views and segments are flat: 3 (or 4) items per standing.
local history = {}
for k = mchosen, mchosen + n - 1 do
  local s
  if k ~= head and string.byte(kept, k) == 49 then s = KEPT else s = standing(k) end
  history[#history + 1] = s[1]
  history[#history + 1] = s[2]
  history[#history + 1] = s[3]
end

local views = {}
for j = 1, nviews do
  local s = standing(vchosen[j][2])
  views[#views + 1] = vchosen[j][1]
  views[#views + 1] = s[1]
  views[#views + 1] = s[2]
  views[#views + 1] = s[3]
end

local seg_standings = {}
for _, sg in ipairs(segs) do
  local s = standing(sg.e)
  seg_standings[#seg_standings + 1] = s[1]
  seg_standings[#seg_standings + 1] = s[2]
  seg_standings[#seg_standings + 1] = s[3]
end

local passed = {}
if mover ~= '' then passed = {redis.call('HGET', nkey, mover)} end

return {now, 1, hrow, history, views, seg_standings, passed, version}

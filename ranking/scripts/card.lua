-- card.lua: everything a rank card shows, read in one call so it is one
-- consistent snapshot: the member's row in one period of one view with its
-- neighbours, its score, rank and total in the periods before (the chart),
-- and its standing in the current period of every view of the board.
-- Periods are chosen by Redis's clock among candidates, as read.lua does.
--
-- KEYS[1]       the board's names hash ("<prefix>{board}:n")
-- KEYS[2k], KEYS[2k+1]
--               for the k-th period entry in ARGV order (below): its sorted
--               set "z:<view>:<period>" and its window marker
--               "r:<view>:<period>" (declared for every view, read only when
--               the entry's check flag is "1")
-- ARGV          view, ties ("first"|"shared"), member, around, n (history
--               length), ncand, nviews, then
--               n+ncand-1 entries of the view, oldest first: the last ncand
--               are the candidates of the headline period, the history is
--               the n entries that end with the chosen one; then
--               per view of the board: view name, ncand, ncand entries;
--               then nsegs, per segment board of the member: name, value,
--               ncand entries of the view (its keys
--               "z:<view>@<name>=<value>:<period>", "r:…");
--               then passed_top: 0, or how many overtakes of the view the
--               overtakes list "mv:<view>" keeps (its key is then the last
--               KEYS), to find who last passed the member in the chosen
--               period.
--               The view's and the views' keys are those of the segment
--               board read (z:<view>@<name>=<value>:…) for a segment card.
--               An entry is: period id, start_ms, end_ms, check ("1": a
--               rolling window that must be built; an unbuilt history period
--               reads as absent). An explicit period is one candidate
--               covering all time.
-- Returns       {now_ms, 0} when some view has no candidate containing now
--               (the caller retries with candidates around now_ms),
--               {now_ms, -2, view, period, segment name, segment value}
--               when a chosen window must be built first ("needs build";
--               the caller runs ensure.lua, or sends check "0" for a window
--               that can no longer be built; the segment is "" "" for the
--               card's own board), else {now_ms, 1, head, history, views,
--               segments, passed}:
--               head    {chosen, total, pos (0 = absent), code, name,
--                        first_rank, m1, code1, name1, ...}: the neighbours
--                        and the member in rank order; history and views
--                        are empty when the member is absent
--               history n × {total, rank (0 = absent), code}, oldest first
--               views   per view {chosen, total, rank (0 = absent), code}
--               segments per segment board {total, rank (0 = absent), code}
--                        in the chosen period
--               passed  {} or the newest overtake of the member in the
--                        chosen period: {"<period>\t<mover>\t<member>\t<rank>\t<at_ms>",
--                        the mover's name or false}
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

-- Parse the period entries in ARGV order; entry k owns KEYS[2k], KEYS[2k+1].
local nentries = 0
local a = 8
local function entry(vname)
  nentries = nentries + 1
  local e = {view = vname, id = ARGV[a], lo = tonumber(ARGV[a + 1]), hi = tonumber(ARGV[a + 2]),
    check = ARGV[a + 3] == '1', zkey = KEYS[2 * nentries], rkey = KEYS[2 * nentries + 1]}
  a = a + 4
  return e
end

-- choose returns the index of the first candidate containing now, or 0.
local function choose(cands)
  for c = 1, #cands do
    if now >= cands[c].lo and now < cands[c].hi then return c end
  end
  return 0
end

local main = {}
for i = 1, n + ncand - 1 do main[i] = entry(view) end
local mcands = {}
for c = 1, ncand do mcands[c] = main[n - 1 + c] end
local mchosen = choose(mcands)

local vchosen, vcands = {}, {}
for j = 1, nviews do
  local vname = ARGV[a]
  local nc = tonumber(ARGV[a + 1])
  a = a + 2
  local cands = {}
  for c = 1, nc do cands[c] = entry(vname) end
  vcands[j] = cands
  vchosen[j] = choose(cands)
end

if mchosen == 0 then return {now, 0} end
for j = 1, nviews do
  if vchosen[j] == 0 then return {now, 0} end
end

-- The member's segment boards: the headline's candidates of each.
local nsegs = tonumber(ARGV[a])
a = a + 1
local segs = {}
for g = 1, nsegs do
  local sg = {name = ARGV[a], value = ARGV[a + 1]}
  a = a + 2
  local cands = {}
  for c = 1, ncand do cands[c] = entry(view) end
  sg.e = cands[mchosen]
  segs[g] = sg
end

local passed_top = tonumber(ARGV[a])
local mvkey = KEYS[2 * nentries + 2]

local function built(e)
  return not e.check or redis.call('EXISTS', e.rkey) == 1
end

local head = mcands[mchosen]
if not built(head) then return {now, -2, head.view, head.id, '', ''} end
for j = 1, nviews do
  local e = vcands[j][vchosen[j]]
  if not built(e) then return {now, -2, e.view, e.id, '', ''} end
end
for _, sg in ipairs(segs) do
  if not built(sg.e) then return {now, -2, view, sg.e.id, sg.name, sg.value} end
end

-- rank_of is the rank of code in zkey: 1 + members ranked strictly before
-- (shared ties), or the position (first ties).
local function rank_of(zkey, code, pos)
  if ties == 'shared' then
    return redis.call('ZCOUNT', zkey, '-inf', '(' .. code) + 1
  end
  return pos + 1
end

-- standing is the member's {total, rank, code} in entry e; a key is read
-- once.
local read = {}
local function standing(e)
  local s = read[e.zkey]
  if s then return s end
  if not built(e) then return {0, 0, false} end
  local total = redis.call('ZCARD', e.zkey)
  local r = total > 0 and redis.call('ZRANK', e.zkey, member)
  if not r then
    s = {total, 0, false}
  else
    local code = redis.call('ZSCORE', e.zkey, member)
    s = {total, rank_of(e.zkey, code, r), code}
  end
  read[e.zkey] = s
  return s
end

local total = redis.call('ZCARD', head.zkey)
local r = redis.call('ZRANK', head.zkey, member)
if not r then
  return {now, 1, {mchosen, total, 0}, {}, {}, {}, {}}
end
local code = redis.call('ZSCORE', head.zkey, member)
read[head.zkey] = {total, rank_of(head.zkey, code, r), code}
local lo = r - around
if lo < 0 then lo = 0 end
local flat = redis.call('ZRANGE', head.zkey, lo, r + around, 'WITHSCORES')
local hrow = {mchosen, total, r + 1, code, redis.call('HGET', nkey, member), rank_of(head.zkey, flat[2], lo)}
append_entries(hrow, flat, nkey)

local history = {}
for i = mchosen, mchosen + n - 1 do
  table.insert(history, standing(main[i]))
end

local views = {}
for j = 1, nviews do
  local s = standing(vcands[j][vchosen[j]])
  table.insert(views, {vchosen[j], s[1], s[2], s[3]})
end

local seg_standings = {}
for _, sg in ipairs(segs) do
  table.insert(seg_standings, standing(sg.e))
end

-- Who last passed the member: the overtakes are newest first, each
-- "<period>\t<mover>\t<passed>\t<rank>\t<at_ms>".
local passed = {}
if passed_top > 0 then
  local want = head.id .. '\t'
  local needle = '\t' .. member .. '\t'
  for _, line in ipairs(redis.call('LRANGE', mvkey, 0, passed_top - 1)) do
    if string.sub(line, 1, #want) == want and string.find(line, needle, 1, true) then
      local mover, who = string.match(line, '^[^\t]*\t([^\t]*)\t([^\t]*)\t')
      if who == member then
        passed = {line, redis.call('HGET', nkey, mover)}
        break
      end
    end
  end
end

return {now, 1, hrow, history, views, seg_standings, passed}

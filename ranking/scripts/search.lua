-- search.lua: members whose display name or id starts with a prefix.
--
-- (lib.lua is prepended.)
--
-- The index holds "<folded text>\0<member>" entries for ids and display
-- names: recent ones in ni, all scored 0, so ZRANGE BYLEX finds a
-- prefix's entries in order; they are read in pages until limit distinct
-- members are found (a member may match by name and by id), at most 4
-- pages, so the work is bounded whatever the board's size. The others are
-- in the blocks (nx, nb: lib.lua's idx_find, filled by compact.lua),
-- whose first 2 × limit matches are merged with ni's in byte order: a
-- member has at most two entries in each, so those hold the first limit
-- members. Folded text is UTF-8 and never holds the byte 0xff.
--
-- Go       names.go: SearchMembers
-- KEYS     1 the index ni, 2 the names hash n, 3 the blocks' bounds nx,
--          4 the blocks nb
-- ARGV     1 the folded prefix, 2 limit, 3 (optional) "1" to add each
--          member's first matching entry (a shard of a sharded board: Go
--          merges the shards' answers in the entries' order)
-- Returns  {member1, name1 or false, member2, ...}; with ARGV[3] "1",
--          {member1, name1 or false, entry1, member2, ...}

local ni, names = KEYS[1], KEYS[2]
local prefix, limit = ARGV[1], tonumber(ARGV[2])
local with_entry = ARGV[3] == '1'
local seen, members, firsts = {}, {}, {}
local function member_of(e)
  local sep = string.find(e, '\0', 1, true)
  return string.sub(e, sep + 1)
end
local from_ni, met = {}, {}
local lo = '[' .. prefix
for _ = 1, 4 do
  local page = redis.call('ZRANGE', ni, lo, '[' .. prefix .. '\255', 'BYLEX', 'LIMIT', 0, 2 * limit)
  for _, e in ipairs(page) do
    from_ni[#from_ni + 1] = e
    met[member_of(e)] = true
  end
  local n = 0
  for _ in pairs(met) do n = n + 1 end
  if n >= limit or #page < 2 * limit then break end
  lo = '(' .. page[#page]
end
local from_ids = idx_find(KEYS[3], KEYS[4], prefix, 2 * limit)
local a, b = 1, 1
while #members < limit and (a <= #from_ni or b <= #from_ids) do
  local e
  if b > #from_ids or (a <= #from_ni and not bytes_less(from_ids[b], from_ni[a])) then
    e = from_ni[a]
    a = a + 1
  else
    e = from_ids[b]
    b = b + 1
  end
  local m = member_of(e)
  if not seen[m] then
    seen[m] = true
    members[#members + 1] = m
    firsts[#members] = e
  end
end
local out = {}
if #members > 0 then
  local got = redis.call('HMGET', names, unpack(members))
  for k, m in ipairs(members) do
    out[#out + 1] = m
    out[#out + 1] = got[k]
    if with_entry then out[#out + 1] = firsts[k] end
  end
end
return out

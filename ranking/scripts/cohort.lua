-- cohort.lua: read one league cohort of a round (its members in rank order
-- with codes, names and outcomes), chosen by number or by a member of it;
-- or a round's overview. Read only; one cohort is cohort_size members at
-- most, and an overview lists at most max_cohorts cohorts per tier.
--
-- (lib.lua is prepended: fmt, num, cohort_rows, cohort_index, redis_now.)
--
-- Go       league_read.go: cohortRequest, overviewRequest, decodeCohort, decodeOverview
-- KEYS     1 z:~lg:<round>, 2 lg:<round>:m, 3 lg:<round>:f, 4 the names hash n
-- ARGV     "c", tier level, cohort number: that cohort
--          "m", member: the member's cohort
--          "o", ntiers, cohort_size, max_cohorts: the overview
-- Returns  c, m: {now_ms, level, cohort, decided (0|1), member, code, name
--          ("" none), outcome ("" undecided, else 1|0|-1), ...};
--          {now_ms, 0, 0, 0} when the member is not placed
--          o: {now_ms, per tier: seats, members, ncohorts listed, per
--          listed cohort: members, decided (0|1)}

local z, m, f, n = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = redis_now()
local mode = ARGV[1]

if mode == 'o' then
  local ntiers, size, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local out = {now}
  for level = 1, ntiers do
    local seats = tonumber(redis.call('HGET', f, 'c:' .. level) or '0')
    local members = redis.call('ZCOUNT', m, fmt(cohort_index(level, 0)), fmt(cohort_index(level + 1, 0) - 1))
    local listed = math.min(math.ceil(seats / size), cap)
    out[#out + 1] = seats
    out[#out + 1] = members
    out[#out + 1] = listed
    if listed > 0 then
      local fields = {}
      for c = 1, listed do
        fields[#fields + 1] = 'n:' .. level .. ':' .. c
        fields[#fields + 1] = 'd:' .. level .. ':' .. c
      end
      local got = redis.call('HMGET', f, unpack(fields))
      for k = 1, #got, 2 do
        out[#out + 1] = tonumber(got[k] or '0')
        out[#out + 1] = got[k + 1] and 1 or 0
      end
    end
  end
  return out
end

local idx
if mode == 'm' then
  local s = redis.call('ZSCORE', m, ARGV[2])
  if not s then return {now, 0, 0, 0} end
  idx = num(s)
else
  idx = cohort_index(tonumber(ARGV[2]), tonumber(ARGV[3]))
end
local level = math.floor(idx / 4294967296)
local c = idx - level * 4294967296
local decided = redis.call('HEXISTS', f, 'd:' .. level .. ':' .. c)
local out = {now, level, c, decided}
local rows = cohort_rows(z, m, idx)
if #rows == 0 then return out end
local members, fields = {}, {}
for k, r in ipairs(rows) do
  members[k] = r.m
  fields[k] = 'o:' .. r.m
end
local names = redis.call('HMGET', n, unpack(members))
local outcomes = {}
if decided == 1 then outcomes = redis.call('HMGET', f, unpack(fields)) end
for k, r in ipairs(rows) do
  out[#out + 1] = r.m
  out[#out + 1] = fmt(r.c)
  out[#out + 1] = names[k] or ''
  out[#out + 1] = outcomes[k] or ''
end
return out

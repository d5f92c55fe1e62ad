-- compact.lua: one bounded step of the search index's compaction: entries
-- of ni move into the blocks (lib.lua's idx_merge), where an entry costs
-- its bytes and a newline instead of a skiplist node. Writes add to ni
-- only, at the cost of one ZADD per batch; this moves them later.
--
-- (lib.lua is prepended.)
--
-- ni is left as it is while it holds fewer than threshold entries (a small
-- sorted set is a compact listpack) or fewer than per_block entries per
-- block: a call's work is per block it reads and writes, and new ids are
-- spread over all of them, so ni buffers about per_block entries per block
-- and each block written takes about that many. The call takes the count
-- entries that follow the last one moved (the cursor nc; from ni's first
-- past its end: ZRANGE BYLEX, all scores are 0, so they come in byte
-- order; all of ni when fewer than threshold would be left), merges them
-- into the blocks with one read and one write per block they fall in, up
-- to the most blocks, and those merged leave ni, in the same call. The
-- cursor walks ni round, so every entry waits about as long.
--
-- Go       compact_proto.go: compactRequest, decodeCompact
-- KEYS     1 the search index ni, 2 its blocks' bounds nx, 3 its blocks nb,
--          4 the cursor nc
-- ARGV     1 count (most entries moved, but for a remainder under
--          threshold), 2 threshold (fewest entries in ni that are moved),
--          3 the blocks' largest size in bytes before a cut, 4 the most
--          blocks written (at least 1), 5 per_block (fewest entries in
--          ni per block that are moved; 0: any)
-- Returns  {moved, left}: the entries moved, and those left in ni

local ni, nx, nb, nc = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local count, threshold, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local blocks, per_block = math.max(1, tonumber(ARGV[4])), tonumber(ARGV[5])
local n = redis.call('ZCARD', ni)
if n == 0 or n < threshold then return {0, n} end
if per_block > 0 and n < per_block * redis.call('HLEN', nb) then return {0, n} end
-- A remainder below the threshold goes too: ni then goes, with its hash
-- table sized for the most entries it held.
local entries
if n - count < threshold then
  count = n
  entries = redis.call('ZRANGE', ni, 0, count - 1)
else
  local from = redis.call('GET', nc)
  if from then entries = redis.call('ZRANGE', ni, '(' .. from, '+', 'BYLEX', 'LIMIT', 0, count) end
  if not from or #entries == 0 then entries = redis.call('ZRANGE', ni, 0, count - 1) end
end
local moved = idx_merge(nx, nb, entries, max, blocks)
-- One range: the entries moved are consecutive in ni. ZREMRANGEBY* also
-- shrinks ni's hash table (ZREM leaves it at its largest).
redis.call('ZREMRANGEBYLEX', ni, '[' .. entries[1], '[' .. entries[moved])
redis.call('SET', nc, entries[moved])
return {moved, n - moved}

-- compact.lua: one bounded step of the search index's compaction: ni's
-- first entries move into the blocks (lib.lua's idx_merge), where an entry
-- costs its bytes and a newline instead of a skiplist node. Writes add to
-- ni only, at the cost of one ZADD per batch; this moves them later.
--
-- (lib.lua is prepended.)
--
-- An ni of fewer than threshold entries is left as it is (a small sorted
-- set is a compact listpack), so the step costs one ZCARD. Otherwise the
-- first count entries, or all when fewer than threshold would be left
-- (ZRANGE by index: all scores are 0, so they come in byte order), are
-- merged into the blocks with one read and one write per
-- block they fall in, and leave ni, in the same call.
--
-- Go       compact_proto.go: compactRequest, decodeCompact
-- KEYS     1 the search index ni, 2 its blocks' bounds nx, 3 its blocks nb
-- ARGV     1 count (most entries moved, but for a remainder under
--          threshold), 2 threshold (fewest entries in ni that are moved),
--          3 the blocks' largest size in bytes before a cut
-- Returns  {moved, left}: the entries moved, and those left in ni

local ni, nx, nb = KEYS[1], KEYS[2], KEYS[3]
local count, threshold, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local n = redis.call('ZCARD', ni)
if n < threshold or n == 0 then return {0, n} end
-- A remainder below the threshold goes too: ni then goes, with its hash
-- table sized for the most entries it held (ZREM never shrinks it, and
-- ZREMRANGEBYRANK's shrink completes only over later calls).
if n - count < threshold then count = n end
local entries = redis.call('ZRANGE', ni, 0, count - 1)
idx_merge(nx, nb, entries, max)
-- By rank: one command, and ni's hash table starts to shrink.
redis.call('ZREMRANGEBYRANK', ni, 0, #entries - 1)
return {#entries, n - #entries}

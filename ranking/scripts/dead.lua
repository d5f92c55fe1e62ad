-- dead.lua: copy a bad ingest entry to the dead-letter stream and
-- acknowledge it in one step, so a crash can neither lose nor duplicate a
-- dead letter.
-- Go       stream_proto.go: deadRequest
-- KEYS[1] the ingest stream, KEYS[2] the dead-letter stream (same slot).
-- ARGV[1] group, ARGV[2] source entry id, ARGV[3] error message,
-- ARGV[4..] the entry's own field/value pairs.
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
fields[#fields + 1] = 'error'
fields[#fields + 1] = ARGV[3]
fields[#fields + 1] = 'source_id'
fields[#fields + 1] = ARGV[2]
-- Only an entry still pending is dead-lettered: a second consumer that
-- claimed the same entry finds it acked and adds nothing.
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #pending == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', unpack(fields))
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 1

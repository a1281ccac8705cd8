-- One occurrence of a schedule (or one firing of a reminder) is run by one replica.
-- KEYS[1]: the schedule's claim key; ARGV[1]: the occurrence (Unix seconds); ARGV[2]: seconds to keep the key.
-- The key holds the latest occurrence claimed: a claim for it or an earlier one is refused.
local current = redis.call('GET', KEYS[1])
if current and tonumber(current) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
return 1

-- A counter every replica adds to, in fixed windows (the loop guard of groups.max_bot_turns, issue 38).
-- KEYS[1]: the counter; ARGV[1]: the window in milliseconds, starting with the first count after the last ended.
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
end
return n

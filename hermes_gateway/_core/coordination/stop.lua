-- Stop a chat's reply running on another replica (/stop, /new, or a message under busy: interrupt).
-- KEYS[1]: the chat's lease. ARGV: my replica id, the events channel, the message.
-- Returns 1 when another replica holds the lease (it was told), else 0 (nothing runs elsewhere).
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0

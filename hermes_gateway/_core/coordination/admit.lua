-- Admit a batch of received messages: answer each update once, whichever replica got it, and number the
-- admitted ones in arrival order (a ticket), so chat leases go to the oldest waiting message first.
--
-- KEYS[1]     the arrivals counter
-- KEYS[2..]   one "seen" key per message (a message without an update id passes the counter key)
-- ARGV[1]     how long an update id is remembered (seconds)
-- ARGV[2..]   per message: 1 if it has an update id, else 0
--
-- Returns one number per message: its ticket, or 0 when the update was already received.
local out = {}
for i = 2, #KEYS do
  local first = 1
  if ARGV[i] == '1' then
    if not redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[1]) then first = 0 end
  end
  if first == 1 then out[#out + 1] = redis.call('INCR', KEYS[1]) else out[#out + 1] = 0 end
end
return out

-- Keep chats' leases while their replies run: every lease a replica holds, in one call per renewal tick.
-- KEYS: lease 1, held 1, lease 2, held 2, ... ARGV: my replica id, lease TTL (ms), held TTL (ms).
-- Returns one number per lease: 1, or 0 when it is no longer mine (it expired and another replica took it).
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[3])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out

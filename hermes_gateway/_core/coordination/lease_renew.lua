-- Keep a chat's lease while its reply runs. KEYS: lease, held. ARGV: my replica id, lease TTL (ms), held TTL (ms).
-- Returns 1, or 0 when the lease is no longer mine (it expired and another replica took it).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
return 0

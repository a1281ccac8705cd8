-- Give a chat's lease back (compare and delete: only the holder can), and tell waiting replicas at once.
-- KEYS: lease, held. ARGV: my replica id, the events channel, the message announcing the lease is free.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0

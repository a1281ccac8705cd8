-- Take one call from a chat's bucket AND its bot's bucket, atomically, on the Redis server's clock.
--
-- KEYS[1]  the chat's bucket (a hash: tokens, ts, blocked)
-- KEYS[2]  the bot's bucket (every chat of the platform)
-- ARGV     chat rate (tokens/s), chat burst, bot rate, bot burst
--
-- Returns {granted (1/0), wait in microseconds, server seconds, server microseconds, chat tokens left,
-- bot tokens left} (the last two as text, after the grant), so a replica can plan with what is really left.
-- Nothing is written when the call must wait: a refused caller costs no state. A wait is stretched by a
-- margin (5% of a token's time, at most 50 ms): the grant and the platform's own count of the call are
-- apart by the replica's latency, which varies, and the platform must never count two calls too close.
-- A bucket's key expires once it would be full again (a full bucket is the same as no key),
-- so idle chats vanish; a 429's "blocked" time keeps the key alive until it has passed.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local wait = 0
local state = {}
for i = 1, 2 do
  local rate = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local v = redis.call('HMGET', KEYS[i], 'tokens', 'ts', 'blocked')
  local tokens = tonumber(v[1]) or burst
  local ts = tonumber(v[2]) or now
  local blocked = tonumber(v[3]) or 0
  if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate) end
  if blocked > now then wait = math.max(wait, blocked - now) end
  if tokens < 1 then wait = math.max(wait, (1 - tokens) / rate + math.min(0.05, 0.05 / rate)) end
  state[i] = {tokens, blocked, rate, burst}
end
if wait > 0 then
  return {0, math.ceil(wait * 1000000), t[1], t[2], '0', '0'}
end
for i = 1, 2 do
  local s = state[i]
  local ttl = math.ceil(s[4] / s[3] * 1000) + 1000
  if s[2] > now then ttl = ttl + math.ceil((s[2] - now) * 1000) end
  redis.call('HSET', KEYS[i], 'tokens', string.format('%.17g', s[1] - 1), 'ts', string.format('%.17g', now),
             'blocked', string.format('%.17g', s[2]))
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return {1, 0, t[1], t[2], string.format('%.6f', state[1][1] - 1), string.format('%.6f', state[2][1] - 1)}

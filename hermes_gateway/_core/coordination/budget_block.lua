-- A 429 seen by one replica: nothing goes into this bucket (a chat's, or the bot's) until it has passed.
--
-- KEYS[1]  the bucket
-- ARGV     retry_after (seconds), the bucket's rate, burst
--
-- The bucket is emptied too, as the platform's own counter evidently is; the key lives until the block
-- has passed and the bucket would be full again.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local retry_after = math.max(tonumber(ARGV[1]), 0)
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local blocked = tonumber(redis.call('HGET', KEYS[1], 'blocked')) or 0
blocked = math.max(blocked, now + retry_after + 0.001)
redis.call('HSET', KEYS[1], 'tokens', '0', 'ts', string.format('%.17g', now), 'blocked', string.format('%.17g', blocked))
redis.call('PEXPIRE', KEYS[1], math.ceil((blocked - now + burst / rate) * 1000) + 1000)
return 1

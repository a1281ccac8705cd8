-- Take a chat's lease (one reply at a time per chat across replicas), fairly.
--
-- KEYS[1]  the lease: the holder's replica id, expiring after the lease TTL unless renewed
-- KEYS[2]  "wanted": "<ticket>:<replica>" of the oldest message waiting for this chat
-- KEYS[3]  "held": set while a lease is held, deleted on release; found on taking a free lease, it
--          means the last holder neither released nor renewed (it died): a takeover
-- ARGV     my replica id, lease TTL (ms), my oldest ticket, "wanted" TTL (ms), "held" TTL (ms)
--
-- Returns 0 (busy: wait), 1 (taken), 2 (taken over from a holder whose lease expired).
local me = ARGV[1]
local ticket = tonumber(ARGV[3])
local holder = redis.call('GET', KEYS[1])
if holder == me then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
local wanted = redis.call('GET', KEYS[2])
local wticket, wid = nil, nil
if wanted then
  local sep = string.find(wanted, ':', 1, true)
  wticket = tonumber(string.sub(wanted, 1, sep - 1))
  wid = string.sub(wanted, sep + 1)
end
if holder or (wid and wid ~= me and wticket < ticket) then
  if (not wanted) or wid == me or ticket < wticket then
    redis.call('SET', KEYS[2], ARGV[3] .. ':' .. me, 'PX', ARGV[4])
  end
  return 0
end
redis.call('SET', KEYS[1], me, 'PX', ARGV[2])
if wid == me then redis.call('DEL', KEYS[2]) end
local taken = 1
if redis.call('EXISTS', KEYS[3]) == 1 then taken = 2 end
redis.call('SET', KEYS[3], me, 'PX', ARGV[5])
return taken

import type { LuaScript } from "./script.js";

export const acquire: LuaScript = {
  name: "acquire",
  numberOfKeys: 2,
  lua: `
--[[ acquire: take a shard lease if free or expired at now; extend it if it is already ours.
  KEYS[1] lease  HASH holder, epoch, expiresAt   KEYS[2] epoch  STRING
  ARGV[1] member   ARGV[2] now (ms)   ARGV[3] expiresAt = now + ttl   ARGV[4] gc ttl (ms)
  Output: the epoch held (>= 1), or 0 when another member's lease is valid at now.
  Every new acquisition bumps the epoch, including re-taking our own expired lease: whatever we
  started under the old epoch is fenced off. The new epoch is max(previous + 1, floor(now)): always
  increasing, and after a FLUSH or a failover that lost the epoch key it starts from the clock
  rather than from 1, so it does not repeat an epoch a stale owner may still hold.
  Validity is judged by expiresAt against ARGV now; the PEXPIRE (ttl + margin, Redis clock) only
  collects leases nobody renews.
]]
local cur = redis.call('HMGET', KEYS[1], 'holder', 'epoch', 'expiresAt')
if cur[1] and tonumber(cur[3]) > tonumber(ARGV[2]) then
  if cur[1] ~= ARGV[1] then return 0 end
  redis.call('HSET', KEYS[1], 'expiresAt', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return tonumber(cur[2])
end
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
local epoch = math.max(previous + 1, math.floor(tonumber(ARGV[2])))
-- %.0f: exact decimal for integers below 2^53 (plain tostring would round past 14 digits).
local text = string.format('%.0f', epoch)
redis.call('SET', KEYS[2], text)
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'epoch', text, 'expiresAt', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return epoch
`,
};

import type { LuaScript } from "./script.js";

export const acquire: LuaScript = {
  name: "acquire",
  numberOfKeys: 2,
  lua: `
--[[ acquire: take a shard lease if free or expired at now; extend it if it is already ours.
  KEYS[1] lease  HASH holder, epoch, expiresAt   KEYS[2] epoch  STRING
  ARGV[1] member   ARGV[2] now (ms)   ARGV[3] expiresAt = now + ttl   ARGV[4] gc ttl (ms)
  Output: the epoch held (>= 1), or 0 when another member's lease is valid at now.
  Every new acquisition INCRs the epoch, including re-taking our own expired lease: whatever we
  started under the old epoch is fenced off. Validity is judged by expiresAt against ARGV now;
  the PEXPIRE (ttl + margin, Redis clock) only collects leases nobody renews.
]]
local cur = redis.call('HMGET', KEYS[1], 'holder', 'epoch', 'expiresAt')
if cur[1] and tonumber(cur[3]) > tonumber(ARGV[2]) then
  if cur[1] ~= ARGV[1] then return 0 end
  redis.call('HSET', KEYS[1], 'expiresAt', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return tonumber(cur[2])
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'epoch', epoch, 'expiresAt', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return epoch
`,
};

import { fenceLua } from "./includes/fence.js";
import type { LuaScript } from "./script.js";

export const renew: LuaScript = {
  name: "renew",
  numberOfKeys: 2,
  lua: `
--[[ renew: extend our lease if we still hold it, with the same epoch, unexpired at now.
  KEYS[1] lease  HASH holder, epoch, expiresAt   KEYS[2] epoch  STRING
  ARGV[1] member   ARGV[2] epoch   ARGV[3] now (ms)   ARGV[4] expiresAt = now + ttl   ARGV[5] gc ttl (ms)
  Output: 1 renewed, 0 lost (the caller must stop using the epoch).
]]
${fenceLua}
if fence(KEYS[1], KEYS[2], ARGV[2], ARGV[3]) ~= 0 then return 0 end
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'expiresAt', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`,
};

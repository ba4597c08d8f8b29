import type { LuaScript } from "./script.js";

export const release: LuaScript = {
  name: "release",
  numberOfKeys: 1,
  lua: `
--[[ release: give a shard lease up, only if it is ours with this epoch.
  KEYS[1] lease  HASH holder, epoch, expiresAt
  ARGV[1] member   ARGV[2] epoch
  Output: 1 released, 0 not ours (nothing changed).
  The epoch key is untouched: the next acquisition still bumps it, and with the lease gone our
  fenced wheel calls under this epoch are refused.
]]
local cur = redis.call('HMGET', KEYS[1], 'holder', 'epoch')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`,
};

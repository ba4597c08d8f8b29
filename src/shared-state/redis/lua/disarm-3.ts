import type { LuaScript } from "./script.js";

export const disarm: LuaScript = {
  name: "disarm",
  numberOfKeys: 3,
  lua: `
--[[ disarm: remove a timer wherever it is.
  KEYS[1] wheel  KEYS[2] inflight  KEYS[3] due
  ARGV[1] timer id
  Output: number of places it was removed from (0..2).
  Unfenced. An owner's pending complete() for it then finds it out of flight and does not re-arm.
]]
local n = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return n
`,
};

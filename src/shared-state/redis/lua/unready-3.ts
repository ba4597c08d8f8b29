import type { LuaScript } from "./script.js";

export const unready: LuaScript = {
  name: "unready",
  numberOfKeys: 3,
  lua: `
--[[ unready: remove a run from its pool's queue or staging.
  KEYS[1] ready  ZSET   KEYS[2] later  ZSET   KEYS[3] data  HASH
  ARGV[1] runId
  Output: 1 when it was queued or staged, else 0 (taken, or never pushed).
]]
local n = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1], ARGV[1] .. '|s')
return n > 0 and 1 or 0
`,
};

import type { LuaScript } from "./script.js";

export const unready: LuaScript = {
  name: "unready",
  numberOfKeys: 4,
  lua: `
--[[ unready: remove a run from its pool's queue or staging.
  KEYS[1] runs  ZSET   KEYS[2] owners  ZSET   KEYS[3] later  ZSET   KEYS[4] data  HASH (see pushReady)
  ARGV[1] runId
  Output: 1 when it was queued or staged, else 0 (taken, or never pushed). An owner left with no
  run queued leaves the turns.
]]
local id = ARGV[1]
local value = redis.call('HGET', KEYS[4], id)
if not value then return 0 end
redis.call('HDEL', KEYS[4], id)
local nul = string.find(value, '\\0', 1, true)
if not nul then return 0 end
local member = string.sub(value, 1, nul + 14 + #id)
local n = redis.call('ZREM', KEYS[1], member) + redis.call('ZREM', KEYS[3], id)
local owner = string.sub(value, 1, nul - 1)
if #redis.call('ZRANGEBYLEX', KEYS[1], '[' .. owner .. '\\0', '(' .. owner .. '\\1', 'LIMIT', 0, 1) == 0 then
  redis.call('ZREM', KEYS[2], owner)
end
return n > 0 and 1 or 0
`,
};

import { fenceLua } from "./includes/fence.js";
import type { LuaScript } from "./script.js";

export const replayInflight: LuaScript = {
  name: "replayInflight",
  numberOfKeys: 5,
  lua: `
--[[ replayInflight: put in-flight timers back into the wheel at the due time they were claimed at.
  KEYS[1] wheel  KEYS[2] inflight  KEYS[3] due  KEYS[4] lease  KEYS[5] epoch
  ARGV[1] epoch   ARGV[2] now (ms)   ARGV[3] '1' = all, '0' = only deadline <= now
  Output: -1 | -2 | -3 (fence refused, nothing changed) or the number of timers moved back.
]]
${fenceLua}
local code = fence(KEYS[4], KEYS[5], ARGV[1], ARGV[2])
if code ~= 0 then return code end
local upTo = ARGV[2]
if ARGV[3] == '1' then upTo = '+inf' end
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', upTo)
for _, id in ipairs(ids) do
  -- 'due' always has the id (written with it by claimDue); fall back to now rather than drop a timer.
  local dueAt = redis.call('HGET', KEYS[3], id) or ARGV[2]
  redis.call('ZADD', KEYS[1], dueAt, id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
return #ids
`,
};

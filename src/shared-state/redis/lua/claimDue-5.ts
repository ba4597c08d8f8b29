import { fenceLua } from "./includes/fence.js";
import type { LuaScript } from "./script.js";

export const claimDue: LuaScript = {
  name: "claimDue",
  numberOfKeys: 5,
  lua: `
--[[ claimDue: move up to \`limit\` timers due at \`now\` from the wheel into flight, earliest first.
  KEYS[1] wheel  KEYS[2] inflight  KEYS[3] due  KEYS[4] lease  KEYS[5] epoch
  ARGV[1] epoch   ARGV[2] now (ms)   ARGV[3] limit   ARGV[4] deadline = now + inflightMs
  Output: -1 | -2 | -3 (fence refused, nothing changed) or {id1, dueAt1, id2, dueAt2, ...}.
  The claimed ids are the first ranks of the wheel (lowest score, then id), so one
  ZREMRANGEBYRANK removes exactly them.
]]
${fenceLua}
local code = fence(KEYS[4], KEYS[5], ARGV[1], ARGV[2])
if code ~= 0 then return code end
local limit = tonumber(ARGV[3])
if limit < 1 then return {} end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, limit)
if #due == 0 then return due end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due / 2 - 1)
for i = 1, #due, 2 do
  redis.call('ZADD', KEYS[2], ARGV[4], due[i])
  redis.call('HSET', KEYS[3], due[i], due[i + 1])
end
return due
`,
};

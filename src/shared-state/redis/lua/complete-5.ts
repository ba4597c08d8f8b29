import { fenceLua } from "./includes/fence.js";
import type { LuaScript } from "./script.js";

export const complete: LuaScript = {
  name: "complete",
  numberOfKeys: 5,
  lua: `
--[[ complete: take a claimed timer out of flight and optionally re-arm it.
  KEYS[1] wheel  KEYS[2] inflight  KEYS[3] due  KEYS[4] lease  KEYS[5] epoch
  ARGV[1] epoch   ARGV[2] timer id   ARGV[3] next dueAt or '' (none)   ARGV[4] now or '' (no expiry check)
  Output: -1 | -2 | -3 (fence refused, nothing changed), 0 (not in flight: nothing changed), 1 (done).
  Only an id still in flight is re-armed: arm/disarm/replay after the claim take precedence.
]]
${fenceLua}
local code = fence(KEYS[4], KEYS[5], ARGV[1], ARGV[4] ~= '' and ARGV[4])
if code ~= 0 then return code end
if redis.call('ZREM', KEYS[2], ARGV[2]) == 0 then return 0 end
redis.call('HDEL', KEYS[3], ARGV[2])
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2]) end
return 1
`,
};

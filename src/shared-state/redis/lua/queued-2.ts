import type { LuaScript } from "./script.js";

export const queued: LuaScript = {
  name: "queued",
  numberOfKeys: 2,
  lua: `
--[[ queued: is a run queued, staged, or taken with a live claim marker?
  KEYS[1] data  HASH (see pushReady: the runId's field exists exactly while the run is queued or staged)
  KEYS[2] claims  ZSET runId -> marker expiry
  ARGV[1] runId   ARGV[2] now (ms)
  Output: 1 or 0.
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
local until_ = redis.call('ZSCORE', KEYS[2], ARGV[1])
if until_ and tonumber(until_) > tonumber(ARGV[2]) then return 1 end
return 0
`,
};

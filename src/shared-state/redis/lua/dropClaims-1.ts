import type { LuaScript } from "./script.js";

export const dropClaims: LuaScript = {
  name: "dropClaims",
  numberOfKeys: 1,
  lua: `
--[[ dropClaims: remove claim markers that are no longer needed, each only while its expiry is
  at or before the given bound (a newer marker of the same run, taken again since, stays).
  KEYS[1] claims  ZSET runId -> marker expiry (ms)
  ARGV[1], ARGV[2], ...: pairs of runId, notAfter (ms)
  Output: how many were removed.
]]
local n = 0
for i = 1, #ARGV, 2 do
  local at = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if at and tonumber(at) <= tonumber(ARGV[i + 1]) then
    n = n + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return n
`,
};

import type { LuaScript } from "./script.js";

export const pushReady: LuaScript = {
  name: "pushReady",
  numberOfKeys: 1,
  lua: `
--[[ pushReady: add runs to a pool's ready queue unless present; wake the pool's executors.
  KEYS[1] ready  ZSET runId -> readyScore (priority, then enqueue time)
  ARGV[1] wake channel   ARGV[2] pool   ARGV[3..] score1, runId1, score2, runId2, ...
  Output: number of runs newly added. Publishes {pool, count} on the channel when count > 0.
  NX: a run already queued keeps its first position.
]]
local added = 0
for i = 3, #ARGV, 2 do
  added = added + redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1])
end
if added > 0 then
  redis.call('PUBLISH', ARGV[1], cjson.encode({ pool = ARGV[2], count = added }))
end
return added
`,
};

import type { LuaScript } from "./script.js";

export const pushReady: LuaScript = {
  name: "pushReady",
  numberOfKeys: 3,
  lua: `
--[[ pushReady: add runs to a pool's ready queue (or stage them) unless present; wake the pool's executors.
  KEYS[1] ready  ZSET runId -> readyScore (priority, then enqueue time)
  KEYS[2] later  ZSET runId -> notBefore (ms): staged, not taken before then
  KEYS[3] data   HASH runId -> payload (when it has one); "<runId>|s" -> readyScore while staged
  ARGV[1] wake channel   ARGV[2] pool
  ARGV[3..] groups of 4: readyScore, runId, notBefore ("" = ready now), payload ("" = none)
  Output: number of runs newly added. Publishes {pool, count[, at]} on the channel when count > 0,
  \`at\` being the earliest notBefore staged by this call.
  A run already queued or staged keeps its first position and payload. A staged run's score is a
  field of its own, so promoting it (takeReady) never reads its payload.
]]
local added = 0
local earliest = nil
for i = 3, #ARGV, 4 do
  local score, id, nb, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if not redis.call('ZSCORE', KEYS[1], id) and not redis.call('ZSCORE', KEYS[2], id) then
    if nb == '' then
      redis.call('ZADD', KEYS[1], score, id)
      if payload ~= '' then redis.call('HSET', KEYS[3], id, payload) end
    else
      redis.call('ZADD', KEYS[2], nb, id)
      if payload ~= '' then
        redis.call('HSET', KEYS[3], id .. '|s', score, id, payload)
      else
        redis.call('HSET', KEYS[3], id .. '|s', score)
      end
      local n = tonumber(nb)
      if earliest == nil or n < earliest then earliest = n end
    end
    added = added + 1
  end
end
if added > 0 then
  if earliest then
    redis.call('PUBLISH', ARGV[1], cjson.encode({ pool = ARGV[2], count = added, at = earliest }))
  else
    redis.call('PUBLISH', ARGV[1], cjson.encode({ pool = ARGV[2], count = added }))
  end
end
return added
`,
};

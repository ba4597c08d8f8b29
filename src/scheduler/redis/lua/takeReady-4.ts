import type { LuaScript } from "./script.js";

export const takeReady: LuaScript = {
  name: "takeReady",
  numberOfKeys: 4,
  lua: `
--[[ takeReady: promote due staged runs, then take the best ones, marking those with a payload claimed.
  KEYS[1] ready   ZSET runId -> readyScore
  KEYS[2] later   ZSET runId -> notBefore (ms)
  KEYS[3] data    HASH runId -> "<readyScore>|<payload>"
  KEYS[4] claims  ZSET runId -> claim marker expiry (ms)
  ARGV[1] now (ms)   ARGV[2] max   ARGV[3] claimMs   ARGV[4] most staged runs promoted per call
  Markers are dropped claimMs after they expire.
  Output: { nextAt or -1, runId1, payload1, runId2, payload2, ... } (payload "" = none);
  nextAt is the earliest notBefore still staged.
]]
local now = tonumber(ARGV[1])
-- markers stay claimMs past their expiry, so the reaper can tell an expired claim from none
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[3]))
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(due) do
  local v = redis.call('HGET', KEYS[3], id)
  local score = v and string.sub(v, 1, string.find(v, '|', 1, true) - 1) or '0'
  redis.call('ZADD', KEYS[1], score, id)
  redis.call('ZREM', KEYS[2], id)
end
local out = { -1 }
local max = tonumber(ARGV[2])
if max > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[1], max)
  local claimUntil = now + tonumber(ARGV[3])
  for i = 1, #popped, 2 do
    local id = popped[i]
    local v = redis.call('HGET', KEYS[3], id)
    local payload = ''
    if v then
      payload = string.sub(v, string.find(v, '|', 1, true) + 1)
      redis.call('HDEL', KEYS[3], id)
    end
    if payload ~= '' then redis.call('ZADD', KEYS[4], claimUntil, id) end
    out[#out + 1] = id
    out[#out + 1] = payload
  end
end
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #head > 0 then out[1] = tonumber(head[2]) end
return out
`,
};

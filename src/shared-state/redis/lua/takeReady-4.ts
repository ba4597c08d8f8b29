import type { LuaScript } from "./script.js";

export const takeReady: LuaScript = {
  name: "takeReady",
  numberOfKeys: 4,
  lua: `
--[[ takeReady: promote due staged runs, then take the best ones, marking those with a payload claimed.
  KEYS[1] ready   ZSET runId -> readyScore
  KEYS[2] later   ZSET runId -> notBefore (ms)
  KEYS[3] data    HASH runId -> payload; "<runId>|s" -> readyScore while staged
  KEYS[4] claims  ZSET runId -> claim marker expiry (ms)
  ARGV[1] now (ms)   ARGV[2] max   ARGV[3] claimMs   ARGV[4] most staged runs promoted per call
  Markers are dropped claimMs after they expire.
  Output: { nextAt or -1, runId1, payload1, runId2, payload2, ... } (payload "" = none);
  nextAt is the earliest notBefore still staged.
  Commands go in batches (one HMGET, ZADD, ZREM, HDEL per chunk of runs), never one per run:
  promoting 10,000 staged runs one command at a time kept Redis busy for ~65 ms.
]]
local CHUNK = 1000
local now = tonumber(ARGV[1])
-- markers stay claimMs past their expiry, so the reaper can tell an expired claim from none
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[3]))

local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
for first = 1, #due, CHUNK do
  local ids, fields = {}, {}
  for i = first, math.min(first + CHUNK - 1, #due) do
    ids[#ids + 1] = due[i]
    fields[#fields + 1] = due[i] .. '|s'
  end
  local scores = redis.call('HMGET', KEYS[3], unpack(fields))
  local zargs = {}
  for i, id in ipairs(ids) do
    zargs[#zargs + 1] = scores[i] or '0'
    zargs[#zargs + 1] = id
  end
  redis.call('ZADD', KEYS[1], unpack(zargs))
  redis.call('ZREM', KEYS[2], unpack(ids))
  redis.call('HDEL', KEYS[3], unpack(fields))
end

local out = { -1 }
local max = tonumber(ARGV[2])
if max > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[1], max)
  local claimUntil = now + tonumber(ARGV[3])
  for first = 1, #popped, 2 * CHUNK do
    local ids = {}
    for i = first, math.min(first + 2 * CHUNK - 1, #popped), 2 do ids[#ids + 1] = popped[i] end
    local values = redis.call('HMGET', KEYS[3], unpack(ids))
    redis.call('HDEL', KEYS[3], unpack(ids))
    local marks = {}
    for i, id in ipairs(ids) do
      local payload = values[i] or ''
      if payload ~= '' then
        marks[#marks + 1] = claimUntil
        marks[#marks + 1] = id
      end
      out[#out + 1] = id
      out[#out + 1] = payload
    end
    if #marks > 0 then redis.call('ZADD', KEYS[4], unpack(marks)) end
  end
end
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #head > 0 then out[1] = tonumber(head[2]) end
return out
`,
};

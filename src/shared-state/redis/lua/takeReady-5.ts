import { entriesLua } from "./includes/entries.js";
import type { LuaScript } from "./script.js";

export const takeReady: LuaScript = {
  name: "takeReady",
  numberOfKeys: 5,
  lua: `
--[[ takeReady: promote due staged runs, then take runs in the owners' turns, marking those with a payload claimed.
  KEYS[1] runs    ZSET (scores 0) "<owner>\\0<readyScore, 14 digits><runId>"
  KEYS[2] owners  ZSET owner -> turn
  KEYS[3] later   ZSET runId -> notBefore (ms)
  KEYS[4] data    HASH runId -> "<member of KEYS[1]><payload>"; "|turn" -> the turn after the last run taken
  KEYS[5] claims  ZSET runId -> claim marker expiry (ms)
  ARGV[1] now (ms)   ARGV[2] max   ARGV[3] claimMs   ARGV[4] most staged runs promoted per call
  Markers are dropped claimMs after they expire.
  Output: { nextAt or -1, runId1, payload1, runId2, payload2, ... } (payload "" = none);
  nextAt is the earliest notBefore still staged.
  Turns: the owner with the lowest turn (ties by owner) gives its best runs, as many as there are
  turns before the next owner's (at least one), each run one turn; it keeps its place while it has
  runs. An owner with nothing queued joins at the turn after the last run taken (served within a
  round). One owner alone is served in one step. Commands go in batches (one HMGET, ZADD, ZREM,
  HDEL per chunk of runs), never one per run: promoting 10,000 staged runs one command at a time
  kept Redis busy for ~65 ms.
]]
${entriesLua}
local CHUNK = 1000
local now = tonumber(ARGV[1])
-- markers stay claimMs past their expiry, so the reaper can tell an expired claim from none
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - tonumber(ARGV[3]))

local turn = tonumber(redis.call('HGET', KEYS[4], '|turn') or '0')

local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
local joined = {}
for first = 1, #due, CHUNK do
  local ids = {}
  for i = first, math.min(first + CHUNK - 1, #due) do ids[#ids + 1] = due[i] end
  local values = redis.call('HMGET', KEYS[4], unpack(ids))
  local zargs = {}
  for i, id in ipairs(ids) do
    local member = values[i] and memberOf(values[i], id)
    -- a staged run without its value (written by an older version) is dropped; the reaper queues it again
    if member then
      zargs[#zargs + 1] = 0
      zargs[#zargs + 1] = member
      local owner = ownerOf(member)
      if not joined[owner] then
        redis.call('ZADD', KEYS[2], 'NX', turn, owner)
        joined[owner] = true
      end
    end
  end
  if #zargs > 0 then redis.call('ZADD', KEYS[1], unpack(zargs)) end
  redis.call('ZREM', KEYS[3], unpack(ids))
end

local out = { -1 }
local max = tonumber(ARGV[2])
local ids = {}
while #ids < max do
  local head = redis.call('ZRANGE', KEYS[2], 0, 1, 'WITHSCORES')
  if #head == 0 then break end
  local owner, at = head[1], tonumber(head[2])
  local room = max - #ids
  if #head == 4 then
    local gap = tonumber(head[4]) - at
    if gap < 1 then gap = 1 end
    if gap < room then room = gap end
  end
  local first, beyond = ownerRange(owner)
  local got = redis.call('ZRANGEBYLEX', KEYS[1], first, beyond, 'LIMIT', 0, room + 1)
  local n = math.min(#got, room)
  -- They are the first n of the owner's range: one ZREMRANGEBYLEX removes them.
  if n > 0 then redis.call('ZREMRANGEBYLEX', KEYS[1], first, '[' .. got[n]) end
  for j = 1, n do ids[#ids + 1] = runIdOf(got[j], owner) end
  -- An owner joining next joins at the turn after the last run taken: at the last run's own turn, a
  -- user pushing one run after each take of its last would be lowest at every take, and another
  -- owner's backlog never served (test/security/attack-turns.test.ts).
  if n > 0 then turn = at + n end
  if #got > n then
    redis.call('ZADD', KEYS[2], at + n, owner)
  else
    redis.call('ZREM', KEYS[2], owner)
  end
end

if #ids > 0 then
  redis.call('HSET', KEYS[4], '|turn', turn)
  local claimUntil = now + tonumber(ARGV[3])
  for first = 1, #ids, CHUNK do
    local chunk = {}
    for i = first, math.min(first + CHUNK - 1, #ids) do chunk[#chunk + 1] = ids[i] end
    local values = redis.call('HMGET', KEYS[4], unpack(chunk))
    redis.call('HDEL', KEYS[4], unpack(chunk))
    local marks = {}
    for i, id in ipairs(chunk) do
      local payload = values[i] and payloadOf(values[i], id) or ''
      if payload ~= '' then
        marks[#marks + 1] = claimUntil
        marks[#marks + 1] = id
      end
      out[#out + 1] = id
      out[#out + 1] = payload
    end
    if #marks > 0 then redis.call('ZADD', KEYS[5], unpack(marks)) end
  end
end
local head = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if #head > 0 then out[1] = tonumber(head[2]) end
return out
`,
};

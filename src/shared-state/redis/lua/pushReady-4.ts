import { entriesLua } from "./includes/entries.js";
import type { LuaScript } from "./script.js";

export const pushReady: LuaScript = {
  name: "pushReady",
  numberOfKeys: 4,
  lua: `
--[[ pushReady: add runs to a pool's ready queue (or stage them) unless present; wake the pool's executors.
  KEYS[1] runs    ZSET, every score 0, of members "<owner>\\0<readyScore, 14 digits><runId>": in lex
                  order, each owner's runs by priority, then enqueue time, then runId
  KEYS[2] owners  ZSET owner -> turn: the owners with runs in KEYS[1], lowest turn served first
  KEYS[3] later   ZSET runId -> notBefore (ms): staged, not taken before then
  KEYS[4] data    HASH runId -> "<member of KEYS[1]><payload>" while queued or staged (the member's
                  length follows from its NUL and the runId); "|turn" -> the turn after the last run taken
  ARGV[1] wake channel   ARGV[2] pool
  ARGV[3..] groups of 4: member (its owner is what comes before its NUL), runId, notBefore ("" = ready now), payload ("" = none)
  Output: number of runs newly added. Publishes {pool, count[, at]} on the channel when count > 0,
  \`at\` being the earliest notBefore staged by this call.
  A run already queued or staged keeps its first position and payload. An owner that had no run
  queued joins at the turn after the last run taken (it is served within a round: with ties, by
  owner, before the owners served since); one that has keeps its turn.
]]
${entriesLua}
local CHUNK = 1000
local turn = tonumber(redis.call('HGET', KEYS[4], '|turn') or '0')
local added = 0
local earliest = nil
local joined = {}
local seen = {}
-- In chunks: one HMGET tells which runs are new, then one HSET, one ZADD to runs, one to later.
for first = 3, #ARGV, 4 * CHUNK do
  local last = math.min(first + 4 * CHUNK - 1, #ARGV)
  local ids = {}
  for i = first, last, 4 do ids[#ids + 1] = ARGV[i + 1] end
  local present = redis.call('HMGET', KEYS[4], unpack(ids))
  local values, members, staged = {}, {}, {}
  for j, id in ipairs(ids) do
    if not present[j] and not seen[id] then
      seen[id] = true
      local i = first + (j - 1) * 4
      local member, nb, payload = ARGV[i], ARGV[i + 2], ARGV[i + 3]
      values[#values + 1] = id
      values[#values + 1] = member .. payload
      if nb == '' then
        members[#members + 1] = 0
        members[#members + 1] = member
        local owner = ownerOf(member)
        if not joined[owner] then
          redis.call('ZADD', KEYS[2], 'NX', turn, owner)
          joined[owner] = true
        end
      else
        staged[#staged + 1] = nb
        staged[#staged + 1] = id
        local n = tonumber(nb)
        if earliest == nil or n < earliest then earliest = n end
      end
      added = added + 1
    end
  end
  if #values > 0 then redis.call('HSET', KEYS[4], unpack(values)) end
  if #members > 0 then redis.call('ZADD', KEYS[1], unpack(members)) end
  if #staged > 0 then redis.call('ZADD', KEYS[3], unpack(staged)) end
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

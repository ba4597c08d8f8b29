import { entriesLua } from "./includes/entries.js";
import type { LuaScript } from "./script.js";

export const pushReady: LuaScript = {
  name: "pushReady",
  numberOfKeys: 9,
  lua: `
--[[ pushReady: add runs to one of a pool's queues (or stage them) unless present; wake the queue's executors.
  KEYS[1] queued  ZSET, every score 0, of members "<owner>\\0<interpreter>\\0<readyScore, 14 digits><runId>":
                  in lex order, each owner's runs of each interpreter by priority, then enqueue time,
                  then runId (interpreter empty for a plain run)
  KEYS[2] turns   ZSET owner -> turn: the owners with runs in KEYS[1], of any interpreter
  KEYS[3] staged  ZSET runId -> notBefore (ms): staged, not taken before then
  KEYS[4] values  HASH runId -> "<member of KEYS[1]><payload>" while queued or staged (the member's
                  length follows from its NULs and the runId); "|turn" -> the turn after the last run taken
  KEYS[5] KEYS[6] KEYS[7] KEYS[8] KEYS[9] per interpreter of ARGV[5..9] ("" = plain runs): ZSET
                  owner -> turn (as in KEYS[2]) of the owners with runs of it in KEYS[1]
  ARGV[1] wake channel   ARGV[2] queue name   ARGV[3] its interpreter ("" = plain runs)
  ARGV[4] 5, ARGV[5..9] the interpreters of KEYS[5..9]
  ARGV[10..] groups of 4: member (owner, interpreter, score, runId), runId, notBefore ("" = ready now), payload ("" = none)
  Output: number of runs newly added. Publishes {pool = queue name, count[, at]} on the channel when
  count > 0, \`at\` being the earliest notBefore staged by this call.
  A run already queued or staged keeps its first position and payload. An owner that had no run
  queued joins at the turn after the last run taken (it is served within a round: with ties, by
  owner, before the owners served since), or just after the lowest turn of the owners with runs of
  the same interpreter if that is lower; one that has keeps its turn, raised to that if lower
  (see join in includes/entries.ts).
]]
${entriesLua}
local CHUNK = 1000
local keyOf, names, at = interpreterKeys(4, { KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9] })
local interpreter = ARGV[3]
if not keyOf[interpreter] then error('unknown interpreter') end
local turn = tonumber(redis.call('HGET', KEYS[4], '|turn') or '0')
local added = 0
local earliest = nil
local joined = {}
local seen = {}
-- In chunks: one HMGET tells which runs are new, then one HSET, one ZADD to queued, one to staged.
for first = at, #ARGV, 4 * CHUNK do
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
          join(owner, interpreter, keyOf, names, KEYS[2], turn)
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

import { entriesLua } from "./includes/entries.js";
import type { LuaScript } from "./script.js";

export const takeReady: LuaScript = {
  name: "takeReady",
  numberOfKeys: 10,
  lua: `
--[[ takeReady: promote due staged runs, then take the runs this node can start in the owners' turns, marking those with a payload claimed.
  KEYS[1] queued  ZSET (scores 0) "<owner>\\0<interpreter>\\0<readyScore, 14 digits><runId>"
  KEYS[2] turns   ZSET owner -> turn, the owners with runs queued (any interpreter)
  KEYS[3] staged  ZSET runId -> notBefore (ms)
  KEYS[4] values  HASH runId -> "<member of KEYS[1]><payload>"; "|turn" -> the turn after the last run taken
  KEYS[5] claims  ZSET runId -> claim marker expiry (ms)
  KEYS[6] KEYS[7] KEYS[8] KEYS[9] KEYS[10] per interpreter of ARGV[6..10] ("" = plain runs): ZSET
          owner -> turn (as in KEYS[2]) of the owners with runs of it queued
  ARGV[1] now (ms)   ARGV[2] max   ARGV[3] claimMs   ARGV[4] most staged runs promoted per call
  ARGV[5] 5, ARGV[6..10] the interpreters of KEYS[6..10]
  ARGV[11] m, ARGV[12..11+m] the interpreters the taker has (among those; "" always)
  Markers are dropped claimMs after they expire.
  Output: { nextAt or -1, runId1, payload1, runId2, payload2, ... } (payload "" = none);
  nextAt is the earliest notBefore still staged.
  Turns, one per owner across the pool's queues: of the owners with runs the taker can start (the
  turn ZSETs of its interpreters), the one with the lowest turn (ties by owner) gives its best such
  runs, as many as there are turns before the next such owner's (at least one), each run one
  turn; its turn moves on in every turn ZSET it is in, and it leaves those of the interpreters it
  has no run of left. An owner whose runs all need an interpreter the taker lacks is not in the
  ZSETs read here: it neither gets a run nor holds another back. The turn after the last run taken
  only rises (an owner served late, its turn behind the others', does not lower it). Each step costs a few commands
  per interpreter and takes at least one run, whatever the other owners queued. An owner with
  nothing queued joins at the turn after the last run taken (served within a round), or just after
  the lowest turn of its interpreter's owners if lower; see join in includes/entries.ts. Commands go
  in batches (one HMGET, ZADD, ZREM, HDEL per chunk of runs), never one per run: promoting 10,000
  staged runs one command at a time kept Redis busy for ~65 ms.
]]
${entriesLua}
local CHUNK = 1000
local now = tonumber(ARGV[1])
-- markers stay claimMs past their expiry, so the reaper can tell an expired claim from none
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - tonumber(ARGV[3]))

local keyOf, names, at = interpreterKeys(5, { KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10] })
local has = {}
for j = 1, tonumber(ARGV[at]) do
  local name = ARGV[at + j]
  if keyOf[name] then has[#has + 1] = name end
end

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
    local key = member and keyOf[interpreterOf(member)]
    -- a staged run without its value (written by an older version) is dropped; the reaper queues it again
    if key then
      zargs[#zargs + 1] = 0
      zargs[#zargs + 1] = member
      local owner = ownerOf(member)
      local j = owner .. '\\0' .. key
      if not joined[j] then
        join(owner, interpreterOf(member), keyOf, names, KEYS[2], turn)
        joined[j] = true
      end
    elseif values[i] then
      redis.call('HDEL', KEYS[4], id)
    end
  end
  if #zargs > 0 then redis.call('ZADD', KEYS[1], unpack(zargs)) end
  redis.call('ZREM', KEYS[3], unpack(ids))
end

-- The interpreters with owners queued now (no take below adds any): most pools queue one or two
-- kinds of runs, and each step then asks only their keys (per step, a command per interpreter
-- asked is most of a take's cost when many owners take turns).
local live, liveHas = {}, {}
for _, name in ipairs(names) do
  if redis.call('ZCARD', keyOf[name]) > 0 then live[#live + 1] = name end
end
for _, name in ipairs(has) do
  if redis.call('ZCARD', keyOf[name]) > 0 then liveHas[#liveHas + 1] = name end
end

local out = { -1 }
local max = tonumber(ARGV[2])
local ids = {}
while #ids < max do
  -- The lowest (turn, owner) among the owners with runs the taker can start, and the next other owner's turn.
  local owner, at, nextAt = nil, nil, nil
  local heads = {}
  for _, name in ipairs(liveHas) do
    local head = redis.call('ZRANGE', keyOf[name], 0, 1, 'WITHSCORES')
    for k = 1, #head, 2 do
      local o, t = head[k], tonumber(head[k + 1])
      heads[#heads + 1] = { o, t }
      if owner == nil or t < at or (t == at and before(o, owner)) then owner, at = o, t end
    end
  end
  if owner == nil then break end
  for _, h in ipairs(heads) do
    if h[1] ~= owner and (nextAt == nil or h[2] < nextAt) then nextAt = h[2] end
  end
  local room = max - #ids
  if nextAt then
    local gap = nextAt - at
    if gap < 1 then gap = 1 end
    if gap < room then room = gap end
  end
  -- The owner's best runs of the interpreters the taker has: the first \`room\` of each, merged.
  -- Each list comes sorted (lex order), one more than \`room\` (so whether runs of it are left is
  -- known without asking again); with runs of one interpreter (the common case) it is the answer,
  -- else the lists are merged (a sort with a Lua comparator cost ~2 ms per take of 64).
  local lists, listNames = {}, {}
  for _, name in ipairs(liveHas) do
    local first, beyond = ownerRangeOf(owner, name)
    local l = redis.call('ZRANGEBYLEX', KEYS[1], first, beyond, 'LIMIT', 0, room + 1)
    if #l > 0 then
      lists[#lists + 1] = l
      listNames[#lists] = name
    end
  end
  local got, taken = {}, {}
  if #lists == 1 then
    for j = 1, math.min(#lists[1], room) do got[j] = lists[1][j] end
    taken[1] = #got
  elseif #lists > 1 then
    local orders = {}
    for k, l in ipairs(lists) do
      taken[k] = 0
      orders[k] = orderOf(l[1])
    end
    while #got < room do
      local best = nil
      for k, l in ipairs(lists) do
        if taken[k] < #l and (best == nil or before(orders[k], orders[best])) then best = k end
      end
      if best == nil then break end
      local l = lists[best]
      taken[best] = taken[best] + 1
      got[#got + 1] = l[taken[best]]
      if taken[best] < #l then orders[best] = orderOf(l[taken[best] + 1]) end
    end
  end
  local n = #got
  for first = 1, n, CHUNK do
    local members = {}
    for j = first, math.min(first + CHUNK - 1, n) do
      members[#members + 1] = got[j]
      ids[#ids + 1] = runIdOf(got[j])
    end
    redis.call('ZREM', KEYS[1], unpack(members))
  end
  -- An owner joining next joins at the turn after the last run taken: at the last run's own turn, a
  -- user pushing one run after each take of its last would be lowest at every take, and another
  -- owner's backlog never served (test/security/attack-turns.test.ts).
  -- (Never back: a lagging owner served here is no reason for newcomers to join before the others.)
  local moved = at + n
  if moved > turn then turn = moved end
  -- Its turn moves on wherever it still has runs (the interpreters the taker lacks too); it leaves the rest.
  local remaining = {}
  for k, l in ipairs(lists) do remaining[listNames[k]] = #l > taken[k] end
  local left = false
  for _, name in ipairs(live) do
    local r = remaining[name]
    -- Not taken from (the taker lacks it, or the owner has none of it): its runs there, if any, are as they were.
    if r == nil then r = redis.call('ZSCORE', keyOf[name], owner) ~= false end
    if r then
      redis.call('ZADD', keyOf[name], moved, owner)
      left = true
    else
      redis.call('ZREM', keyOf[name], owner)
    end
  end
  if left then
    redis.call('ZADD', KEYS[2], moved, owner)
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

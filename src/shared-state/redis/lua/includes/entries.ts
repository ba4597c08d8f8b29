import { READY_SCORE_DIGITS } from "../../../ports.js";

/**
 * Lua helpers spliced into the ready-queue scripts (pushReady, takeReady, unready): the one place
 * in Lua that knows an entry's layout (docs/redis-layout.md), as RedisReadyQueue's readyMember is
 * in TypeScript.
 *
 * A member of a pool's queued ZSET is `<owner>\0<interpreter>\0<readyScore, SCORE_DIGITS digits><runId>`
 * (interpreter empty for a plain run); an entry's value in the pool's values HASH is its member,
 * then its payload (possibly empty).
 *   ownerOf(member)           the owner (what comes before the first NUL)
 *   interpreterOf(member)     the interpreter (between the first and second NUL)
 *   orderOf(member)           what orders an owner's runs: score and run id (after the second NUL)
 *   ownerRange(owner)         the ZRANGEBYLEX bounds of the owner's members, of every interpreter
 *   ownerRangeOf(owner, i)    the bounds of the owner's members that need interpreter i
 *   runIdOf(member)           the run id
 *   memberOf(value, id)       the member an entry's value starts with (nil for a value of another shape)
 *   payloadOf(value, id)      the payload after it ('' when none)
 *   before(a, b)              a < b byte by byte (as Redis orders members; Lua's < follows the locale)
 *   join(owner, i, keyOf, names, turnsKey, now)
 *                             an owner with runs of interpreter i newly queued joins i's turns (see
 *                             below); `now` is the turn after the last run taken
 *   interpreterKeys(at, keys) reads ARGV[at] = n, ARGV[at+1..at+n] = the names of the interpreters
 *                             whose turn ZSETs are `keys` (n of them): name -> key, the names, and
 *                             the index of the ARGV after them
 */
export const entriesLua = `
local SCORE_DIGITS = ${READY_SCORE_DIGITS}
local function secondNul(member)
  local first = string.find(member, '\\0', 1, true)
  return first, string.find(member, '\\0', first + 1, true)
end
local function ownerOf(member)
  return string.sub(member, 1, string.find(member, '\\0', 1, true) - 1)
end
local function interpreterOf(member)
  local first, second = secondNul(member)
  return string.sub(member, first + 1, second - 1)
end
local function orderOf(member)
  local _, second = secondNul(member)
  return string.sub(member, second + 1)
end
local function ownerRange(owner)
  return '[' .. owner .. '\\0', '(' .. owner .. '\\1'
end
local function ownerRangeOf(owner, interpreter)
  return '[' .. owner .. '\\0' .. interpreter .. '\\0', '(' .. owner .. '\\0' .. interpreter .. '\\1'
end
local function runIdOf(member)
  local _, second = secondNul(member)
  return string.sub(member, second + 1 + SCORE_DIGITS)
end
local function memberOf(value, id)
  local first = string.find(value, '\\0', 1, true)
  if not first then return nil end
  local second = string.find(value, '\\0', first + 1, true)
  if not second then return nil end
  local member = string.sub(value, 1, second + SCORE_DIGITS + #id)
  if string.sub(member, -#id) ~= id then return nil end
  return member
end
local function payloadOf(value, id)
  local member = memberOf(value, id)
  return member and string.sub(value, #member + 1) or ''
end
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
-- An owner joining the turns of interpreter i (it has no run of i queued) comes in at
-- J = min(now, lowest turn of i's owners + 1): within a round of the owners of i (the takers
-- that serve i may be behind \`now\` when i's runs wait for the few nodes that have it). An
-- owner already queued keeps its turn if it is at least J, else it is raised to J everywhere:
-- a turn left behind by runs no node could start is no credit for runs of another interpreter.
local function join(owner, interpreter, keyOf, names, turnsKey, now)
  local key = keyOf[interpreter]
  if redis.call('ZSCORE', key, owner) then return end
  local at = now
  local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #head > 0 and tonumber(head[2]) + 1 < at then at = tonumber(head[2]) + 1 end
  local own = redis.call('ZSCORE', turnsKey, owner)
  if own and tonumber(own) >= at then
    redis.call('ZADD', key, own, owner)
    return
  end
  redis.call('ZADD', turnsKey, at, owner)
  if own then
    for _, name in ipairs(names) do redis.call('ZADD', keyOf[name], 'XX', at, owner) end
  end
  redis.call('ZADD', key, at, owner)
end
local function interpreterKeys(at, keys)
  local n = tonumber(ARGV[at])
  if n ~= #keys then error('interpreters and their keys differ in number') end
  local keyOf, names = {}, {}
  for j = 1, n do
    names[j] = ARGV[at + j]
    keyOf[ARGV[at + j]] = keys[j]
  end
  return keyOf, names, at + n + 1
end
`;

import { READY_SCORE_DIGITS } from "../../../ports.js";

/**
 * Lua helpers spliced into the ready-queue scripts (pushReady, takeReady, unready): the one place
 * in Lua that knows an entry's layout (docs/redis-layout.md), as RedisReadyQueue's readyMember is
 * in TypeScript.
 *
 * A member of a pool's runs ZSET is `<owner>\0<readyScore, SCORE_DIGITS digits><runId>`; an
 * entry's value in the pool's entries HASH is its member, then its payload (possibly empty).
 *   ownerOf(member)        the owner (what comes before the NUL)
 *   ownerRange(owner)      the ZRANGEBYLEX bounds of the owner's members
 *   runIdOf(member, owner) the run id
 *   memberOf(value, id)    the member an entry's value starts with (nil for a value of another shape)
 *   payloadOf(value, id)   the payload after it ('' when none)
 */
export const entriesLua = `
local SCORE_DIGITS = ${READY_SCORE_DIGITS}
local function ownerOf(member)
  return string.sub(member, 1, string.find(member, '\\0', 1, true) - 1)
end
local function ownerRange(owner)
  return '[' .. owner .. '\\0', '(' .. owner .. '\\1'
end
local function runIdOf(member, owner)
  return string.sub(member, #owner + 2 + SCORE_DIGITS)
end
local function memberOf(value, id)
  local nul = string.find(value, '\\0', 1, true)
  if not nul then return nil end
  return string.sub(value, 1, nul + SCORE_DIGITS + #id)
end
local function payloadOf(value, id)
  local member = memberOf(value, id)
  return member and string.sub(value, #member + 1) or ''
end
`;

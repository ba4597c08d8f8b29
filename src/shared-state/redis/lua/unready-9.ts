import { entriesLua } from "./includes/entries.js";
import type { LuaScript } from "./script.js";

export const unready: LuaScript = {
  name: "unready",
  numberOfKeys: 9,
  lua: `
--[[ unready: remove a run from its pool's queue or staging.
  KEYS[1] queued  ZSET   KEYS[2] turns  ZSET   KEYS[3] staged  ZSET   KEYS[4] values  HASH
  KEYS[5] KEYS[6] KEYS[7] KEYS[8] KEYS[9] the turns ZSETs of the interpreters ARGV[3..7] (see pushReady, takeReady)
  ARGV[1] runId   ARGV[2] 5   ARGV[3..7] interpreter names ("" = plain runs)
  Output: 1 when it was queued or staged, else 0 (taken, or never pushed). An owner left with no
  run of the interpreter queued leaves that interpreter's turns; with no run at all, the turns.
]]
${entriesLua}
local keyOf = interpreterKeys(2, { KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9] })
local id = ARGV[1]
local value = redis.call('HGET', KEYS[4], id)
if not value then return 0 end
redis.call('HDEL', KEYS[4], id)
local member = memberOf(value, id)
if not member then return 0 end
local n = redis.call('ZREM', KEYS[1], member) + redis.call('ZREM', KEYS[3], id)
local owner = ownerOf(member)
local key = keyOf[interpreterOf(member)]
local first, beyond = ownerRangeOf(owner, interpreterOf(member))
if key and #redis.call('ZRANGEBYLEX', KEYS[1], first, beyond, 'LIMIT', 0, 1) == 0 then
  redis.call('ZREM', key, owner)
end
first, beyond = ownerRange(owner)
if #redis.call('ZRANGEBYLEX', KEYS[1], first, beyond, 'LIMIT', 0, 1) == 0 then
  redis.call('ZREM', KEYS[2], owner)
end
return n > 0 and 1 or 0
`,
};

import { entriesLua } from "./includes/entries.js";
import type { LuaScript } from "./script.js";

export const unready: LuaScript = {
  name: "unready",
  numberOfKeys: 4,
  lua: `
--[[ unready: remove a run from its pool's queue or staging.
  KEYS[1] runs  ZSET   KEYS[2] owners  ZSET   KEYS[3] later  ZSET   KEYS[4] data  HASH (see pushReady)
  ARGV[1] runId
  Output: 1 when it was queued or staged, else 0 (taken, or never pushed). An owner left with no
  run queued leaves the turns.
]]
${entriesLua}
local id = ARGV[1]
local value = redis.call('HGET', KEYS[4], id)
if not value then return 0 end
redis.call('HDEL', KEYS[4], id)
local member = memberOf(value, id)
if not member then return 0 end
local n = redis.call('ZREM', KEYS[1], member) + redis.call('ZREM', KEYS[3], id)
local owner = ownerOf(member)
local first, beyond = ownerRange(owner)
if #redis.call('ZRANGEBYLEX', KEYS[1], first, beyond, 'LIMIT', 0, 1) == 0 then
  redis.call('ZREM', KEYS[2], owner)
end
return n > 0 and 1 or 0
`,
};

import type { LuaScript } from "./script.js";

export const heartbeat: LuaScript = {
  name: "heartbeat",
  numberOfKeys: 1,
  lua: `
--[[ heartbeat: register or refresh a member; drop members long gone.
  KEYS[1] members  ZSET member -> expiry (ms)
  ARGV[1] member   ARGV[2] expiry = now + ttl   ARGV[3] forget = now - ttl
  Output: 1.
  Members with expiry <= forget (dead for at least one ttl) are removed; readers filter by expiry
  anyway, this only keeps the set from growing with member ids that never come back.
]]
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
return 1
`,
};

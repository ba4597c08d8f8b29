import type { LuaScript } from "./script.js";

export const arm: LuaScript = {
  name: "arm",
  numberOfKeys: 3,
  lua: `
--[[ arm: add or move a timer; take it out of flight; wake sleepers if it is the new shard minimum.
  KEYS[1] wheel     ZSET id -> dueAt
  KEYS[2] inflight  ZSET id -> deadline
  KEYS[3] due       HASH id -> claimed dueAt
  ARGV[1] dueAt (ms)   ARGV[2] timer id
  ARGV[3] wake channel ARGV[4] wake message ({shard, dueAt} JSON)
  Output: 1 when the wake-up was published, else 0.
  Unfenced. Leaving flight means a later complete() of the old claim will not re-arm over this.
]]
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] == ARGV[2] then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
  return 1
end
return 0
`,
};

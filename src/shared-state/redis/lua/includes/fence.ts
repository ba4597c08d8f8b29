/**
 * Lua helper spliced into every fenced script (claimDue, complete, replayInflight, renew).
 *
 * fence(leaseKey, epochKey, epoch, now) returns 0 when all of these hold, else a ScriptCode:
 *   -1  `epoch` is not the shard's current epoch (another member acquired it since);
 *   -2  the lease hash does not carry `epoch` (released, or garbage-collected by its PEXPIRE);
 *   -3  `now` is given (not false) and the lease expired at or before it.
 * Epochs are compared as the decimal strings Redis stores, so ARGV must pass integers.
 */
export const fenceLua = `
local function fence(leaseKey, epochKey, epoch, now)
  if redis.call('GET', epochKey) ~= epoch then return -1 end
  local lease = redis.call('HMGET', leaseKey, 'epoch', 'expiresAt')
  if lease[1] ~= epoch then return -2 end
  if now and tonumber(lease[2]) <= tonumber(now) then return -3 end
  return 0
end
`;

/**
 * A Lua script for one atomic transition. Each lives in `lua/<verb>-<numberOfKeys>.ts` with its
 * contract (KEYS / ARGV / Output) as a comment at the top of the Lua source. The source is embedded
 * in TypeScript so it ships with the compiled `dist` without a copy step; a test checks that each
 * file name's suffix equals `numberOfKeys` and that every script compiles in Redis.
 */
export interface LuaScript {
  /** The verb, e.g. `claimDue`; the ioredis command is registered as `kairos_<name>`. */
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

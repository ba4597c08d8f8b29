import type { RedisClient } from "./connection.js";
import { allScripts, type LuaScript } from "./lua/all.js";

export type ScriptArg = string | number;
type ScriptCommand = (...args: ScriptArg[]) => Promise<unknown>;

/** The command a script is defined as on a connection (defineCommand). */
export const scriptCommand = (script: LuaScript): string => `kairos_${script.name}`;
const commandName = scriptCommand;

/**
 * Registers every script on a connection with `defineCommand` (ioredis sends EVALSHA and falls
 * back to EVAL once per connection when Redis does not know the script yet), and runs them with a
 * key-count check so a script never silently reads a missing KEYS[n].
 */
export class ScriptRunner {
  constructor(private readonly redis: RedisClient) {
    for (const script of allScripts) redis.defineCommand(commandName(script), { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }

  run(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    if (keys.length !== script.numberOfKeys)
      throw new Error(`script ${script.name} takes ${script.numberOfKeys} keys, got ${keys.length}`);
    const command = (this.redis as unknown as Record<string, ScriptCommand>)[commandName(script)]!;
    return command.call(this.redis, ...keys, ...args);
  }
}

/** Command-line flags: each one stands for an environment variable (`--port` for KAIROS_PORT). */
import { ConfigError } from "../domain/index.js";
import { loadConfig } from "./load.js";
import type { Env } from "./parse.js";
import type { KairosConfig, Role } from "./settings.js";

const FLAG_TO_ENV: Record<string, string> = {
  "--port": "KAIROS_PORT",
  "--host": "KAIROS_HOST",
  "--data-dir": "KAIROS_DATA_DIR",
  "--mongo-url": "MONGO_URL",
  "--redis-url": "REDIS_URL",
  "--log-level": "KAIROS_LOG_LEVEL",
  "--log-format": "KAIROS_LOG_FORMAT",
  "--slots": "KAIROS_EXECUTOR_SLOTS",
  "--pools": "KAIROS_POOLS",
  "--node-name": "KAIROS_NODE_NAME",
  "--shards": "KAIROS_SHARDS",
  "--metrics-port": "KAIROS_METRICS_PORT",
};

/** Every flag a role takes (`kairos <role> --help` must list each: test/cli/stranger-roles.test.ts). */
export const ROLE_FLAGS: readonly string[] = Object.keys(FLAG_TO_ENV);

/** Flags override the environment: `--port 5000` or `--port=5000`. Unknown flags are refused. */
export function applyFlags(argv: readonly string[], env: Env): Env {
  const out: Env = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const key = FLAG_TO_ENV[flag];
    if (!key) {
      throw new ConfigError(`unknown option ${flag}; allowed: ${Object.keys(FLAG_TO_ENV).join(", ")}`);
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value.startsWith("--")) throw new ConfigError(`option ${flag} needs a value`);
    out[key] = value;
  }
  return out;
}

/**
 * A role's settings: its flags over the environment (applyFlags), read by loadConfig. A setting
 * given as a flag is refused under the flag's name, which is what was typed: `kairos dev --port
 * 1e3` says `--port (KAIROS_PORT): "1e3" must be …`, not only `KAIROS_PORT: …`.
 */
export function loadRoleConfig(role: Role, argv: readonly string[], env: Env): KairosConfig {
  const merged = applyFlags(argv, env);
  try {
    return loadConfig(role, merged);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const given = new Set(argv.map((a) => (a.indexOf("=") > 0 ? a.slice(0, a.indexOf("=")) : a)));
    const flag = Object.keys(FLAG_TO_ENV).find((f) => given.has(f) && e.message.startsWith(`${FLAG_TO_ENV[f]}:`));
    if (!flag) throw e;
    throw new ConfigError(`${flag} (${FLAG_TO_ENV[flag]})${e.message.slice(FLAG_TO_ENV[flag]!.length)}`);
  }
}

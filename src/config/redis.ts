/**
 * Which Redis a role runs on: `REDIS_URL` (one server), `REDIS_CLUSTER_NODES` (a Redis Cluster)
 * or `REDIS_SENTINELS` with `REDIS_SENTINEL_NAME` (a primary behind Sentinel), exactly one of them;
 * `REDIS_USERNAME` / `REDIS_PASSWORD` authenticate to a cluster's nodes or to the primary and
 * replicas behind Sentinel (a URL carries its own), `REDIS_SENTINEL_PASSWORD` to the sentinels.
 * TLS: ./redis-tls.ts.
 */
import { ConfigError } from "../domain/index.js";
import { parseRedisNodes, type RedisNode, type RedisTarget } from "../shared-state/index.js";
import { url, type Env } from "./parse.js";
import { redisTlsSetting } from "./redis-tls.js";

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

function nodes(name: string, raw: string): RedisNode[] {
  try {
    return parseRedisNodes(name, raw);
  } catch (err) {
    if (err instanceof RangeError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The Redis target, or null when none is set (only dev runs without Redis: the caller checks). */
export function redisTargetSetting(env: Env): RedisTarget | null {
  const chosen = (["REDIS_URL", "REDIS_CLUSTER_NODES", "REDIS_SENTINELS"] as const).filter((n) => set(env[n]));
  if (chosen.length > 1) throw new ConfigError(`${chosen.join(" and ")} are both set: choose one (REDIS_URL for one server, REDIS_CLUSTER_NODES for a Redis Cluster, REDIS_SENTINELS with REDIS_SENTINEL_NAME for Sentinel)`);
  const auth = {
    ...(set(env.REDIS_USERNAME) ? { username: env.REDIS_USERNAME } : {}),
    ...(set(env.REDIS_PASSWORD) ? { password: env.REDIS_PASSWORD } : {}),
  };
  if (set(env.REDIS_SENTINEL_NAME) && chosen[0] !== "REDIS_SENTINELS") throw new ConfigError("REDIS_SENTINEL_NAME is set without REDIS_SENTINELS: give the sentinels' host:port list too, or unset it");
  if (set(env.REDIS_SENTINEL_PASSWORD) && chosen[0] !== "REDIS_SENTINELS") throw new ConfigError("REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS: it is the sentinels' password");
  switch (chosen[0]) {
    case undefined:
      if (set(env.REDIS_USERNAME) || set(env.REDIS_PASSWORD)) throw new ConfigError("REDIS_USERNAME / REDIS_PASSWORD are set without REDIS_CLUSTER_NODES or REDIS_SENTINELS (with REDIS_URL, put them in the URL)");
      redisTlsSetting(env, null);
      return null;
    case "REDIS_URL": {
      if (set(env.REDIS_USERNAME) || set(env.REDIS_PASSWORD)) throw new ConfigError("REDIS_USERNAME / REDIS_PASSWORD apply to REDIS_CLUSTER_NODES and REDIS_SENTINELS; with REDIS_URL put them in the URL (redis://user:password@host:port)");
      const u = url("REDIS_URL", env.REDIS_URL, ["redis:", "rediss:"])!;
      return { kind: "single", url: u, ...redisTlsSetting(env, "single", new URL(u).protocol === "rediss:") };
    }
    case "REDIS_CLUSTER_NODES":
      return { kind: "cluster", nodes: nodes("REDIS_CLUSTER_NODES", env.REDIS_CLUSTER_NODES!), ...auth, ...redisTlsSetting(env, "cluster") };
    case "REDIS_SENTINELS": {
      const name = env.REDIS_SENTINEL_NAME?.trim() ?? "";
      if (name === "") throw new ConfigError("REDIS_SENTINELS needs REDIS_SENTINEL_NAME: the name the sentinels monitor the primary under (`sentinel monitor <name> …`, often mymaster)");
      if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(name)) throw new ConfigError(`REDIS_SENTINEL_NAME: "${name}" is not a sentinel master name (1–128 letters, digits, '_', '.', ':', '-')`);
      return {
        kind: "sentinel",
        sentinels: nodes("REDIS_SENTINELS", env.REDIS_SENTINELS!),
        name,
        ...auth,
        ...(set(env.REDIS_SENTINEL_PASSWORD) ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
        ...redisTlsSetting(env, "sentinel"),
      };
    }
  }
}

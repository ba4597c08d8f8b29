/**
 * The stores a role runs on: MongoDB (or, in dev without MONGO_URL, the embedded emulator) and the
 * shared state (Redis with REDIS_URL, else in-memory).
 */
import { join } from "node:path";
import type { KairosConfig } from "../config/index.js";
import { createMemorySharedState, createRedisSharedState, type SharedState } from "../shared-state/index.js";
import type { LogBlobs } from "../core/index.js";
import { applyRetention, connectMongo, type Mongo } from "../store/index.js";
import type { Logger } from "../support/index.js";
import { loadEmulator } from "./dev-emulator.js";
import type { Stops } from "./stops.js";

type LogLevelName = "debug" | "info" | "warn" | "error";

/** A component's log function (the emulator's, the Redis adapters') on top of the app's logger. */
export const bridge = (log: Logger, component: string) => (level: LogLevelName, msg: string, fields?: Record<string, unknown>) =>
  log[level]({ component, ...fields }, msg);

export interface Stores {
  mongo: Mongo;
  mongoUrl: string;
  state: SharedState;
  /** The blob store run logs are archived to; null when none is configured (logs then stay live until their retention). */
  blobs: LogBlobs | null;
}

export async function openStores(config: KairosConfig, log: Logger, stops: Stops): Promise<Stores> {
  const mongoUrl = config.mongoUrl ?? (await startDevEmulator(config, log, stops));
  const mongo = await connectMongo(mongoUrl, config.mongoDb, { appName: `kairos-${config.role}` });
  stops.push(() => mongo.close());
  const { retention } = config;
  await applyRetention(mongo, { runs: Math.round(retention.runsMs / 1000), fires: Math.round(retention.firesMs / 1000), logs: Math.round(retention.logsMs / 1000) });
  const state: SharedState = config.redisUrl
    ? await createRedisSharedState({ url: config.redisUrl, prefix: config.redisPrefix, shardCount: config.shards, log: bridge(log, "redis") })
    : createMemorySharedState({ shardCount: config.shards });
  stops.push(() => state.close());
  return { mongo, mongoUrl, state, blobs: null };
}

/** Only here (dev, no MONGO_URL) is the emulator package loaded; production roles never are. */
async function startDevEmulator(config: KairosConfig, log: Logger, stops: Stops): Promise<string> {
  const { startEmulator } = await loadEmulator();
  const dataDir = join(config.dataDir, "mongo");
  const emulator = await startEmulator({ port: 0, dataDir, log: bridge(log, "emulator") });
  stops.push(() => emulator.stop());
  log.info({ uri: emulator.uri, dataDir }, "embedded MongoDB emulator started");
  return emulator.uri;
}

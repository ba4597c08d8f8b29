/**
 * The stores a role runs on: MongoDB (or, in dev without MONGO_URL, the embedded emulator), the
 * shared state (Redis with REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS, else in-memory) and the blob store (S3 with S3_BUCKET, else
 * in dev the embedded S3 server, else none).
 */
import { join } from "node:path";
import { createS3BlobStore, type BlobStore } from "../blobs/index.js";
import { ConfigError } from "../domain/index.js";
import type { KairosConfig } from "../config/index.js";
import { createMemorySharedState, createRedisSharedState, type SharedState } from "../shared-state/index.js";
import { applyRetention, connectMongo, type Mongo } from "../store/index.js";
import type { Logger } from "../support/index.js";
import { loadEmulator } from "./dev-emulator.js";
import { startEmbeddedS3 } from "./dev-s3.js";
import type { Stops } from "./stops.js";

type LogLevelName = "debug" | "info" | "warn" | "error";

/** A component's log function (the emulator's, the Redis adapters') on top of the app's logger. */
export const bridge = (log: Logger, component: string) => (level: LogLevelName, msg: string, fields?: Record<string, unknown>) =>
  log[level]({ component, ...fields }, msg);

export interface Stores {
  mongo: Mongo;
  mongoUrl: string;
  state: SharedState;
  /** Artifacts and archived logs; null outside dev without S3_BUCKET (those features then say they need it). */
  blobs: BlobStore | null;
}

export async function openStores(config: KairosConfig, log: Logger, stops: Stops): Promise<Stores> {
  const mongoUrl = config.mongoUrl ?? (await startDevEmulator(config, log, stops));
  const mongo = await connectMongo(mongoUrl, config.mongoDb, { appName: `kairos-${config.role}` });
  stops.push(() => mongo.close());
  const { retention } = config;
  await applyRetention(mongo, { runs: Math.round(retention.runsMs / 1000), fires: Math.round(retention.firesMs / 1000), logs: Math.round(retention.logsMs / 1000) });
  const state: SharedState = config.redis
    ? await createRedisSharedState({ url: config.redis, prefix: config.redisPrefix, shardCount: config.shards, log: bridge(log, "redis") })
    : createMemorySharedState({ shardCount: config.shards });
  stops.push(() => state.close());
  const blobs = await openBlobs(config, log, stops);
  return { mongo, mongoUrl, state, blobs };
}

/** The blob store: S3 (S3_BUCKET), or in dev the embedded S3 server on the data dir, or none. */
async function openBlobs(config: KairosConfig, log: Logger, stops: Stops): Promise<BlobStore | null> {
  let settings = config.s3;
  if (!settings) {
    if (config.role !== "dev") {
      log.warn("S3_BUCKET is not set: artifacts and archived logs are unavailable on this node");
      return null;
    }
    const directory = join(config.dataDir, "s3");
    const embedded = await startEmbeddedS3({ directory, bucket: "kairos" });
    stops.push(() => embedded.stop());
    log.info({ endpoint: embedded.settings.endpoint, directory }, "embedded S3 server started");
    settings = embedded.settings;
  }
  const blobs = createS3BlobStore(settings);
  stops.push(async () => blobs.close());
  try {
    await blobs.ensureBucket();
  } catch (e) {
    // Not fatal: scheduling does not need S3, and the store is tried again on every use.
    log.error({ err: e, bucket: settings.bucket, endpoint: settings.endpoint }, "S3 bucket not reachable at start");
  }
  return blobs;
}

/** Only here (dev, no MONGO_URL) is the emulator package loaded; production roles never are. */
async function startDevEmulator(config: KairosConfig, log: Logger, stops: Stops): Promise<string> {
  const { startEmulator } = await loadEmulator();
  const dataDir = join(config.dataDir, "mongo");
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator({ port: 0, dataDir, log: bridge(log, "emulator") });
  } catch (e) {
    // Another kairos dev on this data dir (the emulator takes one lock per directory): say which
    // and what to do, as a setting's refusal, instead of a stack.
    const held = e as { name?: string; pid?: number };
    if (held.name !== "DataDirInUseError") throw e;
    throw new ConfigError(
      `KAIROS_DATA_DIR (--data-dir) ${config.dataDir} is in use by another kairos dev (process ${held.pid}): two on one data directory would overwrite each other's data. ` +
        `Stop it (Ctrl-C where it runs), or start this one with another --data-dir; if process ${held.pid} is no kairos, remove ${join(dataDir, "emulator.lock")}`,
    );
  }
  stops.push(() => emulator.stop());
  log.info({ uri: emulator.uri, dataDir }, "embedded MongoDB emulator started");
  return emulator.uri;
}

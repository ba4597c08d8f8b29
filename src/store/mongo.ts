import { MongoClient, MongoServerError, ObjectId, type Collection, type Db } from "mongodb";
import type { ApiKeyDoc, ArtifactDoc, DagDefinitionDoc, DagDoc, StoredDagRun, FireDoc, IdempotencyDoc, JobDoc, LogChunkDoc, LogSegmentDoc, NodeDoc, RunDoc, UserDoc } from "../domain/index.js";
import { LOG_INDEXES } from "./logs/indexes.js";

export interface Collections {
  users: Collection<UserDoc>;
  jobs: Collection<JobDoc>;
  runs: Collection<RunDoc>;
  fires: Collection<FireDoc>;
  nodes: Collection<NodeDoc>;
  apiKeys: Collection<ApiKeyDoc>;
  idempotency: Collection<IdempotencyDoc>;
  dags: Collection<DagDoc>;
  dagRuns: Collection<StoredDagRun>;
  /** DAG definitions by version, shared by the DAG runs of each version. */
  dagDefinitions: Collection<DagDefinitionDoc>;
  /** Live log chunks (store/logs/). */
  runLogs: Collection<LogChunkDoc>;
  /** One document per attempt's log: live, archived, expired (store/logs/). */
  runLogSegments: Collection<LogSegmentDoc>;
  artifacts: Collection<ArtifactDoc>;
}

export interface Mongo {
  client: MongoClient;
  db: Db;
  c: Collections;
  close(): Promise<void>;
}

export const newId = (): string => new ObjectId().toHexString();

export function isDuplicateKey(e: unknown): boolean {
  return e instanceof MongoServerError && e.code === 11000;
}

/**
 * Connects and makes sure every index exists. Index creation is idempotent, so every process
 * runs it at start; a unique index that cannot be built (duplicates already stored) fails loudly.
 */
export async function connectMongo(url: string, dbName: string, opts: { appName?: string } = {}): Promise<Mongo> {
  const client = new MongoClient(url, {
    appName: opts.appName ?? "kairos",
    serverSelectionTimeoutMS: 10_000,
    ignoreUndefined: true,
  });
  await client.connect();
  const db = client.db(dbName);
  const c: Collections = {
    users: db.collection<UserDoc>("users"),
    jobs: db.collection<JobDoc>("jobs"),
    runs: db.collection<RunDoc>("runs"),
    fires: db.collection<FireDoc>("fires"),
    nodes: db.collection<NodeDoc>("nodes"),
    apiKeys: db.collection<ApiKeyDoc>("apiKeys"),
    idempotency: db.collection<IdempotencyDoc>("idempotency"),
    dags: db.collection<DagDoc>("dags"),
    dagRuns: db.collection<StoredDagRun>("dagRuns"),
    dagDefinitions: db.collection<DagDefinitionDoc>("dagDefinitions"),
    runLogs: db.collection<LogChunkDoc>("runLogs"),
    runLogSegments: db.collection<LogSegmentDoc>("runLogSegments"),
    artifacts: db.collection<ArtifactDoc>("artifacts"),
  };
  await Promise.all([
    c.users.createIndexes([{ key: { username: 1 }, name: "username_unique", unique: true }]),
    c.jobs.createIndexes([
      { key: { ownerId: 1, _id: 1 }, name: "owner_id" },
      { key: { ownerId: 1, name: 1 }, name: "owner_name_unique", unique: true },
      // upcomingFires pages in (nextFireAt, _id) order; the forecast reads by nextFireAt.
      { key: { nextFireAt: 1, _id: 1 }, name: "nextFire_id" },
      { key: { ownerId: 1, createdAt: -1 }, name: "owner_created" },
      // jobs(filter: { lastRunStatus }): a user's, and everyone's (an administrator's list).
      { key: { ownerId: 1, "lastRun.status": 1, createdAt: -1 }, name: "owner_lastRun_created" },
      { key: { "lastRun.status": 1, createdAt: -1 }, name: "lastRun_created" },
    ]),
    c.runs.createIndexes([
      { key: { fireKey: 1 }, name: "fireKey_unique", unique: true },
      { key: { jobId: 1, scheduledFor: -1 }, name: "job_scheduledFor" },
      // The lease watch (scheduler/lease-watch.ts): runs whose own lease decides (no nodeEpoch:
      // claimed before node leases) by lease end; and a node's runs of its ended epochs.
      { key: { status: 1, nodeEpoch: 1, leaseUntil: 1 }, name: "status_epoch_lease" },
      { key: { status: 1, nodeId: 1, nodeEpoch: 1 }, name: "status_node_epoch" },
      { key: { ownerId: 1, createdAt: -1 }, name: "owner_created" },
      // A search of runs (Query.runs without a job, store/runs/user-reads.ts searchRuns), newest
      // first: a user's runs; everyone's (an administrator's); of one status; of one node. Each
      // ends in the page's order (scheduledFor, _id), so a page reads its documents in order and
      // stops. ownerId and scheduledFor never change: only inserts and deletes maintain the first two.
      { key: { ownerId: 1, scheduledFor: -1, _id: -1 }, name: "owner_scheduled" },
      { key: { scheduledFor: -1, _id: -1 }, name: "scheduled" },
      // Also an owner's runs waiting to start, counted up to KAIROS_MAX_WAITING_RUNS
      // (core/runs/waiting.ts) by its prefix: it supersedes owner_status (dropped below).
      { key: { ownerId: 1, status: 1, scheduledFor: -1, _id: -1 }, name: "owner_status_scheduled" },
      // Runs that have been claimed (nodeId set); a claim and a retry move a run in or out of it.
      { key: { nodeId: 1, scheduledFor: -1, _id: -1 }, name: "node_scheduled", partialFilterExpression: { nodeId: { $type: "string" } } },
      // finished_ttl (finishedAt, the run retention) is set by retention.ts from the settings: an
      // index created here with a fixed expiry would conflict with a configured one at the next start.
      // Runs parked by their owner's concurrency limit, woken oldest first (RunService.wakeHeld).
      { key: { ownerId: 1, queuedAt: 1 }, name: "held_by_limit", partialFilterExpression: { heldByLimit: true } },
      // A DAG run's task runs (src/dag/engine's full rounds), and those of given tasks (a task's
      // parents' results, read for KAIROS_INPUTS at each start).
      { key: { dagRunId: 1, taskKey: 1 }, name: "dagRun_task", partialFilterExpression: { dagRunId: { $type: "string" } } },
      // Whether a DAG run's task runs ended since its last full sweep (src/dag/engine/sweeper.ts).
      { key: { dagRunId: 1, finishedAt: 1 }, name: "dagRun_finished", partialFilterExpression: { dagRunId: { $type: "string" } } },
      // clusterStats (store/runs/stats.ts): runs ended in a window, counted per final status without
      // reading a document, and one owner's; only ended runs are in them (one key written at the end).
      { key: { status: 1, finishedAt: -1 }, name: "status_finished", partialFilterExpression: { finishedAt: { $type: "date" } } },
      { key: { ownerId: 1, finishedAt: -1 }, name: "owner_finished", partialFilterExpression: { finishedAt: { $type: "date" } } },
      // The runs waiting in a pool, oldest first (a pool's oldest wait); only QUEUED runs are in it.
      { key: { pool: 1, queuedAt: 1 }, name: "queued_pool", partialFilterExpression: { status: "QUEUED" } },
    ]),
    c.dags.createIndexes([
      { key: { ownerId: 1, name: 1 }, name: "owner_name_unique", unique: true },
      { key: { ownerId: 1, createdAt: -1 }, name: "owner_created" },
    ]),
    c.dagRuns.createIndexes([
      // One DAG run per fire (a schedule slot, a trigger's id): creating it twice is a no-op.
      { key: { fireKey: 1 }, name: "fireKey_unique", unique: true },
      { key: { dagId: 1, createdAt: -1 }, name: "dag_created" },
      { key: { ownerId: 1, createdAt: -1 }, name: "owner_created" },
      { key: { status: 1, sweepAt: 1 }, name: "status_sweep" },
      // DAG runs held behind a timer's lock (QUEUE_ONE), for the sweeper's lock repair.
      { key: { status: 1 }, name: "held_status", partialFilterExpression: { held: true } },
      // Whether any DAG run still reads a version's definition (the definitions' sweep).
      { key: { dagId: 1, dagVersion: 1 }, name: "dag_version" },
    ]),
    // A deleted user's definitions go with its DAG runs.
    c.dagDefinitions.createIndexes([{ key: { ownerId: 1 }, name: "owner" }]),
    c.fires.createIndexes([{ key: { jobId: 1, slotAt: -1 }, name: "job_slot" }]),
    c.nodes.createIndexes([
      // nodes(filter, first, after) (store/nodes/reads.ts pageNodes): every node, those of a pool
      // (pools is an array: one key per pool), those in some states; each in the page's whole order.
      // name_started_id supersedes name (dropped below).
      { key: { name: 1, startedAt: -1, _id: 1 }, name: "name_started_id" },
      { key: { pools: 1, name: 1, startedAt: -1, _id: 1 }, name: "pool_name_started_id" },
      { key: { status: 1, name: 1, startedAt: -1, _id: 1 }, name: "status_name_started_id" },
      // Node leases (store/nodes/lease.ts): those not ended, by end; those whose runs are being queued again.
      { key: { leaseEnded: 1, leaseUntil: 1 }, name: "lease_end" },
      { key: { reclaimUntil: 1 }, name: "reclaim_until", partialFilterExpression: { reclaimUntil: { $type: "date" } } },
    ]),
    c.apiKeys.createIndexes([
      { key: { hash: 1 }, name: "hash_unique", unique: true },
      // apiKeys(first, after): an owner's keys newest first, in the page's order to the tiebreak (store/api-keys/keys.ts).
      { key: { ownerId: 1, createdAt: -1, _id: -1 }, name: "owner_created_id" },
    ]),
    c.idempotency.createIndexes([
      // Two racing requests with one key: exactly one insert wins.
      { key: { ownerId: 1, key: 1 }, name: "owner_key_unique", unique: true },
      { key: { expiresAt: 1 }, name: "expires_ttl", expireAfterSeconds: 0 },
    ]),
    c.runLogs.createIndexes(LOG_INDEXES.runLogs),
    c.runLogSegments.createIndexes(LOG_INDEXES.runLogSegments),
    c.artifacts.createIndexes([
      { key: { ownerId: 1, createdAt: -1 }, name: "owner_created" },
      // The sweep of abandoned uploads (core/artifacts/sweep.ts), and a TTL backstop a day later:
      // the sweep deletes the bytes with the document; the TTL only the document, should the sweep not run.
      { key: { status: 1, expiresAt: 1 }, name: "status_expires" },
      { key: { purgeAt: 1 }, name: "purge_ttl", expireAfterSeconds: 0 },
    ]),
    // deleteArtifact's "used by jobs and DAGs" check (store/artifacts/users.ts).
    c.jobs.createIndexes([{ key: { "spec.artifactId": 1 }, name: "spec_artifact", sparse: true }]),
    c.dags.createIndexes([{ key: { "tasks.spec.artifactId": 1 }, name: "task_spec_artifact", sparse: true }]),
  ]);
  // Superseded by dagRun_task, owner_status_scheduled and status_epoch_lease; dropped where an earlier version made them.
  for (const superseded of ["dagRun", "owner_status", "status_lease"]) {
    await c.runs.dropIndex(superseded).catch((e: unknown) => {
      if ((e as { codeName?: string }).codeName !== "IndexNotFound") throw e;
    });
  }
  // Superseded by owner_created_id (the listing's whole order).
  await c.apiKeys.dropIndex("owner_created").catch((e: unknown) => {
    if ((e as { codeName?: string }).codeName !== "IndexNotFound") throw e;
  });
  // Superseded by nextFire_id (upcomingFires' whole order).
  await c.jobs.dropIndex("nextFireAt").catch((e: unknown) => {
    if ((e as { codeName?: string }).codeName !== "IndexNotFound") throw e;
  });
  // Superseded by name_started_id (the nodes list's whole order).
  await c.nodes.dropIndex("name").catch((e: unknown) => {
    if ((e as { codeName?: string }).codeName !== "IndexNotFound") throw e;
  });
  return { client, db, c, close: () => client.close() };
}

/** Whether MongoDB answers (the readiness probe). */
export async function pingMongo(mongo: Mongo): Promise<boolean> {
  return (await mongo.db.command({ ping: 1 })).ok === 1;
}

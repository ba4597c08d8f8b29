/**
 * The write shapes of a Kairos DAG fan-out, timed against the emulator:
 *   node --import tsx packages/mongo-emulator/bench/writes.ts [--rounds N]   (from the repository root)
 * EMULATOR_CPU_PROF=DIR writes a V8 CPU profile of the server process into DIR.
 *
 * The server runs in its own process (as in real use) with the `runs` collection and its index
 * set as src/store/mongo.ts creates it. Each round:
 *   - one insertMany of 1,000 run documents shaped like src/core/runs/materialize.ts newRun's for
 *     the instances of one mapped DAG task (the fan-out's single insert);
 *   - bulkWrites of 64 unordered conditional updateOnes, each an executor's claim and result in
 *     one write (src/core/runs/transitions.ts, claimedTransitionFilter + transitionUpdate with
 *     the batcher's marker field): `$set` of ~12 fields, `$push` of two history entries with
 *     `$slice`, `$inc` of the fencing token;
 *   - a `find` of those runs by `dagRunId` (the fan-in's read), for scale.
 * Medians over the rounds are printed as JSON, in ms per operation, with the emulator process's
 * CPU time per operation (from /proc, so Linux only), which other load on the machine disturbs
 * less than the wall-clock times.
 */
import { randomUUID } from "node:crypto";
import { MongoClient, type AnyBulkWriteOperation, type Document, type IndexDescription } from "mongodb";
import { arg, processCpuMs, startServer } from "./server.js";

const ROUNDS = arg("rounds", 15);
const FAN_OUT = 1000;
const BATCH = 64;
const HISTORY_LIMIT = 50;
/** The first rounds warm the JIT; they are left out of the figures. */
const WARM = Math.min(3, ROUNDS - 1);

/** The index set of the `runs` collection (src/store/mongo.ts, plus retention's TTL index). */
const RUN_INDEXES: IndexDescription[] = [
  { key: { fireKey: 1 }, name: "fireKey_unique", unique: true },
  { key: { jobId: 1, scheduledFor: -1 }, name: "job_scheduledFor" },
  { key: { status: 1, leaseUntil: 1 }, name: "status_lease" },
  { key: { ownerId: 1, createdAt: -1 }, name: "owner_created" },
  { key: { ownerId: 1, queuedAt: 1 }, name: "held_by_limit", partialFilterExpression: { heldByLimit: true } },
  { key: { dagRunId: 1, taskKey: 1 }, name: "dagRun_task", partialFilterExpression: { dagRunId: { $type: "string" } } },
  { key: { finishedAt: 1 }, name: "finished_ttl", expireAfterSeconds: 90 * 86400 },
];

/** A run document, loosely typed (string ids, operator shapes the driver's types do not model). */
type RunRow = Document & { _id: string };

/** A job's spec as a DAG task's job carries it (a shell command, env, resources, limits). */
const SPEC = {
  kind: "shell",
  command: "true",
  args: [],
  env: { KAIROS_TASK: "work", PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" },
  cwd: null,
  timeoutMs: 3_600_000,
  resources: { cpu: 1, memoryMb: 256 },
  pool: "default",
  sandbox: { network: false, readOnlyRoot: true },
  artifactId: null,
  outputLimitBytes: 1_048_576,
};

/** One task instance's run, as newRun builds it for a mapped DAG task. */
function runDoc(dagRunId: string, jobId: string, ownerId: string, i: number, now: Date): RunRow {
  return {
    _id: randomUUID(),
    ownerId,
    jobId,
    jobName: "fanout-dag.work",
    fireKey: `${dagRunId}:work:${i}`,
    trigger: "DAG",
    scheduledFor: now,
    status: "QUEUED",
    attempt: 1,
    retry: { maxAttempts: 3, backoffMs: 1000, backoffFactor: 2, maxBackoffMs: 60_000 },
    overlap: "ALLOW",
    fencingToken: 0,
    priority: 0,
    pool: "default",
    spec: SPEC,
    nodeId: null,
    leaseUntil: null,
    cancelRequested: false,
    notBefore: null,
    queuedAt: now,
    startedAt: null,
    finishedAt: null,
    retryAt: null,
    exitCode: null,
    signal: null,
    error: null,
    outputTail: null,
    outputTruncated: false,
    history: [{ status: "QUEUED", at: now, reason: "dag", nodeId: null, attempt: 1 }],
    dagRunId,
    taskKey: "work",
    mapIndex: i,
    createdAt: now,
    updatedAt: now,
  };
}

/** An executor's claim and result of one run in one conditional write (claimedTransitionFilter). */
function claimAndResult(id: string, op: string, nodeId: string, now: Date): AnyBulkWriteOperation<RunRow> {
  const lease = new Date(now.getTime() + 30_000);
  return {
    updateOne: {
      filter: { _id: id, status: "QUEUED", fencingToken: 0, attempt: 1, heldByLimit: { $ne: true } },
      update: {
        $set: {
          nodeId,
          leaseUntil: lease,
          startedAt: now,
          claimId: op,
          finishedAt: now,
          exitCode: 0,
          signal: null,
          error: null,
          outputTail: "",
          outputTruncated: false,
          status: "SUCCEEDED",
          updatedAt: now,
          batchOp: op,
        },
        $push: {
          history: {
            $each: [
              { status: "RUNNING", at: now, reason: "claimed", nodeId, attempt: 1 },
              { status: "SUCCEEDED", at: now, reason: "exit 0", nodeId, attempt: 1 },
            ],
            $slice: -HISTORY_LIMIT,
          },
        },
        $inc: { fencingToken: 1 },
      } as Document,
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.floor(s.length / 2)].toFixed(2));
}

async function main(): Promise<void> {
  const { uri, child } = await startServer();
  const client = new MongoClient(uri, { maxPoolSize: 1 });
  try {
    const db = client.db("bench");
    const insertMs: number[] = [];
    const bulkMs: number[] = [];
    const findMs: number[] = [];
    const pid = child.pid!;
    let insertCpu = 0;
    let bulkCpu = 0;
    let inserts = 0;
    let bulks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await db.dropDatabase();
      const runs = db.collection<RunRow>("runs");
      await runs.createIndexes(RUN_INDEXES);
      // Earlier DAG runs' task runs, so the indexes hold more than the batch.
      const now = new Date();
      await runs.insertMany(Array.from({ length: FAN_OUT }, (_, i) => runDoc(randomUUID(), "job-old", "owner-1", i, now)));

      const dagRunId = randomUUID();
      const docs = Array.from({ length: FAN_OUT }, (_, i) => runDoc(dagRunId, "job-1", "owner-1", i, now));
      let cpu = processCpuMs(pid);
      let t = performance.now();
      await runs.insertMany(docs, { ordered: false });
      insertMs.push(performance.now() - t);
      if (round >= WARM) {
        insertCpu += processCpuMs(pid) - cpu;
        inserts++;
      }

      for (let start = 0; start + BATCH <= FAN_OUT; start += BATCH) {
        const ops = docs.slice(start, start + BATCH).map((d) => claimAndResult(d._id, randomUUID(), "node-1", new Date()));
        cpu = processCpuMs(pid);
        t = performance.now();
        const res = await runs.bulkWrite(ops, { ordered: false });
        bulkMs.push(performance.now() - t);
        if (round >= WARM) {
          bulkCpu += processCpuMs(pid) - cpu;
          bulks++;
        }
        if (res.matchedCount !== BATCH) throw new Error(`bulkWrite matched ${res.matchedCount} of ${BATCH}`);
      }

      t = performance.now();
      const found = await runs.find({ dagRunId, taskKey: "work" }).toArray();
      findMs.push(performance.now() - t);
      if (found.length !== FAN_OUT) throw new Error(`find returned ${found.length}`);
    }
    const perRound = (xs: number[], k: number) => xs.slice(WARM * k);
    const bulksPerRound = Math.floor(FAN_OUT / BATCH);
    console.log(
      JSON.stringify(
        {
          rounds: ROUNDS - WARM,
          insertMany1000Ms: median(perRound(insertMs, 1)),
          bulkWrite64Ms: median(perRound(bulkMs, bulksPerRound)),
          find1000Ms: median(perRound(findMs, 1)),
          emulatorCpuMsPerInsertMany: Number((insertCpu / inserts).toFixed(1)),
          emulatorCpuMsPerBulkWrite: Number((bulkCpu / bulks).toFixed(2)),
        },
        null,
        2,
      ),
    );
  } finally {
    await client.close();
    child.kill("SIGINT");
    await new Promise((r) => child.once("exit", r));
  }
}

await main();

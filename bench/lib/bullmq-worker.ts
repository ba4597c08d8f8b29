/**
 * A BullMQ Worker in its own process, forked by bench/bullmq.ts (`child_process.fork` with
 * `--import tsx`). It runs a no-op processor that records, per job, the moment the processor began
 * (`Date.now()` on its first line) and the job's due instant, and sends both arrays back over IPC when
 * told to stop. Running the Worker in a separate process keeps the producer (the bench's own process)
 * from stealing the Worker's event loop, as it would be in a real deployment.
 *
 * Protocol (IPC messages):
 *   parent → child  { cmd: "start", config: WorkerConfig }
 *   child  → parent { ev: "ready" }
 *   child  → parent { ev: "progress", started }          every 100 ms while running
 *   parent → child  { cmd: "stop" }
 *   child  → parent { ev: "result", samples: WorkerSamples } then the child exits
 *   child  → parent { ev: "error", message }
 */
import { fileURLToPath } from "node:url";
import { Worker, type Job } from "bullmq";
import { redisConnectionOptions } from "./redis.js";

export type DueKind = "burst" | "scheduler" | "throughput";

export interface WorkerConfig {
  redisUrl: string;
  queue: string;
  concurrency: number;
  /** How the due instant of a job is derived (see bench/lib/shapes.ts for the definitions). */
  kind: DueKind;
}

export interface WorkerSamples {
  /** Date.now() at the first line of the processor, per job. */
  startedAt: number[];
  /** The job's due instant, same index. */
  dueAt: number[];
  /** scheduler kind only: `${schedulerId}@${slot}` per job, to count duplicate fires. */
  keys?: string[];
  /** Jobs whose due instant could not be derived (should be 0). */
  unknownDue: number;
}

/** The BullMQ Worker options every bench uses: the documented production defaults, nothing tuned. */
export function workerOptions(config: WorkerConfig) {
  return {
    connection: { ...redisConnectionOptions(config.redisUrl), maxRetriesPerRequest: null },
    concurrency: config.concurrency,
    // docs.bullmq.io "Auto-removal of jobs": keep a handful of completed, more failed — the usual
    // production setting (the default keeps every job forever).
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 5000 },
  };
}

/**
 * The due instant of a job, per bench kind:
 * - burst: `job.data.due` (= `timestamp + delay`, both set by the producer to land on T exactly);
 * - scheduler: the slot the job scheduler computed — `opts.prevMillis` (the slot base it stores as
 *   the job id suffix) plus `opts.repeat.offset` (non-zero for `every` schedulers, the phase within
 *   the period; 0 for cron patterns). This does not use `timestamp + delay`, because BullMQ clamps
 *   the delay at 0 when it creates the next iteration late, which would hide the lateness;
 * - throughput: `job.timestamp`, the moment the producer created the job (before sending it).
 */
export function dueOf(kind: DueKind, job: Job): number | undefined {
  switch (kind) {
    case "burst":
      return typeof job.data?.due === "number" ? job.data.due : undefined;
    case "scheduler": {
      const prev = job.opts.prevMillis;
      if (typeof prev !== "number") return undefined;
      return prev + (job.opts.repeat?.offset ?? 0);
    }
    case "throughput":
      return job.timestamp;
  }
}

function send(msg: unknown): Promise<void> {
  return new Promise((resolve, reject) => process.send!(msg, (e: Error | null) => (e ? reject(e) : resolve())));
}

async function run(config: WorkerConfig): Promise<void> {
  const startedAt: number[] = [];
  const dueAt: number[] = [];
  const keys: string[] | undefined = config.kind === "scheduler" ? [] : undefined;
  let unknownDue = 0;

  const worker = new Worker(
    config.queue,
    async (job: Job) => {
      const now = Date.now(); // the job's start, first statement of the processor
      const due = dueOf(config.kind, job);
      if (due === undefined) {
        unknownDue++;
        return;
      }
      startedAt.push(now);
      dueAt.push(due);
      keys?.push(`${job.repeatJobKey}@${job.opts.prevMillis}`);
    },
    workerOptions(config),
  );
  worker.on("error", (e) => console.error(`[bullmq-worker ${process.pid}] worker error: ${e.message}`));
  await worker.waitUntilReady();
  // Also wait for the blocking connection, so "ready" means the Worker is really fetching.
  while (!worker.isRunning()) await new Promise((r) => setTimeout(r, 5));

  const progress = setInterval(() => void send({ ev: "progress", started: startedAt.length }).catch(() => {}), 100);

  await new Promise<void>((resolve) => {
    process.on("message", (m: { cmd?: string }) => {
      if (m?.cmd === "stop") resolve();
    });
    process.once("disconnect", () => resolve());
    void send({ ev: "ready" });
  });
  clearInterval(progress);
  await worker.close();
  const samples: WorkerSamples = { startedAt, dueAt, unknownDue, ...(keys ? { keys } : {}) };
  if (process.connected) await send({ ev: "result", samples });
}

// Only as the forked entry point: bench/lib/bullmq-flow-worker.ts imports workerOptions from here.
if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once("message", (m: { cmd?: string; config?: WorkerConfig }) => {
    if (m?.cmd !== "start" || !m.config) return;
    run(m.config)
      .then(() => process.exit(0))
      .catch(async (e: unknown) => {
        await send({ ev: "error", message: e instanceof Error ? (e.stack ?? e.message) : String(e) }).catch(() => {});
        process.exit(1);
      });
  });
}

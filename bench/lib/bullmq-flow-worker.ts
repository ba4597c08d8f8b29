/**
 * A BullMQ Worker in its own process for the DAG bench (bench/dag.ts), forked like
 * bench/lib/bullmq-worker.ts and with the same Worker options. Its no-op processor records, per
 * job, the moment it began (`Date.now()` on its first line) and ended (`Date.now()` on its last),
 * with the job's round and role (`child` or `join`) from `job.data`; it tells the parent at once
 * when a round's join has run.
 *
 * Protocol (IPC messages):
 *   parent → child  { cmd: "start", config: WorkerConfig }
 *   child  → parent { ev: "ready" }
 *   child  → parent { ev: "joined", round }           when a round's join processor has ended
 *   parent → child  { cmd: "stop" }
 *   child  → parent { ev: "result", samples: FlowSample[] } then the child exits
 *   child  → parent { ev: "error", message }
 */
import { Worker, type Job } from "bullmq";
import { workerOptions, type WorkerConfig } from "./bullmq-worker.js";

/** One processed job of a flow. */
export interface FlowSample {
  round: number;
  role: "child" | "join";
  /** A chain's step (bench/dag-chain.ts), from 0 at the innermost job. */
  step?: number;
  /** Date.now() at the processor's first statement. */
  start: number;
  /** Date.now() at the processor's last statement. */
  end: number;
}

function send(msg: unknown): Promise<void> {
  return new Promise((resolve, reject) => process.send!(msg, (e: Error | null) => (e ? reject(e) : resolve())));
}

async function run(config: WorkerConfig): Promise<void> {
  const samples: FlowSample[] = [];
  const worker = new Worker(
    config.queue,
    async (job: Job<{ round: number; role: "child" | "join"; step?: number }>) => {
      const start = Date.now();
      const { round, role, step } = job.data;
      samples.push({ round, role, ...(step !== undefined ? { step } : {}), start, end: Date.now() });
      if (role === "join") void send({ ev: "joined", round }).catch(() => {});
    },
    workerOptions(config),
  );
  worker.on("error", (e) => console.error(`[bullmq-flow-worker ${process.pid}] worker error: ${e.message}`));
  await worker.waitUntilReady();
  while (!worker.isRunning()) await new Promise((r) => setTimeout(r, 5));
  await new Promise<void>((resolve) => {
    process.on("message", (m: { cmd?: string }) => {
      if (m?.cmd === "stop") resolve();
    });
    process.once("disconnect", () => resolve());
    void send({ ev: "ready" });
  });
  await worker.close();
  if (process.connected) await send({ ev: "result", samples });
}

if (process.send) {
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

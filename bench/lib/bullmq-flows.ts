/**
 * The BullMQ side of the DAG benches (bench/dag.ts's fan-out, bench/dag-chain.ts's chain): a flow
 * worker in a child process (bullmq-flow-worker.ts) on a fresh queue, the flows the bench adds, and
 * the worker's per-job timestamps once every round has joined. The queue is obliterated after.
 */
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { FlowProducer, Queue, type FlowJob } from "bullmq";
import type { FlowSample } from "./bullmq-flow-worker.js";
import type { WorkerConfig } from "./bullmq-worker.js";
import { redisConnectionOptions } from "./redis.js";

const FLOW_WORKER = fileURLToPath(new URL("./bullmq-flow-worker.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

export interface FlowRounds {
  /** The queue every job of the flows must name. */
  readonly queueName: string;
  /** Adds a flow (the bench's round `round`) and waits until its join (or its chain's last step) ran. */
  run(round: number, flow: FlowJob, timeoutMs: number): Promise<void>;
}

/**
 * Starts the worker, hands `rounds` the means to add flows round by round, and answers the worker's
 * samples of every job it processed. `name` labels the queue and the messages (e.g. "dag", "chain").
 */
export async function bullmqFlowSamples(redisUrl: string, name: string, rounds: (r: FlowRounds) => Promise<void>): Promise<FlowSample[]> {
  const queueName = `bench-${name}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const connection = { ...redisConnectionOptions(redisUrl), maxRetriesPerRequest: null };
  const config: WorkerConfig = { redisUrl, queue: queueName, concurrency: 50, kind: "throughput" };
  const child = fork(FLOW_WORKER, [], { cwd: REPO_ROOT, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const joined = new Set<number>();
  let samples: FlowSample[] | undefined;
  let failure: Error | undefined;
  let ready = false;
  child.on("message", (m: { ev?: string; round?: number; samples?: FlowSample[]; message?: string }) => {
    if (m?.ev === "ready") ready = true;
    if (m?.ev === "joined" && typeof m.round === "number") joined.add(m.round);
    if (m?.ev === "result") samples = m.samples;
    if (m?.ev === "error") failure = new Error(`bullmq flow worker failed: ${m.message}`);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.send({ cmd: "start", config });
  const flows = new FlowProducer({ connection });
  const waitUntil = async (done: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (failure) throw failure;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(2);
    }
  };
  try {
    await waitUntil(() => ready, 30_000, "the BullMQ flow worker to start");
    await rounds({
      queueName,
      run: async (round, flow, timeoutMs) => {
        await flows.add(flow);
        await waitUntil(() => joined.has(round), timeoutMs, `BullMQ ${name} ${round} to join`);
      },
    });
    child.send({ cmd: "stop" });
    await waitUntil(() => samples !== undefined, 30_000, "the BullMQ flow worker's samples");
  } finally {
    if (child.connected) child.send({ cmd: "stop" });
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null) child.kill("SIGKILL");
    const queue = new Queue(queueName, { connection });
    await queue.obliterate({ force: true }).catch((e: Error) => console.error(`[${name} bench] obliterate failed: ${e.message}`));
    await queue.close();
    await flows.close();
  }
  return samples!;
}

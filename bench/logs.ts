/**
 * Log throughput (issue #16): how much output a run can print through the log capture without the
 * capture slowing it down. The executor's own path: runProcess with the capture on its output, the
 * LogShipper's batched flushes, the fenced LogWriter into MongoDB (the emulator, in-process) and
 * the in-memory bus. Each scenario runs `yes <a 64-byte line> | head -c N` (the fastest a shell
 * program prints) in R runs at once, first with no capture (the tail only, as before), then with
 * it, and compares the runs' durations; then how long after the last exit every byte was stored.
 *
 * Run alone: node --import tsx bench/logs.ts [--mb N] ; part of `npm run bench` (shape `logs`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_LOG_SETTINGS, LogWriter, type LogBatch } from "../src/core/index.js";
import { RunAbort } from "../src/executor/abort.js";
import { LogShipper } from "../src/executor/log-capture.js";
import { runProcess } from "../src/executor/process.js";
import { createMemorySharedState } from "../src/shared-state/index.js";
import { connectMongo, newId } from "../src/store/index.js";
import { silentLogger } from "../src/support/log.js";
import { startEmulatorProcess, type Runtime } from "./lib/kairos-cluster.js";
import { fmtNum, table } from "./lib/stats.js";

export interface LogBenchResult {
  runs: number;
  mbPerRun: number;
  plainSeconds: number;
  /** With the capture, its chunks written nowhere: what capturing alone costs. */
  captureOnlySeconds: number;
  capturedSeconds: number;
  /** Output printed per second by all runs together, with the capture on. */
  capturedMBps: number;
  /** From the last run's exit until every byte was in MongoDB. */
  storedAfterExitMs: number;
  storedMB: number;
}

const LINE = "kairos log throughput bench: a line of sixty-four bytes, or so.";

function program(bytes: number): string[] {
  return ["-c", `yes '${LINE}' | head -c ${bytes}`];
}

export async function benchLogs(opts: { scenarios: Array<{ runs: number; mb: number }>; runtime?: Runtime }): Promise<LogBenchResult[]> {
  const work = await mkdtemp(join(tmpdir(), "kairos-bench-logs-"));
  // The store in its own process, as a MongoDB server is: its work does not take this event loop.
  const emulator = await startEmulatorProcess({ runtime: opts.runtime ?? "tsx" });
  const mongo = await connectMongo(emulator.uri, "bench-logs");
  const state = createMemorySharedState({ shardCount: 1 });
  const results: LogBenchResult[] = [];
  try {
    for (const s of opts.scenarios) {
      const bytes = s.mb * 1024 * 1024;
      const spawnAll = async (onOutput: ((i: number) => (c: Buffer, st: "stdout" | "stderr") => void) | null) => {
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: s.runs }, async (_, i) => {
            const r = await runProcess({ file: "sh", args: program(bytes), env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd: work, timeoutMs: 600_000, onOutput: onOutput?.(i) }, new RunAbort());
            if (r.exitCode !== 0 || r.outputBytes !== bytes) throw new Error(`bench run failed: ${JSON.stringify({ ...r, outputTail: r.outputTail.slice(-200) })}`);
          }),
        );
        return (performance.now() - t0) / 1000;
      };
      const plainSeconds = await spawnAll(null);
      const nowhere = { write: async (_: LogBatch[]) => new Set<string>() } as unknown as LogWriter;
      const idle = new LogShipper({ writer: nowhere, nodeId: "bench", log: silentLogger(), settings: { ...DEFAULT_LOG_SETTINGS, maxBytes: bytes + 1024 } });
      idle.start();
      const idleCaptures = Array.from({ length: s.runs }, (_, i) => idle.open(`idle-${i}`, 1, 1));
      const captureOnlySeconds = await spawnAll((i) => (c, st) => idleCaptures[i]!.write(c, st));
      await idle.stop();

      const runIds = Array.from({ length: s.runs }, () => newId());
      const now = new Date();
      await mongo.c.runs.insertMany(runIds.map((id) => ({ _id: id, ownerId: "bench", jobId: "bench", jobName: "bench", fireKey: id, trigger: "MANUAL", scheduledFor: now, status: "RUNNING", attempt: 1, fencingToken: 1 }) as never));
      const writer = new LogWriter({ mongo, bus: state.bus, clock: Date.now });
      const shipper = new LogShipper({ writer, nodeId: "bench", log: silentLogger(), settings: { ...DEFAULT_LOG_SETTINGS, maxBytes: bytes + 1024 } });
      shipper.start();
      const captures = runIds.map((id) => shipper.open(id, 1, 1));
      const capturedSeconds = await spawnAll((i) => (c, st) => captures[i]!.write(c, st));
      const exited = performance.now();
      for (const c of captures) c.end();
      for (;;) {
        await shipper.flush();
        const done = await mongo.c.runLogSegments.countDocuments({ runId: { $in: runIds }, ended: true });
        if (done === s.runs) break;
      }
      const storedAfterExitMs = performance.now() - exited;
      await shipper.stop();
      const stored = await mongo.c.runLogSegments.find({ runId: { $in: runIds } }).toArray();
      const storedBytes = stored.reduce((n, x) => n + x.bytes, 0);
      if (storedBytes !== bytes * s.runs) throw new Error(`stored ${storedBytes} bytes, expected ${bytes * s.runs}`);
      results.push({ runs: s.runs, mbPerRun: s.mb, plainSeconds, captureOnlySeconds, capturedSeconds, capturedMBps: (s.mb * s.runs) / capturedSeconds, storedAfterExitMs, storedMB: storedBytes / 1048576 });
      await mongo.c.runLogs.deleteMany({});
    }
  } finally {
    await state.close();
    await mongo.close();
    await emulator.child.stop();
    await rm(work, { recursive: true, force: true });
  }
  return results;
}

export function formatLogs(rs: LogBenchResult[]): string {
  return table(
    ["runs at once", "MB per run", "no capture", "capture, no store", "capture + MongoDB", "captured ÷ plain", "output MB/s (captured)", "all stored after exit"],
    rs.map((r) => [r.runs, r.mbPerRun, `${r.plainSeconds.toFixed(2)} s`, `${r.captureOnlySeconds.toFixed(2)} s`, `${r.capturedSeconds.toFixed(2)} s`, `${fmtNum(r.capturedSeconds / r.plainSeconds, 2)}×`, fmtNum(r.capturedMBps, 1), `${fmtNum(r.storedAfterExitMs)} ms`]),
    { title: "(5) log throughput: `yes | head -c N` through the executor's log capture into MongoDB (the emulator, its own process), one node, no sandbox; run durations" },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf("--mb");
  const mb = i >= 0 ? Number(process.argv[i + 1]) : 10;
  benchLogs({ scenarios: [{ runs: 1, mb }, { runs: 10, mb: Math.max(1, Math.round(mb / 5)) }] })
    .then((rs) => console.log(formatLogs(rs)))
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}

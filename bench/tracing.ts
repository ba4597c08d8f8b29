/**
 * The run path's tracing cost in one process (issue #31): the hooks one run goes through (its fire
 * span around the run's creation with the traceparent written, the claim span, the start span,
 * the end span around the report, two log lines) called N times with tracing off, then on with
 * every trace kept and exported in batches over OTLP/HTTP to a loopback receiver that reads the
 * JSON. Reported as CPU microseconds per run (process.cpuUsage: user + system, so what other
 * processes on a busy machine do counts less than in wall time), wall time, and the bytes exported.
 * The end-to-end figure on a cluster is the burst and throughput shapes with
 * OTEL_EXPORTER_OTLP_ENDPOINT set (docs/benchmarks.md, "Tracing on and off").
 *
 *   node --import tsx bench/tracing.ts [--runs 20000] [--rounds 3]
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { Writable } from "node:stream";
import { argValue } from "./lib/args.js";
import { createLogger } from "../src/support/log.js";
import { endSpan, runSpan, startTracing, traceClaim, TraceAttr, withFireSpan, withRunSpan, activeTraceparent, silentLogger } from "../src/support/index.js";

const runs = Number(argValue("--runs") ?? 20_000);
const rounds = Number(argValue("--rounds") ?? 3);

/**
 * A loopback OTLP/HTTP receiver in a child process (its JSON parsing is not this process's CPU):
 * counts spans and bytes; GET /count answers them.
 */
const RECEIVER = `
const got = { spans: 0, bytes: 0 };
const server = require("node:http").createServer((req, res) => {
  if (req.method === "GET") return res.end(JSON.stringify(got));
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    got.bytes += body.length;
    for (const rs of JSON.parse(body.toString("utf8")).resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) got.spans += (ss.spans ?? []).length;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

async function receiver() {
  const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim())));
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    count: async () => (await (await fetch(`${url}/count`)).json()) as { spans: number; bytes: number },
    close: () => child.kill(),
  };
}

/** What one run's path calls, with the work between the hooks left out. */
async function oneRun(i: number, log: ReturnType<typeof createLogger>): Promise<void> {
  const job = { _id: `job-${i}`, firedCount: 1, traceparent: null };
  const now = Date.now();
  const run = await withFireSpan(job, { slotAt: now, trigger: "SCHEDULE", now }, async () => ({
    _id: `run-${i}`,
    jobId: job._id,
    attempt: 1,
    queuedAt: new Date(now),
    ...activeTraceparent(),
  }));
  traceClaim(run, 1, Date.now());
  const started = runSpan("kairos.start", run, { [TraceAttr.token]: 1 });
  endSpan(started);
  log.info({ runId: run._id }, "started");
  await withRunSpan("kairos.end", run, { [TraceAttr.durationMs]: 1 }, async () => {
    log.info({ runId: run._id, status: "SUCCEEDED" }, "attempt finished");
  });
}

/** The same run without any tracing call: what the hooks add when off is `off` minus this. */
async function oneRunBare(i: number, log: ReturnType<typeof createLogger>): Promise<void> {
  const job = { _id: `job-${i}`, firedCount: 1, traceparent: null };
  const now = Date.now();
  const run = await (async () => ({ _id: `run-${i}`, jobId: job._id, attempt: 1, queuedAt: new Date(now) }))();
  log.info({ runId: run._id }, "started");
  await (async () => {
    log.info({ runId: run._id, status: "SUCCEEDED" }, "attempt finished");
  })();
}

async function measure(label: string, path: typeof oneRun = oneRun): Promise<{ cpuUsPerRun: number; wallMs: number }> {
  const sink = new Writable({ write: (_c, _e, done) => done() });
  const log = createLogger("info", {}, "json", sink);
  for (let i = 0; i < 2_000; i++) await path(i, log); // warm-up
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Each run in its own event-loop turn, as runs are: the batch exporter's timers and sockets get their turns.
  for (let i = 0; i < runs; i++) {
    await path(i, log);
    await new Promise<void>((r) => setImmediate(r));
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuUsPerRun = (cpu.user + cpu.system) / runs;
  console.log(`  ${label.padEnd(30)} ${cpuUsPerRun.toFixed(1).padStart(7)} µs CPU/run  ${(wallMs / 1000).toFixed(2).padStart(6)} s wall for ${runs.toLocaleString()} runs`);
  return { cpuUsPerRun, wallMs };
}

console.log(`tracing cost per run, ${runs.toLocaleString()} runs × ${rounds} rounds; load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
const bare: number[] = [];
const off: number[] = [];
const on: number[] = [];
const rx = await receiver();
for (let r = 1; r <= rounds; r++) {
  bare.push((await measure(`round ${r}: no tracing calls`, oneRunBare)).cpuUsPerRun);
  off.push((await measure(`round ${r}: tracing off`)).cpuUsPerRun);
  const stop = startTracing({ endpoint: rx.url, sampleRatio: 1, serviceName: "bench", headers: {} }, "bench", silentLogger());
  on.push((await measure(`round ${r}: on, every trace kept`)).cpuUsPerRun);
  await stop(); // flushes what is buffered (its export's cost is inside the next off round's wall time, not its CPU/run)
}
const got = await rx.count();
rx.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`median: no tracing calls ${median(bare).toFixed(1)} µs/run, off ${median(off).toFixed(1)} µs/run, on ${median(on).toFixed(1)} µs/run (+${(median(on) - median(off)).toFixed(1)} µs); exported ${got.spans.toLocaleString()} of ${(4 * runs * rounds).toLocaleString()} spans measured (+ warm-ups; the batch processor drops spans past its queue of 2,048), ${(got.bytes / 1e6).toFixed(1)} MB (${Math.round(got.bytes / Math.max(1, got.spans))} B/span); load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);

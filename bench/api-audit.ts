/**
 * The audit trail's cost on the API (issue #31): createJob mutations through GraphQL over HTTP,
 * as fast as the server answers them, against `kairos dev` with auditing on (the default) and off
 * (`KAIROS_AUDIT=off`). Each mutation with auditing on also writes one hash-chained entry (a
 * batched ordered insert, and the head record) before its answer goes out.
 *
 *   node --import tsx bench/api-audit.ts                      # 4 clients, 3 rounds of 8 s per mode
 *   node --import tsx bench/api-audit.ts --clients 8 --seconds 10 --rounds 5
 *   node --import tsx bench/api-audit.ts --quick              # 1 round of 3 s per mode: does it run
 *
 * Both servers are real `kairos dev` processes (compiled, as `kairos` runs in production) on
 * loopback, each with its embedded MongoDB emulator, started once and kept for all the rounds;
 * the phases alternate (on, off, off, on, …) so drift on a shared machine hits both alike, and the
 * figures compared are the medians over the rounds. Each phase's clients are new users, so no
 * submission budget runs out (KAIROS_RATE_SUBMISSIONS and KAIROS_RATE_REQUESTS are off as well).
 * Runs started by schedulers are not mutations and are not audited: the jobs are one-offs far in
 * the future, so the run path does not take part.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { processCpuMs, type Child } from "./lib/kairos-cluster.js";
import { DEV_ADMIN_PASSWORD, startKairosDev } from "./lib/kairos-dev.js";
import { fmtMs, fmtNum, summarize, table, type Summary } from "./lib/stats.js";

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    clients: { type: "string", default: "4" },
    seconds: { type: "string" },
    rounds: { type: "string" },
    /** A check that it runs: 1 round of 3 s per mode. */
    quick: { type: "boolean", default: false },
  },
});
const CLIENTS = Number(args.clients);
const SECONDS = Number(args.seconds ?? (args.quick ? 3 : 8));
const ROUNDS = Number(args.rounds ?? (args.quick ? 1 : 3));

async function gql(url: string, query: string, variables: Record<string, unknown>, token?: string): Promise<any> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: any; errors?: unknown[] };
  if (body.errors?.length) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

interface Server {
  mode: "on" | "off";
  url: string;
  child: Child;
  stop(): Promise<void>;
  admin: string;
}

async function startServer(mode: "on" | "off"): Promise<Server> {
  const dev = await startKairosDev(`api-audit-${mode}`, {
    KAIROS_EXECUTOR_SLOTS: "1",
    KAIROS_RATE_SUBMISSIONS: "off",
    KAIROS_RATE_REQUESTS: "off",
    KAIROS_AUDIT: mode,
  });
  const admin = (await gql(dev.url, `mutation($p: String!) { login(username: "admin", password: $p) { token } }`, { p: DEV_ADMIN_PASSWORD })).login.token as string;
  return { mode, ...dev, admin };
}

let users = 0;
async function freshClient(s: Server): Promise<string> {
  const name = `client${++users}`;
  await gql(s.url, `mutation($u: String!) { createUser(username: $u, password: "bench-password-1", role: USER) { id } }`, { u: name }, s.admin);
  return (await gql(s.url, `mutation($u: String!) { login(username: $u, password: "bench-password-1") { token } }`, { u: name })).login.token as string;
}

const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;

interface PhaseResult {
  perSecond: number;
  latency: Summary;
  /** The server process's CPU (user + system, its embedded MongoDB emulator included) per mutation: far less sensitive to the host's load than the rate. */
  cpuMsPerCall: number;
}

/** One phase: CLIENTS closed loops of createJob for SECONDS; the mutations per second, their latencies, the server's CPU per mutation. */
async function phase(s: Server): Promise<PhaseResult> {
  const tokens = await Promise.all(Array.from({ length: CLIENTS }, () => freshClient(s)));
  const latencies: number[] = [];
  const cpu0 = processCpuMs(s.child.pid);
  const start = performance.now();
  const until = start + SECONDS * 1000;
  const counts = await Promise.all(
    tokens.map(async (token, c) => {
      let i = 0;
      for (; performance.now() < until; i++) {
        const t0 = performance.now();
        await gql(s.url, CREATE, { input: { name: `j-${c}-${i}`, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true", env: { DB_PASSWORD: "not-stored" } } } }, token);
        latencies.push(performance.now() - t0);
      }
      return i;
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const calls = counts.reduce((a, b) => a + b, 0);
  return { perSecond: calls / elapsed, latency: summarize(latencies), cpuMsPerCall: (processCpuMs(s.child.pid) - cpu0) / calls };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const servers = { on: await startServer("on"), off: await startServer("off") };
  const results: Record<"on" | "off", PhaseResult[]> = { on: [], off: [] };
  try {
    console.log(`createJob over HTTP: ${CLIENTS} clients, ${ROUNDS} rounds of ${SECONDS} s per mode; ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    for (let r = 0; r < ROUNDS; r++) {
      const order: Array<"on" | "off"> = r % 2 === 0 ? ["on", "off"] : ["off", "on"];
      for (const mode of order) {
        const p = await phase(servers[mode]);
        results[mode].push(p);
        console.log(`  round ${r + 1} audit ${mode.padEnd(3)}: ${fmtNum(p.perSecond)} createJob/s, p50 ${fmtMs(p.latency.p50)}, p99 ${fmtMs(p.latency.p99)}, server CPU ${p.cpuMsPerCall.toFixed(2)} ms a call`);
      }
    }
    // The audited server's chain holds after it all.
    const v = (await gql(servers.on.url, `{ verifyAuditLog { ok checked } }`, {}, servers.on.admin)).verifyAuditLog;
    const row = (mode: "on" | "off") => [
      `audit ${mode}`,
      fmtNum(median(results[mode].map((p) => p.perSecond))),
      fmtMs(median(results[mode].map((p) => p.latency.p50))),
      fmtMs(median(results[mode].map((p) => p.latency.p99))),
      `${median(results[mode].map((p) => p.cpuMsPerCall)).toFixed(2)} ms`,
    ];
    console.log(table(["mode", "createJob/s (median)", "p50", "p99", "server CPU a call"], [row("on"), row("off")], { title: "createJob throughput, auditing on vs off" }));
    const on = median(results.on.map((p) => p.perSecond));
    const off = median(results.off.map((p) => p.perSecond));
    console.log(`on / off = ${(on / off).toFixed(3)}; verifyAuditLog on the audited server: ok=${v.ok}, ${v.checked} entries; load after ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    if (!v.ok) process.exitCode = 1;
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}

await main();

/**
 * The search of runs (Query.runs without a job, issue #28) over a large history, on the bundled
 * MongoDB emulator: one user with 100,000 runs (and another with 20,000), inserted straight into
 * the store, then each query asked through the API (HTTP, as the console asks it) `--repeat`
 * times; the median and the slowest are printed, with what the emulator examined per query.
 *
 *   node --import tsx bench/run-search.ts                  # 100,000 runs, 20 repeats
 *   node --import tsx bench/run-search.ts --runs 20000 --repeat 5
 *
 * Runs in `dev` (API, scheduler and executor in one process, the emulator embedded); no Redis.
 */
import "reflect-metadata";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startKairos } from "../src/app/start.js";
import { loadConfig } from "../src/config/index.js";
import type { RunDoc } from "../src/domain/index.js";
import { newId } from "../src/store/index.js";
import { finishedRunDoc } from "./lib/finished-run.js";
import { silentLogger } from "../src/support/index.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "100000" }, repeat: { type: "string", default: "20" } } });
const RUNS = Number(values.runs);
const REPEAT = Number(values.repeat);
const OTHER_RUNS = Math.round(RUNS / 5);
const JOBS = 50;
const NODES = ["node-a", "node-b", "node-c", "node-d"];
const DAY = 24 * 3600 * 1000;

async function gql(url: string, token: string | null, query: string, variables: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: Record<string, any>; errors?: unknown[] };
  if (body.errors?.length) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

/** A finished run as the executor leaves one: 10 % FAILED, every 100th a DAG task's, spread over 100 days. */
function runDoc(ownerId: string, i: number, n: number, now: number): RunDoc {
  const id = newId();
  const job = i % JOBS;
  const dagTask = i % 100 === 0;
  const scheduledFor = new Date(now - Math.floor(((n - i) / n) * 100 * DAY));
  const failed = i % 10 === 3;
  const startedAt = new Date(scheduledFor.getTime() + 50);
  const finishedAt = new Date(startedAt.getTime() + 1_000);
  const nodeId = NODES[i % NODES.length]!;
  return finishedRunDoc({
    _id: id,
    ownerId,
    jobId: dagTask ? `dag-${ownerId}` : `job-${ownerId}-${job}`,
    jobName: dagTask ? `nightly-etl/task-${i % 7}` : `Report job ${String(job).padStart(3, "0")}`,
    fireKey: `${ownerId}@${id}`,
    trigger: i % 20 === 0 ? "MANUAL" : "SCHEDULE",
    scheduledFor,
    startedAt,
    finishedAt,
    failed,
    nodeId,
    command: "echo a report of some length && sleep 1",
    extra: dagTask ? { dagRunId: `dagrun-${ownerId}-${Math.floor(i / 1000)}`, taskKey: `task-${i % 7}` } : {},
  });
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "kairos-run-search-"));
  const config = loadConfig("dev", {
    KAIROS_PORT: "0",
    KAIROS_DATA_DIR: dataDir,
    KAIROS_ADMIN_USER: "admin",
    KAIROS_ADMIN_PASSWORD: "admin-password-for-bench",
    KAIROS_EXECUTOR_SLOTS: "1",
    KAIROS_RATE_REQUESTS: "off",
    // Another MongoDB (e.g. an emulator of another version) instead of the embedded one.
    ...(process.env.MONGO_URL ? { MONGO_URL: process.env.MONGO_URL } : {}),
  });
  const app = await startKairos(config, { log: silentLogger() });
  try {
    const url = app.api!.url;
    const admin = (await gql(url, null, `mutation { login(username: "admin", password: "admin-password-for-bench") { token } }`)).login.token as string;
    const mk = async (u: string) =>
      (await gql(url, admin, `mutation($u: String!) { createUser(username: $u, password: "bench-password-1") { id } }`, { u })).createUser.id as string;
    const [alice, bob] = [await mk("alice"), await mk("bob")];
    const token = (await gql(url, null, `mutation { login(username: "alice", password: "bench-password-1") { token } }`)).login.token as string;

    const now = Date.now();
    const t0 = performance.now();
    const runs = app.services.mongo.c.runs;
    for (const [owner, n] of [[alice, RUNS], [bob, OTHER_RUNS]] as const) {
      for (let i = 0; i < n; i += 5_000) {
        await runs.insertMany(Array.from({ length: Math.min(5_000, n - i) }, (_, k) => runDoc(owner, i + k, n, now)), { ordered: false });
      }
    }
    console.log(`seeded ${RUNS} runs of alice and ${OTHER_RUNS} of bob in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const page = `edges { node { id jobName status scheduledFor } } pageInfo { hasNextPage endCursor }`;
    const second = (await gql(url, token, `{ runs(first: 50) { ${page} } }`)).runs.pageInfo.endCursor as string;
    const from = new Date(now - 30 * DAY).toISOString();
    const to = new Date(now - 29 * DAY).toISOString();
    const shapes: Array<{ label: string; who: string; query: string; variables?: Record<string, unknown> }> = [
      // The floor: a request that reads no run (HTTP, auth, GraphQL), on this machine as it is now.
      { label: "me { id } (no run read: the floor)", who: token, query: `{ me { id } }` },
      { label: "runs(first: 50)", who: token, query: `{ runs(first: 50) { ${page} } }` },
      { label: "runs(first: 50, after: <page 1's end>)", who: token, query: `query($a: String) { runs(first: 50, after: $a) { ${page} } }`, variables: { a: second } },
      { label: "runs(status: FAILED, first: 50)", who: token, query: `{ runs(status: FAILED, first: 50) { ${page} } }` },
      { label: `runs(filter: {name: "job 04"}, first: 50)`, who: token, query: `{ runs(filter: {name: "job 04"}, first: 50) { ${page} } }` },
      { label: `runs(filter: {name: "no such job"}, first: 50) (no match)`, who: token, query: `{ runs(filter: {name: "no such job"}, first: 50) { ${page} } }` },
      { label: `runs(status: FAILED, filter: {name: "job 04"}, first: 50)`, who: token, query: `{ runs(status: FAILED, filter: {name: "job 04"}, first: 50) { ${page} } }` },
      { label: "runs(filter: {scheduledFrom, scheduledTo: one day}, first: 50)", who: token, query: `query($f: DateTime, $t: DateTime) { runs(filter: {scheduledFrom: $f, scheduledTo: $t}, first: 50) { ${page} } }`, variables: { f: from, t: to } },
      { label: `runs(filter: {nodeId: "node-b"}, first: 50)`, who: token, query: `{ runs(filter: {nodeId: "node-b"}, first: 50) { ${page} } }` },
      { label: `runs(jobId: <a job>, first: 50)`, who: token, query: `query($j: ID) { runs(jobId: $j, first: 50) { ${page} } }`, variables: { j: `job-${alice}-7` } },
      { label: "runs(first: 50) as admin (120,000 runs)", who: admin, query: `{ runs(first: 50) { ${page} } }` },
    ];
    // The job the jobId shape names does not exist: its runs name it (a deleted job's history).
    const stats = async () => (await app.services.mongo.db.command({ serverStatus: 1 })).kairosEmulator?.docsExamined as number | undefined;
    console.log(`\n| query | median | p90 | max | docs examined per query |`);
    console.log(`|---|---|---|---|---|`);
    for (const s of shapes) {
      await gql(url, s.who, s.query, s.variables); // warm-up
      const times: number[] = [];
      const before = await stats();
      for (let r = 0; r < REPEAT; r++) {
        const t = performance.now();
        await gql(url, s.who, s.query, s.variables);
        times.push(performance.now() - t);
      }
      const after = await stats();
      times.sort((a, b) => a - b);
      const examined = before !== undefined && after !== undefined ? Math.round((after - before) / REPEAT).toLocaleString("en-US") : "n/a";
      console.log(`| ${s.label} | ${quantile(times, 0.5).toFixed(1)} ms | ${quantile(times, 0.9).toFixed(1)} ms | ${times.at(-1)!.toFixed(1)} ms | ${examined} |`);
    }
  } finally {
    await app.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();

/**
 * API under abuse (issue #12): N well-behaved clients query the API as fast as it answers them
 * while one abusive client sends the documents that used to exhaust it (15 levels of
 * jobs → runs → job with first: 100, 1,000 aliases of nextFires(count: 100), 201 levels), over
 * and over with several requests in flight. The figure that matters is the well-behaved clients'
 * latency with and without the abuser; the query limits must keep the p99 within 2×.
 *
 *   npm run bench:api                      # both scenarios, 3 rounds of 6 s per phase: about 2 min
 *   npm run bench:api -- --clients 8 --seconds 5 --rounds 5 --abuser-inflight 4 --scenario limits
 *   npm run bench:api -- --quick           # 1 round of 3 s per phase: does it run
 *
 * The server is a real `kairos dev` in its own process (compiled, as `kairos` runs in
 * production), on loopback, started afresh for each scenario:
 *
 * - `limits`: the default query limits, the per-user request budget off — the abuser is stopped
 *   by the query limits alone (the worst case for the defence);
 * - `defaults`: every default, the request budget (1200/PT1M per user) included.
 *
 * Each valid client is a user of its own, new in every phase, so its budget never runs out; the
 * abuser is one user for the whole scenario, and a process of its own (as it would be another
 * machine): sharing the valid clients' event loop, its 52 KB bodies would slow their measurement
 * in the bench process itself, not in the server. Phases alternate (baseline, abuse, baseline, abuse …)
 * so drift on a shared machine hits both alike, and the figures compared are the medians over the
 * rounds. Every phase is bounded in time and in requests. Exits 1 when a scenario's p99 ratio is
 * over 2 or an abusive request was not refused.
 */
import { spawn } from "node:child_process";
import os from "node:os";
import { parseArgs } from "node:util";
import { deepQuery, manyAliases, nestedJobsRuns } from "../test/helpers/abuse.js";
import { processCpuMs } from "./lib/kairos-cluster.js";
import { DEV_ADMIN_PASSWORD, startKairosDev } from "./lib/kairos-dev.js";
import { fmtMs, fmtNum, ratio, summarize, table, type Summary } from "./lib/stats.js";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    clients: { type: "string", default: "4" },
    seconds: { type: "string" },
    rounds: { type: "string" },
    /** A check that it runs: 1 round of 3 s per phase. */
    quick: { type: "boolean", default: false },
    "abuser-inflight": { type: "string", default: "1" },
    scenario: { type: "string", default: "both" },
    /** Internal: run as the abuser process (`--abuser URL TOKEN JOB_ID`). */
    abuser: { type: "boolean", default: false },
    "start-at": { type: "string", default: "0" },
  },
});
const CLIENTS = Number(args.clients);
const PHASE_MS = Number(args.seconds ?? (args.quick ? 3 : 6)) * 1000;
const ROUNDS = Number(args.rounds ?? (args.quick ? 1 : 3));
const ABUSER_INFLIGHT = Number(args["abuser-inflight"]);
/** Upper bound of requests per client per phase, whatever the speed. */
const MAX_REQUESTS_PER_CLIENT = 200_000;

async function gql(url: string, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json() };
}

/** A closed loop: send, wait for the answer, send again, until the phase ends. */
async function loop(until: number, send: (i: number) => Promise<unknown>, latencies: number[] | null): Promise<number> {
  let i = 0;
  for (; i < MAX_REQUESTS_PER_CLIENT && performance.now() < until; i++) {
    const t0 = performance.now();
    await send(i);
    latencies?.push(performance.now() - t0);
  }
  return i;
}

interface Phase {
  valid: Summary;
  validPerSecond: number;
  abuserRequests: number;
  abuserRefused: number;
  health: Summary;
  rateLimited: number;
}

let users = 0;
/** A new USER with the bench job, logged in: a valid client whose request budget is untouched. */
async function freshUser(url: string, admin: string): Promise<{ token: string; jobId: string }> {
  const name = `client${++users}`;
  await gql(url, `mutation($u: String!) { createUser(username: $u, password: "bench-password", role: USER) { id } }`, { u: name }, admin);
  const token = (await gql(url, `mutation($u: String!) { login(username: $u, password: "bench-password") { token } }`, { u: name })).body.data.login.token as string;
  const job = await gql(
    url,
    `mutation { createJob(input: {name: "bench", schedule: {kind: CRON, cron: "*/5 * * * *"}, spec: {kind: COMMAND, command: "true"}}) { id } }`,
    {},
    token,
  );
  return { token, jobId: job.body.data.createJob.id as string };
}

async function phase(url: string, admin: string, abuser: { token: string; jobId: string } | null): Promise<Phase> {
  const valid = [
    `{ jobs(first: 10) { edges { node { id name status nextFireAt } } pageInfo { hasNextPage } } }`,
    `query($id: ID!) { job(id: $id) { id name nextFires(count: 5) { at local } runs(first: 5) { edges { node { id status } } } } }`,
    `{ me { id username role } }`,
  ];
  const valids = await Promise.all(Array.from({ length: CLIENTS }, () => freshUser(url, admin)));
  // Everyone starts together, once the abuser process (if any) has had time to load.
  const startAt = Date.now() + (abuser ? 3_000 : 0);
  const abuserRun = abuser ? runAbuserProcess(url, abuser, startAt) : null;
  await new Promise((r) => setTimeout(r, startAt - Date.now()));
  const until = performance.now() + PHASE_MS;
  const latencies: number[] = [];
  const healthLatencies: number[] = [];
  let failures = 0;
  const clients = Array.from({ length: CLIENTS }, (_, c) =>
    loop(
      until,
      async (i) => {
        const { token, jobId } = valids[c]!;
        const r = await gql(url, valid[(i + c) % valid.length]!, { id: jobId }, token);
        if (r.status !== 200 || r.body.errors) failures++;
      },
      latencies,
    ),
  );
  const health = (async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      await fetch(url.replace("/graphql", "/healthz")).then((r) => r.text());
      healthLatencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const sent = await Promise.all(clients);
  const { requests: abuserRequests, refused: abuserRefused, rateLimited } = (await abuserRun) ?? { requests: 0, refused: 0, rateLimited: 0 };
  await health;
  if (failures > 0) throw new Error(`${failures} valid requests failed`);
  const total = sent.reduce((a, b) => a + b, 0);
  return { valid: summarize(latencies), validPerSecond: total / (PHASE_MS / 1000), abuserRequests, abuserRefused, health: summarize(healthLatencies), rateLimited };
}

interface AbuserCounts {
  requests: number;
  refused: number;
  rateLimited: number;
}

/** The abuser, in a process of its own from `startAt` (epoch ms) for a phase; resolves with what it sent and what was refused. */
function runAbuserProcess(url: string, abuser: { token: string; jobId: string }, startAt: number): Promise<AbuserCounts> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, "--abuser", "--start-at", String(startAt), "--seconds", String(PHASE_MS / 1000), "--abuser-inflight", String(ABUSER_INFLIGHT), url, abuser.token, abuser.jobId], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as AbuserCounts) : reject(new Error(`abuser exited ${code}: ${out}`))));
  });
}

/** Abuser process: sends the abusive documents with ABUSER_INFLIGHT requests in flight until the phase ends. */
async function abuserMain(url: string, token: string, jobId: string): Promise<void> {
  const abusive = [nestedJobsRuns(15), manyAliases(1000, jobId), deepQuery(201, jobId)].map((query) => JSON.stringify({ query }));
  await new Promise((r) => setTimeout(r, Math.max(0, Number(args["start-at"]) - Date.now())));
  const until = performance.now() + PHASE_MS;
  const counts: AbuserCounts = { requests: 0, refused: 0, rateLimited: 0 };
  await Promise.all(
    Array.from({ length: ABUSER_INFLIGHT }, (_, c) =>
      loop(
        until,
        async (i) => {
          const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: abusive[(i + c) % abusive.length]! });
          const body = (await res.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
          const code = body.errors?.[0]?.extensions?.code;
          counts.requests++;
          if ((res.status === 400 && code?.startsWith("GRAPHQL_")) || (res.status === 429 && code === "RATE_LIMITED")) counts.refused++;
          if (res.status === 429) counts.rateLimited++;
        },
        null,
      ),
    ),
  );
  process.stdout.write(JSON.stringify(counts));
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * The server's CPU time per request, by kind, one request at a time (utime + stime of the server
 * process from /proc, 10 ms ticks, over `n` requests): what a refusal costs next to the cheapest
 * and ordinary valid requests.
 */
async function cpuPerRequest(url: string, pid: number | undefined, token: string, jobId: string, n = 300): Promise<void> {
  const kinds: Array<[string, string]> = [
    ["valid: { __typename }", `{ __typename }`],
    ["valid: { me { … } }", `{ me { id username role } }`],
    ["valid: jobs(first: 10)", `{ jobs(first: 10) { edges { node { id name status nextFireAt } } pageInfo { hasNextPage } } }`],
    ["refused: 15 levels (depth)", nestedJobsRuns(15)],
    ["refused: 201 levels (depth)", deepQuery(201, jobId)],
    ["refused: 1,000 aliases (tokens)", manyAliases(1000, jobId)],
    ["refused: 21 aliases (aliases)", manyAliases(21, jobId)],
  ];
  const rows: string[][] = [];
  for (const [name, query] of kinds) {
    for (let i = 0; i < 30; i++) await gql(url, query, {}, token);
    const before = processCpuMs(pid);
    for (let i = 0; i < n; i++) await gql(url, query, {}, token);
    rows.push([name, `${((processCpuMs(pid) - before) / n).toFixed(2)} ms`]);
  }
  console.log(table(["request (one at a time)", "server CPU per request"], rows));
}

/** One scenario on a server of its own; true when the abuser kept the valid p99 within 2×. */
async function scenario(name: string, env: Record<string, string>, measureCpu = false): Promise<boolean> {
  console.log(`\n## ${name}`);
  const { url, child, stop } = await startKairosDev("api-abuse", { KAIROS_EXECUTOR_SLOTS: "2", ...env });
  try {
    const admin = (await gql(url, `mutation($p: String!) { login(username: "admin", password: $p) { token } }`, { p: DEV_ADMIN_PASSWORD })).body.data.login.token as string;
    const abuser = await freshUser(url, admin);
    if (measureCpu) await cpuPerRequest(url, child.pid, abuser.token, abuser.jobId);
    // Warm-up: the first requests pay for JIT and caches.
    await phase(url, admin, null).catch(() => undefined);

    const rows: Array<[string, Phase]> = [];
    for (let r = 1; r <= ROUNDS; r++) {
      rows.push([`baseline #${r}`, await phase(url, admin, null)]);
      rows.push([`with abuser #${r}`, await phase(url, admin, abuser)]);
    }
    console.log(
      table(
        ["phase", "valid p50", "valid p99", "valid max", "valid req/s", "/healthz p99", "abuser requests", "refused", "of which 429"],
        rows.map(([n, p]) => [
          n,
          fmtMs(p.valid.p50),
          fmtMs(p.valid.p99),
          fmtMs(p.valid.max),
          fmtNum(p.validPerSecond),
          fmtMs(p.health.p99),
          p.abuserRequests || "—",
          p.abuserRefused || "—",
          p.abuserRequests ? p.rateLimited : "—",
        ]),
      ),
    );
    const base = rows.filter(([n]) => n.startsWith("baseline")).map(([, p]) => p);
    const abused = rows.filter(([n]) => n.startsWith("with")).map(([, p]) => p);
    const p99Base = median(base.map((p) => p.valid.p99));
    const p99Abused = median(abused.map((p) => p.valid.p99));
    const p50Base = median(base.map((p) => p.valid.p50));
    const p50Abused = median(abused.map((p) => p.valid.p50));
    console.log(
      `valid clients, medians over ${ROUNDS} rounds: p50 ${fmtMs(p50Base)} → ${fmtMs(p50Abused)} (${ratio(p50Abused, p50Base, 0)}), ` +
        `p99 ${fmtMs(p99Base)} → ${fmtMs(p99Abused)} (${ratio(p99Abused, p99Base, 0)})`,
    );
    const refusedAll = abused.every((p) => p.abuserRefused === p.abuserRequests);
    console.log(`every abusive request refused (GRAPHQL_* 400 or RATE_LIMITED 429): ${refusedAll ? "yes" : "NO"}`);
    const pass = p99Abused <= 2 * p99Base && refusedAll;
    console.log(pass ? "PASS: the abuser moved the valid clients' p99 by at most 2×" : "FAIL: the abuser moved the valid clients' p99 by more than 2× (or was not refused)");
    return pass;
  } finally {
    await stop();
  }
}

async function main(): Promise<void> {
  console.log(
    `API abuse bench: ${CLIENTS} valid clients, 1 abuser with ${ABUSER_INFLIGHT} request(s) in flight, ${ROUNDS} rounds × 2 phases × ${PHASE_MS / 1000} s, ` +
      `${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)} at start`,
  );
  const results: boolean[] = [];
  if (args.scenario === "both" || args.scenario === "limits") {
    results.push(await scenario("limits: query limits alone (KAIROS_RATE_REQUESTS=off)", { KAIROS_RATE_REQUESTS: "off" }, true));
  }
  if (args.scenario === "both" || args.scenario === "defaults") {
    results.push(await scenario("defaults: query limits and the request budget (1200/PT1M per user)", {}));
  }
  process.exitCode = results.every(Boolean) ? 0 : 1;
}

if (args.abuser) {
  const [url, token, jobId] = positionals;
  await abuserMain(url!, token!, jobId!);
} else {
  await main();
}

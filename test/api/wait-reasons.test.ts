/**
 * `Run.waiting`, `Job.problems` and `DagRunTask.waiting` (docs/waiting.md), each reason driven for
 * real on a dev app: a user at their concurrency limit, a spent submission budget, a paused job,
 * an unserved pool, a DAG task waiting on its parent, overlap (FORBID skipping, QUEUE_ONE holding),
 * a misfire after scheduler downtime, a retry in backoff, a run staged ahead of its slot. Another
 * user cannot read them; a page of runs asking for them costs a few store queries, not some per run.
 */
import { describe, expect, it, vi } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { collect, gql, gqlOk, login, waitFor, wsClient } from "../helpers/graphql.js";

// A short late tolerance, so a second of scheduler downtime makes a late slot a misfire (default 60 s);
// a submission budget of 3 a minute per user, which the RATE_LIMITED test spends.
const t = useTestApp({ scheduler: { lateToleranceMs: 500 }, env: { KAIROS_RATE_SUBMISSIONS: "3/PT1M" } });

interface Reason { code: string; message: string; since: string | null; until: string | null }
const REASON = "{ code message since until }";

async function user(name: string, maxConcurrentRuns: number | null = null): Promise<string> {
  await gqlOk(t.app.url, `mutation($u: String!, $n: Int) { createUser(username: $u, password: "password-${name}", maxConcurrentRuns: $n) { id } }`, { u: name, n: maxConcurrentRuns }, t.admin);
  return login(t.app.url, name, `password-${name}`);
}

async function createJob(token: string, input: Record<string, unknown>): Promise<string> {
  const d = await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: input }, token);
  return d.createJob.id;
}

async function runWaiting(token: string, id: string): Promise<{ status: string; waiting: Reason[] }> {
  const d = await gqlOk<{ run: { status: string; waiting: Reason[] } }>(t.app.url, `query($id: ID!) { run(id: $id) { status waiting ${REASON} } }`, { id }, token);
  return d.run;
}

async function problems(token: string, id: string): Promise<Reason[]> {
  const d = await gqlOk<{ job: { problems: Reason[] } }>(t.app.url, `query($id: ID!) { job(id: $id) { problems ${REASON} } }`, { id }, token);
  return d.job.problems;
}

async function runsOf(token: string, jobId: string): Promise<Array<{ id: string; status: string }>> {
  const d = await gqlOk<{ runs: { edges: Array<{ node: { id: string; status: string } }> } }>(t.app.url, `query($j: ID!) { runs(jobId: $j, first: 20) { edges { node { id status } } } }`, { j: jobId }, token);
  return d.runs.edges.map((e) => e.node).reverse();
}

const codes = (rs: Reason[]) => rs.map((r) => r.code);
const cancel = (token: string, id: string) => gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id }, token);

describe("Run.waiting and Job.problems", () => {
  it("USER_CONCURRENCY_LIMIT: a run parked while the owner's one slot is held, since it was parked", async () => {
    const token = await user("wr-limited", 1);
    const first = await createJob(token, { name: "first", schedule: { kind: "ONCE" }, spec: { command: "sleep 30" } });
    const [running] = await waitFor(async () => {
      const r = await runsOf(token, first);
      return r[0]?.status === "RUNNING" ? r : null;
    }, 15_000);
    const second = await createJob(token, { name: "second", schedule: { kind: "ONCE" }, spec: { command: "sleep 30" } });
    const held = await waitFor(async () => (await t.app.services.mongo.c.runs.findOne({ jobId: second, heldByLimit: true })) ?? null, 15_000);
    const w = await runWaiting(token, held._id);
    expect(w.status).toBe("QUEUED");
    expect(codes(w.waiting)).toEqual(["USER_CONCURRENCY_LIMIT"]);
    expect(w.waiting[0]!.message).toMatch(/1 of your 1 run slots \(maxConcurrentRuns\) are held by RUNNING runs/);
    expect(w.waiting[0]!.message).toMatch(/parked/);
    expect(Date.parse(w.waiting[0]!.since!)).toBeGreaterThan(Date.now() - 60_000);
    const p = await problems(token, second);
    expect(codes(p)).toContain("USER_CONCURRENCY_LIMIT");
    expect(p.find((x) => x.code === "USER_CONCURRENCY_LIMIT")!.message).toMatch(/1 run of this job waits for one \(1 parked out of the queue\)/);
    // The run holding the slot waits for nothing: it started.
    expect((await runWaiting(token, running!.id)).waiting).toEqual([]);
    await cancel(token, running!.id);
    await cancel(token, held._id);
  });

  it("RATE_LIMITED: the owner's spent submission budget is a problem of their job, until it refills", async () => {
    const token = await user("wr-ratey");
    const id = await createJob(token, { name: "quick", schedule: { kind: "ONCE", at: new Date(Date.now() + 3_600_000).toISOString() }, spec: { command: "true" } });
    expect(codes(await problems(token, id))).not.toContain("RATE_LIMITED");
    for (let i = 0; i < 2; i++) await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token);
    const refused = await gql(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token);
    expect(refused.errors?.[0]?.extensions?.code).toBe("RATE_LIMITED");
    const p = await problems(token, id);
    const rate = p.find((x) => x.code === "RATE_LIMITED");
    expect(rate, JSON.stringify(p)).toBeDefined();
    expect(rate!.message).toMatch(/at most 3 per 60 s, KAIROS_RATE_SUBMISSIONS/);
    expect(rate!.message).toMatch(/triggerJob, backfillJob and retryRun are refused/);
    const until = Date.parse(rate!.until!);
    expect(until).toBeGreaterThan(Date.now());
    expect(until).toBeLessThanOrEqual(Date.now() + 61_000);
    // Another user's budget is theirs: the admin's job shows no RATE_LIMITED.
    const mine = await createJob(t.admin, { name: "admin-quick", schedule: { kind: "ONCE", at: new Date(Date.now() + 3_600_000).toISOString() }, spec: { command: "true" } });
    expect(codes(await problems(t.admin, mine))).not.toContain("RATE_LIMITED");
  });

  it("PAUSED: a paused job, since its pause; empty again once resumed", async () => {
    const token = await user("wr-pauser");
    const id = await createJob(token, { name: "hourly", schedule: { kind: "CRON", cron: "0 * * * *" }, spec: { command: "true" } });
    expect(await problems(token, id)).toEqual([]);
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id }, token);
    const p = await problems(token, id);
    expect(codes(p)).toEqual(["PAUSED"]);
    expect(p[0]!.message).toMatch(/resumeJob/);
    expect(Math.abs(Date.parse(p[0]!.since!) - Date.now())).toBeLessThan(30_000);
    await gqlOk(t.app.url, `mutation($id: ID!) { resumeJob(id: $id) { id } }`, { id }, token);
    expect(await problems(token, id)).toEqual([]);
  });

  it("POOL_UNSERVED: a run in a pool no executor serves, and its job", async () => {
    const token = await user("wr-pooled");
    const id = await createJob(token, { name: "nowhere", schedule: { kind: "ONCE" }, spec: { command: "true", pool: "nowhere" } });
    const [run] = await waitFor(async () => {
      const r = await runsOf(token, id);
      return r.length ? r : null;
    }, 15_000);
    const w = await runWaiting(token, run!.id);
    expect(w.status).toBe("QUEUED");
    expect(codes(w.waiting)).toEqual(["POOL_UNSERVED"]);
    expect(w.waiting[0]!.message).toMatch(/no online executor serves pool "nowhere"/);
    expect(w.waiting[0]!.message).toMatch(/pools served now: default/);
    expect(w.waiting[0]!.message).toMatch(/KAIROS_POOLS/);
    // (and NO_MORE_FIRES: a ONCE job that fired has no fires left)
    expect(codes(await problems(token, id))).toEqual(["NO_MORE_FIRES", "POOL_UNSERVED"]);
    await cancel(token, run!.id);
  });

  it("WAITING_ON_PARENT: a DAG task whose parent runs; the parent's row answers its run's (empty) waiting", async () => {
    const token = await user("wr-dagger");
    const d = await gqlOk<{ createDag: { id: string } }>(
      t.app.url,
      `mutation($i: CreateDagInput!) { createDag(input: $i) { id } }`,
      { i: { name: "chain", tasks: [{ key: "extract", spec: { command: "sleep 30" } }, { key: "load", dependsOn: ["extract"], spec: { command: "true" } }] } },
      token,
    );
    // createDag and the trigger's two tasks: the whole budget of 3.
    const tr = await gqlOk<{ triggerDag: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id: d.createDag.id }, token);
    const q = `query($id: ID!) { dagRun(id: $id) { tasks(first: 10) { edges { node { key status waiting ${REASON} run { id status } } } } } }`;
    const tasks = await waitFor(async () => {
      const r = await gqlOk<{ dagRun: { tasks: { edges: Array<{ node: { key: string; status: string; waiting: Reason[]; run: { id: string; status: string } | null } }> } } }>(t.app.url, q, { id: tr.triggerDag.id }, token);
      const rows = r.dagRun.tasks.edges.map((e) => e.node);
      return rows.find((x) => x.key === "extract")?.status === "RUNNING" ? rows : null;
    }, 15_000);
    const load = tasks.find((x) => x.key === "load")!;
    expect(load.status).toBe("PENDING");
    expect(codes(load.waiting)).toEqual(["WAITING_ON_PARENT"]);
    expect(load.waiting[0]!.message).toMatch(/waits on its parent extract \(queued or running\)/);
    expect(tasks.find((x) => x.key === "extract")!.waiting).toEqual([]);
    const other = await user("wr-dag-other");
    const foreign = await gql(t.app.url, q, { id: tr.triggerDag.id }, other);
    expect(foreign.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    await gqlOk(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: tr.triggerDag.id }, token);
  });

  it("OVERLAP: FORBID skips fires while a run holds the lock; QUEUE_ONE holds the next run PENDING behind it", async () => {
    const token = await user("wr-overlap");
    const forbid = await createJob(token, { name: "forbid", overlap: "FORBID", schedule: { kind: "INTERVAL", every: "PT1S" }, spec: { command: "sleep 30" } });
    const queue = await createJob(token, { name: "queue-one", overlap: "QUEUE_ONE", schedule: { kind: "INTERVAL", every: "PT1S" }, spec: { command: "sleep 30" } });
    const p = await waitFor(async () => {
      const x = await problems(token, forbid);
      return x.some((r) => r.code === "OVERLAP" && r.since) ? x : null;
    }, 15_000);
    const o = p.find((r) => r.code === "OVERLAP")!;
    expect(o.message).toMatch(/run \w+ \((RUNNING|QUEUED)\) holds the job's overlap lock, so under overlap policy FORBID its fires are skipped/);
    expect(o.message).toMatch(/was skipped \(SKIPPED_OVERLAP\)/);
    const pending = await waitFor(async () => (await runsOf(token, queue)).find((r) => r.status === "PENDING") ?? null, 15_000);
    const active = (await runsOf(token, queue)).find((r) => r.status === "RUNNING" || r.status === "QUEUED")!;
    const w = await runWaiting(token, pending.id);
    expect(codes(w.waiting)).toEqual(["OVERLAP"]);
    expect(w.waiting[0]!.message).toContain(`held PENDING behind run ${active.id}`);
    expect(w.waiting[0]!.message).toMatch(/overlap policy QUEUE_ONE/);
    for (const id of [forbid, queue]) await gqlOk(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id }, token);
    for (const id of [forbid, queue]) for (const r of await runsOf(token, id)) if (!["SUCCEEDED", "FAILED", "CANCELLED", "WITHDRAWN", "TIMED_OUT", "DEAD"].includes(r.status)) await cancel(token, r.id).catch(() => undefined);
  });

  it("MISFIRE: a ONCE slot that came due while the scheduler was down, under SKIP, is missed", async () => {
    const token = await user("wr-misfire");
    await t.app.scheduler!.stop();
    let id: string;
    try {
      const at = Date.now() + 1_000;
      id = await createJob(token, { name: "late", misfire: "SKIP", schedule: { kind: "ONCE", at: new Date(at).toISOString() }, spec: { command: "true" } });
      // Down until the slot is a second late (twice the late tolerance), not a fixed 2.5 s from now.
      await new Promise((r) => setTimeout(r, Math.max(0, at + 1_000 - Date.now())));
    } finally {
      await t.app.scheduler!.start();
    }
    const p = await waitFor(async () => {
      const x = await problems(token, id!);
      return x.some((r) => r.code === "MISFIRE") ? x : null;
    }, 15_000);
    const m = p.find((r) => r.code === "MISFIRE")!;
    expect(m.message).toMatch(/was not run under misfire policy SKIP/);
    expect(m.message).toMatch(/triggerJob or backfillJob/);
    expect(m.since).not.toBeNull();
    // A ONCE job whose slot is handled has no fires left.
    expect(codes(p)).toContain("NO_MORE_FIRES");
  });

  it("RETRY_BACKOFF: a failed attempt's run waits for its retry time", async () => {
    const token = await user("wr-retry");
    const id = await createJob(token, {
      name: "flaky",
      schedule: { kind: "ONCE" },
      retry: { maxAttempts: 3, initial: "PT5M", jitter: "NONE" },
      spec: { command: "exit 3" },
    });
    const run = await waitFor(async () => (await runsOf(token, id)).find((r) => r.status === "RETRY_SCHEDULED") ?? null, 15_000);
    const w = await runWaiting(token, run.id);
    expect(codes(w.waiting)).toEqual(["RETRY_BACKOFF"]);
    expect(w.waiting[0]!.message).toMatch(/attempt 1 of 3 failed \(exit code 3\); attempt 2 is due at/);
    expect(Date.parse(w.waiting[0]!.until!)).toBeGreaterThan(Date.now() + 4 * 60_000);
    expect(w.waiting[0]!.since).not.toBeNull();
    await cancel(token, run.id);
  });

  it("NOT_DUE: a run staged ahead of its slot, until its due time", async () => {
    const token = await user("wr-staged");
    const at = new Date(Date.now() + 8_000);
    const id = await createJob(token, { name: "soon", schedule: { kind: "ONCE", at: at.toISOString() }, spec: { command: "true" } });
    const run = await waitFor(async () => (await runsOf(token, id))[0] ?? null, 6_000);
    const w = await runWaiting(token, run.id);
    // QUEUED in the store; reported SCHEDULED where the API tells staged runs apart.
    expect(["QUEUED", "SCHEDULED"]).toContain(w.status);
    expect(codes(w.waiting)).toEqual(["NOT_DUE"]);
    expect(Date.parse(w.waiting[0]!.until!)).toBeGreaterThanOrEqual(at.getTime());
    expect(w.waiting[0]!.message).toContain(`staged ahead of its slot ${at.toISOString()}`);
  });

  it("a runUpdated subscription asking for waiting gets each event's reasons", async () => {
    const token = await user("wr-sub");
    const id = await createJob(token, { name: "sub", schedule: { kind: "ONCE", at: new Date(Date.now() + 3_600_000).toISOString() }, spec: { command: "true", pool: "nowhere" } });
    const client = wsClient(t.app.wsUrl, token);
    try {
      const sub = collect<{ runUpdated: { id: string; status: string; waiting: Reason[] } }>(
        client,
        `subscription($j: ID!) { runUpdated(jobId: $j) { id status waiting { code message since until } } }`,
        { j: id },
        (events) => events.some((e) => e.runUpdated.status === "QUEUED"),
        15_000,
      );
      await sub.ready;
      await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token);
      const { events, errors } = await sub.done;
      expect(errors).toEqual([]);
      const queued = events.find((e) => e.runUpdated.status === "QUEUED")!.runUpdated;
      expect(codes(queued.waiting)).toEqual(["POOL_UNSERVED"]);
      await cancel(token, queued.id);
    } finally {
      await client.dispose();
    }
  });

  it("another user cannot read a run's waiting or a job's problems", async () => {
    const owner = await user("wr-owner");
    const other = await user("wr-other");
    const id = await createJob(owner, { name: "mine", schedule: { kind: "ONCE" }, spec: { command: "true", pool: "nowhere" } });
    const [run] = await waitFor(async () => {
      const r = await runsOf(owner, id);
      return r.length ? r : null;
    }, 15_000);
    const r1 = await gql(t.app.url, `query($id: ID!) { run(id: $id) { waiting { code message } } }`, { id: run!.id }, other);
    expect(r1.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(r1.data).toBeNull();
    const r2 = await gql(t.app.url, `query($id: ID!) { job(id: $id) { problems { code message } } }`, { id }, other);
    expect(r2.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const listed = await gqlOk<{ runs: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `{ runs(first: 50) { edges { node { id waiting { code } } } } }`, {}, other);
    expect(listed.runs.edges.map((e) => e.node.id)).not.toContain(run!.id);
    // An administrator sees them.
    expect(codes((await runWaiting(t.admin, run!.id)).waiting)).toEqual(["POOL_UNSERVED"]);
    await cancel(owner, run!.id);
  });

  it("a page of 40 waiting runs with their reasons reads the store a few times, not per run", async () => {
    const token = await user("wr-many");
    const id = await createJob(token, { name: "many", schedule: { kind: "ONCE", at: new Date(Date.now() + 3_600_000).toISOString() }, spec: { command: "true", pool: "nowhere" } });
    // Runs straight into the store (the submission budget is 3): 40 QUEUED runs of the job in an unserved pool.
    const base = (await t.app.services.mongo.c.jobs.findOne({ _id: id }))!;
    const now = new Date();
    await t.app.services.mongo.c.runs.insertMany(
      Array.from({ length: 40 }, (_, i) => ({
        _id: `${id.slice(0, 16)}${String(i).padStart(8, "0")}`,
        ownerId: base.ownerId, jobId: id, jobName: "many", fireKey: `${id}@manual:page-${i}`, trigger: "MANUAL" as const,
        scheduledFor: new Date(now.getTime() - i), status: "QUEUED" as const, attempt: 1, retry: base.retry, overlap: base.overlap,
        fencingToken: 0, priority: 5, pool: "nowhere", spec: base.spec, nodeId: null, leaseUntil: null, cancelRequested: false,
        queuedAt: now, startedAt: null, finishedAt: null, retryAt: null, exitCode: null, signal: null, error: null, outputTail: null,
        outputTruncated: false, history: [], createdAt: now, updatedAt: now,
      })),
    );
    const c = t.app.services.mongo.c;
    const spies = [c.runs, c.users, c.jobs, c.fires, c.nodes].flatMap((coll) =>
      (["find", "findOne", "aggregate", "countDocuments", "distinct"] as const).map((m) => vi.spyOn(coll as unknown as Record<string, (...a: unknown[]) => unknown>, m)),
    );
    const calls = () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
    const page = (fields: string) => gqlOk<{ runs: { edges: Array<{ node: { waiting?: Reason[] } }> } }>(t.app.url, `query($j: ID!) { runs(jobId: $j, first: 40) { edges { node { id ${fields} } } } }`, { j: id }, token);
    try {
      const before = calls();
      await page("");
      const plain = calls() - before;
      const mid = calls();
      const withWaiting = await page(`waiting ${REASON}`);
      const waiting = calls() - mid;
      expect(withWaiting.runs.edges).toHaveLength(40);
      expect(withWaiting.runs.edges.every((e) => e.node.waiting?.[0]?.code === "POOL_UNSERVED")).toBe(true);
      // The reasons add the runs (one query), their owners (one) and the pools' coverage (cached): a
      // few reads, where one per run would be 40 or more (background loops may add a few).
      expect(waiting - plain, `plain ${plain}, with waiting ${waiting}`).toBeLessThan(12);
    } finally {
      for (const s of spies) s.mockRestore();
      await c.runs.deleteMany({ jobId: id });
    }
  });

  it("a page of 30 jobs with their problems reads the store a few times, not per job", async () => {
    const token = await user("wr-jobs");
    const id = await createJob(token, { name: "jobs-0", paused: true, schedule: { kind: "CRON", cron: "0 3 * * *" }, spec: { command: "true", pool: "nowhere" } });
    const c = t.app.services.mongo.c;
    const base = (await c.jobs.findOne({ _id: id }))!;
    // Jobs straight into the store (the submission budget is 3), each with a latest ledger slot to read.
    await c.jobs.insertMany(Array.from({ length: 29 }, (_, i) => ({ ...base, _id: `${id.slice(0, 16)}${String(i + 1).padStart(8, "0")}`, name: `jobs-${i + 1}`, lastSlotAt: new Date(Date.now() - 60_000) })));
    const spies = [c.runs, c.users, c.jobs, c.fires, c.nodes].flatMap((coll) =>
      (["find", "findOne", "aggregate", "countDocuments", "distinct"] as const).map((m) => vi.spyOn(coll as unknown as Record<string, (...a: unknown[]) => unknown>, m)),
    );
    const calls = () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
    const page = (fields: string) => gqlOk<{ jobs: { edges: Array<{ node: { problems?: Reason[] } }> } }>(t.app.url, `{ jobs(first: 30) { edges { node { id ${fields} } } } }`, {}, token);
    try {
      const before = calls();
      await page("");
      const plain = calls() - before;
      const mid = calls();
      const withProblems = await page(`problems ${REASON}`);
      const problems = calls() - mid;
      expect(withProblems.jobs.edges).toHaveLength(30);
      expect(withProblems.jobs.edges.every((e) => e.node.problems?.map((p) => p.code).join() === "PAUSED,POOL_UNSERVED")).toBe(true);
      // The jobs again (one query), their owners (one), queued runs (one), latest ledger entries
      // (one), the owner's waiting runs (one count), the nodes (cached): about 6, where one read per
      // job would be 30 or more (the scheduler and executor running beside add a few).
      expect(problems - plain, `plain ${plain}, with problems ${problems}`).toBeLessThan(16);
    } finally {
      for (const s of spies) s.mockRestore();
      await c.jobs.deleteMany({ ownerId: base.ownerId });
    }
  });
});

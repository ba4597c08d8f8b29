/**
 * Issue #12's loose ends (and issue #30's first hour), over real HTTP and WebSocket: the retry
 * field path, runs() NOT_FOUND for unknown ids whatever the page, a pool no executor serves (warning, health, metric),
 * cancelRun on a RUNNING run answering CANCELLING, the cron length bound, and the login snippet
 * (README and docs/getting-started.md: it exports TOKEN) and watch.mjs (docs/getting-started.md:
 * it prints why a subscription is refused) run as written against a server on a random port.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ADMIN, useTestApp } from "../helpers/app.js";
import { code, makeJob, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";

const t = useTestApp();
const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id warnings } }`;
const base = { name: "le", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } };
/** The pages that show the login snippet, and the one that shows watch.mjs. */
const LOGIN_PAGES = ["README.md", "docs/getting-started.md"];
const TOUR = readFileSync("docs/getting-started.md", "utf8");

describe("loose ends", () => {
  it("reports retry.maxAttempts (not retry.retry.maxAttempts)", async () => {
    const r = await gql(t.app.url, CREATE, { input: { ...base, retry: { maxAttempts: 0 } } }, t.admin);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.extensions?.field).toBe("retry.maxAttempts");
    expect(r.errors?.[0]?.message).toMatch(/^retry\.maxAttempts: /);
  });

  it("bounds a cron expression at 256 characters", async () => {
    const long = `0 ${Array.from({ length: 3_000 }, (_, i) => i % 24).join(",")} * * *`.slice(0, 10_000);
    const r = await gql(t.app.url, CREATE, { input: { ...base, schedule: { kind: "CRON", cron: long } } }, t.admin);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.extensions?.field).toBe("schedule.cron");
    expect(r.errors?.[0]?.message).toMatch(/at most 256 characters \(got \d{4,}\)/);
  });

  it("answers NOT_FOUND from runs() for an unknown job id and another user's job, with or without a cursor", async () => {
    const owner = await makeUser(t.app, t.admin, "le-owner");
    const other = await makeUser(t.app, t.admin, "le-other");
    const job = await makeJob(t.app, owner.token, "paged");
    for (let i = 0; i < 3; i++) await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, owner.token);
    const RUNS = `query($id: ID!, $after: String) { runs(jobId: $id, first: 1, after: $after) { edges { node { id } } pageInfo { endCursor } } }`;
    const page = await gqlOk(t.app.url, RUNS, { id: job }, owner.token);
    const after = page.runs.pageInfo.endCursor;
    expect((await gqlOk(t.app.url, RUNS, { id: job, after }, owner.token)).runs.edges).toHaveLength(1);
    for (const [id, token] of [["0123456789abcdef01234567", owner.token], [job, other.token]] as const) {
      for (const a of [undefined, after]) {
        const r = await gql(t.app.url, RUNS, { id, after: a }, token);
        expect(code(r), `${id} after=${a}`).toBe("NOT_FOUND");
        expect(r.errors?.[0]?.message).toBe(`job ${id} not found`);
      }
    }
    // Runs outlive their job: a deleted job's history still pages for its owner.
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }, owner.token);
    expect((await gqlOk(t.app.url, RUNS, { id: job, after }, owner.token)).runs.edges).toHaveLength(1);
    expect(code(await gql(t.app.url, RUNS, { id: job, after }, other.token))).toBe("NOT_FOUND");
  });

  it("warns about a pool no executor serves: on the job, in its health, and in /metrics", async () => {
    const served = await gqlOk(t.app.url, CREATE, { input: { ...base, name: "served" } }, t.admin);
    expect(served.createJob.warnings).toEqual([]);
    const gpu = await gqlOk(t.app.url, CREATE, { input: { ...base, name: "gpu-job", spec: { kind: "COMMAND", command: "true", pool: "gpu" } } }, t.admin);
    expect(gpu.createJob.warnings).toHaveLength(1);
    expect(gpu.createJob.warnings[0]).toMatch(/no online executor serves pool "gpu".*wait QUEUED.*default/);
    await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: gpu.createJob.id }, t.admin);
    const HEALTH = `query($id: ID!) { job(id: $id) { warnings health { poolServed servingNodes queuedRuns oldestQueuedAt warnings } } }`;
    const h = (await gqlOk(t.app.url, HEALTH, { id: gpu.createJob.id }, t.admin)).job;
    expect(h.health).toEqual({ poolServed: false, servingNodes: 0, queuedRuns: 1, oldestQueuedAt: expect.any(String), warnings: h.warnings });
    const ok = (await gqlOk(t.app.url, HEALTH, { id: served.createJob.id }, t.admin)).job.health;
    expect(ok).toMatchObject({ poolServed: true, servingNodes: 1, warnings: [] });
    const metrics = await (await fetch(t.app.url.replace("/graphql", "/metrics"))).text();
    expect(metrics).toContain('kairos_unserved_queued_runs{pool="gpu"} 1');
    expect(metrics).not.toContain('kairos_unserved_queued_runs{pool="default"}');
  });

  it("answers cancelRun on a RUNNING run with CANCELLING, then the run ends CANCELLED; a waiting run is CANCELLED at once", async () => {
    const job = (await gqlOk(t.app.url, CREATE, { input: { ...base, name: "sleeper", spec: { kind: "COMMAND", command: "sleep 30" } } }, t.admin)).createJob.id;
    const run = (await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, t.admin)).triggerJob.id;
    const RUN = `query($id: ID!) { run(id: $id) { status cancelRequested } }`;
    await waitFor(async () => (await gqlOk(t.app.url, RUN, { id: run }, t.admin)).run.status === "RUNNING", 10_000);
    const c = await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { status cancelRequested } }`, { id: run }, t.admin);
    expect(c.cancelRun).toEqual({ status: "CANCELLING", cancelRequested: true });
    const end = await waitFor(async () => {
      const r = (await gqlOk(t.app.url, RUN, { id: run }, t.admin)).run;
      return r.status !== "CANCELLING" ? r : null;
    }, 10_000);
    expect(end.status).toBe("CANCELLED");

    const waiting = await gqlOk(t.app.url, CREATE, { input: { ...base, name: "waiting", spec: { kind: "COMMAND", command: "true", pool: "nowhere" } } }, t.admin);
    const w = (await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: waiting.createJob.id }, t.admin)).triggerJob.id;
    expect((await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { status } }`, { id: w }, t.admin)).cancelRun.status).toBe("CANCELLED");
  });

  it.each(LOGIN_PAGES)("%s: the login snippet fails loudly on a refused login and works on a good one", async (page) => {
    const snippet = /Log in and keep the token:\n\n```sh\n([\s\S]*?)```/.exec(readFileSync(page, "utf8"))?.[1];
    expect(snippet).toBeTruthy();
    // Asynchronously: the server runs in this process.
    const run = (password: string) =>
      new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
        // Then: what a program started from this shell (node watch.mjs) sees of the token.
        const script = `${snippet!.replace("http://localhost:4000/graphql", t.app.url).replace("YOUR-PASSWORD", password)}\ngql '{"query":"{ me { username } }"}'\nnode -e 'console.error(process.env.TOKEN ? "child sees TOKEN" : "child sees no TOKEN")'`;
        const child = spawn("bash", ["-c", script]);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += String(d)));
        child.stderr.on("data", (d) => (stderr += String(d)));
        child.on("error", reject);
        child.on("close", () => resolve({ stdout, stderr }));
      });
    const bad = await run("wrong-password");
    expect(bad.stderr).toContain("login failed");
    expect(bad.stderr).toContain("invalid username or password");
    expect(bad.stderr).toContain("no token: log in first");
    expect(bad.stdout).not.toContain("UNAUTHENTICATED");
    expect(bad.stderr).toContain("child sees no TOKEN");
    const good = await run(ADMIN.password);
    // Exported: `node watch.mjs` gets it.
    expect(good.stderr).toBe("child sees TOKEN\n");
    expect(JSON.parse(good.stdout)).toEqual({ data: { me: { username: "admin" } } });
  });

  /** docs/getting-started.md's watch.mjs, written where `graphql-ws` and `ws` resolve (node_modules, as after `npm i`). */
  function watchScript(): string {
    const code = /```js\n(\/\/ watch\.mjs[\s\S]*?)```/.exec(TOUR)?.[1];
    expect(code).toBeTruthy();
    const file = join(process.cwd(), `.watch-${randomBytes(4).toString("hex")}.mjs`);
    writeFileSync(file, code!);
    return file;
  }

  /** Runs watch.mjs to its end: what it printed and its exit code. */
  function watchToEnd(args: string[], env: Record<string, string | undefined>): Promise<{ stdout: string; stderr: string; code: number | null }> {
    const file = watchScript();
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [file, ...args], { env: { ...process.env, KAIROS_WS_URL: t.app.wsUrl, ...env } });
      let stdout = "";
      let stderr = "";
      const timer = setTimeout(() => child.kill(), 15_000);
      child.stdout.on("data", (d) => (stdout += String(d)));
      child.stderr.on("data", (d) => (stderr += String(d)));
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        rmSync(file, { force: true });
        resolve({ stdout, stderr, code });
      });
    });
  }

  it("docs/getting-started.md's watch.mjs prints why a subscription is refused (a bad token, an unknown job, no token) and exits 1", async () => {
    const badToken = await watchToEnd(["0123456789abcdef01234567"], { TOKEN: "not-a-token" });
    expect(badToken.code).toBe(1);
    expect(badToken.stdout).toBe("");
    expect(badToken.stderr).toMatch(/^watch: .*(token|authenticat)/i);
    expect(badToken.stderr).not.toContain("undefined");
    const unknown = await watchToEnd(["0123456789abcdef01234567"], { TOKEN: t.admin });
    expect({ code: unknown.code, stdout: unknown.stdout, stderr: unknown.stderr }).toEqual({ code: 1, stdout: "", stderr: "watch: job 0123456789abcdef01234567 not found\n" });
    const none = await watchToEnd(["0123456789abcdef01234567"], { TOKEN: undefined });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("watch: no TOKEN in the environment: log in first");
  });

  it("docs/getting-started.md's watch.mjs takes the server's URL from KAIROS_WS_URL", async () => {
    const job = (await gqlOk(t.app.url, CREATE, { input: { ...base, name: "watched" } }, t.admin)).createJob.id;
    const file = watchScript();
    const child = spawn(process.execPath, [file, job], { env: { ...process.env, KAIROS_WS_URL: t.app.wsUrl, TOKEN: t.admin } });
    try {
      let out = "";
      child.stdout.on("data", (d) => (out += String(d)));
      const fired = await waitFor(async () => {
        if (out.includes('"SUCCEEDED"')) return true;
        await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, t.admin);
        await new Promise((r) => setTimeout(r, 500));
        return out.includes('"SUCCEEDED"');
      }, 15_000);
      expect(fired).toBe(true);
      expect(out).toContain('"status":"QUEUED"');
    } finally {
      child.kill();
      rmSync(file, { force: true });
    }
  });
});

/**
 * The built `kairos` command line (node bin/kairos.js, after `npm run build`) as a subprocess
 * against the product started in-process: login, apply (a folder of jobs and a DAG, idempotent,
 * --dry-run, --prune), followed runs and their exit codes, `logs -f` across a dropped connection,
 * another user's job, bad files.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "kairos.js");

/**
 * The command line as built: its own compile step (src/cli/tsconfig.build.json, incremental: quick
 * when nothing changed) is run here so that the test never runs a stale dist/cli; the rest of the
 * build (dist/main.js) must be there and newer than src/main.ts, or the test fails saying so.
 */
function buildCli(): void {
  const main = join(ROOT, "dist", "main.js");
  if (!existsSync(main)) throw new Error("dist/main.js is missing: run `npm run build` first");
  if (statSync(join(ROOT, "src", "main.ts")).mtimeMs > statSync(main).mtimeMs) throw new Error("dist/main.js is older than src/main.ts: run `npm run build`");
  const r = spawnSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "src", "cli", "tsconfig.build.json")], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`building the command line failed:\n${r.stdout}${r.stderr}`);
}

interface Result {
  code: number | null;
  out: string;
  err: string;
}

interface Running {
  out: () => string;
  err: () => string;
  done: Promise<Result>;
  kill: () => void;
}

function start(args: string[], opts: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", NO_COLOR: "1", ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  child.stdin.end(opts.input ?? "");
  const done = new Promise<Result>((resolve) => child.on("close", (code) => resolve({ code, out, err })));
  return { out: () => out, err: () => err, done, kill: () => child.kill("SIGKILL") };
}

const until = async (fn: () => boolean, ms: number, what: string) => {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** A TCP proxy to the API whose open connections the test can cut (a dropped network, as the CLI sees it). */
async function cuttableProxy(target: URL): Promise<{ url: string; cut: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    cut: () => {
      const n = sockets.size;
      for (const s of sockets) s.destroy();
      return n;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The product in-process (useTestApp's, with a start-up timeout that a loaded machine needs). */
const t = { app: undefined as unknown as TestApp, admin: "" };
beforeAll(async () => {
  t.app = await startTestApp();
  t.admin = await login(t.app.url, ADMIN.username, ADMIN.password);
}, 180_000);
afterAll(async () => {
  await t.app?.dispose();
}, 60_000);

// Every step starts node (seconds each on a loaded two-core machine): generous timeouts.
describe("kairos command line (built, as a subprocess)", { timeout: 300_000 }, () => {
  let home: string;
  let files: string;
  let env: Record<string, string>;
  const kairos = (args: string[], extra: { input?: string; env?: Record<string, string> } = {}) =>
    start(args, { env: { ...env, ...extra.env }, input: extra.input }).done;

  beforeAll(async () => {
    buildCli();
    home = await mkdtemp(join(tmpdir(), "kairos-cli-home-"));
    files = join(home, "jobs");
    await mkdir(files);
    env = { XDG_CONFIG_HOME: join(home, "config") };
  }, 180_000);
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("logs in with --password-stdin, keeps the token 0600 in a 0700 directory, never prints it", async () => {
    const r = await kairos(["login", "--server", t.app.url.replace(/\/graphql$/, ""), "--username", ADMIN.username, "--password-stdin"], { input: `${ADMIN.password}\n` });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Logged in to .* as admin/);
    const dir = join(home, "config", "kairos");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "credentials.json"))).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(join(dir, "credentials.json"), "utf8")) as { profiles: { default: { token: string } } };
    expect(stored.profiles.default.token.length).toBeGreaterThan(20);
    expect(r.out + r.err).not.toContain(stored.profiles.default.token);
    const who = await kairos(["whoami", "-o", "json"]);
    expect(who.code).toBe(0);
    expect(JSON.parse(who.out)).toMatchObject({ username: "admin", role: "ADMIN", profile: "default" });
    expect(who.out).not.toContain(stored.profiles.default.token);
  });

  it("a wrong password exits 2 with the API's message on stderr and nothing on stdout", async () => {
    const r = await start(["login", "--server", t.app.url, "--username", "admin", "--password-stdin", "--profile", "wrong"], { env, input: "not-the-password" }).done;
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/^kairos: /);
  });

  it("applies a folder of jobs and a DAG, then a second apply says no changes and exits 0", async () => {
    await writeFile(
      join(files, "jobs.yaml"),
      [
        "name: cli-hello",
        "schedule: {kind: CRON, cron: '0 9 * * MON-FRI', timezone: Europe/Berlin}",
        "spec: {command: 'echo hello'}",
        "---",
        "name: cli-tick",
        "tags: [demo]",
        "schedule: {kind: INTERVAL, every: PT1H}",
        "retry: {maxAttempts: 3, initial: PT5S}",
        "spec: {argv: [echo, tick], timeout: PT30S}",
        "",
      ].join("\n"),
    );
    await writeFile(join(files, "later.json"), JSON.stringify({ name: "cli-later", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "true" } }));
    await writeFile(
      join(files, "etl.yaml"),
      ["name: cli-etl", "tasks:", "  - key: extract", "    spec: {command: 'echo extract'}", "  - key: load", "    dependsOn: [extract]", "    spec: {command: 'echo load'}", ""].join("\n"),
    );
    const first = await kairos(["apply", "-f", files]);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/job cli-hello created/);
    expect(first.out).toMatch(/job cli-tick created/);
    expect(first.out).toMatch(/job cli-later created/);
    expect(first.out).toMatch(/dag cli-etl created/);
    const second = await kairos(["apply", "-f", files]);
    expect(second.code).toBe(0);
    expect(second.out).toBe("no changes (4 up to date)\n");
    const jobs = JSON.parse((await kairos(["get", "jobs", "-o", "json"])).out) as Array<{ id: string; name: string }>;
    expect(jobs.map((j) => j.name).sort()).toEqual(["cli-hello", "cli-later", "cli-tick"]);
    for (const j of jobs) expect(j.id).toMatch(/\S/);
  });

  it("--dry-run after an edit prints the diff per field and changes nothing", async () => {
    const path = join(files, "jobs.yaml");
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace("echo hello", "echo hello world").replace("tags: [demo]", "description: ticks").replace("maxAttempts: 3", "maxAttempts: 2"));
    const dry = await kairos(["apply", "-f", files, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('~ job cli-hello (update: 1 field)\n    ~ spec.command: "echo hello" -> "echo hello world"');
    expect(dry.out).toContain('    + description: "ticks"');
    expect(dry.out).toContain('    - tags: ["demo"]');
    expect(dry.out).toContain("    ~ retry.maxAttempts: 3 -> 2");
    expect(dry.out).toContain("0 to create, 2 to update, 0 to delete, 2 unchanged");
    const hello = JSON.parse((await kairos(["describe", "job", "cli-hello", "-o", "json"])).out) as { spec: { command: string } };
    expect(hello.spec.command).toBe("echo hello");
    const json = JSON.parse((await kairos(["apply", "-f", files, "--dry-run", "-o", "json"])).out) as Array<{ name: string; action: string }>;
    expect(json.find((p) => p.name === "cli-tick")?.action).toBe("update");
    const applied = await kairos(["apply", "-f", files]);
    expect(applied.code).toBe(0);
    expect((await kairos(["apply", "-f", files])).out).toBe("no changes (4 up to date)\n");
  });

  it("--prune deletes the caller's jobs and DAGs no file names, and only with --prune", async () => {
    await rm(join(files, "later.json"));
    const without = await kairos(["apply", "-f", files]);
    expect(without.out).toBe("no changes (3 up to date)\n");
    const pruned = await kairos(["apply", "-f", files, "--prune"]);
    expect(pruned.code).toBe(0);
    expect(pruned.out).toMatch(/job cli-later deleted/);
    const names = (JSON.parse((await kairos(["get", "jobs", "-o", "json"])).out) as Array<{ name: string }>).map((j) => j.name);
    expect(names).not.toContain("cli-later");
    expect(names).toContain("cli-hello");
  });

  it("run --follow streams the output and exits 0 for true, 3 for exit 3, 124 for a timeout", async () => {
    const write = (name: string, body: string) => writeFile(join(home, name), body).then(() => join(home, name));
    const ok = await kairos(["run", "-f", await write("ok.yaml", "name: cli-true\nspec: {command: 'echo fine; true'}\n"), "--follow"]);
    expect(ok.out).toBe("fine\n");
    expect(ok.code).toBe(0);
    const three = await kairos(["run", "-f", await write("three.yaml", "name: cli-exit3\nspec: {command: 'echo out; echo err >&2; exit 3'}\n"), "--follow"]);
    expect(three.out).toBe("out\n");
    expect(three.err).toContain("err\n");
    expect(three.err).toMatch(/FAILED \(exit code 3\)/);
    expect(three.code).toBe(3);
    const slow = await kairos(["run", "-f", await write("slow.yaml", "name: cli-slow\nspec: {command: 'echo start; sleep 30', timeout: PT1S}\n"), "--follow"]);
    expect(slow.out).toBe("start\n");
    expect(slow.err).toMatch(/TIMED_OUT/);
    expect(slow.code).toBe(124);
    const again = await kairos(["trigger", "cli-exit3", "--follow"]);
    expect(again.code).toBe(3);
    const failed = JSON.parse((await kairos(["get", "runs", "--job", "cli-exit3", "--status", "FAILED", "-o", "json"])).out) as Array<{ jobName: string; exitCode: number }>;
    expect(failed.map((r) => [r.jobName, r.exitCode])).toEqual([["cli-exit3", 3], ["cli-exit3", 3]]);
    const all = JSON.parse((await kairos(["get", "runs", "-o", "json"])).out) as Array<{ jobName: string; status: string }>;
    expect(all).toContainEqual(expect.objectContaining({ jobName: "cli-slow", status: "TIMED_OUT" }));
    // get jobs: each job's last run (how it went, where STATUS says COMPLETED), and filtered by it.
    const table = (await kairos(["get", "jobs"])).out.split("\n");
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+SCHEDULE\s+NEXT FIRE\s+LAST RUN\s+ID$/);
    expect(table.find((l) => l.startsWith("cli-exit3 "))).toMatch(/\bCOMPLETED\b.*\bFAILED \S+/);
    expect(table.find((l) => l.startsWith("cli-slow "))).toMatch(/\bCOMPLETED\b.*\bTIMED_OUT \S+/);
    const wentWrong = JSON.parse((await kairos(["get", "jobs", "--last-run", "failed,TIMED_OUT", "-o", "json"])).out) as Array<{ name: string; lastRun: { status: string } }>;
    expect(wentWrong.map((j) => [j.name, j.lastRun.status]).sort()).toEqual([["cli-exit3", "FAILED"], ["cli-slow", "TIMED_OUT"]]);
    const bad = await kairos(["get", "jobs", "--last-run", "QUEUED"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--last-run: "QUEUED" is not a status a last run ends with: give one or more of SUCCEEDED, FAILED, TIMED_OUT, CANCELLED, DEAD/);
  });

  it("logs -f across a dropped connection prints every byte once", async () => {
    const proxy = await cuttableProxy(new URL(t.app.url));
    try {
      const jobId = (await gqlOk<{ createJob: { id: string } }>(
        t.app.url,
        `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
        { i: { name: "cli-counter", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "for i in $(seq 1 60); do echo line-$i; sleep 0.1; done" } } },
        t.admin,
      )).createJob.id;
      const runId = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, t.admin)).triggerJob.id;
      // A stored login is sent only to its own server: through the proxy, the token comes from the environment (as in CI).
      const p = start(["logs", runId, "-f", "--server", proxy.url], { env: { ...env, KAIROS_TOKEN: t.admin } });
      let exited = false;
      void p.done.then(() => (exited = true));
      await until(() => /line-8\n/.test(p.out()) || exited, 120_000, "the first lines");
      expect(p.err()).toBe("");
      expect(proxy.cut()).toBeGreaterThan(0);
      const r = await p.done;
      expect(r.err).toMatch(/resuming the log at token \d+, byte \d+/);
      expect(r.code).toBe(0);
      const lines = r.out.trimEnd().split("\n");
      expect(lines).toEqual(Array.from({ length: 60 }, (_, i) => `line-${i + 1}`));
    } finally {
      await proxy.close();
    }
  });

  it("another user's job is not found, exit 2 with a clear message", async () => {
    const bob = await makeUser(t.app, t.admin, "cli-bob");
    const adminJob = await makeJob(t.app, t.admin, "cli-admins-only");
    const asBob = { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: bob.token };
    for (const args of [["describe", "job", adminJob], ["trigger", adminJob], ["pause", "cli-admins-only"]]) {
      const r = await kairos(args, { env: asBob });
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toMatch(/job "(cli-admins-only|[0-9a-f]+)" not found: no job of yours has that name or id/);
    }
    const own = JSON.parse((await kairos(["get", "jobs", "-o", "json"], { env: asBob })).out) as unknown[];
    expect(own).toEqual([]);
  });

  it("a bad file gets errors with the file, line and field, and nothing is applied", async () => {
    const bad = join(home, "bad");
    await mkdir(bad);
    await writeFile(join(bad, "bad.yaml"), ["name: cli-bad", "schedule: {kind: CRON, cron: '0 9 * * *'}", "spec:", "  command: 'true'", "  timeout: 30", "  retries: 2", ""].join("\n"));
    await writeFile(join(bad, "cron.yaml"), ["name: cli-bad-cron", "schedule:", "  kind: CRON", "  cron: '61 * * * *'", "spec: {command: 'true'}", ""].join("\n"));
    const r = await kairos(["apply", "-f", bad]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain(`${join(bad, "bad.yaml")}:5:12: spec.timeout: must be a string (got 30)`);
    expect(r.err).toMatch(new RegExp(`${join(bad, "bad.yaml")}:6:3: spec.retries: is not a field here`));
    expect(r.err).toMatch(new RegExp(`${join(bad, "cron.yaml")}:4:9: schedule.cron: `));
    const names = (JSON.parse((await kairos(["get", "jobs", "-o", "json"])).out) as Array<{ name: string }>).map((j) => j.name);
    expect(names.filter((n) => n.startsWith("cli-bad"))).toEqual([]);
  });

  it("dag trigger --follow prints each task's transitions; dag graph prints the graph", async () => {
    const r = await kairos(["dag", "trigger", "cli-etl", "--follow"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/extract\s+SUCCEEDED/);
    expect(r.out).toMatch(/load\s+SUCCEEDED/);
    const g = await kairos(["dag", "graph", "cli-etl"]);
    expect(g.out).toBe("stage 1\n  extract  -> load\nstage 2\n  load     <- after extract\n");
  });

  it("why names a paused job and a pool no executor serves", async () => {
    await kairos(["pause", "cli-hello"]);
    const paused = JSON.parse((await kairos(["why", "cli-hello", "-o", "json"])).out) as { reasons: Array<{ code: string }> };
    expect(paused.reasons.map((x) => x.code)).toContain("PAUSED");
    const described = await kairos(["describe", "job", "cli-hello"]);
    expect(described.out).toMatch(/Why it makes no runs now:\n  PAUSED +\S/);
    const lonely = await makeJob(t.app, t.admin, "cli-lonely", "nobody-serves-this");
    const run = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: lonely }, t.admin)).triggerJob.id;
    const why = await kairos(["why", run]);
    expect(why.code).toBe(0);
    expect(why.out).toMatch(/POOL_UNSERVED: no online executor serves pool "nobody-serves-this"/);
  });

  it("why names the parent a DAG task waits on, and the overlap policy that skipped a slot", async () => {
    const dagFile = join(home, "wait.yaml");
    await writeFile(dagFile, ["name: cli-wait", "tasks:", "  - key: slow", "    spec: {command: 'sleep 20'}", "  - key: after", "    dependsOn: [slow]", "    spec: {command: 'true'}", ""].join("\n"));
    expect((await kairos(["apply", "-f", dagFile])).code).toBe(0);
    const dagRun = (await kairos(["dag", "trigger", "cli-wait"])).out.trim();
    const waiting = JSON.parse((await kairos(["why", dagRun, "-o", "json"])).out) as { kind: string; reasons: Array<{ code: string; message: string }> };
    expect(waiting.kind).toBe("dagRun");
    expect(waiting.reasons).toContainEqual(expect.objectContaining({ code: "WAITING_ON_PARENT", message: expect.stringMatching(/^task after: waits on its parent slow \(queued or running\)/) }));

    const jobFile = join(home, "overlap.yaml");
    await writeFile(jobFile, ["name: cli-overlap", "overlap: FORBID", "schedule: {kind: INTERVAL, every: PT1S}", "spec: {command: 'sleep 30'}", ""].join("\n"));
    expect((await kairos(["apply", "-f", jobFile])).code).toBe(0);
    let codes: string[] = [];
    for (let i = 0; i < 30 && !codes.includes("OVERLAP"); i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      codes = (JSON.parse((await kairos(["why", "cli-overlap", "-o", "json"])).out) as { reasons: Array<{ code: string }> }).reasons.map((x) => x.code);
    }
    expect(codes).toContain("OVERLAP");
    await kairos(["delete", "cli-overlap"]);
  });

  it("why answers the concurrency limit and a spent submission budget (the server's Run.waiting and Job.problems)", async () => {
    // Each as its own user, through KAIROS_SERVER and KAIROS_TOKEN: the admin's login and budget stay untouched.
    const server = t.app.url.replace(/\/graphql$/, "");
    const as = (token: string) => ({ env: { KAIROS_SERVER: server, KAIROS_TOKEN: token } });
    const limited = await makeUser(t.app, t.admin, "cli-limited");
    await gqlOk(t.app.url, `mutation($u: ID!) { setUserConcurrencyLimit(userId: $u, maxConcurrentRuns: 1) { id } }`, { u: limited.id }, t.admin);
    const sleeper = async (name: string) =>
      (await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: { name, schedule: { kind: "ONCE" }, spec: { command: "sleep 30" } } }, limited.token)).createJob.id;
    const firstJob = await sleeper("cli-first");
    let held: { _id: string } | null = null;
    const runs = t.app.services.mongo.c.runs;
    for (let i = 0; i < 150 && !(await runs.findOne({ jobId: firstJob, status: "RUNNING" })); i++) await new Promise((r) => setTimeout(r, 100));
    const secondJob = await sleeper("cli-second");
    for (let i = 0; i < 150 && !(held = await runs.findOne({ jobId: secondJob, heldByLimit: true })); i++) await new Promise((r) => setTimeout(r, 100));
    expect(held, "the second run is parked by the limit").not.toBeNull();
    const run = await kairos(["why", held!._id], as(limited.token));
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^run \w+ of cli-second: QUEUED\n/);
    expect(run.out).toMatch(/- USER_CONCURRENCY_LIMIT: your concurrency limit is reached: 1 of your 1 run slots \(maxConcurrentRuns\) are held by RUNNING runs; the run is parked/);
    expect(run.out).not.toMatch(/Not known/);
    const job = JSON.parse((await kairos(["why", "cli-second", "-o", "json"], as(limited.token))).out) as { kind: string; reasons: Array<{ code: string; since: string | null }> };
    expect(job.kind).toBe("job");
    expect(job.reasons.find((r) => r.code === "USER_CONCURRENCY_LIMIT")?.since).toBeTruthy();
    for (const r of await runs.find({ jobId: { $in: [firstJob, secondJob] } }).toArray()) {
      await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: r._id }, limited.token);
    }

    // A spent budget: createJob takes one, and a backfill worth the whole budget (a paused job's
    // every second of ten minutes, 600 slots; its schedule starts an hour ago) is refused but spends it.
    const ratey = await makeUser(t.app, t.admin, "cli-ratey");
    const id = (await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: { name: "cli-ratey", paused: true, schedule: { kind: "CRON", cron: "* * * * * *", startAt: new Date(Date.now() - 3_600_000).toISOString() }, spec: { command: "true" } } }, ratey.token)).createJob.id;
    const clear = await kairos(["why", "cli-ratey", "-o", "json"], as(ratey.token));
    expect((JSON.parse(clear.out) as { reasons: Array<{ code: string }> }).reasons.map((r) => r.code)).not.toContain("RATE_LIMITED");
    const from = new Date(Date.now() - 600_000).toISOString();
    const refused = await gql(t.app.url, `mutation($id: ID!, $f: DateTime!, $t: DateTime!) { backfillJob(id: $id, from: $f, to: $t) { requested } }`, { id, f: from, t: new Date().toISOString() }, ratey.token);
    expect(refused.errors?.[0]?.extensions?.code, JSON.stringify(refused)).toBe("RATE_LIMITED");
    const why = await kairos(["why", "cli-ratey"], as(ratey.token));
    expect(why.code).toBe(0);
    expect(why.out).toMatch(/- RATE_LIMITED: your submission budget is spent \(at most 120 per 60 s, KAIROS_RATE_SUBMISSIONS\): triggerJob, backfillJob and retryRun are refused RATE_LIMITED until .* \[until in \d+s\]/);
  });
});

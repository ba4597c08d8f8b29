/**
 * The built `kairos` command line (node bin/kairos.js, after `npm run build`) as a subprocess
 * against the product started in-process: login, apply (a folder of jobs and a DAG, idempotent,
 * --dry-run, --prune), followed runs and their exit codes, `logs -f` across a dropped connection,
 * another user's job, bad files, `why`.
 */
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ADMIN } from "../helpers/app.js";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { cuttableProxy, start, until, useCliFixture } from "./fixture.js";

// One product for the file (a file of its own costs another product's start and ~10 s of loading on
// a loaded host). The tests run in order: the first logs in (the stored login the others use), the
// apply tests build on each other, and the dag and `why` tests use the jobs applied.
const t = useCliFixture();

// Every step starts node (seconds each on a loaded two-core machine): generous timeouts.
describe("kairos command line (built, as a subprocess)", { timeout: 300_000 }, () => {
  it("logs in with --password-stdin, keeps the token 0600 in a 0700 directory, never prints it", async () => {
    const r = await t.kairos(["login", "--server", t.app.url.replace(/\/graphql$/, ""), "--username", ADMIN.username, "--password-stdin"], { input: `${ADMIN.password}\n` });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Logged in to .* as admin/);
    const dir = join(t.home, "config", "kairos");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "credentials.json"))).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(join(dir, "credentials.json"), "utf8")) as { profiles: { default: { token: string } } };
    expect(stored.profiles.default.token.length).toBeGreaterThan(20);
    expect(r.out + r.err).not.toContain(stored.profiles.default.token);
    const who = await t.kairos(["whoami", "-o", "json"]);
    expect(who.code).toBe(0);
    expect(JSON.parse(who.out)).toMatchObject({ username: "admin", role: "ADMIN", profile: "default" });
    expect(who.out).not.toContain(stored.profiles.default.token);
  });

  it("a wrong password exits 2 with the API's message on stderr and nothing on stdout", async () => {
    const r = await start(["login", "--server", t.app.url, "--username", "admin", "--password-stdin", "--profile", "wrong"], { env: t.env, input: "not-the-password" }).done;
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/^kairos: /);
  });

  it("applies a folder of jobs and a DAG, then a second apply says no changes and exits 0", async () => {
    await writeFile(
      join(t.files, "jobs.yaml"),
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
    await writeFile(join(t.files, "later.json"), JSON.stringify({ name: "cli-later", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { command: "true" } }));
    await writeFile(
      join(t.files, "etl.yaml"),
      ["name: cli-etl", "tasks:", "  - key: extract", "    spec: {command: 'echo extract'}", "  - key: load", "    dependsOn: [extract]", "    spec: {command: 'echo load'}", ""].join("\n"),
    );
    const first = await t.kairos(["apply", "-f", t.files]);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/job cli-hello created/);
    expect(first.out).toMatch(/job cli-tick created/);
    expect(first.out).toMatch(/job cli-later created/);
    expect(first.out).toMatch(/dag cli-etl created/);
    const second = await t.kairos(["apply", "-f", t.files]);
    expect(second.code).toBe(0);
    expect(second.out).toBe("no changes (4 up to date)\n");
    const jobs = JSON.parse((await t.kairos(["get", "jobs", "-o", "json"])).out) as Array<{ id: string; name: string }>;
    expect(jobs.map((j) => j.name).sort()).toEqual(["cli-hello", "cli-later", "cli-tick"]);
    for (const j of jobs) expect(j.id).toMatch(/\S/);
  });

  it("--dry-run after an edit prints the diff per field and changes nothing", async () => {
    const path = join(t.files, "jobs.yaml");
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace("echo hello", "echo hello world").replace("tags: [demo]", "description: ticks").replace("maxAttempts: 3", "maxAttempts: 2"));
    const dry = await t.kairos(["apply", "-f", t.files, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('~ job cli-hello (update: 1 field)\n    ~ spec.command: "echo hello" -> "echo hello world"');
    expect(dry.out).toContain('    + description: "ticks"');
    expect(dry.out).toContain('    - tags: ["demo"]');
    expect(dry.out).toContain("    ~ retry.maxAttempts: 3 -> 2");
    expect(dry.out).toContain("0 to create, 2 to update, 0 to delete, 2 unchanged");
    // Both only read, after the first dry run: side by side.
    const [described, planned] = await Promise.all([t.kairos(["describe", "job", "cli-hello", "-o", "json"]), t.kairos(["apply", "-f", t.files, "--dry-run", "-o", "json"])]);
    const hello = JSON.parse(described.out) as { spec: { command: string } };
    expect(hello.spec.command).toBe("echo hello");
    const json = JSON.parse(planned.out) as Array<{ name: string; action: string }>;
    expect(json.find((p) => p.name === "cli-tick")?.action).toBe("update");
    const applied = await t.kairos(["apply", "-f", t.files]);
    expect(applied.code).toBe(0);
    expect((await t.kairos(["apply", "-f", t.files])).out).toBe("no changes (4 up to date)\n");
  });

  it("--prune deletes the caller's jobs and DAGs no file names, and only with --prune", async () => {
    await rm(join(t.files, "later.json"));
    const without = await t.kairos(["apply", "-f", t.files]);
    expect(without.out).toBe("no changes (3 up to date)\n");
    const pruned = await t.kairos(["apply", "-f", t.files, "--prune"]);
    expect(pruned.code).toBe(0);
    expect(pruned.out).toMatch(/job cli-later deleted/);
    const names = (JSON.parse((await t.kairos(["get", "jobs", "-o", "json"])).out) as Array<{ name: string }>).map((j) => j.name);
    expect(names).not.toContain("cli-later");
    expect(names).toContain("cli-hello");
  });

  it("run --follow streams the output and exits 0 for true, 3 for exit 3, 124 for a timeout", async () => {
    const write = (name: string, body: string) => writeFile(join(t.home, name), body).then(() => join(t.home, name));
    // Three jobs of their own, each followed by its own process: side by side.
    const [ok, three, slow] = await Promise.all([
      write("ok.yaml", "name: cli-true\nspec: {command: 'echo fine; true'}\n").then((f) => t.kairos(["run", "-f", f, "--follow"])),
      write("three.yaml", "name: cli-exit3\nspec: {command: 'echo out; echo err >&2; exit 3'}\n").then((f) => t.kairos(["run", "-f", f, "--follow"])),
      write("slow.yaml", "name: cli-slow\nspec: {command: 'echo start; sleep 30', timeout: PT1S}\n").then((f) => t.kairos(["run", "-f", f, "--follow"])),
    ]);
    expect(ok.out).toBe("fine\n");
    expect(ok.code).toBe(0);
    expect(three.out).toBe("out\n");
    expect(three.err).toContain("err\n");
    expect(three.err).toMatch(/FAILED \(exit code 3\)/);
    expect(three.code).toBe(3);
    expect(slow.out).toBe("start\n");
    expect(slow.err).toMatch(/TIMED_OUT/);
    expect(slow.code).toBe(124);
    const again = await t.kairos(["trigger", "cli-exit3", "--follow"]);
    expect(again.code).toBe(3);
    // Everything below only reads, after every run ended: side by side.
    const [failedOut, allOut, tableOut, wentWrongOut, bad] = await Promise.all([
      t.kairos(["get", "runs", "--job", "cli-exit3", "--status", "FAILED", "-o", "json"]),
      t.kairos(["get", "runs", "-o", "json"]),
      t.kairos(["get", "jobs"]),
      t.kairos(["get", "jobs", "--last-run", "failed,TIMED_OUT", "-o", "json"]),
      t.kairos(["get", "jobs", "--last-run", "QUEUED"]),
    ]);
    const failed = JSON.parse(failedOut.out) as Array<{ jobName: string; exitCode: number }>;
    expect(failed.map((r) => [r.jobName, r.exitCode])).toEqual([["cli-exit3", 3], ["cli-exit3", 3]]);
    const all = JSON.parse(allOut.out) as Array<{ jobName: string; status: string }>;
    expect(all).toContainEqual(expect.objectContaining({ jobName: "cli-slow", status: "TIMED_OUT" }));
    // get jobs: each job's last run (how it went, where STATUS says COMPLETED), and filtered by it.
    const table = tableOut.out.split("\n");
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+SCHEDULE\s+NEXT FIRE\s+LAST RUN\s+ID$/);
    expect(table.find((l) => l.startsWith("cli-exit3 "))).toMatch(/\bCOMPLETED\b.*\bFAILED \S+/);
    expect(table.find((l) => l.startsWith("cli-slow "))).toMatch(/\bCOMPLETED\b.*\bTIMED_OUT \S+/);
    const wentWrong = JSON.parse(wentWrongOut.out) as Array<{ name: string; lastRun: { status: string } }>;
    expect(wentWrong.map((j) => [j.name, j.lastRun.status]).sort()).toEqual([["cli-exit3", "FAILED"], ["cli-slow", "TIMED_OUT"]]);
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
      const p = start(["logs", runId, "-f", "--server", proxy.url], { env: { ...t.env, KAIROS_TOKEN: t.admin } });
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
    const [bob, adminJob] = await Promise.all([makeUser(t.app, t.admin, "cli-bob"), makeJob(t.app, t.admin, "cli-admins-only")]);
    const asBob = { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: bob.token };
    // Each refused, none changes anything: side by side.
    const refusals = [["describe", "job", adminJob], ["trigger", adminJob], ["pause", "cli-admins-only"]];
    const [own, ...refused] = await Promise.all([t.kairos(["get", "jobs", "-o", "json"], { env: asBob }), ...refusals.map((args) => t.kairos(args, { env: asBob }))]);
    for (const r of refused) {
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toMatch(/job "(cli-admins-only|[0-9a-f]+)" not found: no job of yours has that name or id/);
    }
    expect(JSON.parse(own!.out) as unknown[]).toEqual([]);
  });

  it("a bad file gets errors with the file, line and field, and nothing is applied", async () => {
    const bad = join(t.home, "bad");
    await mkdir(bad);
    await writeFile(join(bad, "bad.yaml"), ["name: cli-bad", "schedule: {kind: CRON, cron: '0 9 * * *'}", "spec:", "  command: 'true'", "  timeout: 30", "  retries: 2", ""].join("\n"));
    await writeFile(join(bad, "cron.yaml"), ["name: cli-bad-cron", "schedule:", "  kind: CRON", "  cron: '61 * * * *'", "spec: {command: 'true'}", ""].join("\n"));
    const r = await t.kairos(["apply", "-f", bad]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain(`${join(bad, "bad.yaml")}:5:12: spec.timeout: must be a string (got 30)`);
    expect(r.err).toMatch(new RegExp(`${join(bad, "bad.yaml")}:6:3: spec.retries: is not a field here`));
    expect(r.err).toMatch(new RegExp(`${join(bad, "cron.yaml")}:4:9: schedule.cron: `));
    const names = (JSON.parse((await t.kairos(["get", "jobs", "-o", "json"])).out) as Array<{ name: string }>).map((j) => j.name);
    expect(names.filter((n) => n.startsWith("cli-bad"))).toEqual([]);
  });

  it("dag trigger --follow prints each task's transitions; dag graph prints the graph", async () => {
    const [r, g] = await Promise.all([t.kairos(["dag", "trigger", "cli-etl", "--follow"]), t.kairos(["dag", "graph", "cli-etl"])]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/extract\s+SUCCEEDED/);
    expect(r.out).toMatch(/load\s+SUCCEEDED/);
    expect(g.out).toBe("stage 1\n  extract  -> load\nstage 2\n  load     <- after extract\n");
  });

  it("why names a paused job and a pool no executor serves", async () => {
    // Two jobs that do not touch each other: the paused one and the unserved pool's, side by side.
    const paused = async () => {
      await t.kairos(["pause", "cli-hello"]);
      const [why, described] = await Promise.all([t.kairos(["why", "cli-hello", "-o", "json"]), t.kairos(["describe", "job", "cli-hello"])]);
      const answer = JSON.parse(why.out) as { reasons: Array<{ code: string }> };
      expect(answer.reasons.map((x) => x.code)).toContain("PAUSED");
      expect(described.out).toMatch(/Why it makes no runs now:\n  PAUSED +\S/);
    };
    const unserved = async () => {
      const lonely = await makeJob(t.app, t.admin, "cli-lonely", "nobody-serves-this");
      const run = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: lonely }, t.admin)).triggerJob.id;
      const why = await t.kairos(["why", run]);
      expect(why.code).toBe(0);
      expect(why.out).toMatch(/POOL_UNSERVED: no online executor serves pool "nobody-serves-this"/);
    };
    await Promise.all([paused(), unserved()]);
  });

  it("why names the parent a DAG task waits on, and the overlap policy that skipped a slot", async () => {
    // The DAG and the job do not touch each other: side by side.
    const waitingOnParent = async () => {
      const dagFile = join(t.home, "wait.yaml");
      await writeFile(dagFile, ["name: cli-wait", "tasks:", "  - key: slow", "    spec: {command: 'sleep 20'}", "  - key: after", "    dependsOn: [slow]", "    spec: {command: 'true'}", ""].join("\n"));
      expect((await t.kairos(["apply", "-f", dagFile])).code).toBe(0);
      const dagRun = (await t.kairos(["dag", "trigger", "cli-wait"])).out.trim();
      const waiting = JSON.parse((await t.kairos(["why", dagRun, "-o", "json"])).out) as { kind: string; reasons: Array<{ code: string; message: string }> };
      expect(waiting.kind).toBe("dagRun");
      expect(waiting.reasons).toContainEqual(expect.objectContaining({ code: "WAITING_ON_PARENT", message: expect.stringMatching(/^task after: waits on its parent slow \(queued or running\)/) }));
    };
    const overlap = async () => {
      const jobFile = join(t.home, "overlap.yaml");
      await writeFile(jobFile, ["name: cli-overlap", "overlap: FORBID", "schedule: {kind: INTERVAL, every: PT1S}", "spec: {command: 'sleep 30'}", ""].join("\n"));
      expect((await t.kairos(["apply", "-f", jobFile])).code).toBe(0);
      // The server's own answer (Job.problems, what `why` prints) is watched through the API, which
      // costs no process; `kairos why` is asked once it names the skipped slot.
      const job = await t.app.services.mongo.c.jobs.findOne({ name: "cli-overlap" });
      expect(job, "the applied job").not.toBeNull();
      const problems = async () =>
        (await gqlOk<{ job: { problems: Array<{ code: string }> } }>(t.app.url, `query($id: ID!) { job(id: $id) { problems { code } } }`, { id: job!._id }, t.admin)).job.problems.map((p) => p.code);
      await until(async () => (await problems()).includes("OVERLAP"), 60_000, "a slot skipped by the overlap policy", 200);
      const codes = (JSON.parse((await t.kairos(["why", "cli-overlap", "-o", "json"])).out) as { reasons: Array<{ code: string }> }).reasons.map((x) => x.code);
      expect(codes).toContain("OVERLAP");
      await t.kairos(["delete", "cli-overlap"]);
    };
    await Promise.all([waitingOnParent(), overlap()]);
  });

  it("why answers the concurrency limit and a spent submission budget (the server's Run.waiting and Job.problems)", async () => {
    // Each as its own user, through KAIROS_SERVER and KAIROS_TOKEN: the admin's login and budget
    // stay untouched, and the two users' parts do not touch each other: side by side.
    const server = t.app.url.replace(/\/graphql$/, "");
    const as = (token: string) => ({ env: { KAIROS_SERVER: server, KAIROS_TOKEN: token } });
    const concurrencyLimit = async () => {
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
      // Both only read: side by side.
      const [run, jobOut] = await Promise.all([t.kairos(["why", held!._id], as(limited.token)), t.kairos(["why", "cli-second", "-o", "json"], as(limited.token))]);
      expect(run.err).toBe("");
      expect(run.code).toBe(0);
      expect(run.out).toMatch(/^run \w+ of cli-second: QUEUED\n/);
      expect(run.out).toMatch(/- USER_CONCURRENCY_LIMIT: your concurrency limit is reached: 1 of your 1 run slots \(maxConcurrentRuns\) are held by RUNNING runs; the run is parked/);
      expect(run.out).not.toMatch(/Not known/);
      const job = JSON.parse(jobOut.out) as { kind: string; reasons: Array<{ code: string; since: string | null }> };
      expect(job.kind).toBe("job");
      expect(job.reasons.find((r) => r.code === "USER_CONCURRENCY_LIMIT")?.since).toBeTruthy();
      for (const r of await runs.find({ jobId: { $in: [firstJob, secondJob] } }).toArray()) {
        await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: r._id }, limited.token);
      }
    };

    // A spent budget: createJob takes one, and a backfill worth the whole budget (a paused job's
    // every second of ten minutes, 600 slots; its schedule starts an hour ago) is refused but spends it.
    const spentBudget = async () => {
      const ratey = await makeUser(t.app, t.admin, "cli-ratey");
      const id = (await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: { name: "cli-ratey", paused: true, schedule: { kind: "CRON", cron: "* * * * * *", startAt: new Date(Date.now() - 3_600_000).toISOString() }, spec: { command: "true" } } }, ratey.token)).createJob.id;
      const clear = await t.kairos(["why", "cli-ratey", "-o", "json"], as(ratey.token));
      expect((JSON.parse(clear.out) as { reasons: Array<{ code: string }> }).reasons.map((r) => r.code)).not.toContain("RATE_LIMITED");
      const from = new Date(Date.now() - 600_000).toISOString();
      const refused = await gql(t.app.url, `mutation($id: ID!, $f: DateTime!, $t: DateTime!) { backfillJob(id: $id, from: $f, to: $t) { requested } }`, { id, f: from, t: new Date().toISOString() }, ratey.token);
      expect(refused.errors?.[0]?.extensions?.code, JSON.stringify(refused)).toBe("RATE_LIMITED");
      const why = await t.kairos(["why", "cli-ratey"], as(ratey.token));
      expect(why.code).toBe(0);
      expect(why.out).toMatch(/- RATE_LIMITED: your submission budget is spent \(at most 120 per 60 s, KAIROS_RATE_SUBMISSIONS\): triggerJob, backfillJob and retryRun are refused RATE_LIMITED until .* \[until in \d+s\]/);
    };
    await Promise.all([concurrencyLimit(), spentBudget()]);
  });
});

/**
 * The built `kairos` command line as a subprocess against the product in-process: `kairos why`
 * for a DAG task waiting on its parent, a slot the overlap policy skipped, the concurrency limit and
 * a spent submission budget. Logged in (`kairos login`) before the tests; a paused job and an
 * unserved pool: kairos.test.ts.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { until, useCliFixture } from "./fixture.js";

const t = useCliFixture({ login: true });

// Every step starts node (seconds each on a loaded two-core machine): generous timeouts.
describe("kairos command line (built, as a subprocess): why", { timeout: 300_000 }, () => {
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

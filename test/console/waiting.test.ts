/**
 * The console shows the server's reasons (Run.waiting, Job.problems; docs/waiting.md): a run page
 * for a run its owner's concurrency limit holds says so, and the section goes away once the run
 * starts; a job page says its pool is not served.
 */
import { describe, expect, it } from "vitest";
import { gqlOk, login } from "../helpers/graphql.js";
import { useConsole } from "./browser.js";

const h = useConsole();

async function createJob(token: string, input: Record<string, unknown>): Promise<string> {
  return (await gqlOk<{ createJob: { id: string } }>(h.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: input }, token)).createJob.id;
}

async function until<T>(fn: () => Promise<T | null | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("console: why a run waits", { timeout: 90_000 }, () => {
  it("a run page for a run held by its owner's concurrency limit shows the reason, until the run starts", async () => {
    await gqlOk(h.app.url, `mutation { createUser(username: "waiter", password: "password-waiter", maxConcurrentRuns: 1) { id } }`, {}, h.admin);
    const token = await login(h.app.url, "waiter", "password-waiter");
    const runs = h.app.services.mongo.c.runs;
    const first = await createJob(token, { name: "holder", schedule: { kind: "ONCE" }, spec: { command: "sleep 60" } });
    const running = await until(() => runs.findOne({ jobId: first, status: "RUNNING" }), 20_000, "the first run to start");
    const second = await createJob(token, { name: "held", schedule: { kind: "ONCE" }, spec: { command: "sleep 1" } });
    const held = await until(() => runs.findOne({ jobId: second, heldByLimit: true }), 20_000, "the second run to be held");

    const page = await h.loggedInAt(`runs/${held._id}`, "waiter", "password-waiter");
    const section = page.getByRole("region", { name: "Why it has not started" });
    await section.waitFor({ timeout: 15_000 });
    const reason = section.locator('li[data-code="USER_CONCURRENCY_LIMIT"]');
    await reason.waitFor();
    expect(await reason.locator(".badge").textContent()).toBe("Concurrency limit");
    expect(await reason.textContent()).toMatch(/1 of your 1 run slots \(maxConcurrentRuns\) are held by RUNNING runs/);
    expect(await reason.locator(".wait-when time").count()).toBeGreaterThan(0);

    // The run ahead ends: the held run starts, and the page drops the reasons without a reload.
    await gqlOk(h.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: running._id }, token);
    await page.locator('.page-head .badge[data-status="RUNNING"], .page-head .badge[data-status="SUCCEEDED"]').first().waitFor({ timeout: 20_000 });
    await section.waitFor({ state: "detached", timeout: 10_000 });
  });

  it("a job page lists the job's problems: a pool no executor serves", async () => {
    const id = await createJob(h.admin, { name: "unserved", schedule: { kind: "CRON", cron: "0 3 * * *" }, spec: { command: "true", pool: "gpu" } });
    const page = await h.loggedInAt(`jobs/${id}`);
    const problems = page.getByRole("region", { name: "Problems" });
    await problems.waitFor({ timeout: 15_000 });
    const reason = problems.locator('li[data-code="POOL_UNSERVED"]');
    await reason.waitFor();
    expect(await reason.textContent()).toMatch(/no online executor serves pool "gpu"/);
    expect(await reason.textContent()).toMatch(/KAIROS_POOLS/);
  });
  it("a running DAG run's page says why its tasks wait: a child on its parent, until the DAG run ends", async () => {
    const d = await gqlOk<{ createDag: { id: string } }>(
      h.app.url,
      `mutation($i: CreateDagInput!) { createDag(input: $i) { id } }`,
      { i: { name: "waiting-chain", tasks: [{ key: "extract", spec: { command: "sleep 60" } }, { key: "load", dependsOn: ["extract"], spec: { command: "true" } }] } },
      h.admin,
    );
    const runId = (await gqlOk<{ triggerDag: { id: string } }>(h.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id: d.createDag.id }, h.admin)).triggerDag.id;
    const page = await h.loggedInAt(`dag-runs/${runId}`);
    const section = page.getByRole("region", { name: "Why tasks wait" });
    const load = section.locator('li[data-task="load"] li[data-code="WAITING_ON_PARENT"]');
    await load.waitFor({ timeout: 15_000 });
    expect(await load.textContent()).toMatch(/waits on its parent extract/);
    expect(await section.locator('li[data-task="extract"]').count()).toBe(0);

    await gqlOk(h.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, h.admin);
    await page.locator('[data-dag-run-status="CANCELLED"]').waitFor({ timeout: 20_000 });
    await section.waitFor({ state: "detached", timeout: 10_000 });
  });
});

/**
 * The console's jobs area in a real browser: the editor creates a job whose run the job page follows
 * live; trigger is one run per intent; pause, resume and delete; the fire ledger and next fires;
 * user data rendered as text; another user's jobs invisible; no serious accessibility violations.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { gql, gqlOk } from "../helpers/graphql.js";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

/** A logged-in page whose waits fail (naming what they waited for) well before the test's own timeout. */
async function signedIn(username?: string, password?: string): Promise<Page> {
  const page = await h.loggedIn(username, password);
  page.setDefaultTimeout(20_000);
  return page;
}

/** As `signedIn`, the tab's first document being the console at `path` (one page load, not two). */
async function signedInAt(path: string, username?: string, password?: string): Promise<Page> {
  const page = await h.loggedInAt(path, username, password);
  page.setDefaultTimeout(20_000);
  return page;
}

async function createJob(input: Record<string, unknown>, token = h.admin): Promise<string> {
  const d = await gqlOk<{ createJob: { id: string } }>(h.app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input }, token);
  return d.createJob.id;
}

/** A job that runs only when triggered (its one slot is far away). */
const idle = (name: string) => createJob({ name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } });

async function runsOf(jobId: string): Promise<Array<{ id: string; status: string; outputTail: string | null }>> {
  const d = await gqlOk<{ job: { runs: { edges: Array<{ node: { id: string; status: string; outputTail: string | null } }> } } }>(
    h.app.url,
    `query($id: ID!) { job(id: $id) { runs(first: 50) { edges { node { id status outputTail } } } } }`,
    { id: jobId },
    h.admin,
  );
  return d.job.runs.edges.map((e) => e.node);
}

async function until<T>(what: string, f: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Goes to a console address the way a user does inside the app (no document load). */
async function openInApp(page: Page, path: string): Promise<void> {
  await page.evaluate((p) => {
    history.pushState(null, "", p);
    dispatchEvent(new PopStateEvent("popstate"));
  }, path);
}

const marker = (page: Page) => page.evaluate(() => (window as unknown as { __marker?: number }).__marker);

describe("console: jobs", { timeout: 90_000 }, () => {
  it("creates a job in the form; its page follows the run to SUCCEEDED without reloading", async () => {
    const page = await signedIn();
    await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 1));
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).click();
    await page.getByRole("link", { name: "New job" }).click();
    await page.getByRole("heading", { name: "New job" }).waitFor();

    await page.getByLabel("Name", { exact: true }).fill("from-the-form");
    // The run sleeps a little, so the page sees it before it ends.
    await page.getByLabel("Command", { exact: true }).fill("sleep 2; echo hello-from-form");
    await page.getByLabel("Now, once").check();
    await page.getByRole("button", { name: "Create job" }).click();

    await page.getByRole("heading", { name: "from-the-form" }).waitFor();
    const jobId = new URL(page.url()).pathname.split("/")[2]!;
    expect(jobId).toMatch(/^[0-9a-f]{24}$/);
    const runs = page.locator("table.jobs-runs tbody tr");
    // First seen waiting or running …
    await page.locator('table.jobs-runs [data-status="QUEUED"], table.jobs-runs [data-status="PENDING"], table.jobs-runs [data-status="RUNNING"]').first().waitFor({ timeout: 15_000 });
    // … then SUCCEEDED, pushed by the subscription.
    await runs.locator('[data-status="SUCCEEDED"]').first().waitFor({ timeout: 20_000 });
    expect(await runs.count()).toBe(1);
    expect(await marker(page)).toBe(1);

    // The API ran what the form said.
    const [run] = await runsOf(jobId);
    expect(run?.status).toBe("SUCCEEDED");
    expect(run?.outputTail).toContain("hello-from-form");
    // The ledger shows the slot that fired.
    await page.locator('.jobs-heatmap li[data-outcome="FIRED"]').first().waitFor();
  });

  it("creates a SCRIPT job with its interpreter and arguments; edits a job's name and command, keeping its schedule", async () => {
    const page = await signedInAt("jobs/new");
    await page.getByLabel("Name", { exact: true }).fill("from-a-script");
    await page.getByLabel("Kind", { exact: true }).selectOption("SCRIPT");
    await page.getByLabel("Interpreter", { exact: true }).selectOption("sh");
    await page.getByLabel("Script", { exact: true }).fill('echo "from-script $1"');
    await page.getByLabel("Arguments, one per line").fill("arg-one");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.getByRole("heading", { name: "from-a-script" }).waitFor();
    const scriptJob = new URL(page.url()).pathname.split("/")[2]!;
    await page.locator('table.jobs-runs [data-status="SUCCEEDED"]').first().waitFor({ timeout: 30_000 });
    expect((await runsOf(scriptJob))[0]?.outputTail).toContain("from-script arg-one");

    const jobId = await createJob({ name: "to-edit", schedule: { kind: "CRON", cron: "15 6 * * *", timezone: "Asia/Kolkata" }, spec: { kind: "COMMAND", command: "echo one" } });
    await openInApp(page, `/jobs/${jobId}`);
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByRole("button", { name: "Save changes" }).waitFor();
    expect(await page.getByLabel("Cron expression").inputValue()).toBe("15 6 * * *");
    expect(await page.getByLabel("Time zone", { exact: true }).inputValue()).toBe("Asia/Kolkata");
    await page.getByLabel("Name", { exact: true }).fill("edited");
    await page.getByLabel("Command", { exact: true }).fill("echo two");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("heading", { name: "edited" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/jobs/${jobId}`);
    const d = await gqlOk<{ job: { name: string; version: number; spec: { command: string }; schedule: { cron: string; timezone: string } } }>(
      h.app.url,
      `query($id: ID!) { job(id: $id) { name version spec { command } schedule { cron timezone } } }`,
      { id: jobId },
      h.admin,
    );
    expect(d.job).toMatchObject({ name: "edited", spec: { command: "echo two" }, schedule: { cron: "15 6 * * *", timezone: "Asia/Kolkata" } });
    expect(d.job.version).toBe(2);
  });

  it("shows the API's refusal next to the field it names and creates nothing", async () => {
    const page = await signedInAt("jobs/new");
    await page.getByLabel("Name", { exact: true }).fill("bad-interpreter");
    await page.getByLabel("Kind", { exact: true }).selectOption("HTTP");
    await page.getByLabel("URL", { exact: true }).fill("ftp://example.com/x");
    await page.getByRole("button", { name: "Create job" }).click();
    const alert = page.getByRole("alert").first();
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/url/i);
    // The URL control is marked invalid and described by the message.
    const url = page.getByLabel("URL", { exact: true });
    expect(await url.getAttribute("aria-invalid")).toBe("true");
    expect(new URL(page.url()).pathname).toBe("/jobs/new");
    const jobs = await gqlOk<{ jobs: { edges: unknown[] } }>(h.app.url, `{ jobs(filter: { name: "bad-interpreter" }) { edges { cursor } } }`, {}, h.admin);
    expect(jobs.jobs.edges).toHaveLength(0);
  });

  it("previews the schedule while the user types: its words, the fires in the zone and locally, the API's error inline", async () => {
    const page = await signedInAt("jobs/new");
    const asked: string[] = [];
    page.on("request", (r) => {
      const body = r.postData();
      if (body?.includes("ConsolePreviewSchedule")) asked.push(body);
    });
    await page.getByLabel("Cron", { exact: true }).check();
    await page.getByLabel("Time zone", { exact: true }).fill("Europe/Berlin");
    const typed = "0 9 * * 1-5";
    await page.getByLabel("Cron expression").pressSequentially(typed, { delay: 30 });
    const preview = page.getByRole("region", { name: "Preview" });
    const rows = preview.locator("table.jobs-fires tbody tr");
    // The preview settles on the whole expression: every fire at 09:00 Berlin time on a weekday.
    const walls = await until("the weekday fires", async () => {
      const t = await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector("td:nth-child(2) time")?.textContent ?? ""));
      return t.length > 0 && t.every((w) => w.endsWith("09:00:00")) ? t : null;
    });
    for (const w of walls) expect([1, 2, 3, 4, 5]).toContain(new Date(`${w.slice(0, 10)}T00:00:00Z`).getUTCDay());
    expect(await preview.locator("thead").textContent()).toContain("In Europe/Berlin");
    expect((await preview.locator(".jobs-preview-description").textContent())?.trim()).toBeTruthy();
    // Another expression: the fires follow it.
    await page.getByLabel("Cron expression").fill("30 18 * * 6");
    await until("the Saturday fires", async () => {
      const t = await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector("td:nth-child(2) time")?.textContent ?? ""));
      return t.length > 0 && t.every((w) => w.endsWith("18:30:00") && new Date(`${w.slice(0, 10)}T00:00:00Z`).getUTCDay() === 6);
    });
    // Debounced: far fewer requests than keystrokes.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThan(typed.length / 2 + 1);
    // An invalid expression: the API's own message, inline, and no fires.
    await page.getByLabel("Cron expression").fill("61 * * * *");
    const err = preview.locator(".jobs-preview-error");
    await err.waitFor();
    expect(await err.textContent()).toMatch(/cron.*61/);
    expect(await rows.count()).toBe(0);
    // Typing on replaces it.
    await page.getByLabel("Cron expression").fill("*/15 * * * *");
    await err.waitFor({ state: "detached" });
    await rows.first().waitFor();
  });

  it("trigger: a double click makes one run, two clicks two, each with its own idempotency key", async () => {
    const jobId = await idle("trigger-me");
    const page = await signedInAt(`jobs/${jobId}`);
    const keys: string[] = [];
    page.on("request", (r) => {
      const body = r.postData();
      if (body?.includes("ConsoleTriggerJob")) keys.push((JSON.parse(body) as { variables: { idempotencyKey: string } }).variables.idempotencyKey);
    });
    const trigger = page.getByRole("button", { name: "Trigger now" });
    await trigger.waitFor();

    await trigger.dblclick();
    await page.getByText(/^Triggered run/).waitFor();
    await new Promise((r) => setTimeout(r, 700));
    expect((await runsOf(jobId)).length).toBe(1);

    await page.getByRole("button", { name: "Trigger now" }).click();
    await until("the second run", async () => (await runsOf(jobId)).length >= 2);
    await page.getByRole("button", { name: "Trigger now" }).click();
    await until("the third run", async () => (await runsOf(jobId)).length >= 3);
    await new Promise((r) => setTimeout(r, 700));
    const runs = await runsOf(jobId);
    expect(runs.length).toBe(3);
    expect(keys.length).toBe(3);
    expect(new Set(keys).size).toBe(3);
    // The page lists exactly the API's runs, live.
    await until("three rows", async () => (await page.locator("table.jobs-runs tbody tr").count()) === 3);
    const shown = await page.locator("table.jobs-runs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id")));
    expect(new Set(shown)).toEqual(new Set(runs.map((r) => r.id)));
  });

  it("pause and resume change the job's status", async () => {
    const jobId = await createJob({ name: "pausable", schedule: { kind: "CRON", cron: "0 3 * * *", timezone: "UTC" }, spec: { kind: "COMMAND", command: "true" } });
    const page = await signedInAt(`jobs/${jobId}`);
    const badge = page.locator(".page-head .badge");
    await badge.filter({ hasText: "active" }).waitFor();
    await page.getByRole("button", { name: "Pause" }).click();
    await badge.filter({ hasText: "paused" }).waitFor();
    let d = await gqlOk<{ job: { paused: boolean } }>(h.app.url, `query($id: ID!) { job(id: $id) { paused } }`, { id: jobId }, h.admin);
    expect(d.job.paused).toBe(true);
    await page.getByRole("button", { name: "Resume" }).click();
    await badge.filter({ hasText: "active" }).waitFor();
    d = await gqlOk(h.app.url, `query($id: ID!) { job(id: $id) { paused } }`, { id: jobId }, h.admin);
    expect(d.job.paused).toBe(false);
  });

  it("deletes after a confirmation that names the job, then shows the jobs list", async () => {
    const jobId = await idle("delete-me");
    const page = await signedInAt(`jobs/${jobId}`);
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("delete-me");
    // Cancel keeps it.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await gql(h.app.url, `query($id: ID!) { job(id: $id) { id } }`, { id: jobId }, h.admin)).errors).toBeUndefined();
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete job" }).click();
    await page.getByRole("heading", { name: "Jobs", exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/jobs");
    const r = await gql(h.app.url, `query($id: ID!) { job(id: $id) { id } }`, { id: jobId }, h.admin);
    expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(await page.getByRole("link", { name: "delete-me" }).count()).toBe(0);
  });

  it("the next fires are in the job's zone and the user's, with DST changes marked", async () => {
    // Monthly at noon in Berlin: ten months always cross a change between +01:00 and +02:00.
    const jobId = await createJob({ name: "berlin-monthly", schedule: { kind: "CRON", cron: "0 12 1 * *", timezone: "Europe/Berlin" }, spec: { kind: "COMMAND", command: "true" } });
    const page = await signedInAt(`jobs/${jobId}`);
    const table = page.locator("table.jobs-fires");
    await table.waitFor();
    expect(await table.locator("thead").textContent()).toContain("In Europe/Berlin");
    expect(await table.locator("tbody tr").count()).toBe(10);
    const first = (await table.locator("tbody tr").first().textContent()) ?? "";
    expect(first).toMatch(/12:00:00/);
    const marked = table.locator('tbody tr[data-dst="yes"]');
    expect(await marked.count()).toBeGreaterThanOrEqual(1);
    expect(await marked.first().textContent()).toMatch(/offset \+0[12]:00 → \+0[12]:00/);
    expect(await page.locator(".jobs-schedule-words").textContent()).toContain("Europe/Berlin");
  });

  it("the fire ledger shows each slot's outcome as a cell with text, and as a table", async () => {
    const jobId = await createJob({ name: "ledger", schedule: { kind: "INTERVAL", every: "PT1S" }, spec: { kind: "COMMAND", command: "true" } });
    await until("a fired slot", async () => (await runsOf(jobId)).length >= 1);
    await gqlOk(h.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: jobId }, h.admin);
    // Paused until the ledger records a slot skipped (at most 2.5 s: slots come every second).
    const skippedYet = async () => {
      const d = await gqlOk<{ job: { fires: { edges: Array<{ node: { outcome: string } }> } } }>(h.app.url, `query($id: ID!) { job(id: $id) { fires(first: 20) { edges { node { outcome } } } } }`, { id: jobId }, h.admin);
      return d.job.fires.edges.some((e) => e.node.outcome === "SKIPPED_PAUSED");
    };
    for (const end = Date.now() + 2500; Date.now() < end && !(await skippedYet()); ) await new Promise((r) => setTimeout(r, 100));
    await gqlOk(h.app.url, `mutation($id: ID!) { resumeJob(id: $id) { id } }`, { id: jobId }, h.admin);
    await gqlOk(h.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: jobId }, h.admin);
    const page = await signedInAt(`jobs/${jobId}`);
    const fired = page.locator('.jobs-heatmap li[data-outcome="FIRED"], .jobs-heatmap li[data-outcome="LATE"]');
    await fired.first().waitFor();
    const skipped = page.locator('.jobs-heatmap li[data-outcome="SKIPPED_PAUSED"]');
    await skipped.first().waitFor();
    expect(await skipped.first().getAttribute("title")).toMatch(/^Skipped: paused: slot /);
    expect(await skipped.first().textContent()).toMatch(/^Skipped: paused: slot /);
    expect(await page.locator(".jobs-legend").textContent()).toMatch(/Skipped: paused \(\d+\)/);

    // The keyboard: the heatmap is one tab stop (its newest cell), and the arrow keys move focus.
    const cells = page.locator(".jobs-heatmap li");
    const n = await cells.count();
    expect(n).toBeGreaterThanOrEqual(2);
    expect(await page.locator('.jobs-heatmap li[tabindex="0"]').count()).toBe(1);
    expect(await cells.nth(n - 1).getAttribute("tabindex")).toBe("0");
    const focused = () => page.evaluate(() => Array.prototype.indexOf.call(document.querySelector(".jobs-heatmap")!.children, document.activeElement));
    await page.getByLabel("Show as a table").focus();
    for (let i = 0; i < 5 && (await focused()) < 0; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe(n - 1);
    await page.keyboard.press("ArrowLeft");
    expect(await focused()).toBe(n - 2);
    expect(await page.locator('.jobs-heatmap li[tabindex="0"]').count()).toBe(1);
    expect(await cells.nth(n - 2).getAttribute("tabindex")).toBe("0");
    await page.keyboard.press("Home");
    expect(await focused()).toBe(0);
    await page.keyboard.press("ArrowLeft");
    expect(await focused()).toBe(0);
    await page.keyboard.press("End");
    expect(await focused()).toBe(n - 1);
    const perRow = await page.evaluate(() => {
      const c = [...document.querySelectorAll<HTMLElement>(".jobs-heatmap li")];
      return c.filter((e) => e.offsetTop === c[0]!.offsetTop).length;
    });
    await page.keyboard.press("ArrowUp");
    expect(await focused()).toBe(Math.max(0, n - 1 - perRow));
    await page.keyboard.press("ArrowDown");
    expect(await focused()).toBe(Math.min(n - 1, Math.max(0, n - 1 - perRow) + perRow));
    // Tab leaves the heatmap at once: no stop on every cell.
    await page.keyboard.press("Tab");
    expect(await focused()).toBe(-1);
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toBeGreaterThanOrEqual(0);

    await page.getByLabel("Show as a table").check();
    const rows = page.locator(".jobs-ledger-table tbody tr");
    await rows.first().waitFor();
    expect(await page.locator(".jobs-ledger-table").textContent()).toContain("Skipped: paused");
    const v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  });

  it("renders a job name full of HTML and script as text on the list and the job page", async () => {
    const name = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><b id="injected">bold</b>`;
    const jobId = await idle(name);
    const page = await signedInAt("jobs");
    const link = page.getByRole("link", { name });
    await link.waitFor();
    expect(await link.textContent()).toBe(name);
    const probe = () => page.evaluate(() => ({ injected: !!document.getElementById("injected"), xss: (window as unknown as { __xss?: number }).__xss ?? null, img: document.querySelectorAll('img[src="x"]').length, scripts: [...document.scripts].filter((s) => s.textContent?.includes("__xss")).length }));
    expect(await probe()).toEqual({ injected: false, xss: null, img: 0, scripts: 0 });
    await link.click();
    await page.getByRole("heading", { name }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/jobs/${jobId}`);
    expect(await page.locator("h1").textContent()).toBe(name);
    expect(await probe()).toEqual({ injected: false, xss: null, img: 0, scripts: 0 });
  });

  it("another user sees none of the admin's jobs, and not found at the admin's job's address", async () => {
    const jobId = await idle("admins-secret-job");
    await makeUser(h.app, h.admin, "jobs-stranger");
    const page = await signedInAt("jobs", "jobs-stranger", PASSWORD);
    await page.getByText("No jobs yet.").waitFor();
    expect(await page.locator("table.jobs-list").count()).toBe(0);
    expect(await page.getByText("admins-secret-job").count()).toBe(0);
    await openInApp(page, `/jobs/${jobId}`);
    await page.getByRole("heading", { name: "Job not found" }).waitFor();
    expect(await page.getByText("admins-secret-job").count()).toBe(0);
    await openInApp(page, `/jobs/${jobId}/edit`);
    await page.getByRole("heading", { name: "Job not found" }).waitFor();
  });

  it("filters the list by status and tag, newest first", async () => {
    const a = await createJob({ name: "filter-a", tags: ["f-tag"], schedule: { kind: "CRON", cron: "0 4 * * *" }, spec: { kind: "COMMAND", command: "true" } });
    const b = await createJob({ name: "filter-b", tags: ["f-tag"], schedule: { kind: "CRON", cron: "0 4 * * *" }, spec: { kind: "COMMAND", command: "true" } });
    await gqlOk(h.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: a }, h.admin);
    const page = await signedInAt("jobs");
    await page.getByLabel("Tag").fill("f-tag");
    await page.getByRole("button", { name: "Apply" }).click();
    await until("the tag filter", async () => (await page.locator("table.jobs-list tbody tr").count()) === 2);
    const ids = await page.locator("table.jobs-list tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-job-id")));
    expect(ids).toEqual([b, a]);
    expect(new URL(page.url()).search).toContain("tag=f-tag");
    await page.getByLabel("Status").selectOption("PAUSED");
    await page.getByRole("button", { name: "Apply" }).click();
    await until("the status filter", async () => (await page.locator("table.jobs-list tbody tr").count()) === 1);
    expect(await page.locator("table.jobs-list tbody tr").getAttribute("data-job-id")).toBe(a);
  });

  it("the jobs list shows each job's last run (not its status: both one-offs are completed) and filters by it", async () => {
    const failed = await createJob({ name: "last-run-failed", tags: ["lr-tag"], schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "exit 1" } });
    const ok = await createJob({ name: "last-run-ok", tags: ["lr-tag"], schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "true" } });
    for (const id of [failed, ok]) await until("the run's end", async () => (await runsOf(id)).some((r) => ["FAILED", "SUCCEEDED"].includes(r.status)));
    const page = await signedInAt("jobs?tag=lr-tag");
    const lastRun = (id: string) => page.locator(`tr[data-job-id="${id}"] td:nth-child(5) .badge`);
    await until("both rows", async () => (await page.locator("table.jobs-list tbody tr").count()) === 2);
    expect(await lastRun(failed).getAttribute("data-status")).toBe("FAILED");
    expect(await lastRun(ok).getAttribute("data-status")).toBe("SUCCEEDED");
    expect(await page.locator(`tr[data-job-id="${failed}"] td:nth-child(2) .badge`).getAttribute("data-status")).toBe("COMPLETED");
    await page.locator('select[name="lastRun"]').selectOption("problem");
    await page.getByRole("button", { name: "Apply" }).click();
    await until("the last-run filter", async () => (await page.locator("table.jobs-list tbody tr").count()) === 1);
    expect(await page.locator("table.jobs-list tbody tr").getAttribute("data-job-id")).toBe(failed);
    expect(new URL(page.url()).search).toContain("lastRun=problem");
  });

  it("the jobs list, a job's page and the editor have no serious accessibility violations", async () => {
    const jobId = await idle("axe-job");
    const page = await signedInAt("jobs");
    await page.locator("table.jobs-list").waitFor();
    let v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
    await openInApp(page, `/jobs/${jobId}`);
    await page.getByRole("button", { name: "Trigger now" }).click();
    await page.locator("table.jobs-runs tbody tr").first().waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
    await openInApp(page, `/jobs/${jobId}/edit`);
    await page.getByRole("button", { name: "Save changes" }).waitFor();
    await page.getByLabel("Cron").check();
    await page.getByLabel("Cron expression").fill("0 9 * * 1-5");
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
    await page.getByLabel("Kind", { exact: true }).selectOption("HTTP");
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  });
});

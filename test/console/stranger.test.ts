/**
 * The console as a stranger uses it: defects found by typing what a new user types into the job
 * editor (an hour and a half as 1.5 hours, a negative timeout, a fraction for a whole number, a
 * number too large). Each test is the reproduction of one defect.
 */
import { describe, expect, it } from "vitest";
import type { Page, WebSocketRoute } from "playwright-core";
import { gqlOk } from "../helpers/graphql.js";
import { makeJob, makeUser, PASSWORD } from "../helpers/accounts.js";
import { openLoggedIn, useConsole } from "./browser.js";

const h = useConsole();

async function jobsOf(token: string): Promise<Array<{ name: string; priority: number; spec: { timeout: string } }>> {
  const d = await gqlOk<{ jobs: { edges: Array<{ node: { name: string; priority: number; spec: { timeout: string } } }> } }>(
    h.app.url,
    `{ jobs(first: 100) { edges { node { name priority spec { timeout } } } } }`,
    {},
    token,
  );
  return d.jobs.edges.map((e) => e.node);
}

async function newJobPage(username: string): Promise<Page> {
  const page = await h.loggedIn(username, PASSWORD);
  page.setDefaultTimeout(20_000);
  await page.goto(`${h.base}jobs/new`);
  await page.getByLabel("Name", { exact: true }).waitFor();
  return page;
}

describe("the job editor as a stranger fills it", { timeout: 180_000 }, () => {
  it("1.5 hours of timeout is an hour and a half (it was sent as PT1.5H and refused: only seconds may have a fraction)", async () => {
    const { token } = await makeUser(h.app, h.admin, "stranger-hours");
    const page = await newJobPage("stranger-hours");
    await page.getByLabel("Name", { exact: true }).fill("ninety-minutes");
    await page.getByLabel("Command", { exact: true }).fill("true");
    await page.getByLabel("Timeout per attempt: amount").fill("1.5");
    await page.getByLabel("Timeout per attempt: unit").selectOption({ label: "hours" });
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f]{24}$/);
    expect((await jobsOf(token)).map((j) => [j.name, j.spec.timeout])).toEqual([["ninety-minutes", "PT1H30M"]]);
  });

  it("a negative or absurd timeout, a fraction of a priority and memory beyond any integer are refused by the form, saying what is allowed, and nothing is created", async () => {
    const { token } = await makeUser(h.app, h.admin, "stranger-numbers");
    const page = await newJobPage("stranger-numbers");
    const alert = page.locator("#job-form-error");
    await page.getByLabel("Name", { exact: true }).fill("numbers");
    await page.getByLabel("Command", { exact: true }).fill("true");

    const cases: Array<[() => Promise<void>, string]> = [
      // Before: `spec.timeout: "PT-5M" is not an ISO-8601 duration; use PnW or PnDTnHnMnS …` (a string the user never typed).
      [() => page.getByLabel("Timeout per attempt: amount").fill("-5"), "spec.timeout: must be above 0 (got -5 minutes)"],
      [() => page.getByLabel("Timeout per attempt: amount").fill("1e30"), "spec.timeout: must be at most 100 years, 36500 days (got 1e30 minutes)"],
      // Before: `Variable "$input" got invalid value 2.5 at "input.priority"; Int cannot represent non-integer value: 2.5`.
      [
        async () => {
          await page.getByLabel("Timeout per attempt: amount").fill("");
          await page.getByLabel("Priority (0–9)").fill("2.5");
        },
        "priority: must be a whole number from 0 to 9 (got 2.5)",
      ],
      // Before: `… Int cannot represent non 32-bit signed integer value: 99999999999`.
      [
        async () => {
          await page.getByLabel("Priority (0–9)").fill("");
          await page.getByLabel("Memory (MiB)").fill("99999999999");
        },
        "spec.resources.memoryMb: must be a whole number of MiB from 16 to 4194304 (got 99999999999)",
      ],
    ];
    for (const [fill, says] of cases) {
      await fill();
      await page.getByRole("button", { name: "Create job" }).click();
      await expect.poll(() => alert.innerText(), { timeout: 10_000 }).toBe(says);
      expect(page.url()).toMatch(/\/jobs\/new$/);
    }
    expect(await jobsOf(token)).toEqual([]);
    // The same form, corrected, creates the job.
    await page.getByLabel("Memory (MiB)").fill("256");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f]{24}$/);
    expect((await jobsOf(token)).map((j) => j.name)).toEqual(["numbers"]);
  });
});

/**
 * A page of its own (not the harness's, which fails a test on any console error): these tests make
 * the network fail on purpose, and the browser logs each failed load. Page errors are collected.
 */
async function ownPage(username: string): Promise<{ page: Page; pageErrors: string[]; close(): Promise<void> }> {
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await openLoggedIn(page, h.base, await h.session(username, PASSWORD));
  return { page, pageErrors, close: () => context.close() };
}

describe("lists typed as lines, as a stranger types them", { timeout: 180_000 }, () => {
  it("an environment line without = and a header line without : are refused naming the line and NAME=value (they were sent as a name with an empty value)", async () => {
    const { token } = await makeUser(h.app, h.admin, "stranger-env");
    const page = await newJobPage("stranger-env");
    const alert = page.locator("#job-form-error");
    await page.getByLabel("Name", { exact: true }).fill("env-lines");
    await page.getByLabel("Command", { exact: true }).fill("env");
    const env = page.getByLabel("Environment, NAME=value per line");
    await env.fill("GREETING=hello\n\nDEBUG");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => alert.innerText(), { timeout: 10_000 }).toBe('spec.env: line 3, "DEBUG", has no "=": write each line as NAME=value (NAME= for an empty value)');
    // Next to the field too.
    expect(await env.getAttribute("aria-invalid")).toBe("true");
    await env.fill("GREETING=hello\n=1");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => alert.innerText(), { timeout: 10_000 }).toBe('spec.env: line 2, "=1", has no name before "=": write each line as NAME=value (NAME= for an empty value)');
    expect(await jobsOf(token)).toEqual([]);
    // A name given twice: the first line's value was dropped, silently.
    await env.fill("MODE=fast\nGREETING=hello\nMODE=safe");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => alert.innerText(), { timeout: 10_000 }).toBe('spec.env: line 3, "MODE=safe", names MODE again (line 1): give each variable once');
    expect(await jobsOf(token)).toEqual([]);

    // An HTTP job's headers, the same way.
    await env.fill("");
    await page.getByLabel("Kind", { exact: true }).selectOption("HTTP");
    await page.getByLabel("URL", { exact: true }).fill("https://hooks.example.com/kairos");
    await page.getByLabel("Headers, Name: value per line").fill("Content-Type: application/json\nX-Token abc");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => alert.innerText(), { timeout: 10_000 }).toBe('spec.http.headers: line 2, "X-Token abc", has no ":": write each line as Name: value (Name: for an empty value)');
    expect(await jobsOf(token)).toEqual([]);
    await page.getByLabel("Headers, Name: value per line").fill("X-Token: abc\nContent-Type: application/json\nx-token: def");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => alert.innerText(), { timeout: 10_000 }).toBe('spec.http.headers: line 3, "x-token: def", names x-token again (line 1, whatever the case): give each header once');
    expect(await jobsOf(token)).toEqual([]);

    // Corrected (an empty value written as NAME=), it is created with what was typed.
    await page.getByLabel("Headers, Name: value per line").fill("Content-Type: application/json\nX-Token: abc");
    await page.getByRole("button", { name: "Create job" }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f]{24}$/);
    expect((await jobsOf(token)).map((j) => j.name)).toEqual(["env-lines"]);
  });
});

describe("an address a stranger edits by hand", { timeout: 180_000 }, () => {
  it("/runs?status=BOGUS says the status is none, naming those there are, and that every run is shown (it showed every run as if nothing was asked)", async () => {
    const { token } = await makeUser(h.app, h.admin, "stranger-status");
    const jobId = await makeJob(h.app, token, "status-job");
    const { triggerJob } = await gqlOk<{ triggerJob: { id: string } }>(h.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, token);
    await expect
      .poll(async () => (await gqlOk<{ run: { status: string } }>(h.app.url, `query($id: ID!) { run(id: $id) { status } }`, { id: triggerJob.id }, token)).run.status, { timeout: 30_000 })
      .toBe("SUCCEEDED");
    const page = await h.loggedInAt("runs?status=BOGUS&trigger=sometimes", "stranger-status", PASSWORD);
    page.setDefaultTimeout(20_000);
    const notice = page.locator(".ignored-filters");
    await expect.poll(() => notice.innerText()).toBe(
      "status=BOGUS in the address is not a run status; allowed: PENDING, SCHEDULED, QUEUED, RUNNING, CANCELLING, RETRY_SCHEDULED, SUCCEEDED, FAILED, TIMED_OUT, CANCELLED, WITHDRAWN, DEAD. Showing runs of any status.\n" +
        "trigger=sometimes in the address is not a trigger; allowed: SCHEDULE, MANUAL, RETRY, BACKFILL. Showing runs of any trigger.",
    );
    expect(await notice.getAttribute("role")).toBe("alert");
    // Visibly unfiltered: the choices say "any", and the run is listed.
    expect(await page.locator("#rf-status").inputValue()).toBe("");
    await page.locator(`tr[data-run-id="${triggerJob.id}"]`).waitFor();
    // Choosing a status writes the address anew, and the notice goes.
    await page.locator("#rf-status").selectOption("SUCCEEDED");
    await page.waitForURL(/\/runs\?status=SUCCEEDED$/);
    await expect.poll(() => notice.count()).toBe(0);
    await page.locator(`tr[data-run-id="${triggerJob.id}"]`).waitFor();

    // A status in lower case, typed by hand, is that status: no notice, and only its runs.
    const lower = await h.loggedInAt("runs?status=failed", "stranger-status", PASSWORD);
    await expect.poll(() => lower.locator("#rf-status").inputValue()).toBe("FAILED");
    await lower.getByText("No run matches these filters.").waitFor();
    expect(await lower.locator(".ignored-filters").count()).toBe(0);
  });

  it("/audit?from=yesterday says the time is none and that the whole trail is shown (it showed every entry as if nothing was asked); /runs?from=Nov 28 is no time either (it was read as 2001-11-28)", async () => {
    const { token } = await makeUser(h.app, h.admin, "stranger-audit-time");
    await makeJob(h.app, token, "audit-time-job");
    const page = await h.loggedInAt("audit?from=yesterday&to=2026-02-30", "stranger-audit-time", PASSWORD);
    page.setDefaultTimeout(20_000);
    const notice = page.locator(".ignored-filters");
    await expect.poll(() => notice.innerText()).toBe(
      "from=yesterday in the address is not a date and time (such as 2026-01-31T09:00:00Z). Showing entries from any time.\n" +
        "to=2026-02-30 in the address is not a date and time (such as 2026-01-31T09:00:00Z). Showing entries up to any time.",
    );
    expect(await notice.getAttribute("role")).toBe("alert");
    // Visibly unfiltered: the time boxes are empty and the user's call is listed.
    expect(await page.locator("#af-from").inputValue()).toBe("");
    await page.locator('table.audit-table tr.audit-row[data-action="createJob"]').waitFor();

    const runs = await h.loggedInAt("runs?from=Nov%2028", "stranger-audit-time", PASSWORD);
    await expect.poll(() => runs.locator(".ignored-filters").innerText()).toBe("from=Nov 28 in the address is not a date and time (such as 2026-01-31T09:00:00Z). Showing runs from any time.");
    expect(await runs.locator("#rf-from").inputValue()).toBe("");
  });
});

describe("the schedule as a stranger leaves it", { timeout: 180_000 }, () => {
  it("once at a time with no time given is refused by the form, naming the field (it sent \"\" and showed GraphQL's Variable \"$input\" got invalid value)", async () => {
    const { token } = await makeUser(h.app, h.admin, "stranger-at");
    const page = await newJobPage("stranger-at");
    await page.getByLabel("Name", { exact: true }).fill("no-time");
    await page.getByLabel("Command", { exact: true }).fill("true");
    await page.getByLabel("Once, at a time").check();
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => page.locator("#job-form-error").innerText(), { timeout: 10_000 }).toBe("schedule.at: give the date and time to run at (in this browser's time zone)");
    await page.getByLabel("Every interval").check();
    await page.getByLabel("Every: amount").fill("");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect.poll(() => page.locator("#job-form-error").innerText(), { timeout: 10_000 }).toBe("schedule.every: give how often to run, a number above 0");
    expect(await jobsOf(token)).toEqual([]);
  });
});

describe("a tab left open while the server goes away", { timeout: 180_000 }, () => {
  it("the runs list stops saying Live while its connection is down, and says it again once reconnected (it said Live throughout)", async () => {
    await makeUser(h.app, h.admin, "stranger-live");
    const { page, close } = await ownPage("stranger-live");
    try {
      // Every WebSocket of the page goes through here: passed on to the server, or refused while "down".
      let down = false;
      const open = new Set<WebSocketRoute>();
      await page.routeWebSocket(/\/graphql$/, (ws) => {
        if (down) return ws.close({ code: 1012, reason: "service restart" });
        open.add(ws);
        ws.connectToServer();
      });
      await page.goto(`${h.base}runs`);
      const note = page.locator(".live-note");
      await expect.poll(() => note.innerText()).toBe("Live");
      expect(open.size).toBeGreaterThan(0);
      // The server goes away: the open connection closes and every new one is refused.
      down = true;
      for (const ws of open) await ws.close({ code: 1012, reason: "service restart" });
      open.clear();
      await expect.poll(() => note.innerText(), { timeout: 15_000 }).toBe("Live updates interrupted, reconnecting…");
      // It comes back: graphql-ws reconnects by itself (backoff up to 10 s) and the note says Live again.
      down = false;
      await expect.poll(() => note.innerText(), { timeout: 30_000 }).toBe("Live");
      expect(open.size).toBeGreaterThan(0);
    } finally {
      await close();
    }
  });

  it("a view whose code cannot be loaded says so, with Reload, instead of blanking the whole console", async () => {
    await makeUser(h.app, h.admin, "stranger-chunk");
    const { page, pageErrors, close } = await ownPage("stranger-chunk");
    try {
      await page.getByRole("heading", { name: "Runs" }).waitFor();
      // The jobs view's chunk is gone (the server restarting, or a new build since the tab opened).
      const jobsChunk = /\/assets\/(jobs-view-[^/]*\.js|jobs-[^/]*\.css)$/;
      await page.route(jobsChunk, (r) => r.abort());
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).click();
      await page.getByRole("heading", { name: "This page could not be shown" }).waitFor();
      expect(await page.getByRole("alert").first().innerText()).toContain("could not load this page from the server: the server may be restarting, or it was updated since this tab was opened");
      await expect.poll(() => page.getByRole("button", { name: "Reload" }).isVisible()).toBe(true);
      // The frame still works: another page shows.
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" }).click();
      await page.getByRole("heading", { name: "Runs" }).waitFor();
      expect(await page.getByRole("heading", { name: "This page could not be shown" }).count()).toBe(0);
      // Reload, the chunk back, opens the jobs view.
      await page.unroute(jobsChunk);
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).click();
      await page.getByRole("button", { name: "Reload" }).click();
      await page.getByRole("heading", { name: "Jobs" }).waitFor();
      expect(pageErrors.filter((e) => !/dynamically imported module|preload CSS/i.test(e))).toEqual([]);
    } finally {
      await close();
    }
  });
});

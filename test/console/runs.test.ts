/**
 * The console's runs: a run page following its status and log live, the runs list live and
 * filtered, bulk cancel with a confirmation that says how many, output full of HTML shown as text,
 * another user's runs invisible, and no serious accessibility violations.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Page, WebSocketRoute } from "playwright-core";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { gqlOk } from "../helpers/graphql.js";
import { axeViolations, describeViolations, openLoggedIn, useConsole } from "./browser.js";

const h = useConsole();

const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;
const TRIGGER = `mutation($id: ID!) { triggerJob(id: $id) { id status } }`;
const RUN = `query($id: ID!) { run(id: $id) { id status } }`;

/** A job that runs only when triggered (its one fire is far away). */
async function makeJob(name: string, command: string, opts: { pool?: string; token?: string; maxAttempts?: number } = {}): Promise<string> {
  const input = {
    name,
    schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" },
    spec: { kind: "COMMAND", command, ...(opts.pool ? { pool: opts.pool } : {}) },
    ...(opts.maxAttempts ? { retry: { maxAttempts: opts.maxAttempts, backoff: "FIXED", initial: "PT1S" } } : {}),
  };
  const d = await gqlOk<{ createJob: { id: string } }>(h.app.url, CREATE, { input }, opts.token ?? h.admin);
  return d.createJob.id;
}

async function trigger(jobId: string, token = h.admin): Promise<string> {
  const d = await gqlOk<{ triggerJob: { id: string } }>(h.app.url, TRIGGER, { id: jobId }, token);
  return d.triggerJob.id;
}

async function runStatus(id: string, token = h.admin): Promise<string> {
  return (await gqlOk<{ run: { status: string } }>(h.app.url, RUN, { id }, token)).run.status;
}

async function waitStatus(id: string, statuses: string[], token = h.admin, ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await runStatus(id, token);
    if (statuses.includes(s)) return s;
    if (Date.now() > end) throw new Error(`run ${id} is ${s}, not ${statuses.join("/")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const row = (page: Page, runId: string) => page.locator(`tr[data-run-id="${runId}"]`);
const rowStatus = (page: Page, runId: string) => row(page, runId).locator(".badge").getAttribute("data-status");

/** Marks the page; a reload loses the mark. */
async function mark(page: Page): Promise<void> {
  await page.evaluate(() => ((globalThis as unknown as { __kairosMark: number }).__kairosMark = 1));
}
async function stillMarked(page: Page): Promise<boolean> {
  return page.evaluate(() => (globalThis as unknown as { __kairosMark?: number }).__kairosMark === 1);
}

const uniq = () => randomUUID().slice(0, 8);

describe("console: runs", { timeout: 90_000 }, () => {
  it("a run page opened while the run waits shows it go RUNNING then SUCCEEDED, and its log lines as they are printed, without a reload", async () => {
    // The tab and the session are ready before the run is made: after it, only the page's load.
    const [page, session] = await Promise.all([h.page(), h.session()]);
    const job = await makeJob(`printer-${uniq()}`, "sleep 2; for i in 1 2 3 4 5; do echo line-$i; sleep 0.4; done");
    const runId = await trigger(job);
    await openLoggedIn(page, h.base, session, `runs/${runId}`);
    await page.getByRole("heading", { level: 1, name: /Run of printer-/ }).waitFor();
    await mark(page);
    const badge = page.locator(".page-head .badge");
    // It was opened before it ended (the program takes ~3 s).
    expect(["QUEUED", "PENDING", "RUNNING"]).toContain(await badge.getAttribute("data-status"));

    await page.locator('.page-head .badge[data-status="RUNNING"]').waitFor({ timeout: 15_000 });
    const log = page.getByTestId("run-log");
    await log.getByText("line-1", { exact: true }).waitFor({ timeout: 15_000 });
    // line-1 is shown while the run still prints: the status is still RUNNING and line-5 not yet out.
    expect(await badge.getAttribute("data-status")).toBe("RUNNING");
    expect(await log.textContent()).not.toContain("line-5");

    await page.locator('.page-head .badge[data-status="SUCCEEDED"]').waitFor({ timeout: 15_000 });
    await log.getByText("line-5", { exact: true }).waitFor();
    const text = (await log.textContent()) ?? "";
    expect(text.indexOf("line-1")).toBeLessThan(text.indexOf("line-5"));
    // Each line once: the live feed repeated nothing.
    expect(text.match(/line-3/g)).toHaveLength(1);
    // The facts followed too: exit code 0, an attempt on a node.
    await page.locator("dl.facts").getByText("0", { exact: true }).first().waitFor();
    expect(await page.locator("table.attempts tbody tr").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Cancel run" }).isDisabled()).toBe(true);
    await page.getByText("It has ended.").waitFor();
    expect(await stillMarked(page)).toBe(true);

    // The whole log downloads (assembled from Run.logs: it is not archived yet, or from its archive).
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download log" }).click()]);
    const path = await download.path();
    const body = await readFile(path);
    const content = download.suggestedFilename().endsWith(".gz") ? (await import("node:zlib")).gunzipSync(body).toString() : body.toString();
    expect(content).toBe("line-1\nline-2\nline-3\nline-4\nline-5\n");
  });

  it("the runs list shows a new run at the top and its status changes in place, without a reload", async () => {
    const name = `live-${uniq()}`;
    const job = await makeJob(name, "sleep 0.8");
    const page = await h.loggedInAt("runs");
    await page.getByRole("table", { name: /Runs, newest first/ }).waitFor();
    await page.getByRole("status").filter({ hasText: /loaded/ }).waitFor();
    await mark(page);

    const runId = await trigger(job);
    await row(page, runId).waitFor({ timeout: 10_000 });
    // At the top: the first data row of the table.
    expect(await page.locator("tr.vrow").first().getAttribute("data-run-id")).toBe(runId);
    await expect.poll(() => rowStatus(page, runId), { timeout: 15_000 }).toBe("SUCCEEDED");
    expect(await row(page, runId).getByRole("link", { name }).getAttribute("href")).toBe(`/jobs/${job}`);
    expect(await stillMarked(page)).toBe(true);
  });

  it("filters the runs list by name and by status, in the address (a reload keeps them)", async () => {
    const tag = uniq();
    const ok = await makeJob(`filt-ok-${tag}`, "true");
    const bad = await makeJob(`filt-bad-${tag}`, "exit 3");
    const other = await makeJob(`elsewhere-${tag}`, "true");
    const okRun = await trigger(ok);
    const badRun = await trigger(bad);
    const otherRun = await trigger(other);
    await Promise.all([waitStatus(okRun, ["SUCCEEDED"]), waitStatus(badRun, ["FAILED", "DEAD", "RETRY_SCHEDULED"]), waitStatus(otherRun, ["SUCCEEDED"])]);

    const page = await h.loggedInAt("runs");
    await row(page, otherRun).waitFor();
    await page.getByLabel("Name").fill(`filt-`);
    await page.getByLabel("Name").press("Enter");
    await expect.poll(() => new URL(page.url()).searchParams.get("name")).toBe("filt-");
    await row(page, okRun).waitFor();
    await row(page, badRun).waitFor();
    await row(page, otherRun).waitFor({ state: "detached" });
    const names = await page.locator("tr.vrow td.c-job").allTextContents();
    expect(names.length).toBeGreaterThanOrEqual(2);
    for (const n of names) expect(n).toContain("filt-");

    // Status too, on top of the name.
    await page.getByLabel("Status").selectOption("SUCCEEDED");
    await expect.poll(() => new URL(page.url()).searchParams.get("status")).toBe("SUCCEEDED");
    await row(page, badRun).waitFor({ state: "detached" });
    await row(page, okRun).waitFor();
    for (const s of await page.locator("tr.vrow .badge").evaluateAll((els) => els.map((e) => e.getAttribute("data-status")))) expect(s).toBe("SUCCEEDED");

    // The address keeps them: a reload (or a shared link) shows the same list, and the credential is not in it.
    await page.reload();
    await row(page, okRun).waitFor();
    expect(await page.getByLabel("Name").inputValue()).toBe("filt-");
    expect(await page.getByLabel("Status").inputValue()).toBe("SUCCEEDED");
    expect(await row(page, badRun).count()).toBe(0);
    expect(await row(page, otherRun).count()).toBe(0);
    expect(page.url()).not.toMatch(/token|bearer|key=/i);

    // Failed ones only, across jobs.
    await page.getByLabel("Status").selectOption("FAILED");
    await page.getByLabel("Name").fill("");
    await page.getByLabel("Name").press("Enter");
    await expect.poll(() => new URL(page.url()).searchParams.get("name")).toBe(null);
    await page.locator("tr.vrow").first().waitFor();
    for (const s of await page.locator("tr.vrow .badge").evaluateAll((els) => els.map((e) => e.getAttribute("data-status")))) expect(s).toBe("FAILED");
  });

  it("bulk-cancels selected runs after a confirmation that says how many, and reports the one it could not", async () => {
    const tag = uniq();
    // A pool no executor serves: its runs wait QUEUED, cancellable.
    const waiting = await makeJob(`bulk-${tag}-waiting`, "true", { pool: `nowhere-${tag}` });
    const queued = [await trigger(waiting), await trigger(waiting), await trigger(waiting)];
    const done = await makeJob(`bulk-${tag}-done`, "true");
    const doneRun = await trigger(done);
    await waitStatus(doneRun, ["SUCCEEDED"]);
    for (const id of queued) expect(await runStatus(id)).toBe("QUEUED");

    const page = await h.loggedInAt(`runs?name=bulk-${tag}`);
    for (const id of [...queued, doneRun]) await row(page, id).waitFor();
    expect(await page.locator("tr.vrow").count()).toBe(4);

    await page.getByRole("checkbox", { name: "Select all 4 loaded runs" }).check();
    await page.getByText("4 runs selected").waitFor();
    await page.getByRole("button", { name: "Cancel selected" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("heading", { name: "Cancel 4 runs?" }).waitFor();
    await dialog.getByRole("button", { name: "Cancel 4 runs" }).click();

    const outcome = page.locator(".bulk-outcome");
    await outcome.waitFor();
    expect(await outcome.textContent()).toMatch(/3 cancelled, 1 failed/);
    expect(await outcome.textContent()).toContain(doneRun);
    for (const id of queued) await expect.poll(() => rowStatus(page, id)).toBe("CANCELLED");
    expect(await rowStatus(page, doneRun)).toBe("SUCCEEDED");
    for (const id of queued) expect(await runStatus(id)).toBe("CANCELLED");

    // Shift-click selects a range.
    await page.getByRole("checkbox", { name: `Select run ${queued[2]} of bulk-${tag}-waiting` }).waitFor();
    const boxes = page.locator("tr.vrow input[type=checkbox]");
    await boxes.nth(0).click();
    await boxes.nth(2).click({ modifiers: ["Shift"] });
    await page.getByText("3 runs selected").waitFor();
  });

  it("a job name and log output full of HTML and script tags render as text, with ANSI colours as classes", async () => {
    const evilName = `<img src=x onerror=alert(1)><script>alert(2)</script> ${uniq()}`;
    const job = await makeJob(evilName, "printf '\\033[31m<b>bold</b><script>alert(3)</script>\\033[0m plain\\n'");
    const runId = await trigger(job);
    await waitStatus(runId, ["SUCCEEDED"]);

    const page = await h.loggedIn();
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const scriptsBefore = async () => page.locator("script").count();

    await page.goto(`${h.base}runs?job=${job}`);
    await row(page, runId).waitFor();
    await row(page, runId).getByText(evilName, { exact: true }).waitFor();

    await page.goto(`${h.base}runs/${runId}`);
    await page.getByRole("heading", { level: 1, name: `Run of ${evilName}` }).waitFor();
    const log = page.getByTestId("run-log");
    await log.getByText("<b>bold</b><script>alert(3)</script>").waitFor();
    // Coloured by class, the text untouched; the escape codes are gone.
    const red = log.locator("span.ansi-fg-1");
    expect(await red.textContent()).toBe("<b>bold</b><script>alert(3)</script>");
    expect(await log.textContent()).not.toContain("\u001b");
    expect(await log.textContent()).toContain(" plain");

    // Nothing of it became an element, and nothing ran.
    expect(await page.locator("img").count()).toBe(0);
    expect(await page.locator("b").count()).toBe(0);
    const scripts = await page.locator("script").evaluateAll((els) => els.map((e) => (e as HTMLScriptElement).src || e.textContent));
    for (const s of scripts) expect(s).not.toMatch(/alert/);
    expect(await scriptsBefore()).toBe(scripts.length);
    expect(await log.locator("[style]").count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it("another user sees only their own runs, and a not-found page at the admin's run", async () => {
    const tag = uniq();
    const user = await makeUser(h.app, h.admin, `runner-${tag}`);
    const mine = await makeJob(`mine-${tag}`, "true", { token: user.token });
    const theirs = await makeJob(`admins-${tag}`, "true");
    const myRun = await trigger(mine, user.token);
    const adminRun = await trigger(theirs);
    const [page] = await Promise.all([h.loggedInAt("runs", `runner-${tag}`, PASSWORD), waitStatus(myRun, ["SUCCEEDED"], user.token), waitStatus(adminRun, ["SUCCEEDED"])]);
    await row(page, myRun).waitFor();
    expect(await row(page, adminRun).count()).toBe(0);
    const jobs = await page.locator("tr.vrow td.c-job").allTextContents();
    expect(jobs.every((j) => j === `mine-${tag}`)).toBe(true);

    // A run the admin starts now does not arrive live either.
    const later = await trigger(theirs);
    await waitStatus(later, ["SUCCEEDED"]);
    const mineLater = await trigger(mine, user.token);
    await row(page, mineLater).waitFor();
    expect(await row(page, later).count()).toBe(0);

    await page.goto(`${h.base}runs/${adminRun}`);
    await page.getByRole("heading", { level: 1, name: "Run not found" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/not found|no run/i);
    expect(await page.locator("body").textContent()).not.toContain(`admins-${tag}`);
  });

  it("a run that used up its attempts shows both on its page and in the dead letters, where it is retried", async () => {
    const name = `dies-${uniq()}`;
    const job = await makeJob(name, "echo trying; exit 4", { maxAttempts: 2 });
    const runId = await trigger(job);
    await waitStatus(runId, ["DEAD"], h.admin, 30_000);

    const page = await h.loggedInAt(`runs/${runId}`);
    await page.locator('.page-head .badge[data-status="DEAD"]').waitFor();
    // Two attempts, each with its node, start and end: the first retried, the second the end.
    const attempts = page.locator("table.attempts tbody tr");
    await expect.poll(() => attempts.count()).toBe(2);
    expect(await attempts.nth(0).locator(".badge").getAttribute("data-status")).toBe("RETRY_SCHEDULED");
    expect(await attempts.nth(1).locator(".badge").getAttribute("data-status")).toBe("DEAD");
    for (const i of [0, 1]) expect(await attempts.nth(i).locator("time").count()).toBe(2);
    expect(await attempts.nth(1).textContent()).toContain("exit code 4");
    // Each attempt's log can be chosen.
    expect(await page.getByLabel("Attempt").locator("option").count()).toBe(3);
    expect(await page.getByRole("button", { name: "Cancel run" }).isDisabled()).toBe(true);

    await page.goto(`${h.base}dead-letters`);
    await row(page, runId).waitFor();
    expect(await row(page, runId).locator("td.c-attempt").textContent()).toBe("2/2");
    await page.getByRole("checkbox", { name: `Select run ${runId} of ${name}` }).check();
    await page.getByRole("button", { name: "Retry selected" }).click();
    await page.getByRole("dialog").getByRole("heading", { name: "Retry 1 run?" }).waitFor();
    await page.getByRole("dialog").getByRole("button", { name: "Retry 1 run" }).click();
    await page.locator(".bulk-outcome").getByText("1 retried").waitFor();
    // It moves on in place: a third attempt (which fails again, so DEAD once more).
    await expect.poll(() => row(page, runId).locator("td.c-attempt").textContent(), { timeout: 20_000 }).toMatch(/^3\//);
    await waitStatus(runId, ["DEAD"]);
    await expect.poll(() => rowStatus(page, runId)).toBe("DEAD");
  });

  it("a chatty run's log keeps the page to the last 5,000 lines, followed to the end, and says where the rest is", async () => {
    const job = await makeJob(`chatty-${uniq()}`, "seq 1 20000");
    const runId = await trigger(job);
    await waitStatus(runId, ["SUCCEEDED"]);
    const page = await h.loggedInAt(`runs/${runId}`);
    const log = page.getByTestId("run-log");
    await log.getByText("20000", { exact: true }).waitFor();
    const lines = await log.locator(".log-line").count();
    expect(lines).toBeLessThanOrEqual(5_000);
    expect(lines).toBeGreaterThan(4_000);
    await log.getByText(/earlier lines are not shown/).waitFor();
    expect(await log.getByText("1", { exact: true }).count()).toBe(0);
    // Follow is on: the newest line is in view.
    expect(await page.getByLabel("Follow").isChecked()).toBe(true);
    await expect.poll(() => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(30);
    // Scrolling up turns follow off.
    await log.evaluate((el) => el.scrollTo(0, 0));
    await expect.poll(() => page.getByLabel("Follow").isChecked()).toBe(false);
  });

  it("the runs list, a run page and the dead letters have no serious accessibility violations", async () => {
    const job = await makeJob(`axe-${uniq()}`, "echo '\\033[32mgreen\\033[0m'; echo err >&2");
    const runId = await trigger(job);
    // The page opens while the run ends (the list follows it live).
    const [page] = await Promise.all([h.loggedInAt("runs"), waitStatus(runId, ["SUCCEEDED"])]);
    await row(page, runId).waitFor();
    await page.getByRole("checkbox", { name: new RegExp(`Select run ${runId}`) }).check();
    let v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);

    await page.goto(`${h.base}runs/${runId}`);
    await page.getByTestId("run-log").getByText("green").waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);

    await page.goto(`${h.base}dead-letters`);
    await page.getByRole("table", { name: /Dead letters/ }).waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  });

  it("a change the live feed did not deliver, before it connected or while it was down, shows once it connects again", async () => {
    const job = await makeJob(`unserved-${uniq()}`, "true", { pool: `nobody-serves-${uniq()}` });
    const early = await trigger(job);
    const dropped = await trigger(job);
    const page = await h.loggedIn();
    // The page's WebSocket goes through the test: it can hold the server's messages (the
    // acknowledgement too, so the page's subscriptions are not even sent) or drop its events.
    let hold = true;
    let drop = false;
    let droppedCancel = 0;
    const held: Array<() => void> = [];
    const sockets: WebSocketRoute[] = [];
    await page.routeWebSocket(/\/graphql$/, (ws) => {
      sockets.push(ws);
      const server = ws.connectToServer();
      server.onMessage((m) => {
        if (drop && typeof m === "string" && m.includes('"type":"next"')) {
          if (m.includes(dropped) && m.includes("CANCELLED")) droppedCancel++;
          return;
        }
        if (hold) held.push(() => ws.send(m));
        else ws.send(m);
      });
    });
    await page.goto(`${h.base}runs?job=${job}`);
    await row(page, dropped).waitFor();
    expect(await rowStatus(page, early)).toBe("QUEUED");

    // Cancelled after the list was read and before the live feed is in place.
    await gqlOk(h.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: early }, h.admin);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await rowStatus(page, early)).toBe("QUEUED");
    hold = false;
    for (const send of held.splice(0)) send();
    await row(page, early).locator('.badge[data-status="CANCELLED"]').waitFor({ timeout: 10_000 });

    // Cancelled while the feed's events are lost, then the connection drops and comes back.
    drop = true;
    await gqlOk(h.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: dropped }, h.admin);
    await waitStatus(dropped, ["CANCELLED"]);
    // The feed's event for it reached the page's socket and was lost there.
    await expect.poll(() => droppedCancel, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await rowStatus(page, dropped)).toBe("QUEUED");
    drop = false;
    await sockets[0]!.close({ code: 1012, reason: "test: connection dropped" });
    await row(page, dropped).locator('.badge[data-status="CANCELLED"]').waitFor({ timeout: 15_000 });
    expect(sockets.length).toBeGreaterThan(1);
  });
});

/**
 * The console in the dark colour scheme (`prefers-color-scheme: dark`, as a browser set to dark
 * asks for it): axe-core's WCAG 2 A/AA check of every view, with runs of every common status, a
 * job's fire ledger, a DAG, and the login page. The light scheme is checked in each area's tests.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { gqlOk } from "../helpers/graphql.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

const gql = <T>(query: string, variables: Record<string, unknown> = {}) => gqlOk<T>(h.app.url, query, variables, h.admin);

async function job(name: string, command: string, pool?: string): Promise<string> {
  const input = { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command, ...(pool ? { pool } : {}) } };
  return (await gql<{ createJob: { id: string } }>(`mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: input })).createJob.id;
}
const trigger = async (id: string) => (await gql<{ triggerJob: { id: string } }>(`mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id })).triggerJob.id;

async function until(what: string, f: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function check(page: Page, view: string): Promise<void> {
  const v = await axeViolations(page);
  expect(v, `${view} (dark): ${describeViolations(v)}`).toEqual([]);
}

/** Moves inside the app (no reload) and waits for the view's heading. */
async function go(page: Page, path: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((p) => {
    history.pushState(null, "", p);
    dispatchEvent(new PopStateEvent("popstate"));
  }, path);
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
}

describe("console: the dark colour scheme", () => {
  it("every view has no serious accessibility violations in the dark scheme", async () => {
    // A job with slots in its ledger: it ticks while the runs below are made.
    const ticking = (await gql<{ createJob: { id: string } }>(`mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: { name: "dark-ticking", schedule: { kind: "INTERVAL", every: "PT1S" }, spec: { kind: "COMMAND", command: "true" } } })).createJob.id;
    const ticked = Date.now();
    // Runs that SUCCEEDED, FAILED, stay QUEUED (a pool no node serves) and were CANCELLED.
    const ok = await trigger(await job("dark-ok", "true"));
    const bad = await trigger(await job("dark-bad", "exit 3"));
    const idle = await job("dark-queued", "true", "dark-nowhere");
    await trigger(idle);
    const cancelled = await trigger(idle);
    await gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: cancelled });
    const status = async (id: string) => (await gql<{ run: { status: string } }>(`query($id: ID!) { run(id: $id) { status } }`, { id })).run.status;
    await until("the runs to end", async () => (await status(ok)) === "SUCCEEDED" && ["FAILED", "DEAD"].includes(await status(bad)));
    await new Promise((r) => setTimeout(r, Math.max(0, ticked + 2500 - Date.now())));
    await gql(`mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: ticking });

    const anonymous = await h.page();
    await anonymous.emulateMedia({ colorScheme: "dark" });
    await anonymous.goto(h.base);
    await anonymous.getByLabel("Username").waitFor();
    expect(await anonymous.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)).toBe(true);
    await check(anonymous, "login");

    const page = await h.loggedIn();
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)).toBe(true);
    page.setDefaultTimeout(20_000);
    await page.locator(`tr[data-run-id="${bad}"]`).waitFor();
    await page.locator(`tr[data-run-id="${cancelled}"]`).waitFor();
    await check(page, "runs");
    await go(page, `/runs/${bad}`, /Run/);
    await page.locator("main [data-status]").first().waitFor();
    await check(page, "a failed run");
    await go(page, "/jobs", "Jobs");
    await page.getByRole("link", { name: "dark-ticking" }).waitFor();
    await check(page, "jobs");
    await go(page, `/jobs/${ticking}`, /dark-ticking/);
    await page.locator(".jobs-heatmap li").first().waitFor();
    await check(page, "a job with its ledger");
    await go(page, "/jobs/new", /job/i);
    await check(page, "the job editor");
    await go(page, "/dags", "DAGs");
    await check(page, "DAGs");
    await go(page, "/nodes", "Nodes");
    await check(page, "nodes");
    await go(page, "/dead-letters", /Dead letters/i);
    await check(page, "dead letters");
    await go(page, "/admin", /Admin/i);
    await check(page, "admin");
    await go(page, `/audit?subject=${ticking}`, "Audit");
    await page.locator("tr.audit-row").first().getByRole("button", { name: "pauseJob" }).click();
    await page.locator("table.audit-diff").waitFor();
    await page.getByRole("button", { name: "Verify chain" }).click();
    await page.locator(".audit-verify").waitFor();
    await check(page, "the audit trail, an entry open, the chain verified");
    await go(page, "/account", /Account/i);
    await check(page, "account");
  }, 180_000);
});

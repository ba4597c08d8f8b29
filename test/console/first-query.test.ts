/**
 * The console's first request (console/src/boot/first-query.ts): on the runs list, with a session
 * kept in the tab, the list's first page is asked for by a small script before the app has loaded,
 * and the app shows that answer instead of asking again. Elsewhere, or without a session, nothing is
 * sent early; later searches are the app's own; a refused credential ends the session as before.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { gql, gqlOk } from "../helpers/graphql.js";
import { openLoggedIn, SESSION_KEY, useConsole } from "./browser.js";

const h = useConsole();

interface Sent {
  operationName: string;
  variables: Record<string, unknown>;
  /** The script whose code sent it (the DevTools protocol's initiator). */
  by: string;
}

/** Every POST /graphql the page sends, with the script that sent it. */
async function recordGraphql(page: Page): Promise<Sent[]> {
  const sent: Sent[] = [];
  const cdp = await page.context().newCDPSession(page);
  cdp.on("Network.requestWillBeSent", (e) => {
    if (!e.request.url.endsWith("/graphql") || e.request.method !== "POST") return;
    const body = JSON.parse(e.request.postData ?? "{}") as { operationName?: string; variables?: Record<string, unknown> };
    const frames = [...(e.initiator.stack?.callFrames ?? []), ...(e.initiator.stack?.parent?.callFrames ?? [])];
    sent.push({ operationName: body.operationName ?? "", variables: body.variables ?? {}, by: frames.map((f) => f.url.split("/").pop()).find((u) => u) ?? e.initiator.type });
  });
  await cdp.send("Network.enable");
  return sent;
}

const searches = (sent: Sent[]) => sent.filter((s) => s.operationName === "ConsoleRunsSearch");

async function makeRuns(): Promise<{ queued: string; cancelled: string }> {
  const job = await gqlOk<{ createJob: { id: string } }>(h.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, {
    // A pool no node serves: its runs stay QUEUED.
    i: { name: `first-query-${Date.now()}`, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true", pool: "first-query-nowhere" } },
  }, h.admin);
  const trigger = async () => (await gqlOk<{ triggerJob: { id: string } }>(h.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job.createJob.id }, h.admin)).triggerJob.id;
  const queued = await trigger();
  const cancelled = await trigger();
  await gqlOk(h.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: cancelled }, h.admin);
  return { queued, cancelled };
}

describe("console: the first request, sent before the app starts", () => {
  it("on /runs with filters the list's first page is asked for once, by the early script, and shown", async () => {
    const { queued, cancelled } = await makeRuns();
    const page = await h.page();
    const sent = await recordGraphql(page);
    await openLoggedIn(page, `${h.base}runs?status=CANCELLED`, await h.session());
    await page.locator(`tr[data-run-id="${cancelled}"]`).waitFor();
    expect(await page.locator(`tr[data-run-id="${queued}"]`).count()).toBe(0);
    const s = searches(sent);
    expect(s, JSON.stringify(sent)).toHaveLength(1);
    expect(s[0]!.by).toMatch(/^first-query-[\w-]+\.js$/);
    expect(s[0]!.variables).toEqual({ jobId: null, status: "CANCELLED", filter: null, first: 50, after: null });
  });

  it("at / (which opens the runs list) too; a later search is the app's own, even for the same page", async () => {
    const { queued } = await makeRuns();
    const page = await h.page();
    const sent = await recordGraphql(page);
    await openLoggedIn(page, h.base, await h.session());
    await page.locator(`tr[data-run-id="${queued}"]`).waitFor();
    expect(searches(sent).map((s) => s.by)).toEqual([expect.stringMatching(/^first-query-/)]);
    // Jobs, then Runs again: the same search, now asked by the app.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs", exact: true }).click();
    await page.locator(`tr[data-run-id="${queued}"]`).waitFor();
    const s = searches(sent);
    expect(s).toHaveLength(2);
    expect(s[1]!.by).not.toMatch(/^first-query-/);
    expect(s[1]!.variables).toEqual(s[0]!.variables);
  });

  it("nothing is sent early on another page, or without a session", async () => {
    const page = await h.page();
    const sent = await recordGraphql(page);
    await openLoggedIn(page, `${h.base}jobs`, await h.session());
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    expect(sent.filter((s) => /^first-query-/.test(s.by))).toEqual([]);

    const anonymous = await h.page();
    const none = await recordGraphql(anonymous);
    await anonymous.goto(`${h.base}runs`);
    await anonymous.getByLabel("Username").waitFor();
    await anonymous.waitForLoadState("networkidle");
    expect(none).toEqual([]);
  });

  it("a credential the API refuses, answered to the early request, ends the session with the API's reason", async () => {
    const page = await h.page();
    const sent = await recordGraphql(page);
    const session = { credential: "kairos-not-a-real-token", via: "password", user: { id: "x", username: "ghost", role: "USER" }, expiresAt: null };
    await page.addInitScript(({ key, value }) => sessionStorage.setItem(key, value), { key: SESSION_KEY, value: JSON.stringify(session) });
    await page.goto(`${h.base}runs`);
    await page.getByLabel("Username").waitFor();
    expect(searches(sent).map((s) => s.by)).toEqual([expect.stringMatching(/^first-query-/)]);
    const refused = (await gql(h.app.url, "{ me { id } }", {}, session.credential)).errors?.[0]?.message;
    expect(refused).toBeTruthy();
    await expect.poll(() => page.locator(".login-card [role=status]").textContent()).toContain(refused);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), SESSION_KEY)).toBeNull();
  });
});

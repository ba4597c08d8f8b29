/**
 * The console's Audit page (console/src/views/audit; docs/audit.md) in Chromium: an administrator
 * makes some calls, opens the page from the navigation, filters by subject and action, opens an
 * entry's before/after with the keyboard (a secret shown as "redacted", never as text), pages with
 * "Load more", and verifies the hash chain — holding, then broken after an entry is altered in the
 * store. A user sees only the calls they made, and no "Verify chain"; an unknown action name gets
 * the API's refusal.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

let n = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;
const SECRET = "audit-console-Secret-71";

async function createJob(token: string, name: string): Promise<string> {
  const d = await gqlOk<{ createJob: { id: string } }>(
    h.app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true", env: { DB_PASSWORD: SECRET } } } },
    token,
  );
  return d.createJob.id;
}

const rows = (page: Page) => page.locator("table.audit-table tr.audit-row");
const actions = (page: Page) => rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-action")));

async function openAudit(page: Page): Promise<void> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit", exact: true }).click();
  await page.getByRole("heading", { level: 1, name: "Audit" }).waitFor();
  await rows(page).first().waitFor();
}

describe("console: the audit trail", { timeout: 120_000 }, () => {
  it("an administrator filters by subject and action, opens what a call changed, and verifies the chain", async () => {
    const jobId = await createJob(h.admin, uniq("audited"));
    await gqlOk(h.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: jobId }, h.admin);
    await gqlOk(h.app.url, `mutation($id: ID!, $input: UpdateJobInput!) { updateJob(id: $id, input: $input) { id } }`, { id: jobId, input: { priority: 7 } }, h.admin);

    const page = await h.loggedIn();
    await openAudit(page);
    expect(await page.getByRole("button", { name: "Verify chain" }).count()).toBe(1);

    // By subject: the job's three calls, newest first.
    await page.getByLabel("Subject id").fill(jobId);
    await page.getByLabel("Subject id").press("Enter");
    await expect.poll(() => actions(page)).toEqual(["updateJob", "pauseJob", "createJob"]);
    expect(page.url()).toContain(`subject=${jobId}`);

    // And by action.
    await page.getByLabel("Action").fill("pauseJob");
    await page.getByLabel("Action").press("Enter");
    await expect.poll(() => actions(page)).toEqual(["pauseJob"]);

    // Opened with the keyboard: the toggle is a button; Enter opens what changed.
    const toggle = rows(page).first().getByRole("button", { name: "pauseJob" });
    await toggle.focus();
    await page.keyboard.press("Enter");
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    const paused = page.locator('table.audit-diff tr[data-field="paused"]');
    await paused.waitFor();
    expect(await paused.getAttribute("data-change")).toBe("changed");
    expect(await paused.locator(".audit-before").textContent()).toContain("false");
    expect(await paused.locator(".audit-after").textContent()).toContain("true");
    const violations = await axeViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);
    await page.keyboard.press("Enter");
    await paused.waitFor({ state: "detached" });

    // The create: the whole new job, its secret shown as redacted and never as text.
    await page.getByRole("button", { name: /^Clear filters/ }).click();
    await page.getByLabel("Subject id").fill(jobId);
    await page.getByLabel("Subject id").press("Enter");
    await expect.poll(() => actions(page)).toEqual(["updateJob", "pauseJob", "createJob"]);
    await rows(page).last().getByRole("button", { name: "createJob" }).click();
    const secret = page.locator('table.audit-diff tr[data-field="spec.env.DB_PASSWORD"]');
    await secret.waitFor();
    expect(await secret.getAttribute("data-change")).toBe("added");
    expect((await secret.locator(".audit-after .audit-redacted").textContent())?.trim()).toBe("redacted");
    expect(await page.content()).not.toContain(SECRET);

    // The chain holds.
    await page.getByRole("button", { name: "Verify chain" }).click();
    const result = page.locator(".audit-verify");
    await result.waitFor();
    expect(await result.getAttribute("data-verify")).toBe("ok");
    expect(await result.textContent()).toMatch(/chain holds.*entries checked/);
  });

  it("pages with Load more, 50 entries at a time", async () => {
    const ghost = "0123456789abcdef01234567";
    for (let i = 0; i < 52; i++) {
      const r = await gql(h.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: ghost }, h.admin);
      expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    }
    const page = await h.loggedInAt(`audit?subject=${ghost}`);
    await rows(page).first().waitFor();
    expect(await rows(page).count()).toBe(50);
    expect(await rows(page).first().locator(".badge").textContent()).toBe("not found");
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows(page).count()).toBe(52);
    expect(await page.locator(".audit-foot [role=status]").textContent()).toBe("52 entries loaded, no more");
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);
  });

  it("a user sees only the calls they made, and cannot verify the chain", async () => {
    const name = uniq("auditee");
    await makeUser(h.app, h.admin, name);
    const page = await h.loggedIn(name, PASSWORD);
    const session = await h.session(name, PASSWORD);
    const own = await createJob(session.credential, uniq("mine"));
    const theirs = await createJob(h.admin, uniq("admins"));

    await openAudit(page);
    const actors = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.children[1]?.textContent ?? ""));
    expect(actors.length).toBeGreaterThanOrEqual(2); // the login, the create
    for (const a of actors) expect(a).toContain(name);
    expect(await actions(page)).toContain("createJob");
    expect(await page.getByRole("button", { name: "Verify chain" }).count()).toBe(0);
    expect(await page.getByLabel("Actor: user id").count()).toBe(0);

    await page.getByLabel("Subject id").fill(own);
    await page.getByLabel("Subject id").press("Enter");
    await expect.poll(() => actions(page)).toEqual(["createJob"]);
    await page.getByLabel("Subject id").fill(theirs);
    await page.getByLabel("Subject id").press("Enter");
    await page.getByText("No entry matches these filters.").waitFor();
    expect(await rows(page).count()).toBe(0);

    // A name that is not a mutation: the API's words, not an empty list.
    await page.getByRole("button", { name: /^Clear filters/ }).click();
    await page.getByLabel("Action").fill("notAMutation");
    await page.getByLabel("Action").press("Enter");
    await expect.poll(() => page.locator("main [role=alert]").textContent()).toContain('"notAMutation" is not a mutation of this API');
    expect(await rows(page).count()).toBe(0);
  });

  it("names the first broken entry when the chain does not hold", async () => {
    const jobId = await createJob(h.admin, uniq("tampered"));
    const audit = h.app.services.mongo.db.collection<{ seq: number; targetIds: string[] }>("audit");
    const entry = await audit.findOne({ targetIds: jobId });
    expect(entry).not.toBeNull();
    await audit.updateOne({ seq: entry!.seq }, { $set: { address: "203.0.113.9" } });

    const page = await h.loggedIn();
    await openAudit(page);
    await page.getByRole("button", { name: "Verify chain" }).click();
    const result = page.locator(".audit-verify");
    await result.waitFor();
    expect(await result.getAttribute("data-verify")).toBe("broken");
    const text = (await result.textContent()) ?? "";
    expect(text).toContain("chain broken");
    expect(text).toContain(`First broken entry: #${entry!.seq}`);
    expect(text).toContain("altered");
  });
});

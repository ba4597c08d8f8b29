/**
 * The console's nodes and admin areas in Chromium: nodes with capacity, isolation and running
 * attempts; users, API keys and login lockouts for administrators; every user's account page. What
 * an administrator's action (disable, revoke tokens) or a new password does to a user's open
 * session is in admin-sessions.test.ts.
 */
import { describe, expect, it } from "vitest";
import { PASSWORD, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";
import { adminViews, uniq, until } from "./admin-views.js";

const h = useConsole({
  env: {
    // Two failed logins lock a user name out (the unlock test); addresses are left alone.
    KAIROS_LOGIN_FREE_FAILURES: "1",
    KAIROS_LOGIN_LOCKOUT_AFTER: "2",
    KAIROS_LOGIN_ADDRESS_FREE_FAILURES: "500",
    KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER: "1000",
  },
});

interface ApiNode {
  id: string;
  name: string;
  capacity: { slots: number; cpus: number; memoryMb: number };
  isolation: { mode: string } | null;
}

async function nodes(): Promise<ApiNode[]> {
  const d = await gqlOk<{ nodes: { edges: Array<{ node: ApiNode }> } }>(h.app.url, `{ nodes(first: 100) { edges { node { id name capacity { slots cpus memoryMb } isolation { mode } } } } }`, {}, h.admin);
  return d.nodes.edges.map((e) => e.node);
}

const { gotoView, openView } = adminViews(h);

// Each test drives one or two pages on a shared 2-core machine: generous time.
describe("console: nodes", { timeout: 90_000 }, () => {
  it("shows the in-process executor node with its health, capacity and isolation", async () => {
    const [node] = await nodes();
    expect(node).toBeDefined();
    const page = await openView("/nodes", "Nodes");
    const card = page.locator(`article[data-node="${node.name}"]`);
    await card.getByRole("heading", { name: node.name }).waitFor();
    expect(await card.locator(".badge").first().textContent()).toBe("healthy");
    const text = (await card.textContent()) ?? "";
    expect(text).toContain(`of ${node.capacity.slots} running`);
    expect(text).toMatch(new RegExp(`of ${node.capacity.cpus} cores? reserved`));
    expect(text).toContain("Last heartbeat");
    // Isolation in words, matching what the node reports.
    const isolation = card.getByRole("region", { name: `Isolation on ${node.name}` });
    const words = (await isolation.textContent()) ?? "";
    if (node.isolation?.mode === "BUBBLEWRAP") expect(words).toContain("sandboxed with bubblewrap");
    else if (node.isolation?.mode === "NONE") expect(words).toContain("Not sandboxed");
    else expect(words).toContain("Not reported");
    expect(words).toMatch(/network/i);
  });

  it("lists a running attempt under its node while the job runs, linked to the run", async () => {
    const [node] = await nodes();
    const page = await openView("/nodes", "Nodes");
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(
      h.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: uniq("sleeper"), schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "sleep 3" } } },
      h.admin,
    );
    const runId = await until("the run to be RUNNING", async () => {
      const d = await gqlOk<{ runs: { edges: Array<{ node: { id: string; status: string } }> } }>(
        h.app.url,
        `query($j: ID!) { runs(jobId: $j, first: 5) { edges { node { id status } } } }`,
        { j: createJob.id },
        h.admin,
      );
      return d.runs.edges.find((e) => e.node.status === "RUNNING")?.node.id;
    });
    const card = page.locator(`article[data-node="${node.name}"]`);
    await card.getByRole("button", { name: /Show running attempts/ }).click();
    const link = card.getByRole("table", { name: `Running attempts on ${node.name}` }).getByRole("link", { name: runId });
    await link.waitFor({ timeout: 5_000 });
    expect(await link.getAttribute("href")).toBe(`/runs/${runId}`);
    // The run ends within seconds; the list, refreshed while open, lets it go.
    await link.waitFor({ state: "detached", timeout: 15_000 });
  });

  it("refreshes the nodes every few seconds while the tab is visible, and not while it is hidden", async () => {
    const page = await h.loggedIn();
    let reads = 0;
    page.on("request", (r) => {
      if (r.method() === "POST" && /ConsoleNodesList/.test(r.postData() ?? "")) reads++;
    });
    // The page's timers run on Playwright's clock: eleven seconds of the page's time pass in a moment.
    await page.clock.install();
    await gotoView(page, "/nodes", "Nodes");
    await page.locator("article.node").first().waitFor();
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const setVisibility = (state: "hidden" | "visible") =>
      page.evaluate((s) => {
        Object.defineProperty(document, "visibilityState", { value: s, configurable: true });
        document.dispatchEvent(new Event("visibilitychange"));
      }, state);

    reads = 0;
    await page.clock.runFor(11_000);
    await until("a refresh", async () => reads >= 1);
    await wait(500); // and any other request the timers made
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(3);

    await setVisibility("hidden");
    reads = 0;
    await page.clock.runFor(11_000);
    await wait(500);
    expect(reads).toBe(0);

    // Back in view: read at once, not at the next tick (the page's clock does not move), and once.
    await setVisibility("visible");
    await until("the read on coming back in view", async () => reads >= 1, 1_500);
    await wait(500);
    expect(reads).toBe(1);
  });
});

describe("console: admin", { timeout: 90_000 }, () => {
  it("an administrator creates a user in the form and that user can log in", async () => {
    const name = uniq("newbie");
    const page = await openView("/admin", "Admin");
    const form = page.getByRole("form", { name: "Create a user" });
    await form.getByLabel("User name").fill(name);
    await form.getByLabel("Password").fill(PASSWORD);
    await form.getByLabel("Concurrent runs limit").fill("3");
    await form.getByRole("button", { name: "Create user" }).click();
    await page.getByRole("status").filter({ hasText: `Created user ${name}.` }).waitFor();
    const row = page.locator(`tr[data-user="${name}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("3");

    // Through the form: that the new user can log in is what this test shows.
    const theirs = await h.loggedInWithForm(name, PASSWORD);
    await theirs.locator(".who").getByText(name, { exact: true }).waitFor();
  });

  it("shows a new API key once; the key logs in, and is gone from the page after navigating away", async () => {
    const keyName = uniq("ci-key");
    const page = await openView("/admin", "Admin");
    const form = page.getByRole("form", { name: /Create an API key for admin/ });
    await form.getByLabel("Key name").fill(keyName);
    await form.getByLabel("Scope").selectOption("READ_WRITE");
    await form.getByRole("button", { name: "Create API key" }).click();
    const field = page.getByRole("textbox", { name: "The new API key" });
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(/^kairos_/);
    expect(await page.getByText("shown this once").count()).toBe(1);
    // Listed by its prefix only.
    const row = page.getByRole("table", { name: /API keys of admin/ }).getByRole("row").filter({ hasText: keyName });
    await row.waitFor();
    expect(await row.textContent()).toContain(key.slice(0, 13));
    // Never stored by the console.
    const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));
    expect(stored).not.toContain(key);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Nodes" }).click();
    await page.getByRole("heading", { level: 1, name: "Nodes" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }).click();
    await page.getByRole("heading", { level: 1, name: "Admin" }).waitFor();
    await page.getByRole("table", { name: /API keys of admin/ }).getByRole("row").filter({ hasText: keyName }).waitFor();
    expect(await page.content()).not.toContain(key);
    expect(await page.getByRole("textbox", { name: "The new API key" }).count()).toBe(0);

    const other = await h.page();
    await other.goto(h.base);
    await other.getByRole("tab", { name: "API key" }).click();
    await other.getByLabel("API key").fill(key);
    await other.getByRole("button", { name: "Log in" }).click();
    await other.getByRole("navigation", { name: "Main" }).waitFor();
    await other.locator(".who").getByText("admin", { exact: true }).waitFor();
  });

  it("revokes an API key after a confirmation naming it", async () => {
    const keyName = uniq("doomed");
    const { createApiKey } = await gqlOk<{ createApiKey: { key: string } }>(
      h.app.url,
      `mutation($n: String!) { createApiKey(name: $n, scope: READ_ONLY) { key } }`,
      { n: keyName },
      h.admin,
    );
    const page = await openView("/admin", "Admin");
    await page.getByRole("button", { name: `Revoke ${keyName}` }).click();
    const dialog = page.getByRole("dialog", { name: `Revoke the API key “${keyName}”?` });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: `Revoke ${keyName}` }).click();
    await page.getByRole("status").filter({ hasText: `Revoked the API key “${keyName}”` }).waitFor();
    const r = await gql(h.app.url, `{ me { id } }`, {}, createApiKey.key);
    expect(r.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("sets a user's concurrency limit, and deletes a user after a confirmation that names them and asks about their jobs", async () => {
    const name = uniq("leaver");
    const user = await makeUser(h.app, h.admin, name);
    await gqlOk(
      h.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "kept-job", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } } },
      user.token,
    );
    const page = await openView("/admin", "Admin");
    const row = page.locator(`tr[data-user="${name}"]`);
    await row.getByRole("button", { name: `Set limit of ${name}` }).click();
    await row.getByRole("spinbutton").fill("7");
    await row.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: `${name}: at most 7 runs at once.` }).waitFor();
    const users = await gqlOk<{ users: { edges: Array<{ node: { username: string; maxConcurrentRuns: number | null } }> } }>(
      h.app.url, `query($p: String!) { users(filter: { usernamePrefix: $p }) { edges { node { username maxConcurrentRuns } } } }`, { p: name }, h.admin);
    expect(users.users.edges.find((e) => e.node.username === name)?.node.maxConcurrentRuns).toBe(7);

    await row.getByRole("button", { name: `Delete ${name}` }).click();
    const dialog = page.getByRole("dialog", { name: `Delete ${name}?` });
    await dialog.waitFor();
    expect(await dialog.getByRole("radio", { name: /Keep them/ }).isChecked()).toBe(true);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    // Focus went back to the button that opened it.
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(`Delete ${name}`);

    await row.getByRole("button", { name: `Delete ${name}` }).click();
    await dialog.getByRole("radio", { name: "Delete them" }).check();
    await dialog.getByRole("button", { name: `Delete ${name}` }).click();
    await page.getByRole("status").filter({ hasText: `Deleted ${name}: 0 jobs kept (paused), 1 deleted` }).waitFor();
    await row.waitFor({ state: "detached" });
  });

  it("a non-administrator sees no Admin link, gets Not found at /admin, and has an Account page", async () => {
    const name = uniq("plain");
    await makeUser(h.app, h.admin, name);
    const page = await openView("/admin", "Not found", name, PASSWORD);
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link", { name: "Admin" }).count()).toBe(0);
    await nav.getByRole("link", { name: "Account" }).waitFor();
    expect(await page.getByRole("heading", { name: "Users" }).count()).toBe(0);
    await gotoView(page, "/account", "Account");
    await page.getByRole("heading", { name: "Your API keys" }).waitFor();
  });

  it("lists a login lockout, lifts it from its row, and the form says when there was nothing to lift", async () => {
    const name = uniq("locked");
    await makeUser(h.app, h.admin, name);
    const page = await openView("/admin", "Admin");
    const form = page.getByRole("form", { name: "Login lockouts" });
    await form.getByLabel("User name").fill(name);
    await form.getByRole("button", { name: "Unlock" }).click();
    await form.getByRole("status").filter({ hasText: `Nothing to lift: user “${name}”` }).waitFor();

    // Two failed logins (the second after the first one's wait) lock the name out.
    const tryLogin = (p: string) => gql(h.app.url, `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`, { u: name, p });
    expect((await tryLogin("wrong-password-1")).errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await tryLogin("wrong-password-2")).errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    const refused = await tryLogin(PASSWORD);
    expect(refused.errors?.[0]?.message).toMatch(/locked out/);

    // The list shows the locked-out name (after a refresh); its row's Unlock lifts it and the row goes.
    const table = page.getByRole("table", { name: "Current login lockouts" });
    const row = table.getByRole("row").filter({ hasText: name });
    expect(await row.count()).toBe(0);
    await page.getByRole("button", { name: "Refresh list" }).click();
    await row.waitFor();
    expect(await row.textContent()).toContain("user name");
    await row.getByRole("button", { name: `Unlock user “${name}”` }).click();
    await form.getByRole("status").filter({ hasText: `Lifted: user “${name}” may log in again now.` }).waitFor();
    await row.waitFor({ state: "detached" });
    expect((await tryLogin(PASSWORD)).data).toBeTruthy();

    // Neither given: the form says so without asking the API.
    await form.getByLabel("User name").fill("");
    await form.getByRole("button", { name: "Unlock" }).click();
    await form.getByRole("alert").filter({ hasText: "Give a user name, a client address, or both." }).waitFor();
  });

  it("pages the login lockouts 100 at a time, latest-ending first", async () => {
    // Waits recorded as a failed login records them (for made-up names: nothing else to set up).
    const guard = h.app.services.limits.login as unknown as { user: { blocked: { add(key: string, until: number): Promise<void>; remove(key: string): Promise<void> } } };
    // Ending after any real wait (at most the lockout, KAIROS_LOGIN_LOCKOUT), so they come first.
    const end = Date.now() + 5 * 3_600_000;
    const keys = Array.from({ length: 105 }, (_, i) => `paged-lock-${String(i).padStart(3, "0")}`);
    for (const [i, k] of keys.entries()) await guard.user.blocked.add(k, end - i * 1_000);
    const page = await openView("/admin", "Admin");
    const rows = page.getByRole("table", { name: "Current login lockouts" }).locator("tr[data-lockout^='paged-lock-']");
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(100);
    const first = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-lockout")));
    expect(first).toEqual(keys.slice(0, 100));
    const pager = page.getByRole("navigation", { name: "Login lockouts pages" });
    await pager.getByRole("button", { name: /Next/ }).click();
    await pager.getByText("Page 2").waitFor();
    await expect.poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-lockout"))), { timeout: 15_000 }).toEqual(keys.slice(100));
    await pager.getByRole("button", { name: /Previous/ }).click();
    await pager.getByText("Page 1").waitFor();
    await expect.poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-lockout"))), { timeout: 15_000 }).toEqual(first);
    for (const k of keys) await guard.user.blocked.remove(k);
  });

  it("renders HTML in a user name, an API key name and an unlock target as text", async () => {
    const html = `<img src=x onerror="window.__pwned=1"><b>bold</b>`;
    const page = await openView("/admin", "Admin");

    // A user name cannot hold it: the API's refusal is shown, as text.
    const create = page.getByRole("form", { name: "Create a user" });
    await create.getByLabel("User name").fill(html);
    await create.getByLabel("Password").fill(PASSWORD);
    await create.getByRole("button", { name: "Create user" }).click();
    await create.getByRole("alert").waitFor();
    expect(await create.getByRole("alert").textContent()).toMatch(/username/);

    const keys = page.getByRole("form", { name: /Create an API key for admin/ });
    await keys.getByLabel("Key name").fill(html);
    await keys.getByRole("button", { name: "Create API key" }).click();
    await page.getByRole("textbox", { name: "The new API key" }).waitFor();
    const row = page.getByRole("table", { name: /API keys of admin/ }).getByRole("rowheader", { name: html });
    await row.waitFor();
    expect(await row.textContent()).toContain(html);

    const unlock = page.getByRole("form", { name: "Login lockouts" });
    await unlock.getByLabel("User name").fill(html);
    await unlock.getByRole("button", { name: "Unlock" }).click();
    await unlock.getByRole("status").filter({ hasText: "Nothing to lift" }).waitFor();

    expect(await page.locator("main img, main b").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("the nodes, admin and account views have no serious accessibility violations", async () => {
    const page = await openView("/nodes", "Nodes");
    await page.locator("article.node").first().waitFor();
    await page.getByRole("button", { name: /Show running attempts/ }).first().click();
    await page.locator(".node-allocs").first().waitFor();
    let v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);

    await gotoView(page, "/admin", "Admin");
    await page.locator("tr[data-user]").first().waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
    // With a confirmation open as well.
    await page.getByRole("button", { name: "Revoke tokens of admin" }).click();
    await page.getByRole("dialog").waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();

    await gotoView(page, "/account", "Account");
    await page.getByRole("heading", { name: "Your API keys" }).waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  });
});

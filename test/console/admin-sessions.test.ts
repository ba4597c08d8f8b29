/**
 * What ends or keeps a user's open console session, in Chromium: an administrator disabling the
 * user or revoking their tokens logs their page out with the reason (at its next refresh, or live
 * over its WebSocket); changing one's own password keeps the page on the new token. The admin area
 * itself is in admin.test.ts.
 */
import { describe, expect, it } from "vitest";
import { PASSWORD, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";
import { useConsole } from "./browser.js";
import { adminViews, uniq, until } from "./admin-views.js";

const h = useConsole();

const { gotoView, openView } = adminViews(h);

describe("console: a user's open session", { timeout: 90_000 }, () => {
  it("disabling a user ends their open console session with the reason", async () => {
    const name = uniq("soon-off");
    const user = await makeUser(h.app, h.admin, name);
    const theirs = await h.loggedIn(name, PASSWORD);
    await theirs.clock.install(); // their page's next refresh comes when the test says
    await gotoView(theirs, "/nodes", "Nodes");

    const page = await openView("/admin", "Admin");
    await page.getByRole("button", { name: `Disable ${name}` }).click();
    const dialog = page.getByRole("dialog", { name: `Disable ${name}?` });
    await dialog.getByRole("button", { name: `Disable ${name}` }).click();
    await page.getByRole("status").filter({ hasText: `Disabled ${name}` }).waitFor();
    await page.locator(`tr[data-user="${name}"]`).getByText("disabled", { exact: true }).waitFor();

    // Their page (which polls the nodes) is logged out with the API's reason at its next refresh.
    await theirs.clock.runFor(6_000);
    await theirs.getByRole("button", { name: "Log in" }).waitFor({ timeout: 12_000 });
    expect(await theirs.locator(".notice").textContent()).toMatch(/disabled/);
    expect(await theirs.evaluate(() => sessionStorage.length)).toBe(0);

    await page.getByRole("button", { name: `Enable ${name}` }).click();
    await page.getByRole("status").filter({ hasText: `Enabled ${name}` }).waitFor();
    expect((await gql(h.app.url, `{ me { id } }`, {}, user.token)).data).toEqual({ me: { id: user.id } });
  });

  it("revoking a user's tokens ends their open console session, live over its WebSocket", async () => {
    const name = uniq("revokee");
    const user = await makeUser(h.app, h.admin, name);
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(
      h.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "watched", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } } },
      user.token,
    );
    const theirs = await h.loggedIn(name, PASSWORD);
    let socket = false;
    theirs.on("websocket", () => (socket = true));
    // A job's page follows its runs over the WebSocket (runUpdated) and polls nothing.
    await theirs.goto(new URL(`/jobs/${createJob.id}`, h.base).toString());
    await theirs.getByRole("heading", { level: 1, name: "watched" }).waitFor();
    await until("the page's WebSocket", async () => socket);

    const page = await openView("/admin", "Admin");
    await page.getByRole("button", { name: `Revoke tokens of ${name}` }).click();
    await page.getByRole("dialog", { name: `Revoke ${name}'s tokens?` }).getByRole("button", { name: `Revoke tokens of ${name}` }).click();
    await page.getByRole("status").filter({ hasText: `Revoked every login token of ${name}.` }).waitFor();

    await theirs.getByRole("button", { name: "Log in" }).waitFor({ timeout: 10_000 });
    expect(await theirs.locator(".notice").textContent()).toMatch(/revoked/);
  });

  it("changing your password on the Account page keeps this session on the new token", async () => {
    const name = uniq("rotator");
    const user = await makeUser(h.app, h.admin, name);
    const page = await openView("/account", "Account", name, PASSWORD);
    const next = "a-much-better-passphrase-42";
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByLabel("New password", { exact: true }).fill(next);
    await page.getByLabel("New password again").fill(next);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("status").filter({ hasText: "Password changed" }).waitFor();
    // The old token is revoked; the page works on the new one (a poll would log out otherwise).
    expect((await gql(h.app.url, `{ me { id } }`, {}, user.token)).errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    await page.clock.install();
    await gotoView(page, "/nodes", "Nodes");
    await page.locator("article.node").first().waitFor(); // the first read is answered
    // The next refresh (the page's clock run past it) is answered, and the page stays logged in.
    const refreshed = page.waitForResponse((r) => /ConsoleNodesList/.test(r.request().postData() ?? ""));
    await page.clock.runFor(6_000);
    await refreshed;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await page.getByRole("button", { name: "Log in" }).count()).toBe(0);
    expect(await login(h.app.url, name, next)).toBeTruthy();
  });
});

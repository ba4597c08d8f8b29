/**
 * The console's DAG views in a real browser: the list, a DAG's live graph and grid, triggering
 * with params from the form, a DAG run's timeline, cancel with a confirmation, HTML in names shown
 * as text, one user not seeing another's DAGs, and axe on all three views. A mapped task's instances
 * (grouped and virtualized) are in dags-mapped.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { gqlOk } from "../helpers/graphql.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";
import { dagApi } from "./dag-api.js";

const h = useConsole();

const { createDag, triggerDag, dagRunStatus } = dagApi(h);

const nodeState = (page: Page, key: string) => page.locator(`.dag-graph g.dag-node[data-task="${key}"]`).getAttribute("data-state");

async function waitForNodeState(page: Page, key: string, states: string[], timeout = 30_000): Promise<string> {
  await page.waitForFunction(
    ([k, ss]) => (ss as string[]).includes(document.querySelector(`.dag-graph g.dag-node[data-task="${k}"]`)?.getAttribute("data-state") ?? "?"),
    [key, states] as const,
    { timeout, polling: 20 },
  );
  return (await nodeState(page, key))!;
}

const marker = (page: Page) => page.evaluate(() => (window as unknown as { __marker?: string }).__marker);

describe("console: DAGs", () => {
  it("lists DAGs with their schedule in words, paused, and the last DAG run's status", async () => {
    const scheduled = await createDag("list-nightly", [{ key: "a", command: "true" }], h.admin, { schedule: { kind: "CRON", cron: "0 3 * * *", timezone: "Europe/Paris" }, paused: true });
    const adhoc = await createDag("list-adhoc", [{ key: "a", command: "true" }]);
    const runId = await triggerDag(adhoc);
    const { dag } = await gqlOk<{ dag: { schedule: { description: string } } }>(h.app.url, `query($id: ID!) { dag(id: $id) { schedule { description } } }`, { id: scheduled }, h.admin);

    const page = await h.loggedIn();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "DAGs" }).click();
    const nightly = page.locator(`tr[data-dag="${scheduled}"]`);
    await nightly.waitFor();
    expect(await nightly.getByRole("link", { name: "list-nightly" }).getAttribute("href")).toBe(`/dags/${scheduled}`);
    // In words, with the expression beside them (the API's own description on hover).
    expect(await nightly.locator(".dag-schedule").textContent()).toBe("daily at 03:00 (Europe/Paris) 0 3 * * *");
    expect(await nightly.locator(".dag-schedule code").getAttribute("title")).toBe(dag.schedule.description);
    expect(await nightly.locator(".badge").first().textContent()).toBe("paused");
    expect(await nightly.textContent()).toContain("never run");

    const row = page.locator(`tr[data-dag="${adhoc}"]`);
    expect(await row.textContent()).toContain("triggered only");
    // The last DAG run: a link to it, its status as a word, and it follows the run to its end live.
    const last = row.locator(`a[href="/dag-runs/${runId}"]`);
    await last.waitFor();
    await row.locator(`a[href="/dag-runs/${runId}"] [data-status="SUCCEEDED"]`).waitFor({ timeout: 20_000 });

    // Resume the paused one from its page: the button says what it does, the state follows.
    await nightly.getByRole("link", { name: "list-nightly" }).click();
    await page.getByRole("heading", { name: "list-nightly" }).waitFor();
    await page.getByRole("button", { name: "Resume schedule" }).click();
    await page.getByRole("button", { name: "Pause schedule" }).waitFor();
    const paused = async () => (await gqlOk<{ dag: { paused: boolean } }>(h.app.url, `query($id: ID!) { dag(id: $id) { paused } }`, { id: scheduled }, h.admin)).dag.paused;
    expect(await paused()).toBe(false);
    await page.getByRole("button", { name: "Pause schedule" }).click();
    await page.getByRole("button", { name: "Resume schedule" }).waitFor();
    expect(await paused()).toBe(true);
  }, 90_000);

  it("triggers a DAG from the form with params and colours its tasks live, without a reload; the grid gets the new column", async () => {
    const id = await createDag("etl-live", [
      { key: "extract", command: "sleep 1" },
      { key: "transform", command: "sleep 1", dependsOn: ["extract"] },
      { key: "load", command: "true", dependsOn: ["transform"] },
    ]);
    const page = await h.loggedInAt(`dags/${id}`);
    await page.getByRole("heading", { name: "etl-live" }).waitFor();
    await page.locator('.dag-graph g.dag-node[data-task="load"]').waitFor();
    // No DAG run yet: the graph shows no state, and the grid says so.
    expect(await nodeState(page, "load")).toBe("");
    await page.getByText("No DAG runs yet").first().waitFor();
    await page.evaluate(() => void ((window as unknown as { __marker: string }).__marker = "still-here"));

    const params = page.getByLabel(/^Params/);
    // Not JSON: refused here, with the parser's reason, and nothing is sent.
    await params.fill("{day: 1");
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    expect(await page.locator(".dag-trigger [role=alert]").textContent()).toMatch(/Not JSON/);
    await params.fill("[1, 2]");
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    expect(await page.locator(".dag-trigger [role=alert]").textContent()).toMatch(/JSON object/);
    // JSON, but the API refuses it (nested past 100 levels): the API's own message is shown.
    await params.fill(`{"deep": ${"[".repeat(120)}${"]".repeat(120)}}`);
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    const apiError = page.locator(".dag-trigger p.error[role=alert]");
    await apiError.waitFor();
    expect(await apiError.textContent()).toMatch(/100|deep|nest/i);
    expect((await gqlOk<{ dagRuns: { edges: unknown[] } }>(h.app.url, `query($id: ID!) { dagRuns(dagId: $id) { edges { cursor } } }`, { id }, h.admin)).dagRuns.edges).toHaveLength(0);

    await params.fill('{"day": "2026-11-24"}');
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    const done = page.locator(".dag-trigger [role=status] a");
    await done.waitFor();
    const runId = (await done.getAttribute("href"))!.split("/").pop()!;

    // The last task waits while the first run: a waiting state first, then running or succeeded.
    const before = await waitForNodeState(page, "load", ["PENDING", "QUEUED"], 10_000);
    expect(["PENDING", "QUEUED"]).toContain(before);
    expect(await waitForNodeState(page, "extract", ["RUNNING", "SUCCEEDED"])).toMatch(/RUNNING|SUCCEEDED/);
    expect(await waitForNodeState(page, "load", ["RUNNING", "SUCCEEDED"])).toMatch(/RUNNING|SUCCEEDED/);
    expect(await waitForNodeState(page, "load", ["SUCCEEDED"])).toBe("SUCCEEDED");
    // The state is in the box as a word too, not only its colour.
    expect(await page.locator('.dag-graph g.dag-node[data-task="load"] .dag-node-state').textContent()).toContain("succeeded");
    expect(await marker(page)).toBe("still-here");

    // The grid: the new DAG run's column, every task's cell succeeded, each cell a link to the DAG run.
    await page.locator(`.dag-grid th[data-dag-run="${runId}"]`).waitFor();
    for (const key of ["extract", "transform", "load"]) {
      const cell = page.locator(`.dag-grid a.dag-cell[data-task="${key}"][data-dag-run="${runId}"]`);
      await page.locator(`.dag-grid a.dag-cell[data-task="${key}"][data-dag-run="${runId}"][data-state="SUCCEEDED"]`).waitFor({ timeout: 10_000 });
      expect(await cell.getAttribute("aria-label")).toContain("succeeded");
    }
    const order = await page.locator(".dag-grid tbody th").allTextContents();
    expect(order).toEqual(["extract", "transform", "load"]);
    expect(await marker(page)).toBe("still-here");

    // The params reached the DAG run.
    const d = await gqlOk<{ dagRun: { params: Record<string, unknown> } }>(h.app.url, `query($id: ID!) { dagRun(id: $id) { params } }`, { id: runId }, h.admin);
    expect(d.dagRun.params).toMatchObject({ day: "2026-11-24" });

    // A cell leads to the DAG run: its timeline has a bar per task, each task a link to its run.
    await page.locator(`.dag-grid a.dag-cell[data-task="transform"][data-dag-run="${runId}"]`).click();
    await page.getByRole("heading", { name: "DAG run of etl-live" }).waitFor();
    expect(await marker(page)).toBe("still-here"); // a client-side navigation
    expect(await page.getByRole("link", { name: "Task runs" }).getAttribute("href")).toBe(`/runs?dagRun=${runId}`);
    for (const key of ["extract", "transform", "load"]) {
      await page.locator(`.gantt [data-bar="${key}"]`).waitFor();
      const link = page.locator(`.gantt .gantt-row[data-row="${key}"] a`);
      expect(await link.getAttribute("href")).toMatch(/^\/runs\/.+/);
    }
    // Bars follow the order of the tasks in time: extract starts before load.
    const left = async (key: string) => parseFloat((await page.locator(`.gantt [data-bar="${key}"]`).getAttribute("style"))!.match(/left:\s*([\d.]+)%/)![1]);
    expect(await left("extract")).toBeLessThan(await left("load"));
    expect(await page.locator(".dag-graph g.dag-node[data-state=SUCCEEDED]").count()).toBe(3);
  }, 90_000);

  it("cancels a running DAG run after its confirmation", async () => {
    const id = await createDag("long-one", [
      { key: "slow", command: "sleep 60" },
      { key: "after", command: "true", dependsOn: ["slow"] },
    ]);
    const runId = await triggerDag(id);
    const page = await h.loggedInAt(`dag-runs/${runId}`);
    await waitForNodeState(page, "slow", ["RUNNING"]);
    await page.evaluate(() => void ((window as unknown as { __marker: string }).__marker = "no-reload"));
    await page.getByRole("button", { name: "Cancel DAG run" }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this DAG run?" });
    await dialog.waitFor();
    // Cancelling the dialog changes nothing.
    await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
    expect(await dagRunStatus(runId)).toBe("RUNNING");
    await page.getByRole("button", { name: "Cancel DAG run" }).click();
    await dialog.getByRole("button", { name: "Cancel DAG run" }).click();
    // The API ends it once the executor has killed the running task (slow on a loaded machine); the page follows.
    for (let i = 0; i < 600 && (await dagRunStatus(runId)) === "RUNNING"; i++) await new Promise((r) => setTimeout(r, 100));
    await page.locator('[data-dag-run-status="CANCELLED"]').waitFor({ timeout: 15_000 });
    expect(await waitForNodeState(page, "after", ["CANCELLED"])).toBe("CANCELLED");
    expect(await waitForNodeState(page, "slow", ["CANCELLED"])).toBe("CANCELLED");
    expect(await dagRunStatus(runId)).toBe("CANCELLED");
    expect(await marker(page)).toBe("no-reload");
    expect(await page.getByRole("button", { name: "Cancel DAG run" }).count()).toBe(0);

    // Retry from failed is offered now, behind its own confirmation; it runs the cancelled tasks again, live.
    await page.getByRole("button", { name: "Retry from failed" }).click();
    const retry = page.getByRole("dialog", { name: "Retry this DAG run from failed?" });
    await retry.getByRole("button", { name: "Cancel", exact: true }).click();
    expect(await dagRunStatus(runId)).toBe("CANCELLED");
    await page.getByRole("button", { name: "Retry from failed" }).click();
    await retry.getByRole("button", { name: "Retry from failed" }).click();
    await page.locator('[data-dag-run-status="RUNNING"]').waitFor({ timeout: 20_000 });
    expect(await waitForNodeState(page, "slow", ["RUNNING"], 60_000)).toBe("RUNNING");
    expect(await waitForNodeState(page, "after", ["PENDING"])).toBe("PENDING");
    const attempts = await gqlOk<{ dagRun: { tasks: { edges: Array<{ node: { key: string; attempt: number } }> } } }>(
      h.app.url,
      `query($id: ID!) { dagRun(id: $id) { tasks(first: 10) { edges { node { key attempt } } } } }`,
      { id: runId },
      h.admin,
    );
    expect(attempts.dagRun.tasks.edges.find((e) => e.node.key === "slow")?.node.attempt).toBe(2);
    expect(await marker(page)).toBe("no-reload");
    await gqlOk(h.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, h.admin);
  }, 180_000);

  it("shows HTML and script tags in a DAG's name and description as text", async () => {
    const name = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
    const id = await createDag(name, [{ key: "a", command: "true" }], h.admin, { description: "<b>bold?</b><iframe src=/></iframe>" });
    const page = await h.loggedInAt("dags");
    const row = page.locator(`tr[data-dag="${id}"]`);
    await row.waitFor();
    expect(await row.locator(".dag-name").textContent()).toBe(name);
    expect(await row.locator(".dag-desc").textContent()).toBe("<b>bold?</b><iframe src=/></iframe>");
    expect(await row.locator("img, script, b, iframe").count()).toBe(0);
    await row.locator(".dag-name").click();
    await page.locator("h1").filter({ hasText: "<script>" }).waitFor();
    expect(await page.locator("h1").textContent()).toBe(name);
    expect(await page.locator("main img, main script, main iframe").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  }, 90_000);

  it("shows a user only their own DAGs", async () => {
    const id = await createDag("admins-secret-dag", [{ key: "a", command: "true" }]);
    const runId = await triggerDag(id);
    await makeUser(h.app, h.admin, "other-user");
    const page = await h.loggedInAt("dags", "other-user", PASSWORD);
    await page.getByText("No DAGs yet").waitFor();
    expect(await page.locator("main").textContent()).not.toContain("admins-secret-dag");
    await page.goto(`${h.base}dags/${id}`);
    const alert = page.getByRole("alert").first();
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/not found/i);
    expect(await page.locator("main").textContent()).not.toContain("admins-secret-dag");
    await page.goto(`${h.base}dag-runs/${runId}`);
    await page.getByRole("alert").first().waitFor();
    expect(await page.locator("main").textContent()).not.toContain("admins-secret-dag");
  }, 90_000);

  it("the DAG list, a DAG's page and a DAG run's page have no serious accessibility violations", async () => {
    const id = await createDag("a11y-dag", [
      { key: "first", command: "true" },
      { key: "second", command: "true", dependsOn: ["first"] },
      { key: "third", command: "true", dependsOn: ["first"] },
      { key: "last", command: "true", dependsOn: ["second", "third"] },
    ]);
    const runId = await triggerDag(id);
    // The page opens while the DAG run goes on to its end.
    const ended = (async () => {
      for (let i = 0; i < 200 && (await dagRunStatus(runId)) === "RUNNING"; i++) await new Promise((r) => setTimeout(r, 100));
    })();
    const [page] = await Promise.all([h.loggedInAt("dags"), ended]);
    await page.locator(`tr[data-dag="${id}"]`).waitFor();
    let v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);

    await page.goto(`${h.base}dags/${id}`);
    await page.locator(`.dag-grid a.dag-cell[data-dag-run="${runId}"][data-state="SUCCEEDED"]`).first().waitFor();
    // The picture has a text alternative naming every task and its state.
    const label = await page.locator(".dag-graph svg").getAttribute("aria-label");
    expect(label).toMatch(/4 tasks/);
    expect(label).toContain("last: succeeded");
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);

    await page.goto(`${h.base}dag-runs/${runId}`);
    await page.locator('.gantt [data-bar="last"]').waitFor();
    v = await axeViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  }, 90_000);
});

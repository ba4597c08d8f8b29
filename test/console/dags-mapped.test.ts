/**
 * The console's view of a mapped DAG task in a real browser: its instances (200, then 1,000) as one
 * group row on the DAG run's timeline, counted by state live, that expands to a virtualized list
 * rendering only what is in view. The other DAG views are in dags.test.ts.
 */
import { describe, expect, it } from "vitest";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { gqlOk } from "../helpers/graphql.js";
import { useConsole } from "./browser.js";
import { dagApi } from "./dag-api.js";

// Eight executor slots, not the test app's four: the 200 instances of `true` are bound by round trips, not
// CPU, so they end sooner with more at once. What the tests check is the console's view of them; the
// 1,000-instance DAG's maxParallel (2) still holds it to two running.
const h = useConsole({ env: { KAIROS_EXECUTOR_SLOTS: "8" } });

const { createDag, triggerDag } = dagApi(h);

describe("console: a mapped DAG task", () => {
  it("shows a mapped task's 200 instances as one group row that expands to a virtualized list", async () => {
    // Its own user: 200 instances spend a submission budget the other tests' triggers need.
    const { token: mapperToken } = await makeUser(h.app, h.admin, "mapper");
    const id = await createDag(
      "fan-out",
      [
        { key: "list", command: 'echo "[$(seq -s, 0 199)]" > "$KAIROS_RESULT"' },
        { key: "work", command: "true", dependsOn: ["list"], mapOver: "list" },
        { key: "report", command: "true", dependsOn: ["work"] },
      ],
      mapperToken,
    );
    const runId = await triggerDag(id, mapperToken);
    const page = await h.loggedInAt(`dag-runs/${runId}`, "mapper", PASSWORD);
    const group = page.locator('.gantt-group[data-group="work"]');
    await group.waitFor();
    // The 200 instances appear (live) in the one row, counted by state.
    await page.locator('.gantt-group[data-group="work"][data-count="200"]').waitFor({ timeout: 60_000 });
    expect(await page.locator(".gantt-row[data-row^='work[']").count()).toBe(0);
    await page.locator('.gantt-row[data-row="report"][data-state="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    expect(await group.locator(".dag-sr").textContent()).toContain("200 succeeded");
    expect(await page.locator('.dag-graph g.dag-node[data-task="work"] .dag-node-state').textContent()).toContain("200/200");

    await group.getByRole("button", { name: /work/ }).click();
    expect(await group.getByRole("button", { name: /work/ }).getAttribute("aria-expanded")).toBe("true");
    const list = page.locator('[data-instances="work"]');
    await list.waitFor();
    const rendered = await list.locator(".gantt-instance").count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(40); // only what is in view, not 200
    await list.locator('.gantt-row[data-row="work[0]"]').waitFor();
    // Scrolled to the end: the last instances are rendered, the first no longer.
    await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await list.locator('.gantt-row[data-row="work[199]"]').waitFor();
    expect(await list.locator('.gantt-row[data-row="work[0]"]').count()).toBe(0);
    expect(await list.locator('.gantt-row[data-row="work[199]"] a').getAttribute("href")).toMatch(/^\/runs\//);
  }, 180_000);

  it("keeps a mapped task of 1,000 instances readable: one summary row, and a list that renders only what is in view", async () => {
    // 1,000 instances expanded, two running at a time (maxParallel): the rows exist without 1,000 runs to wait for.
    const { token } = await makeUser(h.app, h.admin, "wide");
    const id = await createDag(
      "wide-fan-out",
      [
        { key: "list", command: 'echo "[$(seq -s, 0 999)]" > "$KAIROS_RESULT"' },
        { key: "work", command: "sleep 30", dependsOn: ["list"], mapOver: "list" },
      ],
      token,
      { maxParallel: 2 },
    );
    const runId = await triggerDag(id, token);
    const page = await h.loggedInAt(`dag-runs/${runId}`, "wide", PASSWORD);
    const group = page.locator('.gantt-group[data-group="work"][data-count="1000"]');
    await group.waitFor({ timeout: 60_000 });
    await page.locator('.gantt-group[data-group="work"] .dag-sr').filter({ hasText: "2 running" }).waitFor({ timeout: 30_000 });
    expect(await group.locator(".dag-sr").textContent()).toMatch(/1000 instances: .*998 pending/);
    expect(await page.locator(".gantt-instance").count()).toBe(0);

    // Expanding renders a screenful, not 1,000 rows: timed in the page, from the click to the next frame.
    const took = await page.evaluate(async () => {
      const button = document.querySelector<HTMLButtonElement>('.gantt-group[data-group="work"] button')!;
      const t = performance.now();
      button.click();
      while (!document.querySelector('[data-instances="work"] .gantt-row')) await new Promise((r) => requestAnimationFrame(r));
      return performance.now() - t;
    });
    expect(took).toBeLessThan(2000);
    const list = page.locator('[data-instances="work"]');
    await list.locator('.gantt-row[data-row="work[0]"]').waitFor();
    expect(await list.locator(".gantt-instance").count()).toBeLessThan(40);
    await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await list.locator('.gantt-row[data-row="work[999]"]').waitFor();
    expect(await list.locator(".gantt-instance").count()).toBeLessThan(40);
    expect(await list.locator('.gantt-row[data-row="work[999]"]').getAttribute("data-state")).toBe("PENDING");
    await gqlOk(h.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, token);
    await page.locator('[data-dag-run-status="CANCELLED"]').waitFor({ timeout: 20_000 });
  }, 120_000);
});

/**
 * The console's Cluster view (console/src/views/cluster): the figures arrive over the subscription
 * and follow what happens (a run seeded as ended shows up within a push), the forecast shows each
 * pool's runs and the hotspot with its suggestion, a user sees their own figures and no
 * schedulers, and the page has no accessibility violations.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { makeUser, PASSWORD } from "../helpers/accounts.js";
import { nodeDoc } from "../helpers/node-docs.js";
import { queuedRunDoc } from "../helpers/runs.js";
import { axeViolations, describeViolations, useConsole } from "./browser.js";

const h = useConsole();

describe("console: cluster figures and the forecast", { timeout: 120_000 }, () => {
  it("shows the figures live, the forecast and its hotspot to an administrator", async () => {
    const admin: Principal = { userId: "000000000000000000000001", username: "admin", role: "ADMIN" };
    for (let i = 0; i < 52; i++) {
      await h.app.services.jobs.create(admin, { name: `console-fc-${i}`, schedule: { kind: "CRON", cron: "45 * * * *" }, spec: { kind: "COMMAND", command: "true", pool: "console-fc" } });
    }
    const page = await h.loggedInAt("cluster");
    await page.getByRole("heading", { name: "Cluster", level: 1 }).waitFor();
    const schedulers = page.getByRole("table", { name: "Schedulers" });
    await schedulers.waitFor({ timeout: 20_000 });
    expect(await schedulers.textContent()).toContain("8 of 8: 0–7");

    // A run that ended a minute ago, 2 s late: the next push counts it.
    const finishedAt = new Date(Date.now() - 60_000);
    const scheduledFor = new Date(finishedAt.getTime() - 10_000);
    await h.app.services.mongo.c.runs.insertOne(
      queuedRunDoc(admin.userId, { status: "FAILED", pool: "console-done", scheduledFor, startedAt: new Date(scheduledFor.getTime() + 2_000), finishedAt }),
    );
    const runs = page.getByRole("region", { name: "Runs" });
    await page.waitForFunction(() => /FAILED\s*1/.test(document.querySelector('[aria-labelledby="cluster-runs"]')?.textContent ?? ""), null, { timeout: 15_000 });
    expect(await runs.textContent()).toMatch(/Ended\s*1 \(/);
    expect(await page.getByRole("region", { name: "Lateness and dead letters" }).textContent()).toContain("2.00 s");

    const forecast = page.getByRole("region", { name: "Forecast" });
    const row = forecast.getByRole("row").filter({ hasText: "console-fc" });
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toMatch(/^console-fc1248/);
    const bars = (await row.getByRole("img").getAttribute("aria-label"))!;
    expect(bars).toMatch(/^console-fc: runs due each hour: [\d, ]+$/);
    const perHour = bars.split("each hour: ")[1].split(", ").map(Number);
    expect(perHour.reduce((a, b) => a + b, 0)).toBe(1248);
    expect(perHour.filter((n) => n === 52)).toHaveLength(24);
    const hotspot = forecast.getByRole("listitem").filter({ hasText: "console-fc" });
    expect(await hotspot.textContent()).toContain('52 jobs make 52 runs in pool console-fc in the same minute');
    expect(await hotspot.textContent()).toContain('spread: "PT1H"');

    const violations = await axeViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);
  });

  it("shows a user their own figures and no schedulers", async () => {
    await makeUser(h.app, h.admin, "cluster-viewer");
    const page = await h.loggedInAt("cluster", "cluster-viewer", PASSWORD);
    await page.getByText("Your runs over the last PT1H").waitFor({ timeout: 20_000 });
    expect(await page.getByRole("table", { name: "Schedulers" }).count()).toBe(0);
    const forecast = page.getByRole("region", { name: "Forecast" });
    await forecast.getByText("No runs due.").waitFor({ timeout: 15_000 });
  });

  it("pages the nodes 50 at a time by name, Previous coming back, while the capacity sums them all", async () => {
    await h.app.services.mongo.c.nodes.insertMany(
      Array.from({ length: 80 }, (_, i) =>
        nodeDoc({ _id: `console-many-${i}`, name: `console-many-${String(i).padStart(4, "0")}`, host: "console-host", pools: ["console-many"], capacity: { slots: 1, cpus: 1, memoryMb: 256 } }),
      ),
    );
    const all = await h.app.services.mongo.c.nodes.countDocuments({});
    expect(all).toBeGreaterThan(80);
    const page = await h.loggedInAt("cluster");
    const table = page.getByRole("table", { name: "Nodes" });
    const names = () => table.locator("tbody tr td:first-child").allInnerTexts();
    const note = page.getByRole("status").filter({ hasText: "Showing nodes" });
    await note.waitFor({ timeout: 20_000 });
    expect(await note.textContent()).toBe(`Showing nodes 1–50 of ${all} by name (the capacity above counts them all); Nodes filters them by pool and state.`);
    expect(await page.getByLabel("Capacity").textContent()).toMatch(new RegExp(`^${all} live nodes: \\d+ / ${80 + 4} slots running`));
    const first = await names();
    expect(first).toHaveLength(50);
    expect(first).toEqual([...first].sort());

    const pager = page.getByRole("navigation", { name: "Cluster nodes pages" });
    await pager.getByRole("button", { name: /Next/ }).click();
    await pager.getByText("Page 2").waitFor();
    await page.getByRole("status").filter({ hasText: `Showing nodes 51–${all} of ${all}` }).waitFor({ timeout: 20_000 });
    const second = await names();
    expect(second).toHaveLength(all - 50);
    expect(second.filter((n) => first.includes(n)), "no node on both pages").toEqual([]);
    expect([...first, ...second]).toEqual([...first, ...second].sort());
    expect(await pager.getByRole("button", { name: /Next/ }).isDisabled()).toBe(true);
    // The capacity is the same on every page.
    expect(await page.getByLabel("Capacity").textContent()).toMatch(new RegExp(`^${all} live nodes: \\d+ / ${80 + 4} slots running`));

    await pager.getByRole("button", { name: /Previous/ }).click();
    await pager.getByText("Page 1").waitFor();
    await expect.poll(names, { timeout: 20_000 }).toEqual(first);
  });
});

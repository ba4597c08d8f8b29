/**
 * The runs list at scale: 3,000 runs loaded page by page (infinite scroll) while the page holds
 * only the rows in view, a row far down found by scrolling, and live changes still applied in place.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { connectMongo } from "../../src/store/mongo.js";
import { gqlOk } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";
import { useConsole } from "./browser.js";

const h = useConsole();

/** Enough to show the windowing (a few pages' worth would do); the bench takes 100,000. */
const RUNS = 3_000;

describe("console: runs list at scale", { timeout: 240_000 }, () => {
  it(`loads ${RUNS.toLocaleString("en")} runs by scrolling, renders only those in view, and still updates live`, async () => {
    const tag = randomUUID().slice(0, 8);
    const { createJob } = await gqlOk<{ createJob: { id: string; name: string } }>(
      h.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id name } }`,
      { input: { name: `many-${tag}`, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } } },
      h.admin,
    );
    const { me } = await gqlOk<{ me: { id: string } }>(h.app.url, `{ me { id } }`, {}, h.admin);
    // Thousands of runs through the API take minutes on the emulator: they are written to the store as
    // the scheduler leaves them (ended, one per minute of 2026), the oldest still waiting on a pool
    // no executor serves.
    const start = Date.UTC(2026, 0, 1);
    const mongo = await connectMongo(h.app.mongoUrl, h.app.config.mongoDb);
    try {
      for (let b = 0; b < RUNS / 1000; b++) {
        const docs = Array.from({ length: 1000 }, (_, k) => {
          const i = b * 1000 + k;
          const at = new Date(start + i * 60_000);
          const pool = i === 0 ? `nowhere-${tag}` : "default";
          return queuedRunDoc(me.id, {
            jobId: createJob.id,
            jobName: createJob.name,
            fireKey: `${createJob.id}@${at.getTime()}`,
            trigger: "BACKFILL",
            scheduledFor: at,
            pool,
            spec: { kind: "COMMAND", command: "true", argv: null, env: {}, timeoutMs: 60_000, pool },
            ...(i === 0 ? {} : { status: "SUCCEEDED", queuedAt: at, startedAt: at, finishedAt: new Date(at.getTime() + 1500), exitCode: 0 }),
          });
        });
        await mongo.c.runs.insertMany(docs);
      }
    } finally {
      await mongo.close();
    }
    const job = createJob.id;

    const page = await h.loggedIn();
    await page.goto(`${h.base}runs?job=${job}&trigger=BACKFILL`);
    const loaded = page.locator(".runs-foot [role=status]");
    await page.locator("tr.vrow").first().waitFor();
    const scroller = page.locator(".runs-scroll");

    // Scroll to the end until every page is in.
    const began = Date.now();
    for (;;) {
      const text = (await loaded.textContent()) ?? "";
      if (/no more/.test(text)) break;
      await scroller.evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await page.waitForTimeout(50);
      if (Date.now() - began > 150_000) throw new Error(`still loading: ${text}`);
    }
    expect(await loaded.textContent()).toContain(`${RUNS.toLocaleString("en")} runs loaded`);
    // Only the rows in view (and a few around them) are in the page.
    const rendered = await page.locator("tr.vrow").count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(100);
    // The table is as tall as all its rows: the scrollbar tells the truth.
    const height = await scroller.evaluate((el) => el.scrollHeight);
    expect(height).toBeGreaterThan(RUNS * 38);

    // At the bottom: the oldest slot (2026-01-01T00:00Z), as the last row.
    await scroller.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await page.waitForTimeout(100);
    const last = page.locator("tr.vrow").last();
    expect(await last.getAttribute("aria-rowindex")).toBe(String(RUNS + 1));
    expect(await last.locator("td.c-time time").first().getAttribute("datetime")).toBe(new Date(start).toISOString());

    // Flinging through the list (a screenful per frame) keeps the page to the rows in view, each
    // frame showing the rows at its position. (Frame times are the bench's: this machine's CPUs are
    // shared with other tests, which makes them noise here.)
    const checks = await scroller.evaluate(async (el) => {
      const out: Array<{ rows: number; first: number; expected: number }> = [];
      for (let i = 0; i < 40; i++) {
        el.scrollTop = i * 250 * 40;
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
        const rows = el.querySelectorAll("tr.vrow");
        const rowH = rows[0]!.getBoundingClientRect().height;
        // The header's cells stick to the top of the scroller.
        const header = el.querySelector("th")!.getBoundingClientRect().bottom;
        const firstVisible = Array.from(rows).find((r) => r.getBoundingClientRect().bottom > header + 1);
        out.push({ rows: rows.length, first: Number(firstVisible?.getAttribute("aria-rowindex")), expected: Math.floor(el.scrollTop / rowH) + 2 });
      }
      return out;
    });
    expect(checks.length).toBe(40);
    for (const c of checks) {
      expect(c.rows).toBeLessThan(100);
      expect(Math.abs(c.first - c.expected), JSON.stringify(c)).toBeLessThanOrEqual(1);
    }

    // A live change to a row in view shows in place.
    const id = await last.getAttribute("data-run-id");
    await gqlOk(h.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id }, h.admin);
    await expect.poll(() => page.locator(`tr[data-run-id="${id}"] .badge`).getAttribute("data-status"), { timeout: 10_000 }).toBe("CANCELLED");
  });
});

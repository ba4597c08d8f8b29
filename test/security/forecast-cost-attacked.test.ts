/**
 * Attack: one user makes the API do unbounded work with forecast. 27 jobs firing every second
 * (starting in 2 h, so they run nothing here) reach MAX_FORECAST_SLOTS (2,000,000) in one forecast.
 * At aa52d27 it was computed synchronously, once per alias: 20 aliases in one request (each with
 * another hotspotMinRuns) held the event loop, and another user's `{ me { id } }` took 13.9 s.
 * Now: a request holds at most two forecasts (FORECAST_COST), the enumeration yields to the event
 * loop, a user computes one forecast at a time, and identical ones share a computation.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const t = useTestApp();

describe("forecast attacked", () => {
  it("one user's forecasts do not stall the API for another user", async () => {
    const mallory = await makeUser(t.app, t.admin, "mallory");
    const alice = await makeUser(t.app, t.admin, "alice");
    const startAt = new Date(Date.now() + 2 * 3600_000).toISOString();
    const endAt = new Date(Date.now() + 23 * 3600_000).toISOString();
    for (let i = 0; i < 27; i++) {
      await gqlOk(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, { i: { name: `sec${i}`, schedule: { kind: "INTERVAL", every: "PT1S", startAt, endAt }, spec: { kind: "COMMAND", command: "true" } } }, mallory.token);
    }
    // The original attack: 20 aliases in one request is refused by its cost, before any work.
    const twenty = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: forecast(hotspotMinRuns: ${i + 1}) { jobsRead }`).join(" ")} }`;
    const refused = await gql(t.app.url, twenty, {}, mallory.token);
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors?.[0]?.message).toContain("KAIROS_MAX_COST");
    const three = `{ ${["PT24H", "PT23H", "PT22H"].map((w, i) => `a${i}: forecast(within: "${w}") { jobsRead }`).join(" ")} }`;
    expect((await gql(t.app.url, three, {}, mallory.token)).errors?.[0]?.message).toContain("KAIROS_MAX_COST");

    // What is still allowed, in parallel: 5 requests of two forecasts each, all over other windows
    // (nothing shared: ten computations of 2,000,000 fires).
    const windows = Array.from({ length: 10 }, (_, i) => `PT${24 * 60 - i}M`);
    const before = t.app.services.forecast.computations;
    const attacks = Array.from({ length: 5 }, (_, r) =>
      gqlOk<Record<string, { jobsRead: number; slotsCapped: boolean }>>(
        t.app.url,
        `{ a: forecast(within: "${windows[2 * r]}") { jobsRead slotsCapped } b: forecast(within: "${windows[2 * r + 1]}") { jobsRead slotsCapped } }`,
        {},
        mallory.token,
      ),
    );
    await new Promise((r) => setTimeout(r, 300));
    const worst: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = Date.now();
      await gqlOk(t.app.url, `{ me { id } }`, {}, alice.token);
      worst.push(Date.now() - t0);
      await new Promise((r) => setTimeout(r, 200));
    }
    const answers = await Promise.all(attacks);
    // { me } answers in tens of ms; 3 s leaves room for a loaded 2-core host.
    expect(Math.max(...worst)).toBeLessThan(3_000);
    // The forecasts still answer, in full (the slot cap is the forecast's own bound).
    for (const a of answers) for (const f of [a.a, a.b]) expect(f).toEqual({ jobsRead: 27, slotsCapped: true });
    expect(t.app.services.forecast.computations - before).toBe(10);

    // Identical requests at once share one computation (and are served from the cache after).
    const same = `{ forecast(within: "PT6H") { jobsRead slots } }`;
    const at = t.app.services.forecast.computations;
    const shared = await Promise.all(Array.from({ length: 4 }, () => gqlOk<{ forecast: { jobsRead: number; slots: number } }>(t.app.url, same, {}, mallory.token)));
    expect(new Set(shared.map((s) => JSON.stringify(s.forecast))).size).toBe(1);
    expect(shared[0].forecast.jobsRead).toBe(27);
    expect(t.app.services.forecast.computations - at).toBe(1);
  }, 240_000);
});

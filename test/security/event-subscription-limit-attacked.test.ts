/**
 * The per-user bound on event subscriptions (MAX_EVENT_SUBSCRIPTIONS_PER_USER, 20 on one API
 * instance) counts clusterStatsUpdated and alertFired beside runUpdated and dagRunUpdated: a user who
 * holds 20 clusterStatsUpdated (or alertFired) streams is refused a runUpdated one, and the refusal
 * names the kinds counted (it named only runUpdated and dagRunUpdated, which a user holding none of
 * those could not act on). alertFired had its own 20 beside (40 in all).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "graphql-ws";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { collect, wsClient } from "../helpers/graphql.js";

const t = useTestApp();
const MESSAGE =
  "you have 20 event subscriptions open (runUpdated, dagRunUpdated, clusterStatsUpdated and alertFired count together), the most allowed at once: close one first";
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.dispose();
});

describe("event subscriptions over the bound", () => {
  it("are refused naming every kind counted, clusterStatsUpdated included", async () => {
    const u = await makeUser(t.app, t.admin, "subscriber");
    const client = wsClient(t.app.wsUrl, u.token);
    clients.push(client);
    let pushed = 0;
    const held = Array.from({ length: 20 }, () => collect(client, `subscription { clusterStatsUpdated(window: "PT1H") { ended } }`, {}, (e) => (pushed += e.length > 0 ? 1 : 0) < 0, 20_000));
    await Promise.all(held.map((h) => h.ready));
    const deadline = Date.now() + 10_000;
    while (pushed < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(pushed).toBeGreaterThanOrEqual(20); // every stream open and pushed its first figures
    // Two more, of either kind, are refused while the 20 stay open.
    const stats = await collect(client, `subscription { clusterStatsUpdated(window: "PT1H") { ended } }`, {}, () => false, 3_000).done;
    const runs = await collect(client, `subscription { runUpdated { id } }`, {}, () => false, 3_000).done;
    for (const r of [stats, runs]) {
      expect(r.errors).toHaveLength(1);
      const e = r.errors[0] as { message: string; extensions: { code: string } };
      expect(e.extensions.code).toBe("RESOURCE_EXHAUSTED");
      expect(e.message).toBe(MESSAGE);
    }
    for (const h of held) expect((await h.done).errors).toEqual([]);
  }, 60_000);

  it("count alertFired in the same budget", async () => {
    const u = await makeUser(t.app, t.admin, "alert-subscriber");
    const client = wsClient(t.app.wsUrl, u.token);
    clients.push(client);
    const held = Array.from({ length: 20 }, () => collect(client, `subscription { alertFired { deliveryId } }`, {}, () => false, 20_000));
    await Promise.all(held.map((h) => h.ready));
    await new Promise((r) => setTimeout(r, 1_500)); // the server has opened the 20 streams
    for (const q of [`subscription { runUpdated { id } }`, `subscription { alertFired { deliveryId } }`]) {
      const r = await collect(client, q, {}, () => false, 3_000).done;
      expect(r.errors).toHaveLength(1);
      const e = r.errors[0] as { message: string; extensions: { code: string } };
      expect(e.extensions.code).toBe("RESOURCE_EXHAUSTED");
      expect(e.message).toBe(MESSAGE);
    }
    for (const h of held) expect((await h.done).errors).toEqual([]);
  }, 60_000);
});

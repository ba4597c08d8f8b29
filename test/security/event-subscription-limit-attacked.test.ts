/**
 * The per-user bound on event subscriptions (MAX_EVENT_SUBSCRIPTIONS_PER_USER, 20 on one API
 * instance) counts clusterStatsUpdated and alertFired beside runUpdated and dagRunUpdated: a user who
 * holds 20 clusterStatsUpdated (or alertFired) streams is refused a runUpdated one, and the refusal
 * names the kinds counted (it named only runUpdated and dagRunUpdated, which a user holding none of
 * those could not act on). alertFired had its own 20 beside (40 in all).
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Client } from "graphql-ws";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { collect, waitFor, wsClient } from "../helpers/graphql.js";

const t = useTestApp();
const MESSAGE =
  "you have 20 event subscriptions open (runUpdated, dagRunUpdated, clusterStatsUpdated and alertFired count together), the most allowed at once: close one first";
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.dispose();
});

/** A subscription held open until `stop()`: its events counted, its errors and its end kept. */
function hold(client: Client, query: string): { readonly pushed: number; readonly errors: unknown[]; readonly ended: boolean; stop: () => void } {
  const errors: unknown[] = [];
  let pushed = 0;
  let ended = false;
  const stop = client.subscribe(
    { query },
    {
      next: (v) => {
        if (v.errors) errors.push(...v.errors);
        if (v.data) pushed++;
      },
      error: (e) => {
        errors.push(e);
        ended = true;
      },
      complete: () => {
        ended = true;
      },
    },
  );
  return {
    get pushed() {
      return pushed;
    },
    errors,
    get ended() {
      return ended;
    },
    stop,
  };
}

/** The held streams were neither refused nor ended while the others were refused; then they are closed. */
function expectStillHeld(held: Array<ReturnType<typeof hold>>): void {
  for (const h of held) expect([h.errors, h.ended]).toEqual([[], false]);
  for (const h of held) h.stop();
}

const expectRefused = (r: { errors: unknown[] }) => {
  expect(r.errors).toHaveLength(1);
  const e = r.errors[0] as { message: string; extensions: { code: string } };
  expect(e.extensions.code).toBe("RESOURCE_EXHAUSTED");
  expect(e.message).toBe(MESSAGE);
};

describe("event subscriptions over the bound", () => {
  it("are refused naming every kind counted, clusterStatsUpdated included", async () => {
    const u = await makeUser(t.app, t.admin, "subscriber");
    const client = wsClient(t.app.wsUrl, u.token);
    clients.push(client);
    const held = Array.from({ length: 20 }, () => hold(client, `subscription { clusterStatsUpdated(window: "PT1H") { ended } }`));
    // Every stream open and pushed its first figures.
    await waitFor(async () => held.every((h) => h.pushed > 0 || h.ended), 10_000);
    expect(held.filter((h) => h.pushed > 0)).toHaveLength(20);
    // Two more, of either kind, are refused while the 20 stay open.
    const stats = await collect(client, `subscription { clusterStatsUpdated(window: "PT1H") { ended } }`, {}, () => false, 3_000).done;
    const runs = await collect(client, `subscription { runUpdated { id } }`, {}, () => false, 3_000).done;
    for (const r of [stats, runs]) expectRefused(r);
    expectStillHeld(held);
  }, 60_000);

  it("count alertFired in the same budget", async () => {
    const u = await makeUser(t.app, t.admin, "alert-subscriber");
    const client = wsClient(t.app.wsUrl, u.token);
    clients.push(client);
    // alertFired pushes nothing when opened: the server has opened the 20 streams once it has
    // subscribed each of them to the alert bus (only this test subscribes to it meanwhile).
    const subscribed = vi.spyOn(t.app.services.alertBus, "subscribe");
    let held: Array<ReturnType<typeof hold>>;
    try {
      held = Array.from({ length: 20 }, () => hold(client, `subscription { alertFired { deliveryId } }`));
      await waitFor(async () => subscribed.mock.calls.length >= 20 || held.some((h) => h.ended), 10_000);
      expect(subscribed.mock.calls).toHaveLength(20);
    } finally {
      subscribed.mockRestore();
    }
    for (const q of [`subscription { runUpdated { id } }`, `subscription { alertFired { deliveryId } }`]) {
      expectRefused(await collect(client, q, {}, () => false, 3_000).done);
    }
    expectStillHeld(held);
  }, 60_000);
});

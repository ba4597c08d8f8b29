/**
 * FIRE_MISSED end to end: an every-second job with the FIRE_ONCE misfire policy, its scheduler down
 * for over 3 s (late tolerance 0.5 s), so the slots of the downtime but the latest are recorded
 * MISSED in the ledger; a rule on the job receives each of them once, signed, and nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/core/http-signing.js";
import { makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk, waitFor } from "../helpers/graphql.js";
import { startReceiver, type Receiver } from "./receiver.js";

const t = useTestApp({
  env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT1S" },
  scheduler: { lateToleranceMs: 500, stageAheadMs: 0 },
});
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
});

interface Fire {
  _id: string;
  outcome: string;
}

describe("FIRE_MISSED", () => {
  it("each slot the misfire policy did not run while the scheduler was down is received once, and no other slot", async () => {
    const u = await makeUser(t.app, t.admin, "missed-slots");
    const secret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(t.app.url, `mutation { rotateHttpSigningSecret { secret } }`, {}, u.token)).rotateHttpSigningSecret.secret;
    const job = (
      await gqlOk<{ createJob: { id: string } }>(
        t.app.url,
        `mutation { createJob(input: { name: "missed", schedule: { kind: CRON, cron: "* * * * * *" }, misfire: FIRE_ONCE, spec: { kind: COMMAND, command: "true" } }) { id } }`,
        {},
        u.token,
      )
    ).createJob.id;
    await gqlOk(t.app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: { name: "misses", on: ["FIRE_MISSED"], jobId: job, webhook: { url: `${rx.base}/misses` } } }, u.token);
    const fires = () => t.app.services.mongo.c.fires.find({ jobId: job } as never).toArray() as unknown as Promise<Fire[]>;
    await waitFor(async () => (await fires()).some((f) => f.outcome === "FIRED"), 20_000);

    await t.app.scheduler!.stop();
    const down = Date.now();
    while (Date.now() < down + 3_300) await new Promise((r) => setTimeout(r, 100));
    await t.app.scheduler!.start();
    const missed = await waitFor(async () => {
      const f = (await fires()).filter((x) => x.outcome === "MISSED");
      return f.length >= 2 ? f : null;
    }, 20_000);
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }, u.token);
    const ledger = await fires();
    const missedKeys = ledger.filter((f) => f.outcome === "MISSED").map((f) => f._id);
    expect(missedKeys.length).toBeGreaterThanOrEqual(missed.length);

    // Received: each delivery id once (as a receiver de-duplicates), the slots it carried.
    const received = await waitFor(async () => {
      const byDelivery = new Map<string, string[]>();
      for (const m of rx.on("/misses")) byDelivery.set(String(m.headers["kairos-delivery-id"]), (m.json.alerts as Array<{ fireKey: string }>).map((a) => a.fireKey));
      const all = [...byDelivery.values()].flat();
      return missedKeys.every((k) => all.includes(k)) ? all : null;
    }, 30_000);
    expect([...received].sort()).toEqual([...missedKeys].sort());
    const msg = rx.on("/misses")[0]!;
    expect(msg.json.events).toEqual(["FIRE_MISSED"]);
    expect(msg.json.alerts[0].detail).toMatch(/ was MISSED/);
    expect(verifySignature(String(msg.headers["kairos-signature"]), secret, String(msg.headers["kairos-delivery-id"]), msg.body, Math.floor(Date.now() / 1000))).toBe(true);
  });
});

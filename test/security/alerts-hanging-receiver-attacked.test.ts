/**
 * Attack: one user's webhook receivers that accept the connection and never answer must not hold
 * back another user's alert. Alice has 40 rules on RUN_FAILED pointing at a receiver that hangs;
 * one failed run of hers makes 40 deliveries. Bob's failed run, a moment later, must reach his
 * (healthy) receiver about as fast as it would alone, not after Alice's calls time out (10 s each,
 * 16 at once, the engine's pass blocked on them: src/core/alerts/dispatcher.ts send()).
 */
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gqlOk, waitFor } from "../helpers/graphql.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";
import { startReceiver, type Receiver } from "../alerts/receiver.js";

const t = useTestApp({ env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT3S" } });
let rx: Receiver;
let hang: Server;
const sockets: Socket[] = [];

beforeAll(async () => {
  rx = await startReceiver();
  hang = createServer((s) => {
    sockets.push(s); // read nothing, answer nothing
  });
  await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => hang.close(r));
  await rx.close();
});

async function rule(token: string, name: string, url: string): Promise<void> {
  await gqlOk(t.app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: { name, on: ["RUN_FAILED"], webhook: { url } } }, token);
}

describe("a hanging webhook receiver", () => {
  it("does not delay another user's alert", async () => {
    const hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/never`;
    const alice = await makeUser(t.app, t.admin, "alice-hangs");
    const bob = await makeUser(t.app, t.admin, "bob-waits");
    for (let i = 0; i < 40; i++) await rule(alice.token, `hang ${i}`, hangUrl);
    await rule(bob.token, "bob", `${rx.base}/bob`);

    await finishedRun(t.app.url, alice.token, await submitJob(t.app.url, alice.token, { command: "exit 1" }));
    // Alice's calls are on the wire and hanging (at most 4 of one owner's at once since the send pool;
    // 16 before, the whole batch of the pass).
    await waitFor(async () => sockets.length >= 4, 30_000);
    const bobRun = await finishedRun(t.app.url, bob.token, await submitJob(t.app.url, bob.token, { command: "exit 1" }));
    const ended = Date.now();
    await waitFor(async () => rx.on("/bob").length > 0, 60_000);
    const delayMs = Date.now() - ended;
    expect(rx.on("/bob")[0]!.json.runIds).toEqual([bobRun.id]);
    // Alone, Bob's alert arrives within a pass or two of the scan lag (~1-2 s); 8 s leaves room for load.
    expect(delayMs).toBeLessThan(8_000);
  }, 120_000);
});

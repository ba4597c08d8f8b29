/**
 * Alert rules over the API: create, list, read, update, mute, delete; per-user isolation (another
 * user's rule is NOT_FOUND); the per-user limit; refusals that say what was wrong; testAlertRule
 * sending a signed message to a local receiver; a webhook to an address KAIROS_ALERT_ALLOWED_CIDRS
 * does not allow refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/core/http-signing.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeJob, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { startReceiver, type Receiver } from "./receiver.js";

const t = useTestApp({ env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_MAX_RULES: "4" } });
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
});

const RULE = `id ownerId name on jobId dagId cluster webhook { url slack } mutedUntil failureRate { window threshold minRuns } queueLateness deadline`;

async function create(token: string, input: Record<string, unknown>) {
  return gql<{ createAlertRule: Record<string, any> }>(t.app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { ${RULE} } }`, { i: input }, token);
}

describe("alert rules", () => {
  it("are created, read, changed, muted and deleted by their owner", async () => {
    const u = await makeUser(t.app, t.admin, "alice");
    const jobId = await makeJob(t.app, u.token, "nightly");
    const r = await create(u.token, { name: "nightly fails", on: ["RUN_FAILED", "RUN_DEAD"], jobId, webhook: { url: `${rx.base}/a` } });
    expect(r.errors).toBeUndefined();
    const rule = r.data!.createAlertRule;
    expect(rule).toMatchObject({ name: "nightly fails", on: ["RUN_FAILED", "RUN_DEAD"], jobId, cluster: false, webhook: { url: `${rx.base}/a`, slack: false }, mutedUntil: null });

    const list = await gqlOk<{ alertRules: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `{ alertRules { edges { node { id } } } }`, {}, u.token);
    expect(list.alertRules.edges.map((e) => e.node.id)).toEqual([rule.id]);

    const upd = await gqlOk<{ updateAlertRule: Record<string, any> }>(
      t.app.url,
      `mutation($id: ID!) { updateAlertRule(id: $id, input: { on: [FAILURE_RATE], failureRate: { window: "PT10M", threshold: 0.5, minRuns: 3 }, webhook: { url: "${rx.base}/b", slack: true } }) { ${RULE} } }`,
      { id: rule.id },
      u.token,
    );
    expect(upd.updateAlertRule).toMatchObject({ name: "nightly fails", on: ["FAILURE_RATE"], failureRate: { window: "PT10M", threshold: 0.5, minRuns: 3 }, webhook: { slack: true } });

    const until = new Date(Date.now() + 3600_000).toISOString();
    const muted = await gqlOk<{ muteAlertRule: { mutedUntil: string } }>(t.app.url, `mutation($id: ID!, $u: DateTime) { muteAlertRule(id: $id, until: $u) { mutedUntil } }`, { id: rule.id, u: until }, u.token);
    expect(new Date(muted.muteAlertRule.mutedUntil).toISOString()).toBe(until);
    const past = await gql(t.app.url, `mutation($id: ID!) { muteAlertRule(id: $id, until: "2000-01-01T00:00:00Z") { id } }`, { id: rule.id }, u.token);
    expect(code(past)).toBe("BAD_USER_INPUT");
    expect(message(past)).toMatch(/until: must be in the future/);

    const del = await gqlOk<{ deleteAlertRule: boolean }>(t.app.url, `mutation($id: ID!) { deleteAlertRule(id: $id) }`, { id: rule.id }, u.token);
    expect(del.deleteAlertRule).toBe(true);
    const gone = await gql(t.app.url, `query($id: ID!) { alertRule(id: $id) { id } }`, { id: rule.id }, u.token);
    expect(code(gone)).toBe("NOT_FOUND");
  });

  it("are NOT_FOUND to another user, for every operation", async () => {
    const a = await makeUser(t.app, t.admin, "owner-a");
    const b = await makeUser(t.app, t.admin, "stranger-b");
    const r = await create(a.token, { name: "mine", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/a` } });
    const id = r.data!.createAlertRule.id as string;
    const ops = [
      `query($id: ID!) { alertRule(id: $id) { id } }`,
      `mutation($id: ID!) { updateAlertRule(id: $id, input: { name: "x" }) { id } }`,
      `mutation($id: ID!) { deleteAlertRule(id: $id) }`,
      `mutation($id: ID!) { muteAlertRule(id: $id, until: null) { id } }`,
      `mutation($id: ID!) { testAlertRule(id: $id) { id } }`,
      `query($id: ID!) { alertDeliveries(ruleId: $id) { edges { node { id } } } }`,
    ];
    for (const op of ops) expect(code(await gql(t.app.url, op, { id }, b.token)), op).toBe("NOT_FOUND");
    expect((await gqlOk<{ alertRules: { edges: unknown[] } }>(t.app.url, `{ alertRules { edges { node { id } } } }`, {}, b.token)).alertRules.edges).toEqual([]);
    // Nor may a rule watch another user's job.
    const jobId = await makeJob(t.app, a.token, "a-job");
    expect(code(await create(b.token, { name: "spy", on: ["RUN_FAILED"], jobId, webhook: { url: `${rx.base}/a` } }))).toBe("NOT_FOUND");
    // An administrator sees it.
    const all = await gqlOk<{ alertRules: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `{ alertRules(all: true, first: 100) { edges { node { id } } } }`, {}, t.admin);
    expect(all.alertRules.edges.map((e) => e.node.id)).toContain(id);
  });

  it("refuses bad input with what was wrong and what is allowed", async () => {
    const u = await makeUser(t.app, t.admin, "careless");
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: "", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/a` } }, /name: must be 1 to 100 characters/],
      [{ name: "n", on: [], webhook: { url: `${rx.base}/a` } }, /on: name at least one event: RUN_FAILED, /],
      [{ name: "n", on: ["RUN_FAILED"], webhook: { url: "ftp://x.example/" } }, /webhook.url: scheme ftp: is not allowed: http or https only/],
      [{ name: "n", on: ["RUN_FAILED"], webhook: { url: "not a url" } }, /webhook.url: "not a url" has no scheme \(start it with https:\/\/ or http:\/\/\); give an absolute URL/],
      [{ name: "n", on: ["FAILURE_RATE"], webhook: { url: `${rx.base}/a` } }, /failureRate: a rule on FAILURE_RATE needs failureRate/],
      [{ name: "n", on: ["FAILURE_RATE"], failureRate: { window: "PT10M", threshold: 1.5 }, webhook: { url: `${rx.base}/a` } }, /failureRate.threshold: .*above 0 and at most 1 \(got 1.5\)/],
      [{ name: "n", on: ["QUEUE_LATENESS"], webhook: { url: `${rx.base}/a` } }, /queueLateness: a rule on QUEUE_LATENESS needs queueLateness/],
      [{ name: "n", on: ["RUN_FAILED"], queueLateness: "PT1M", webhook: { url: `${rx.base}/a` } }, /queueLateness: is only for a rule on QUEUE_LATENESS/],
      [{ name: "n", on: ["NODE_LOST"], webhook: { url: `${rx.base}/a` } }, /on: NODE_LOST is about the cluster's nodes: only a cluster-wide rule/],
      [{ name: "n", on: ["RUN_FAILED"], cluster: true, webhook: { url: `${rx.base}/a` } }, /cluster: only administrators may make cluster-wide rules/],
      [{ name: "n", on: ["RUN_FAILED"], jobId: "a", dagId: "b", webhook: { url: `${rx.base}/a` } }, /jobId: give jobId or dagId, not both/],
    ];
    for (const [input, want] of cases) {
      const r = await create(u.token, input);
      expect(code(r), JSON.stringify(input)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(want);
    }
    const unknown = await create(u.token, { name: "n", on: ["RUN_EXPLODED"], webhook: { url: `${rx.base}/a` } });
    expect(unknown.errors?.[0]?.message).toMatch(/RUN_EXPLODED/);
  });

  it("limits how many rules a user has (KAIROS_ALERT_MAX_RULES)", async () => {
    const u = await makeUser(t.app, t.admin, "collector");
    for (let i = 0; i < 4; i++) expect((await create(u.token, { name: `r${i}`, on: ["RUN_FAILED"], webhook: { url: `${rx.base}/a` } })).errors).toBeUndefined();
    const over = await create(u.token, { name: "r5", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/a` } });
    expect(code(over)).toBe("RESOURCE_EXHAUSTED");
    expect(message(over)).toMatch(/4 alert rules, the most allowed \(KAIROS_ALERT_MAX_RULES\)/);
  });

  it("testAlertRule sends a signed message and records it; an address not allowed is refused", async () => {
    const u = await makeUser(t.app, t.admin, "tester");
    const secret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(t.app.url, `mutation { rotateHttpSigningSecret { secret } }`, {}, u.token)).rotateHttpSigningSecret.secret;
    const rule = (await create(u.token, { name: "t", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/test` } })).data!.createAlertRule;
    const sent = await gqlOk<{ testAlertRule: Record<string, any> }>(t.app.url, `mutation($id: ID!) { testAlertRule(id: $id) { id status attempts responseCode test } }`, { id: rule.id }, u.token);
    expect(sent.testAlertRule).toMatchObject({ status: "DELIVERED", attempts: 1, responseCode: 200, test: true });
    const got = rx.on("/test");
    expect(got).toHaveLength(1);
    expect(got[0]!.json).toMatchObject({ deliveryId: sent.testAlertRule.id, test: true, rule: { id: rule.id, name: "t" } });
    expect(got[0]!.headers["kairos-delivery-id"]).toBe(sent.testAlertRule.id);
    expect(verifySignature(String(got[0]!.headers["kairos-signature"]), secret, sent.testAlertRule.id, got[0]!.body, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifySignature(String(got[0]!.headers["kairos-signature"]), "whsec_wrong", sent.testAlertRule.id, got[0]!.body, Math.floor(Date.now() / 1000))).toBe(false);

    const history = await gqlOk<{ alertDeliveries: { edges: Array<{ node: { id: string; status: string } }> } }>(t.app.url, `query($id: ID!) { alertDeliveries(ruleId: $id) { edges { node { id status } } } }`, { id: rule.id }, u.token);
    expect(history.alertDeliveries.edges.map((e) => e.node)).toEqual([{ id: sent.testAlertRule.id, status: "DELIVERED" }]);

    // 127.0.0.2 is loopback too, but only 127.0.0.1/32 is allowed: refused as the rule is made
    // (and at delivery, test/alerts/webhook-targets.test.ts).
    const port = new URL(rx.base).port;
    const blocked = await create(u.token, { name: "b", on: ["RUN_FAILED"], webhook: { url: `http://127.0.0.2:${port}/x` } });
    expect(code(blocked)).toBe("BAD_USER_INPUT");
    expect(message(blocked)).toMatch(/^webhook\.url: 127\.0\.0\.2 is refused: .*alert webhooks may reach public addresses only; an admin can allow a range with KAIROS_ALERT_ALLOWED_CIDRS/);
    expect(rx.on("/x")).toHaveLength(0);
  });

  it("go with their owner when the user is deleted", async () => {
    const u = await makeUser(t.app, t.admin, "leaving");
    const id = (await create(u.token, { name: "mine", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/a` } })).data!.createAlertRule.id as string;
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { userId } }`, { id: u.id }, t.admin);
    const all = await gqlOk<{ alertRules: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `{ alertRules(all: true, first: 100) { edges { node { id } } } }`, {}, t.admin);
    expect(all.alertRules.edges.map((e) => e.node.id)).not.toContain(id);
  });
});

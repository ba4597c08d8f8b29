/**
 * An alert rule's webhook that the sender would refuse (loopback, private, link-local, … while
 * KAIROS_ALERT_ALLOWED_CIDRS does not allow it) is refused as the rule is made or its webhook
 * changed, saying what the name resolved to and what opens it, by the same check as every
 * delivery; nothing connects to the URL then. A rule whose URL leads there later (a name pointed
 * elsewhere, a rule saved before the check, a range closed since) is still refused at delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { startReceiver, type Receiver } from "./receiver.js";

// No KAIROS_ALERT_ALLOWED_CIDRS: public addresses only.
const t = useTestApp();
let rx: Receiver;
let port: string;

beforeAll(async () => {
  rx = await startReceiver();
  port = new URL(rx.base).port;
});
afterAll(async () => {
  await rx.close();
});

const CREATE = `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id webhook { url } } }`;
const UPDATE = `mutation($id: ID!, $i: UpdateAlertRuleInput!) { updateAlertRule(id: $id, input: $i) { id webhook { url } } }`;
const NOT_PUBLIC = "it is not a public address (loopback, private, link-local, unique-local, multicast or reserved)";
const OWN = (a: string) => `it is one of this cluster's own addresses or a denied one (an own address is opened only by naming it exactly, as ${a})`;
const OPENS = "alert webhooks may reach public addresses only; an admin can allow a range with KAIROS_ALERT_ALLOWED_CIDRS";

const rulesOf = async (token: string) =>
  (await gqlOk<{ alertRules: { edges: Array<{ node: { id: string; webhook: { url: string } } }> } }>(t.app.url, `{ alertRules { edges { node { id webhook { url } } } } }`, {}, token)).alertRules.edges.map((e) => e.node);

describe("alert webhooks the sender would refuse", () => {
  it("are refused at createAlertRule, saying the address and the setting that opens it", async () => {
    const u = await makeUser(t.app, t.admin, "hooked");
    const cases: Array<[string, string]> = [
      // Loopback: this node's own addresses, which only an exact entry opens.
      [`http://127.0.0.1:${port}/a`, `webhook.url: 127.0.0.1 is refused: ${OWN("127.0.0.1/32")}. ${OPENS}`],
      [`http://localhost:${port}/a`, `webhook.url: localhost resolves to 127.0.0.1, which is refused: ${OWN("127.0.0.1/32")}. ${OPENS}`],
      [`http://[::1]:${port}/a`, `webhook.url: ::1 is refused: ${OWN("::1/128")}. ${OPENS}`],
      [`http://2130706433:${port}/a`, `webhook.url: 127.0.0.1 is refused: ${OWN("127.0.0.1/32")}. ${OPENS}`],
      [`http://127.0.0.2:${port}/a`, `webhook.url: 127.0.0.2 is refused: ${NOT_PUBLIC}. ${OPENS}`],
      ["http://169.254.169.254/latest/meta-data/", `webhook.url: 169.254.169.254 is refused: ${NOT_PUBLIC}. ${OPENS}`],
      ["https://10.1.2.3/hook", `webhook.url: 10.1.2.3 is refused: ${NOT_PUBLIC}. ${OPENS}`],
      [`http://0.0.0.0:${port}/a`, `webhook.url: 0.0.0.0 is refused: it is an unspecified address. ${OPENS}`],
    ];
    for (const [url, says] of cases) {
      const r = await gql(t.app.url, CREATE, { i: { name: "local", on: ["RUN_FAILED"], webhook: { url } } }, u.token);
      expect(r.errors?.[0], url).toMatchObject({ message: says, extensions: { code: "BAD_USER_INPUT", field: "webhook.url" } });
    }
    expect(await rulesOf(u.token)).toEqual([]);
    expect(rx.received).toEqual([]);
  });

  it("are refused at updateAlertRule, and the rule keeps its webhook", async () => {
    const u = await makeUser(t.app, t.admin, "moving");
    // A public address is accepted without connecting to it; a name that does not resolve now is left to delivery.
    const made = await gqlOk<{ createAlertRule: { id: string } }>(t.app.url, CREATE, { i: { name: "public", on: ["RUN_FAILED"], webhook: { url: "http://8.8.8.8/hook" } } }, u.token);
    await gqlOk(t.app.url, CREATE, { i: { name: "unresolved", on: ["RUN_FAILED"], webhook: { url: "https://hooks.invalid/x" } } }, u.token);
    const id = made.createAlertRule.id;
    const r = await gql(t.app.url, UPDATE, { id, i: { webhook: { url: `http://localhost:${port}/b` } } }, u.token);
    expect(r.errors?.[0]).toMatchObject({ message: `webhook.url: localhost resolves to 127.0.0.1, which is refused: ${OWN("127.0.0.1/32")}. ${OPENS}`, extensions: { code: "BAD_USER_INPUT", field: "webhook.url" } });
    expect((await rulesOf(u.token)).find((x) => x.id === id)?.webhook.url).toBe("http://8.8.8.8/hook");
    // Other changes to a rule do not look at its webhook again.
    await gqlOk(t.app.url, UPDATE, { id, i: { name: "renamed" } }, u.token);
  });

  it("are still refused at delivery when the URL leads there after the rule was saved", async () => {
    const u = await makeUser(t.app, t.admin, "later");
    const made = await gqlOk<{ createAlertRule: { id: string } }>(t.app.url, CREATE, { i: { name: "later", on: ["RUN_FAILED"], webhook: { url: "https://hooks.invalid/later" } } }, u.token);
    const id = made.createAlertRule.id;
    // As a rule saved before the check was made, or under a range an administrator has closed since.
    await t.app.services.mongo.db.collection("alertRules").updateOne({ _id: id as never }, { $set: { "webhook.url": `${rx.base}/later` } });
    const sent = await gqlOk<{ testAlertRule: { status: string; error: string } }>(t.app.url, `mutation($id: ID!) { testAlertRule(id: $id) { status error } }`, { id }, u.token);
    expect(sent.testAlertRule).toEqual({ status: "FAILED", error: expect.stringMatching(new RegExp(`^refused to connect to 127\\.0\\.0\\.1: .*${OPENS}`)) });
    expect(rx.on("/later")).toEqual([]);
  });
});

/**
 * Attacks on alert rules' input: the per-user limit under concurrent creations, names with control
 * and bidi characters, a deadline longer than alertDeadlines keeps its records (30 days TTL).
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const t = useTestApp({ env: { KAIROS_ALERT_MAX_RULES: "4" } });

const create = (token: string, input: Record<string, unknown>) =>
  gql<{ createAlertRule: { id: string } }>(t.app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: input }, token);
const hook = { url: "https://hooks.example.com/k" };

describe("alert rule input attacked", () => {
  it("KAIROS_ALERT_MAX_RULES holds against creations sent at once", async () => {
    const u = await makeUser(t.app, t.admin, "racer");
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => create(u.token, { name: `r${i}`, on: ["RUN_FAILED"], webhook: hook })));
    const made = results.filter((r) => !r.errors).length;
    const list = await gqlOk<{ alertRules: { edges: unknown[]; pageInfo: { hasNextPage: boolean } } }>(
      t.app.url,
      `{ alertRules(first: 100) { edges { node { id } } pageInfo { hasNextPage } } }`,
      {},
      u.token,
    );
    expect(list.alertRules.edges.length).toBeLessThanOrEqual(4);
    expect(list.alertRules.pageInfo.hasNextPage).toBe(false);
    expect(made).toBeLessThanOrEqual(4);
    for (const r of results.filter((x) => x.errors)) expect(code(r)).toBe("RESOURCE_EXHAUSTED");
  });

  it("a name with control or bidi characters is refused", async () => {
    const u = await makeUser(t.app, t.admin, "namer");
    for (const name of ["a\u0000b", "evil\u202etxt.exe", "two\nlines"]) {
      const r = await create(u.token, { name, on: ["RUN_FAILED"], webhook: hook });
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/^name: .*control/);
    }
  });

  it("a deadline past what alertDeadlines keeps (30 days) is refused, saying the range", async () => {
    const u = await makeUser(t.app, t.admin, "patient");
    for (const deadline of ["P31D", "P36500D"]) {
      const r = await create(u.token, { name: "slow", on: ["DEADLINE_MISSED"], deadline, webhook: hook });
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/^deadline: must be from PT1S to P/);
    }
  });
});

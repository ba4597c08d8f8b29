/**
 * `alertRules` is a Relay connection (issue #33): `first` (1–100, default 20) and an opaque
 * `after`; newest first with the rule's id as tiebreak, so walking the pages while rules are made
 * and deleted never repeats or skips one that was there all along; another user's rules never
 * appear (administrators: a user's with userId, everyone's with all: true); the index that serves
 * the order replaces the old one at start.
 */
import { describe, expect, it } from "vitest";
import { ensureAlertIndexes } from "../../src/store/index.js";
import type { AlertRuleDoc } from "../../src/domain/index.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { walk, type Conn } from "../helpers/paging.js";

const t = useTestApp({ env: { KAIROS_ALERT_MAX_RULES: "60" } });

interface RuleNode {
  id: string;
  ownerId: string;
  name: string;
  createdAt: string;
}

const RULES = `query($userId: ID, $all: Boolean, $first: Int, $after: String) {
  alertRules(userId: $userId, all: $all, first: $first, after: $after) { edges { cursor node { id ownerId name createdAt } } pageInfo { hasNextPage endCursor } } }`;
const CREATE = `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`;
const DELETE = `mutation($id: ID!) { deleteAlertRule(id: $id) }`;
const hook = { url: "https://hooks.example.com/paging" };

async function rulesPage(token: string, vars: Record<string, unknown>): Promise<Conn<RuleNode>> {
  return (await gqlOk<{ alertRules: Conn<RuleNode> }>(t.app.url, RULES, vars, token)).alertRules;
}
async function createRule(token: string, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await gqlOk<{ createAlertRule: { id: string } }>(t.app.url, CREATE, { i: { name, on: ["RUN_FAILED"], webhook: hook, ...extra } }, token)).createAlertRule.id;
}
async function deleteRule(token: string, id: string): Promise<void> {
  await gqlOk(t.app.url, DELETE, { id }, token);
}


/** True when `nodes` are newest first, a rule's id deciding between rules of one instant. */
function newestFirst(nodes: RuleNode[]): boolean {
  return nodes.every((n, i) => {
    if (i === 0) return true;
    const prev = nodes[i - 1]!;
    const [a, b] = [Date.parse(prev.createdAt), Date.parse(n.createdAt)];
    return a > b || (a === b && prev.id > n.id);
  });
}

describe("alertRules is a connection", () => {
  it("walks a user's rules newest first while rules are made and deleted, and never shows another user's", async () => {
    const u = await makeUser(t.app, t.admin, "rule-pager");
    const other = await makeUser(t.app, t.admin, "rule-pager-other");
    for (let i = 0; i < 12; i++) await createRule(u.token, `r${i}`);
    await createRule(other.token, "theirs-before");
    const before = (await rulesPage(u.token, { first: 100 })).edges.map((e) => e.node);
    expect(before).toHaveLength(12);
    expect(newestFirst(before)).toBe(true);
    const ids = before.map((r) => r.id);

    // Between pages: two new rules (newer than every cursor), one of the other user's, one seen rule
    // deleted and one not yet seen deleted.
    const deletedAhead: string[] = [];
    const made: string[] = [];
    const all = await walk(
      (after) => rulesPage(u.token, { first: 5, after }),
      async (page) => {
        made.push(await createRule(u.token, `new-a${page}`), await createRule(u.token, `new-b${page}`));
        await createRule(other.token, `theirs-${page}`);
        await deleteRule(u.token, ids[page * 5 - 1]!);
        const ahead = ids[page * 5 + 1];
        if (ahead) {
          await deleteRule(u.token, ahead);
          deletedAhead.push(ahead);
        }
      },
    );
    expect(deletedAhead).toHaveLength(2);
    // None repeated, none that was there all along skipped, none made meanwhile, none deleted before its page.
    expect(all.map((r) => r.id)).toEqual(ids.filter((id) => !deletedAhead.includes(id)));
    expect(all.every((r) => r.ownerId === u.id)).toBe(true);
    // The rules made during the walk are on the first page of a new walk.
    const fresh = await rulesPage(u.token, { first: made.length });
    expect(new Set(fresh.edges.map((e) => e.node.id))).toEqual(new Set(made));
    expect(fresh.pageInfo.hasNextPage).toBe(true);
    // The other user sees only theirs.
    const theirs = await walk((after) => rulesPage(other.token, { first: 1, after }), async () => {});
    expect(theirs.map((r) => r.name).sort()).toEqual(["theirs-1", "theirs-2", "theirs-before"]);
  });

  it("orders rules made at the same instant by id: pages of one never repeat or skip", async () => {
    const u = await makeUser(t.app, t.admin, "rule-same-ms");
    const at = new Date("2026-01-01T00:00:00Z");
    const docs: AlertRuleDoc[] = Array.from({ length: 7 }, (_, i) => ({
      _id: `rule-same-ms-${String(i).padStart(2, "0")}`,
      ownerId: u.id,
      name: `same${i}`,
      on: ["RUN_FAILED"],
      jobId: null,
      dagId: null,
      cluster: false,
      webhook: { url: hook.url, slack: false },
      mutedUntil: null,
      failureRate: null,
      queueLatenessMs: null,
      deadlineMs: null,
      silentForMs: null,
      createdAt: at,
      updatedAt: at,
      lastDeliveryAt: null,
    }));
    await t.app.services.mongo.db.collection<AlertRuleDoc>("alertRules").insertMany(docs);
    const all = await walk((after) => rulesPage(u.token, { first: 2, after }), async () => {});
    expect(all.map((r) => r.id)).toEqual(docs.map((d) => d._id).reverse());
  });

  it("bounds first, refuses a cursor it did not give, and keeps rules to their owner (administrators: anyone's, or all)", async () => {
    const a = await makeUser(t.app, t.admin, "rule-owner-a");
    const b = await makeUser(t.app, t.admin, "rule-owner-b");
    const ra = await createRule(a.token, "a-only");
    const rb = await createRule(b.token, "b-only");
    const cluster = await createRule(t.admin, "cluster-wide", { cluster: true });

    for (const first of [0, -1, 101]) {
      const r = await gql(t.app.url, RULES, { first }, a.token);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toBe(`first: must be from 1 to 100 (got ${first})`);
    }
    expect((await rulesPage(a.token, { first: 100 })).edges.map((e) => e.node.id)).toEqual([ra]);
    // Garbled, and a cursor of a list in name order (users: a name and an id).
    for (const after of ["not-a-cursor", Buffer.from(JSON.stringify(["rule-owner-a", a.id])).toString("base64url")]) {
      const r = await gql(t.app.url, RULES, { after }, a.token);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/^after: not a cursor returned by this API/);
    }

    // Default 20; a user sees their own rules only: naming another user gives an empty page, all is refused.
    const own = await rulesPage(b.token, {});
    expect(own.edges.map((e) => e.node.id)).toEqual([rb]);
    expect(own.pageInfo).toEqual({ hasNextPage: false, endCursor: own.edges[0]!.cursor });
    expect(await rulesPage(b.token, { userId: a.id })).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    const all = await gql(t.app.url, RULES, { all: true }, b.token);
    expect(code(all)).toBe("BAD_USER_INPUT");
    expect(message(all)).toMatch(/^all: only administrators may list every user's rules/);

    // Administrators: a user's with userId; their own (the cluster-wide rule) by default; everyone's with all, paged.
    expect((await rulesPage(t.admin, { userId: a.id })).edges.map((e) => e.node.id)).toEqual([ra]);
    expect((await rulesPage(t.admin, { first: 100 })).edges.map((e) => e.node.id)).toContain(cluster);
    const everyone = await walk((after) => rulesPage(t.admin, { all: true, first: 3, after }), async () => {});
    expect(newestFirst(everyone)).toBe(true);
    expect(new Set(everyone.map((r) => r.id)).size).toBe(everyone.length);
    expect(everyone.map((r) => r.id)).toEqual(expect.arrayContaining([ra, rb, cluster]));
    expect(everyone.length).toBe(await t.app.services.mongo.db.collection("alertRules").countDocuments());
  });

  it("is served by owner_created_id and created_id; the index they replace is dropped at start", async () => {
    const rules = t.app.services.mongo.db.collection("alertRules");
    await rules.createIndex({ ownerId: 1, createdAt: -1 }, { name: "owner_created" });
    await ensureAlertIndexes(t.app.services.mongo);
    const indexes = await rules.listIndexes().toArray();
    const byName = new Map(indexes.map((i) => [i.name as string, i.key as Record<string, number>]));
    expect(byName.get("owner_created_id")).toEqual({ ownerId: 1, createdAt: -1, _id: -1 });
    expect(byName.get("created_id")).toEqual({ createdAt: -1, _id: -1 });
    expect(byName.has("owner_created")).toBe(false);
    // Again, with nothing left to drop.
    await ensureAlertIndexes(t.app.services.mongo);
  });
});

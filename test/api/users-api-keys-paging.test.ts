/**
 * `users` and `apiKeys` are Relay connections (issue #33): `first` (1–100, default 20) and an
 * opaque `after`; a stable order with a unique tiebreak, so walking the pages while keys are
 * created and revoked, or users created and deleted, never repeats or skips one that was there
 * all along; their filters (revoked; role, name prefix); and who may list what.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message, PASSWORD } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { walk, type Conn } from "../helpers/paging.js";

const t = useTestApp();

interface KeyNode {
  id: string;
  name: string;
  revokedAt: string | null;
}
interface UserNode {
  id: string;
  username: string;
  role: string;
}

const KEYS = `query($userId: ID, $filter: ApiKeyFilter, $first: Int, $after: String) {
  apiKeys(userId: $userId, filter: $filter, first: $first, after: $after) { edges { cursor node { id name revokedAt } } pageInfo { hasNextPage endCursor } } }`;
const USERS = `query($filter: UserFilter, $first: Int, $after: String) {
  users(filter: $filter, first: $first, after: $after) { edges { cursor node { id username role } } pageInfo { hasNextPage endCursor } } }`;
const CREATE_KEY = `mutation($name: String!, $userId: ID) { createApiKey(name: $name, scope: READ_ONLY, userId: $userId) { apiKey { id } } }`;
const REVOKE_KEY = `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`;
const CREATE_USER = `mutation($u: String!, $p: String!, $r: Role) { createUser(username: $u, password: $p, role: $r) { id } }`;

async function keysPage(token: string, vars: Record<string, unknown>): Promise<Conn<KeyNode>> {
  return (await gqlOk<{ apiKeys: Conn<KeyNode> }>(t.app.url, KEYS, vars, token)).apiKeys;
}
async function usersPage(vars: Record<string, unknown>): Promise<Conn<UserNode>> {
  return (await gqlOk<{ users: Conn<UserNode> }>(t.app.url, USERS, vars, t.admin)).users;
}
async function createKey(token: string, name: string): Promise<string> {
  return (await gqlOk<{ createApiKey: { apiKey: { id: string } } }>(t.app.url, CREATE_KEY, { name }, token)).createApiKey.apiKey.id;
}
async function createUser(username: string, role = "USER"): Promise<string> {
  return (await gqlOk<{ createUser: { id: string } }>(t.app.url, CREATE_USER, { u: username, p: PASSWORD, r: role }, t.admin)).createUser.id;
}


describe("apiKeys is a connection", () => {
  it("walks a user's keys newest first while keys are created and revoked: none repeated, none that was there skipped", async () => {
    const u = await makeUser(t.app, t.admin, "pager-keys");
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await createKey(u.token, `k${i}`));
    const newestFirst = [...ids].reverse();

    // Everything (revoked ones included): between pages, two new keys, one seen key revoked and one not yet seen.
    const created: string[] = [];
    const all = await walk(
      (after) => keysPage(u.token, { first: 5, after }),
      async (page) => {
        created.push(await createKey(u.token, `new-a${page}`), await createKey(u.token, `new-b${page}`));
        await gqlOk(t.app.url, REVOKE_KEY, { id: newestFirst[page * 5 - 1] }, u.token);
        await gqlOk(t.app.url, REVOKE_KEY, { id: newestFirst[page * 5 + 1] }, u.token);
      },
    );
    // Keys made during the walk are newer than every cursor: none shows up, and no key is shown twice or missed.
    expect(all.map((k) => k.id)).toEqual(newestFirst);
    // Each key as it was when its page was read: the two revoked before their page show it, the two revoked after do not.
    expect(all.filter((k) => k.revokedAt !== null).map((k) => k.id)).toEqual([newestFirst[6], newestFirst[11]]);

    // Only keys not revoked: a key revoked before its page is read is left out, the others all come once.
    const before = (await keysPage(u.token, { first: 100 })).edges.map((e) => e.node);
    const stillActive = before.filter((k) => k.revokedAt === null).map((k) => k.id);
    const revokedDuring: string[] = [];
    const active = await walk(
      (after) => keysPage(u.token, { first: 4, after, filter: { revoked: false } }),
      async (page) => {
        await createKey(u.token, `new-c${page}`);
        const ahead = stillActive[page * 4 + 1];
        if (ahead) {
          await gqlOk(t.app.url, REVOKE_KEY, { id: ahead }, u.token);
          revokedDuring.push(ahead);
        }
      },
    );
    expect(revokedDuring.length).toBeGreaterThan(0);
    expect(active.map((k) => k.id)).toEqual(stillActive.filter((id) => !revokedDuring.includes(id)));
    expect(active.every((k) => k.revokedAt === null)).toBe(true);

    // Only revoked keys.
    const revoked = await keysPage(u.token, { first: 100, filter: { revoked: true } });
    expect(revoked.edges.length).toBeGreaterThan(0);
    expect(revoked.edges.every((e) => e.node.revokedAt !== null)).toBe(true);
    const notRevoked = await keysPage(u.token, { first: 100, filter: { revoked: false } });
    const everyKey = await keysPage(u.token, { first: 100 });
    expect(everyKey.edges.length).toBe(12 + created.length + 2);
    expect(revoked.edges.length + notRevoked.edges.length).toBe(everyKey.edges.length);
  });

  it("orders keys made at the same instant by id: pages of one never repeat or skip", async () => {
    const u = await makeUser(t.app, t.admin, "pager-same-ms");
    const at = new Date("2026-01-01T00:00:00Z");
    const docs = Array.from({ length: 7 }, (_, i) => ({
      _id: `same-ms-${String(i).padStart(2, "0")}`,
      ownerId: u.id,
      name: `same${i}`,
      prefix: "kairos_sameMs",
      hash: `same-ms-hash-${i}`,
      scope: "READ_ONLY" as const,
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      createdBy: u.id,
      createdAt: at,
    }));
    await t.app.services.mongo.c.apiKeys.insertMany(docs);
    const all = await walk((after) => keysPage(u.token, { first: 2, after }), async () => {});
    expect(all.map((k) => k.id)).toEqual(docs.map((d) => d._id).reverse());
  });

  it("bounds first, refuses a cursor it did not give, and keeps keys to their owner (administrators: anyone's)", async () => {
    const a = await makeUser(t.app, t.admin, "pager-owner-a");
    const b = await makeUser(t.app, t.admin, "pager-owner-b");
    const ka = await createKey(a.token, "a-only");
    await createKey(b.token, "b-only");

    for (const first of [0, -1, 101]) {
      const r = await gql(t.app.url, KEYS, { first }, a.token);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toBe(`first: must be from 1 to 100 (got ${first})`);
    }
    expect((await keysPage(a.token, { first: 100 })).edges.length).toBe(1);
    for (const after of ["not-a-cursor", Buffer.from(JSON.stringify(["pager-owner-a", a.id])).toString("base64url")]) {
      const r = await gql(t.app.url, KEYS, { after }, a.token);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/^after: not a cursor returned by this API/);
    }

    // Default 20; a user sees their own keys only and cannot name another's.
    expect((await keysPage(b.token, {})).edges.map((e) => e.node.name)).toEqual(["b-only"]);
    expect(code(await gql(t.app.url, KEYS, { userId: a.id }, b.token))).toBe("NOT_FOUND");
    expect((await keysPage(t.admin, { userId: a.id })).edges.map((e) => e.node.id)).toEqual([ka]);
  });
});

describe("users is a connection", () => {
  it("walks users by name while users are created and deleted: none repeated, none that was there skipped", async () => {
    const names = ["pg-b1", "pg-c1", "pg-d1", "pg-e1", "pg-f1", "pg-g1", "pg-h1"];
    const ids = new Map<string, string>();
    for (const n of names) ids.set(n, await createUser(n));
    const deleted: string[] = [];
    const seen = await walk(
      (after) => usersPage({ first: 2, after, filter: { usernamePrefix: "pg-" } }),
      async (page) => {
        // One name before everything seen, one after the cursor; and a user not yet seen deleted.
        await createUser(`pg-a${page}`);
        await createUser(`pg-z${page}`);
        const ahead = names[page * 2 + 1];
        if (ahead && page <= 2) {
          await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { userId } }`, { id: ids.get(ahead) }, t.admin);
          deleted.push(ahead);
        }
      },
    );
    const got = seen.map((u) => u.username);
    expect(new Set(got).size, "a user shown twice").toBe(got.length);
    expect([...got].sort()).toEqual(got);
    // Every user there all along and not deleted is shown; names before the cursor made meanwhile are not; after it, they are.
    expect(got.filter((n) => names.includes(n))).toEqual(names.filter((n) => !deleted.includes(n)));
    expect(got.filter((n) => n.startsWith("pg-a"))).toEqual([]);
    expect(got.filter((n) => n.startsWith("pg-z")).length).toBeGreaterThan(0);
    expect(deleted).toEqual(["pg-e1", "pg-g1"]);
  });

  it("filters by role and name prefix, bounds first, refuses bad prefixes and cursors, and is for administrators only", async () => {
    await createUser("flt-admin", "ADMIN");
    await createUser("flt-user");
    await createUser("FLT-upper");
    const admins = await usersPage({ first: 100, filter: { role: "ADMIN" } });
    expect(admins.edges.map((e) => e.node.username)).toEqual(["admin", "flt-admin"]);
    expect(admins.edges.every((e) => e.node.role === "ADMIN")).toBe(true);
    expect((await usersPage({ filter: { usernamePrefix: "flt-" } })).edges.map((e) => e.node.username)).toEqual(["flt-admin", "flt-user"]);
    expect((await usersPage({ filter: { usernamePrefix: "flt-", role: "USER" } })).edges.map((e) => e.node.username)).toEqual(["flt-user"]);
    expect((await usersPage({ filter: { usernamePrefix: "FLT" } })).edges.map((e) => e.node.username)).toEqual(["FLT-upper"]);
    expect((await usersPage({ filter: { usernamePrefix: "nobody-has-this" } })).edges).toEqual([]);

    for (const usernamePrefix of ["", "a b", "x".repeat(65), "ü"]) {
      const r = await gql(t.app.url, USERS, { filter: { usernamePrefix } }, t.admin);
      expect(code(r), JSON.stringify(usernamePrefix)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/^filter\.usernamePrefix: must be 1–64 of the characters a user name has/);
    }
    for (const first of [0, 101]) {
      const r = await gql(t.app.url, USERS, { first }, t.admin);
      expect(message(r)).toBe(`first: must be from 1 to 100 (got ${first})`);
    }
    // A cursor of another list (apiKeys: a time and an id) is not a users cursor.
    const keyCursor = Buffer.from(JSON.stringify([Date.now(), "x"])).toString("base64url");
    const r = await gql(t.app.url, USERS, { after: keyCursor }, t.admin);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(message(r)).toMatch(/^after: not a cursor returned by this list/);

    const plain = await makeUser(t.app, t.admin, "flt-plain");
    expect(code(await gql(t.app.url, USERS, {}, plain.token))).toBe("FORBIDDEN");
  });
});

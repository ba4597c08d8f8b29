/**
 * API keys over real HTTP and WebSocket: shown once and stored hashed; a READ_ONLY key reads but
 * gets FORBIDDEN on every mutation; expired, revoked and disabled-owner keys are refused (an open
 * subscription on a key is closed); keys cannot manage credentials; last use is recorded.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, makeJob, makeUser, message, watchJob } from "../helpers/accounts.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";

const t = useTestApp();

const CREATE = `mutation($name: String!, $scope: ApiKeyScope!, $expiresAt: DateTime, $userId: ID) {
  createApiKey(name: $name, scope: $scope, expiresAt: $expiresAt, userId: $userId) { key apiKey { id ownerId name prefix scope expiresAt lastUsedAt revokedAt } } }`;
const LIST = `query($userId: ID) { apiKeys(userId: $userId) { edges { node { id name prefix scope lastUsedAt revokedAt } } } }`;
type KeyList = { apiKeys: { edges: Array<{ node: Record<string, unknown> }> } };
const nodes = (d: Record<string, unknown>) => (d as KeyList).apiKeys.edges.map((e) => e.node);
const ME = `{ me { id username } }`;
const JOBS = `{ jobs { edges { node { id } } } }`;

async function createKey(token: string, name: string, scope: "READ_ONLY" | "READ_WRITE", extra: Record<string, unknown> = {}) {
  const d = await gqlOk<{ createApiKey: { key: string; apiKey: { id: string; ownerId: string; prefix: string; scope: string } } }>(
    t.app.url, CREATE, { name, scope, ...extra }, token);
  return d.createApiKey;
}

describe("API keys", () => {
  it("are shown once, stored as a SHA-256 only, listed without the secret, and act as their owner", async () => {
    const svc = await makeUser(t.app, t.admin, "svc-account");
    const created = await createKey(svc.token, "ci", "READ_WRITE");
    expect(created.key).toMatch(/^kairos_[A-Za-z0-9_-]{43}$/);
    expect(created.key.startsWith(created.apiKey.prefix)).toBe(true);
    expect(created.apiKey.ownerId).toBe(svc.id);

    const stored = await t.app.services.mongo.c.apiKeys.findOne({ _id: created.apiKey.id });
    expect(stored?.hash).toBe(createHash("sha256").update(created.key).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(created.key);
    const list = await gqlOk(t.app.url, LIST, {}, svc.token);
    expect(nodes(list)).toEqual([expect.objectContaining({ id: created.apiKey.id, name: "ci", scope: "READ_WRITE", revokedAt: null })]);
    expect(JSON.stringify(list)).not.toContain(created.key);

    expect((await gqlOk(t.app.url, ME, {}, created.key)).me).toEqual({ id: svc.id, username: "svc-account" });
    const job = await makeJob(t.app, created.key, "made-by-key");
    expect((await gqlOk(t.app.url, `query($id: ID!) { job(id: $id) { ownerId } }`, { id: job }, svc.token)).job.ownerId).toBe(svc.id);
    // Last use is recorded (cheaply: at most once a minute per key).
    const used = await waitFor(async () => (await t.app.services.mongo.c.apiKeys.findOne({ _id: created.apiKey.id }))?.lastUsedAt, 5_000);
    expect(used).toBeInstanceOf(Date);
  });

  it("READ_ONLY: queries work, every mutation is FORBIDDEN, nothing is written", async () => {
    const u = await makeUser(t.app, t.admin, "reader");
    const job = await makeJob(t.app, u.token, "readable");
    const ro = await createKey(u.token, "dashboard", "READ_ONLY");
    expect((await gqlOk(t.app.url, JOBS, {}, ro.key)).jobs.edges).toEqual([{ node: { id: job } }]);
    const mutations: Array<[string, Record<string, unknown>]> = [
      [`mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }],
      [`mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }],
      [`mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }],
      [`mutation { createJob(input: {name: "x", schedule: {kind: ONCE}, spec: {kind: COMMAND, command: "true"}}) { id } }`, {}],
      [`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: ro.apiKey.id }],
    ];
    for (const [q, v] of mutations) {
      const r = await gql(t.app.url, q, v, ro.key);
      expect(code(r), q).toBe("FORBIDDEN");
      expect(message(r)).toMatch(/read-only/);
    }
    const after = await gqlOk(t.app.url, `query($id: ID!) { job(id: $id) { paused runs { edges { node { id } } } } }`, { id: job }, u.token);
    expect(after.job).toEqual({ paused: false, runs: { edges: [] } });
    expect((await gqlOk(t.app.url, JOBS, {}, u.token)).jobs.edges).toHaveLength(1);
  });

  it("an expired key is refused", async () => {
    const u = await makeUser(t.app, t.admin, "expiring");
    const past = await gql(t.app.url, CREATE, { name: "old", scope: "READ_WRITE", expiresAt: new Date(Date.now() - 1000).toISOString() }, u.token);
    expect(code(past)).toBe("BAD_USER_INPUT");
    const k = await createKey(u.token, "short", "READ_WRITE", { expiresAt: new Date(Date.now() + 1_500).toISOString() });
    expect((await gqlOk(t.app.url, ME, {}, k.key)).me.id).toBe(u.id);
    const refused = await waitFor(async () => {
      const r = await gql(t.app.url, ME, {}, k.key);
      return code(r) === "UNAUTHENTICATED" ? r : null;
    }, 10_000);
    expect(message(refused)).toMatch(/expired/);
  });

  it("a revoked key is refused at once, also on an open subscription", async () => {
    const u = await makeUser(t.app, t.admin, "revoking");
    const job = await makeJob(t.app, u.token, "watched");
    const k = await createKey(u.token, "ws", "READ_ONLY");
    const sub = watchJob(t.app, k.key, job);
    await sub.delivering(() => gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, u.token));
    const revoked = await gqlOk(t.app.url, `mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }`, { id: k.apiKey.id }, u.token);
    expect(revoked.revokeApiKey.revokedAt).toBeTruthy();
    const r = await gql(t.app.url, ME, {}, k.key);
    expect(code(r)).toBe("UNAUTHENTICATED");
    expect(message(r)).toMatch(/revoked/);
    expect(await sub.closed).toEqual({ code: 4401, reason: expect.stringMatching(/revoked/) });
    await sub.dispose();
  });

  it("a disabled owner's keys stop working, HTTP and WebSocket, and work again when enabled", async () => {
    const u = await makeUser(t.app, t.admin, "keyowner");
    const job = await makeJob(t.app, u.token, "owned");
    const k = await createKey(u.token, "svc", "READ_WRITE");
    const sub = watchJob(t.app, k.key, job);
    await sub.delivering(() => gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, k.key));
    await gqlOk(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { id } }`, { id: u.id }, t.admin);
    expect(message(await gql(t.app.url, ME, {}, k.key))).toMatch(/disabled/);
    expect(await sub.closed).toEqual({ code: 4401, reason: expect.stringMatching(/disabled/) });
    await sub.dispose();
    await gqlOk(t.app.url, `mutation($id: ID!) { enableUser(userId: $id) { id } }`, { id: u.id }, t.admin);
    expect((await gqlOk(t.app.url, ME, {}, k.key)).me.id).toBe(u.id);
    // Deleting the owner deletes their keys.
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { apiKeysDeleted } }`, { id: u.id }, t.admin);
    expect(code(await gql(t.app.url, ME, {}, k.key))).toBe("UNAUTHENTICATED");
  });

  it("users manage only their own keys, admins anyone's; a key cannot create keys or change the password", async () => {
    const a = await makeUser(t.app, t.admin, "key-a");
    const b = await makeUser(t.app, t.admin, "key-b");
    const ka = await createKey(a.token, "a1", "READ_WRITE");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: ka.apiKey.id }, b.token))).toBe("NOT_FOUND");
    expect(code(await gql(t.app.url, LIST, { userId: a.id }, b.token))).toBe("NOT_FOUND");
    expect(code(await gql(t.app.url, CREATE, { name: "x", scope: "READ_ONLY", userId: a.id }, b.token))).toBe("NOT_FOUND");
    expect(nodes(await gqlOk(t.app.url, LIST, {}, b.token))).toEqual([]);

    const forA = await createKey(t.admin, "by-admin", "READ_ONLY", { userId: a.id });
    expect(forA.apiKey.ownerId).toBe(a.id);
    expect(nodes(await gqlOk(t.app.url, LIST, { userId: a.id }, t.admin)).map((k) => k.name).sort()).toEqual(["a1", "by-admin"]);

    const viaKey = await gql(t.app.url, CREATE, { name: "more", scope: "READ_WRITE" }, ka.key);
    expect(code(viaKey)).toBe("FORBIDDEN");
    const pw = await gql(t.app.url, `mutation { changePassword(currentPassword: "x", newPassword: "yet-another-passphrase") { token } }`, {}, ka.key);
    expect(code(pw)).toBe("FORBIDDEN");
    expect(message(await gql(t.app.url, ME, {}, "kairos_not-a-real-key"))).toBe("invalid API key");
  });
});

/**
 * The audit trail over the API (issue #31): who, when, from where, what and on which ids; the
 * before/after of a change reduced to what changed; secrets never stored (by field name, at any
 * depth); auditLog's paging and filters; a user reads only the calls they made.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, makeJob, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";
import { valueDigest } from "../../src/core/audit/index.js";

const t = useTestApp();

const LOG = `query($first: Int, $after: String, $filter: AuditLogFilter) {
  auditLog(first: $first, after: $after, filter: $filter) {
    edges { cursor node { seq action actor actorUserId actorUsername actorRole actorApiKeyId at address targetIds outcome error args before after } }
    pageInfo { hasNextPage endCursor } } }`;

type Entry = { seq: number; action: string; actor: string; actorUserId: string | null; actorApiKeyId: string | null; actorRole: string | null; at: string; address: string; targetIds: string[]; outcome: string; error: string | null; args: any; before: any; after: any };

async function entries(token: string, filter: Record<string, unknown> = {}, first = 100): Promise<Entry[]> {
  const d = await gqlOk<{ auditLog: { edges: Array<{ node: Entry }> } }>(t.app.url, LOG, { first, filter }, token);
  return d.auditLog.edges.map((e) => e.node);
}

describe("audit trail", () => {
  it("the contract's query: auditLog(first, after, filter) { edges { node { action actor at } } }", async () => {
    const u = await makeUser(t.app, t.admin, "contract-user");
    await makeJob(t.app, u.token, "contract-job");
    const d = await gqlOk(t.app.url, `query { auditLog(first: 5, after: null, filter: { actions: ["createJob"] }) { edges { node { action actor at } } } }`, {}, u.token);
    expect(d.auditLog.edges[0].node).toEqual({ action: "createJob", actor: "user:contract-user", at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it("records who, when, from where, the ids, the outcome, and an update's before/after as only what changed", async () => {
    const u = await makeUser(t.app, t.admin, "audit-alice");
    const t0 = Date.now();
    const job = await makeJob(t.app, u.token, "audited-job");
    await gqlOk(t.app.url, `mutation($id: ID!) { updateJob(id: $id, input: { description: "now described", priority: 7 }) { id } }`, { id: job }, u.token);
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }, u.token);
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }, u.token);

    const mine = await entries(u.token, { targetId: job });
    expect(mine.map((e) => e.action)).toEqual(["deleteJob", "pauseJob", "updateJob", "createJob"]);
    const [del, pause, update, create] = mine as [Entry, Entry, Entry, Entry];
    for (const e of mine) {
      expect(e).toMatchObject({ actor: "user:audit-alice", actorUserId: u.id, actorRole: "USER", actorApiKeyId: null, outcome: "OK", error: null });
      expect(e.address).toMatch(/127\.0\.0\.1|::1/);
      expect(Date.parse(e.at)).toBeGreaterThanOrEqual(t0 - 1000);
      expect(e.targetIds).toContain(job);
    }
    expect(create.before).toBeNull();
    expect(create.after).toMatchObject({ id: job, name: "audited-job", paused: false });
    expect(create.args.input.name).toBe("audited-job");
    // Only the fields that changed, each side with its value.
    expect(update.before).toMatchObject({ description: null, priority: 5 });
    expect(update.after).toMatchObject({ description: "now described", priority: 7 });
    expect(update.before).not.toHaveProperty("name");
    expect(pause.before).toMatchObject({ paused: false });
    expect(pause.after).toMatchObject({ paused: true });
    expect(del.before).toMatchObject({ id: job, name: "audited-job" });
    expect(del.after).toBeNull();
    // Entries are newest first and the seqs follow the calls.
    expect(mine.map((e) => e.seq)).toEqual([...mine.map((e) => e.seq)].sort((a, b) => b - a));
  });

  it("a refused call is recorded with its code and message, and without what its caller may not see", async () => {
    const owner = await makeUser(t.app, t.admin, "audit-owner");
    const mallory = await makeUser(t.app, t.admin, "audit-mallory");
    const job = await makeJob(t.app, owner.token, "not-mallorys");
    const r = await gql(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }, mallory.token);
    expect(code(r)).toBe("NOT_FOUND");
    const r2 = await gql(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { id } }`, { id: owner.id }, mallory.token);
    expect(code(r2)).toBe("FORBIDDEN");
    const [dis, pause] = await entries(mallory.token, { actions: ["pauseJob", "disableUser"] });
    expect(pause).toMatchObject({ action: "pauseJob", outcome: "NOT_FOUND", before: null, after: null, targetIds: [job] });
    expect(pause!.error).toContain(job);
    expect(dis).toMatchObject({ action: "disableUser", outcome: "FORBIDDEN", before: null, after: null, targetIds: [owner.id] });
    // An anonymous call is recorded too.
    const anon = await gql(t.app.url, `mutation { createJob(input: {name: "x", schedule: {kind: ONCE}, spec: {kind: COMMAND, command: "true"}}) { id } }`);
    expect(code(anon)).toBe("UNAUTHENTICATED");
    const [last] = await entries(t.admin, { actions: ["createJob"], outcome: "UNAUTHENTICATED" }, 1);
    expect(last).toMatchObject({ actor: "anonymous", actorUserId: null });
  });

  it("an API key's call names the key; a READ_ONLY key's refused mutation is recorded FORBIDDEN; an admin acting names its role", async () => {
    const u = await makeUser(t.app, t.admin, "audit-keys");
    const rw = (await gqlOk(t.app.url, `mutation { createApiKey(name: "ci", scope: READ_WRITE) { key apiKey { id } } }`, {}, u.token)).createApiKey;
    const ro = (await gqlOk(t.app.url, `mutation { createApiKey(name: "ro", scope: READ_ONLY) { key apiKey { id } } }`, {}, u.token)).createApiKey;
    const job = await makeJob(t.app, rw.key, "by-key");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, ro.key))).toBe("FORBIDDEN");
    const [made] = await entries(u.token, { actions: ["createJob"], actorApiKeyId: rw.apiKey.id });
    expect(made).toMatchObject({ actor: `apikey:${rw.apiKey.id} (audit-keys)`, actorApiKeyId: rw.apiKey.id, actorUserId: u.id, targetIds: [job] });
    const [refused] = await entries(u.token, { actorApiKeyId: ro.apiKey.id });
    expect(refused).toMatchObject({ action: "triggerJob", outcome: "FORBIDDEN", actorApiKeyId: ro.apiKey.id });
    // The administrator pauses the user's job: the entry is the administrator's, naming the job.
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }, t.admin);
    const [adminPause] = await entries(t.admin, { actions: ["pauseJob"], targetId: job });
    expect(adminPause).toMatchObject({ actor: "user:admin", actorRole: "ADMIN", before: { paused: false }, after: { paused: true } });
  });

  it("never stores a secret: passwords, API keys, signing secrets, tokens, secret-named environment values", async () => {
    const secrets = ["Very-Secret-Password-1", "new-Secret-Password-2", "hunter2-in-the-env", "ghp_tokenvalue-in-env"];
    const u = await gqlOk(t.app.url, `mutation($p: String!) { createUser(username: "audit-secrets", password: $p) { id } }`, { p: secrets[0] }, t.admin);
    const token = await login(t.app.url, "audit-secrets", secrets[0]!);
    const changed = await gqlOk(t.app.url, `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { token } }`, { c: secrets[0], n: secrets[1] }, token);
    await gql(t.app.url, `mutation { login(username: "audit-secrets", password: "a-Wrong-Password-3") { token } }`);
    const key = (await gqlOk(t.app.url, `mutation { createApiKey(name: "k", scope: READ_WRITE) { key } }`, {}, changed.changePassword.token)).createApiKey.key as string;
    const signing = (await gqlOk(t.app.url, `mutation { rotateHttpSigningSecret { secret } }`, {}, changed.changePassword.token)).rotateHttpSigningSecret.secret as string;
    await gqlOk(
      t.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "with-env", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true", env: { DB_PASSWORD: secrets[2], GITHUB_TOKEN: secrets[3], PLAIN: "visible" } } } },
      key,
    );
    const stored = JSON.stringify(await t.app.services.mongo.db.collection("audit").find({}).toArray());
    for (const s of [...secrets, "a-Wrong-Password-3", key, signing, token, changed.changePassword.token]) expect(stored).not.toContain(s);
    expect(stored).toContain("[redacted]");
    // What is not secret is kept: the user name tried; the environment's other values as digests.
    const [job] = await entries(t.admin, { actions: ["createJob"], actorUserId: u.createUser.id });
    // Environment values not named like secrets are kept as their SHA-256 (they were kept as given).
    expect(job!.args.input.spec.env).toEqual({ DB_PASSWORD: "[redacted]", GITHUB_TOKEN: "[redacted]", PLAIN: valueDigest("visible") });
    const [failed] = await entries(t.admin, { actions: ["login"], outcome: "UNAUTHENTICATED" }, 1);
    expect(failed!.args).toEqual({ password: "[redacted]", username: "audit-secrets" });
    // A successful login is the user's own entry.
    const logins = await entries(changed.changePassword.token, { actions: ["login"] });
    expect(logins).toEqual([expect.objectContaining({ outcome: "OK", actorUserId: u.createUser.id, actor: "user:audit-secrets" })]);
  });

  it("alert rules: an update and a mute keep what changed, a delete the whole rule; a webhook URL's token is not stored", async () => {
    const u = await makeUser(t.app, t.admin, "audit-alerts");
    const made = await gql(t.app.url, `mutation { createAlertRule(input: { name: "r1", on: [RUN_FAILED], webhook: { url: "https://hooks.example.com/x?token=hook-Secret-9" } }) { id } }`, {}, u.token);
    expect(made.errors).toBeUndefined();
    const id = made.data!.createAlertRule.id as string;
    await gqlOk(t.app.url, `mutation($id: ID!) { updateAlertRule(id: $id, input: { name: "r2" }) { id } }`, { id }, u.token);
    const until = new Date(Date.now() + 86_400_000).toISOString();
    await gqlOk(t.app.url, `mutation($id: ID!, $until: DateTime) { muteAlertRule(id: $id, until: $until) { id } }`, { id, until }, u.token);
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteAlertRule(id: $id) }`, { id }, u.token);
    const [del, mute, update, create] = await entries(u.token, { targetId: id });
    expect(create).toMatchObject({ action: "createAlertRule", before: null, after: { id, name: "r1" } });
    expect(update).toMatchObject({ action: "updateAlertRule", before: { name: "r1" }, after: { name: "r2" } });
    expect(mute).toMatchObject({ action: "muteAlertRule", before: { mutedUntil: null }, after: { mutedUntil: until } });
    expect(del).toMatchObject({ action: "deleteAlertRule", before: { id, name: "r2" }, after: null });
    expect(JSON.stringify(await t.app.services.mongo.db.collection("audit").find({ targetIds: id }).toArray())).not.toContain("hook-Secret-9");
  });

  it("a user reads only the calls they made; an administrator reads everyone's and filters by actor", async () => {
    const a = await makeUser(t.app, t.admin, "iso-a");
    const b = await makeUser(t.app, t.admin, "iso-b");
    const jobA = await makeJob(t.app, a.token, "iso-a-job");
    await makeJob(t.app, b.token, "iso-b-job");
    const seenByB = await entries(b.token);
    expect(seenByB.length).toBeGreaterThan(0);
    expect(seenByB.every((e) => e.actorUserId === b.id)).toBe(true);
    expect(await entries(b.token, { targetId: jobA })).toEqual([]);
    expect(code(await gql(t.app.url, LOG, { filter: { actorUserId: a.id } }, b.token))).toBe("NOT_FOUND");
    const byA = await entries(t.admin, { actorUserId: a.id });
    expect(byA.length).toBeGreaterThan(0);
    expect(byA.every((e) => e.actorUserId === a.id)).toBe(true);
    expect(code(await gql(t.app.url, `{ verifyAuditLog { ok } }`, {}, a.token))).toBe("FORBIDDEN");
  });

  it("pages newest first with cursors, and filters by action, target and time range; bad filters are refused with the reason", async () => {
    const u = await makeUser(t.app, t.admin, "audit-pages");
    const job = await makeJob(t.app, u.token, "paged");
    const from = new Date().toISOString();
    for (let i = 0; i < 5; i++) await gqlOk(t.app.url, `mutation($id: ID!, $d: String) { updateJob(id: $id, input: { description: $d }) { id } }`, { id: job, d: `d${i}` }, u.token);
    const to = new Date(Date.now() + 1).toISOString();
    const seen: Entry[] = [];
    let after: string | null = null;
    for (;;) {
      const d: any = await gqlOk(t.app.url, LOG, { first: 2, after, filter: { actions: ["updateJob"], targetId: job } }, u.token);
      seen.push(...d.auditLog.edges.map((e: { node: Entry }) => e.node));
      if (!d.auditLog.pageInfo.hasNextPage) break;
      after = d.auditLog.pageInfo.endCursor;
    }
    expect(seen.map((e) => e.after.description)).toEqual(["d4", "d3", "d2", "d1", "d0"]);
    const inRange = await entries(u.token, { from, to });
    expect(inRange.map((e) => e.action)).toEqual(["updateJob", "updateJob", "updateJob", "updateJob", "updateJob"]);
    expect(await entries(u.token, { to: from, actions: ["updateJob"] })).toEqual([]);
    const bad = await gql(t.app.url, LOG, { filter: { actions: ["makeCoffee"] } }, u.token);
    expect(code(bad)).toBe("BAD_USER_INPUT");
    expect(bad.errors![0]!.message).toContain('"makeCoffee" is not a mutation');
    expect(code(await gql(t.app.url, LOG, { filter: { from: to, to: from } }, u.token))).toBe("BAD_USER_INPUT");
    expect(code(await gql(t.app.url, LOG, { after: "bogus" }, u.token))).toBe("BAD_USER_INPUT");
    expect(code(await gql(t.app.url, LOG, { first: 101 }, u.token))).toBe("BAD_USER_INPUT");
  });
});

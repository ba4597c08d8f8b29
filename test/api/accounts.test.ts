/**
 * Accounts and tokens over real HTTP and WebSocket: tokens of deleted, disabled, never-existing
 * users, revoked, expired and `exp`-less tokens are refused; an open subscription is closed
 * (4401, with the reason) when its token expires or is revoked or its user is disabled or deleted;
 * changePassword, password rules, deleteUser's KEEP and DELETE; refused attempts are logged.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { capturedLogger, code, forgeToken, makeJob, makeUser, message, PASSWORD, watchJob } from "../helpers/accounts.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";

const logs = capturedLogger();
const t = useTestApp({ log: logs.log });

const ME = `{ me { id username } }`;
const trigger = (token: string, id: string) => gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token);

describe("tokens refused on HTTP", () => {
  it("refuses a token without exp, and one for a user id that never existed", async () => {
    const u = await makeUser(t.app, t.admin, "noexp");
    const noExp = forgeToken(t.app, { sub: u.id, noExp: true });
    const r = await gql(t.app.url, ME, {}, noExp);
    expect(code(r)).toBe("UNAUTHENTICATED");
    expect(message(r)).toMatch(/no expiry/);
    // The same claims with an exp are accepted: what was refused is the missing exp.
    expect((await gqlOk(t.app.url, ME, {}, forgeToken(t.app, { sub: u.id }))).me.id).toBe(u.id);

    const ghost = await gql(t.app.url, ME, {}, forgeToken(t.app, { sub: "0123456789abcdef01234567" }));
    expect(code(ghost)).toBe("UNAUTHENTICATED");
    expect(message(ghost)).toMatch(/does not exist/);
  });

  it("refuses an expired token", async () => {
    const u = await makeUser(t.app, t.admin, "expired");
    const r = await gql(t.app.url, ME, {}, forgeToken(t.app, { sub: u.id, expInSec: -10 }));
    expect(code(r)).toBe("UNAUTHENTICATED");
    expect(message(r)).toMatch(/expired/);
  });

  it("refuses revoked tokens; a new login works", async () => {
    const u = await makeUser(t.app, t.admin, "revoked");
    const revoked = await gqlOk(t.app.url, `mutation($id: ID!) { revokeTokens(userId: $id) { id } }`, { id: u.id }, u.token);
    expect(revoked.revokeTokens.id).toBe(u.id);
    const r = await gql(t.app.url, ME, {}, u.token);
    expect(code(r)).toBe("UNAUTHENTICATED");
    expect(message(r)).toMatch(/revoked/);
    const fresh = await login(t.app.url, "revoked", PASSWORD);
    expect((await gqlOk(t.app.url, ME, {}, fresh)).me.id).toBe(u.id);
    // An admin revokes anyone's; a user only their own (another's id answers like an unknown one).
    await gqlOk(t.app.url, `mutation($id: ID!) { revokeTokens(userId: $id) { id } }`, { id: u.id }, t.admin);
    expect(code(await gql(t.app.url, ME, {}, fresh))).toBe("UNAUTHENTICATED");
    const other = await makeUser(t.app, t.admin, "revoker");
    const cross = await gql(t.app.url, `mutation($id: ID!) { revokeTokens(userId: $id) { id } }`, { id: u.id }, other.token);
    expect(code(cross)).toBe("NOT_FOUND");
  });

  it("refuses a disabled user's tokens and login; enabling restores them", async () => {
    const u = await makeUser(t.app, t.admin, "disabled");
    const d = await gqlOk(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { disabled } }`, { id: u.id }, t.admin);
    expect(d.disableUser.disabled).toBe(true);
    const r = await gql(t.app.url, ME, {}, u.token);
    expect(code(r)).toBe("UNAUTHENTICATED");
    expect(message(r)).toMatch(/disabled/);
    const l = await gql(t.app.url, `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`, { u: "disabled", p: PASSWORD });
    expect(message(l)).toMatch(/disabled/);
    // A wrong password does not learn that the account is disabled.
    const wrong = await gql(t.app.url, `mutation { login(username: "disabled", password: "not-the-password") { token } }`);
    expect(message(wrong)).toBe("invalid username or password");
    await gqlOk(t.app.url, `mutation($id: ID!) { enableUser(userId: $id) { disabled } }`, { id: u.id }, t.admin);
    expect((await gqlOk(t.app.url, ME, {}, u.token)).me.id).toBe(u.id);
  });

  it("refuses a deleted user's token", async () => {
    const u = await makeUser(t.app, t.admin, "deleted");
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { userId } }`, { id: u.id }, t.admin);
    const r = await gql(t.app.url, ME, {}, u.token);
    expect(code(r)).toBe("UNAUTHENTICATED");
    expect(message(r)).toMatch(/does not exist/);
  });
});

describe("open subscriptions are closed when their credentials stop being valid", () => {
  async function openAndDelivering(name: string, token?: string) {
    const u = await makeUser(t.app, t.admin, name);
    const jobId = await makeJob(t.app, u.token, `${name}-job`);
    const sub = watchJob(t.app, token ?? u.token, jobId);
    await sub.delivering(() => trigger(u.token, jobId));
    return { u, jobId, sub };
  }

  it("on revokeTokens", async () => {
    const { u, sub } = await openAndDelivering("sub-revoke");
    await gqlOk(t.app.url, `mutation($id: ID!) { revokeTokens(userId: $id) { id } }`, { id: u.id }, t.admin);
    const closed = await sub.closed;
    expect(closed.code).toBe(4401);
    expect(closed.reason).toMatch(/revoked/);
    await sub.dispose();
  });

  it("on disableUser", async () => {
    const { u, sub } = await openAndDelivering("sub-disable");
    await gqlOk(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { id } }`, { id: u.id }, t.admin);
    expect(await sub.closed).toEqual({ code: 4401, reason: expect.stringMatching(/disabled/) });
    await sub.dispose();
  });

  it("on deleteUser", async () => {
    const { u, sub } = await openAndDelivering("sub-delete");
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: KEEP) { userId } }`, { id: u.id }, t.admin);
    expect(await sub.closed).toEqual({ code: 4401, reason: expect.stringMatching(/does not exist/) });
    await sub.dispose();
  });

  it("on changePassword (older tokens are revoked)", async () => {
    const { sub, u } = await openAndDelivering("sub-password");
    const r = await gqlOk(
      t.app.url,
      `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { token } }`,
      { c: PASSWORD, n: "a-brand-new-passphrase" },
      u.token,
    );
    expect((await gqlOk(t.app.url, ME, {}, r.changePassword.token)).me.id).toBe(u.id);
    expect((await sub.closed).reason).toMatch(/revoked/);
    await sub.dispose();
  });

  it("when the token expires", async () => {
    const u = await makeUser(t.app, t.admin, "sub-expiry");
    const jobId = await makeJob(t.app, u.token, "sub-expiry-job");
    // Valid now, expired in two seconds: delivered to before, closed after.
    const shortLived = forgeToken(t.app, { sub: u.id, expInSec: 2 });
    const sub = watchJob(t.app, shortLived, jobId);
    await sub.delivering(() => trigger(u.token, jobId));
    expect(await sub.closed).toEqual({ code: 4401, reason: expect.stringMatching(/expired/) });
    const delivered = sub.events.length;
    await trigger(u.token, jobId);
    await new Promise((r) => setTimeout(r, 300));
    expect(sub.events.length).toBe(delivered);
    await sub.dispose();
  });

  it("refuses a new subscription with a revoked token at once", async () => {
    const u = await makeUser(t.app, t.admin, "sub-new");
    const jobId = await makeJob(t.app, u.token, "sub-new-job");
    await gqlOk(t.app.url, `mutation($id: ID!) { revokeTokens(userId: $id) { id } }`, { id: u.id }, u.token);
    const sub = watchJob(t.app, u.token, jobId);
    for (let i = 0; i < 100 && sub.errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(JSON.stringify(sub.errors)).toMatch(/UNAUTHENTICATED.*|revoked/);
    expect(sub.events).toEqual([]);
    await sub.dispose();
  });
});

describe("changePassword", () => {
  const CHANGE = `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { token expiresAt user { username } } }`;

  it("checks the current password and the rules, and then revokes older tokens", async () => {
    const u = await makeUser(t.app, t.admin, "changer");
    const wrong = await gql(t.app.url, CHANGE, { c: "not-my-password", n: "another-good-passphrase" }, u.token);
    expect(code(wrong)).toBe("BAD_USER_INPUT");
    expect(wrong.errors?.[0]?.extensions?.field).toBe("currentPassword");
    for (const [n, why] of [
      ["short", /8 to 256/],
      ["password1", /most common/],
      ["aaaaaaaaaaaa", /repeated/],
      [PASSWORD, /differ/],
    ] as const) {
      const r = await gql(t.app.url, CHANGE, { c: PASSWORD, n }, u.token);
      expect(code(r), n).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.extensions?.field).toBe("newPassword");
      expect(message(r)).toMatch(why);
    }
    // Nothing changed so far: the token still works.
    expect((await gqlOk(t.app.url, ME, {}, u.token)).me.id).toBe(u.id);

    const ok = await gqlOk(t.app.url, CHANGE, { c: PASSWORD, n: "changer-new-passphrase" }, u.token);
    expect(ok.changePassword.user.username).toBe("changer");
    expect(code(await gql(t.app.url, ME, {}, u.token))).toBe("UNAUTHENTICATED");
    expect((await gqlOk(t.app.url, ME, {}, ok.changePassword.token)).me.id).toBe(u.id);
    const old = await gql(t.app.url, `mutation { login(username: "changer", password: "${PASSWORD}") { token } }`);
    expect(code(old)).toBe("UNAUTHENTICATED");
    await login(t.app.url, "changer", "changer-new-passphrase");
  });

  it("applies the password rules to createUser too", async () => {
    const r = await gql(t.app.url, `mutation { createUser(username: "weakling", password: "12345678") { id } }`, {}, t.admin);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.extensions?.field).toBe("password");
    const same = await gql(t.app.url, `mutation { createUser(username: "longusername", password: "LongUserName") { id } }`, {}, t.admin);
    expect(message(same)).toMatch(/^password: must not be the user name/);
  });
});

describe("deleteUser", () => {
  const JOB = `query($id: ID!) { job(id: $id) { id paused status ownerDeleted owner { id } } }`;
  const RUN = `query($id: ID!) { run(id: $id) { status } }`;

  it("KEEP: the user's jobs stay, paused and marked, cannot run again; open runs are cancelled", async () => {
    const u = await makeUser(t.app, t.admin, "leaver");
    const every = (
      await gqlOk(t.app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, {
        // Starting in an hour: no run of it exists yet, so exactly one open run (the stuck one) is cancelled.
        input: { name: "hourly", schedule: { kind: "INTERVAL", every: "PT1H", startAt: new Date(Date.now() + 3_600_000).toISOString() }, spec: { kind: "COMMAND", command: "true" } },
      }, u.token)
    ).createJob.id;
    const stuck = await makeJob(t.app, u.token, "stuck", "nowhere"); // no executor: its run waits QUEUED
    const run = (await trigger(u.token, stuck)).triggerJob.id;
    const res = await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: KEEP) { userId jobsKept jobsDeleted runsCancelled } }`, { id: u.id }, t.admin);
    expect(res.deleteUser).toEqual({ userId: u.id, jobsKept: 2, jobsDeleted: 0, runsCancelled: 1 });
    for (const id of [every, stuck]) {
      const j = (await gqlOk(t.app.url, JOB, { id }, t.admin)).job;
      expect(j).toEqual({ id, paused: true, status: "PAUSED", ownerDeleted: true, owner: null });
    }
    expect((await gqlOk(t.app.url, RUN, { id: run }, t.admin)).run.status).toBe("CANCELLED");
    const again = await gql(t.app.url, `mutation($id: ID!) { resumeJob(id: $id) { id } }`, { id: every }, t.admin);
    expect(code(again)).toBe("FAILED_PRECONDITION");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: every }, t.admin))).toBe("FAILED_PRECONDITION");
    const users = await gqlOk<{ users: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `{ users(first: 100) { edges { node { id } } } }`, {}, t.admin);
    expect(users.users.edges.map((e) => e.node.id)).not.toContain(u.id);
    // The name is free again.
    await makeUser(t.app, t.admin, "leaver");
  });

  it("DELETE: the user's jobs are gone", async () => {
    const u = await makeUser(t.app, t.admin, "remover");
    const job = await makeJob(t.app, u.token, "gone");
    const res = await gqlOk(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { jobsKept jobsDeleted } }`, { id: u.id }, t.admin);
    expect(res.deleteUser).toEqual({ jobsKept: 0, jobsDeleted: 1 });
    expect(code(await gql(t.app.url, JOB, { id: job }, t.admin))).toBe("NOT_FOUND");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { userId } }`, { id: u.id }, t.admin))).toBe("NOT_FOUND");
  });

  it("is for admins only, and not for oneself", async () => {
    const u = await makeUser(t.app, t.admin, "nonadmin");
    for (const m of [`deleteUser(userId: $id, jobs: KEEP) { userId }`, `disableUser(userId: $id) { id }`, `enableUser(userId: $id) { id }`]) {
      expect(code(await gql(t.app.url, `mutation($id: ID!) { ${m} }`, { id: u.id }, u.token))).toBe("FORBIDDEN");
    }
    const me = (await gqlOk(t.app.url, ME, {}, t.admin)).me.id;
    expect(code(await gql(t.app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: KEEP) { userId } }`, { id: me }, t.admin))).toBe("FAILED_PRECONDITION");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { id } }`, { id: me }, t.admin))).toBe("FAILED_PRECONDITION");
  });
});

describe("refused attempts are logged", () => {
  it("logs user, operation and target id at warn for cross-tenant and privileged attempts, without secrets", async () => {
    const alice = await makeUser(t.app, t.admin, "log-alice");
    const mallory = await makeUser(t.app, t.admin, "log-mallory");
    const job = await makeJob(t.app, alice.token, "private");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }, mallory.token))).toBe("NOT_FOUND");
    expect(code(await gql(t.app.url, `query($id: ID!) { job(id: $id) { id } }`, { id: job }, mallory.token))).toBe("NOT_FOUND");
    expect(code(await gql(t.app.url, `mutation($id: ID!) { disableUser(userId: $id) { id } }`, { id: alice.id }, mallory.token))).toBe("FORBIDDEN");
    const secret = "mallorys-secret-passphrase";
    expect(code(await gql(t.app.url, `mutation($p: String!) { createUser(username: "sneaky", password: $p) { id } }`, { p: secret }, mallory.token))).toBe("FORBIDDEN");
    // A missing job is not a refused attempt: nothing is logged for it.
    expect(code(await gql(t.app.url, `query { job(id: "0123456789abcdef01234567") { id } }`, {}, mallory.token))).toBe("NOT_FOUND");

    const warns = logs.lines().filter((l) => l.level === "warn" && l.userId === mallory.id);
    expect(warns).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ operation: "Mutation.pauseJob", targetId: job, entity: "job", username: "log-mallory" }),
        expect.objectContaining({ operation: "Query.job", targetId: job }),
        expect.objectContaining({ operation: "Mutation.disableUser", targetId: alice.id }),
        expect.objectContaining({ operation: "Mutation.createUser" }),
      ]),
    );
    expect(warns.some((l) => l.targetId === "0123456789abcdef01234567")).toBe(false);
    expect(logs.raw()).not.toContain(secret);
    expect(logs.raw()).not.toContain(mallory.token);
  });
});

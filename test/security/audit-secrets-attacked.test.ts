/**
 * Attack: secrets that reach the audit trail through fields not named like secrets — credentials in
 * non-HTTP URLs (an environment variable DATABASE_URL=postgres://u:pw@…), query parameters such as
 * access_key or X-Amz-Signature, an alert webhook URL whose path is the secret (Slack, Discord,
 * Teams), HTTP job headers under neutral names, a password in an HTTP job's body, and DAG params.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gqlOk } from "../helpers/graphql.js";

const t = useTestApp();

const QUERY_SECRETS = ["access_key", "X-Amz-Credential", "X-Amz-Signature", "sig", "signature", "token", "key", "apikey", "api_key", "auth", "password", "secret", "session"];

describe("secrets in the audit trail", () => {
  it("are not stored from URLs of any scheme, access_key parameters or webhook paths", async () => {
    const u = await makeUser(t.app, t.admin, "leaky");
    await gqlOk(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, {
      i: {
        name: "leak",
        schedule: { kind: "CRON", cron: "0 0 1 1 *" },
        spec: { kind: "COMMAND", command: "true", env: { DATABASE_URL: "postgres://app:S3cretDb@db:5432/app", REDIS_URL: "redis://:S3cretRedis@cache:6379", AMQP_URL: "amqps://u:S3cretAmqp@mq/" } },
      },
    }, u.token);
    await gqlOk(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, {
      i: { name: "leak-http", schedule: { kind: "CRON", cron: "0 0 1 1 *" }, spec: { kind: "HTTP", http: { method: "GET", url: "https://api.example.com/x?access_key=S3cretAccess" } } },
    }, u.token);
    await gqlOk(t.app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, {
      i: { name: "slack", on: ["RUN_FAILED"], webhook: { url: "https://hooks.slack.com/services/T000/B000/S3cretSlackPath", slack: true } },
    }, u.token);
    const log = await gqlOk<{ auditLog: unknown }>(t.app.url, `{ auditLog(first: 20) { edges { node { action args before after } } } }`, {}, t.admin);
    const text = JSON.stringify(log);
    expect(text).toContain("createAlertRule");
    for (const s of ["S3cretDb", "S3cretRedis", "S3cretAmqp", "S3cretAccess", "S3cretSlackPath"]) expect(text, s).not.toContain(s);
  });

  it("are not stored from query parameters, neutral header names, request bodies or DAG params; changes still show", async () => {
    const u = await makeUser(t.app, t.admin, "leaky2");
    const query = QUERY_SECRETS.map((name, i) => `${encodeURIComponent(name)}=Q${i}Leak`).join("&");
    const made = await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`, {
      i: {
        name: "leak-post",
        schedule: { kind: "CRON", cron: "0 0 1 1 *" },
        spec: {
          kind: "HTTP",
          http: {
            method: "POST",
            url: `https://api.example.com/hook/PathTok3nLeak?${query}`,
            headers: { "X-Access-Key": "HdrAccessLeak", "X-Session": "HdrSessionLeak", "Content-Type": "application/json" },
            body: JSON.stringify({ user: "svc", password: "BodyPassLeak" }),
          },
        },
      },
    }, u.token);
    await gqlOk(t.app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, {
      id: made.createJob.id,
      i: { spec: { kind: "HTTP", http: { method: "POST", url: "https://api.example.com/hook/OtherTok3nLeak", body: "{}" } } },
    }, u.token);
    const dag = await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($i: CreateDagInput!) { createDag(input: $i) { id } }`, {
      i: { name: "leak-dag", params: { dbPass0: "ParamLeak1" }, tasks: [{ key: "a", spec: { kind: "COMMAND", command: "true" } }, { key: "b", dependsOn: ["a"], spec: { kind: "HTTP", http: { method: "POST", url: "https://hooks.example.com/DagPathLeak", headers: { "X-Api": "DagHdrLeak" }, body: "DagBodyLeak" } } }] },
    }, u.token);
    await gqlOk(t.app.url, `mutation($id: ID!, $p: JSONObject) { triggerDag(id: $id, params: $p) { id } }`, { id: dag.createDag.id, p: { conn: "ParamLeak2" } }, u.token);

    const stored = JSON.stringify(await t.app.services.mongo.db.collection("audit").find({}).toArray());
    const leaks = [...QUERY_SECRETS.map((_, i) => `Q${i}Leak`), "PathTok3nLeak", "OtherTok3nLeak", "HdrAccessLeak", "HdrSessionLeak", "BodyPassLeak", "ParamLeak1", "ParamLeak2", "DagPathLeak", "DagHdrLeak", "DagBodyLeak"];
    for (const s of leaks) expect(stored, s).not.toContain(s);
    // What is harmless is kept, and an update of the URL shows as a different digest.
    expect(stored).toContain("application/json");
    expect(stored).toContain("https://api.example.com");
    const log = await gqlOk<{ auditLog: { edges: Array<{ node: { before: { spec?: { http?: { url?: string } } } | null; after: { spec?: { http?: { url?: string } } } | null } }> } }>(
      t.app.url,
      `query($f: AuditLogFilter) { auditLog(first: 1, filter: $f) { edges { node { before after } } } }`,
      { f: { actions: ["updateJob"], targetId: made.createJob.id } },
      u.token,
    );
    const change = log.auditLog.edges[0]!.node;
    expect(change.before?.spec?.http?.url).toMatch(/^https:\/\/api\.example\.com\/… sha256:[0-9a-f]{64}$/);
    expect(change.after?.spec?.http?.url).toMatch(/^https:\/\/api\.example\.com\/… sha256:[0-9a-f]{64}$/);
    expect(change.after?.spec?.http?.url).not.toBe(change.before?.spec?.http?.url);
  });
});

/**
 * Bad input is refused with BAD_USER_INPUT, a message that says what is wrong and what is
 * allowed, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  token = await login(app.url, ADMIN.username, ADMIN.password);
});
afterAll(async () => {
  await app?.dispose();
});

const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;
const base = { name: "v", schedule: { kind: "INTERVAL", every: "PT1M" }, spec: { kind: "COMMAND", command: "true" } };

async function refused(input: Record<string, unknown>, field: string, message: RegExp) {
  const r = await gql(app.url, CREATE, { input: { ...base, ...input } }, token);
  expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r.errors)).toBe("BAD_USER_INPUT");
  expect(r.errors?.[0]?.extensions?.field).toBe(field);
  expect(r.errors?.[0]?.message).toMatch(message);
  expect(r.data).toBeNull();
}

describe("input validation", () => {
  it("refuses bad schedules, naming the field and the rule", async () => {
    await refused({ schedule: { kind: "CRON", cron: "61 * * * *" } }, "schedule.cron", /61.*0–59/);
    await refused({ schedule: { kind: "CRON", cron: "* * * *" } }, "schedule.cron", /field/);
    await refused({ schedule: { kind: "CRON", cron: "0 9 * * *", timezone: "Mars/Olympus" } }, "schedule.timezone", /Mars\/Olympus/);
    await refused({ schedule: { kind: "INTERVAL", every: "PT0S" } }, "schedule.every", /PT0S/);
    await refused({ schedule: { kind: "INTERVAL", every: "soon" } }, "schedule.every", /ISO-8601/);
    await refused(
      { schedule: { kind: "INTERVAL", every: "PT1M", startAt: "2030-01-02T00:00:00Z", endAt: "2030-01-01T00:00:00Z" } },
      "schedule.endAt",
      /after/,
    );
  });

  it("refuses bad specs", async () => {
    await refused({ spec: { kind: "COMMAND", command: "   " } }, "spec.command", /empty/);
    await refused({ spec: { kind: "COMMAND" } }, "spec", /exactly one of command/);
    await refused({ spec: { kind: "COMMAND", command: "true", timeout: "PT25H" } }, "spec.timeout", /24|P1D/);
    await refused({ spec: { kind: "COMMAND", argv: [] } }, "spec.argv", /program/);
    await refused({ spec: { kind: "COMMAND", command: "true", env: { KAIROS_RUN_ID: "x" } } }, "spec.env", /reserved/);
    await refused({ spec: { kind: "COMMAND", command: "true", pool: "no spaces" } }, "spec.pool", /letters/);
  });

  it("refuses other bad fields", async () => {
    await refused({ priority: 10 }, "priority", /0 to 9/);
    await refused({ name: "" }, "name", /1–128/);
    await refused({ tags: ["ok", "not ok"] }, "tags", /not ok/);
  });

  it("writes nothing for refused input", async () => {
    const jobs = await gqlOk<{ jobs: { edges: unknown[] } }>(app.url, `{ jobs { edges { node { id } } } }`, {}, token);
    expect(jobs.jobs.edges).toEqual([]);
  });

  it("answers CONFLICT for a duplicate name and BAD_USER_INPUT for a bad cursor", async () => {
    await gqlOk(app.url, CREATE, { input: { ...base, name: "unique" } }, token);
    const dup = await gql(app.url, CREATE, { input: { ...base, name: "unique" } }, token);
    expect(dup.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    expect(dup.errors?.[0]?.message).toMatch(/already have a job named "unique"/);
    const cur = await gql(app.url, `{ jobs(after: "garbage") { edges { node { id } } } }`, {}, token);
    expect(cur.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const page = await gql(app.url, `{ jobs(first: 1000) { edges { node { id } } } }`, {}, token);
    expect(page.errors?.[0]?.message).toMatch(/1 to 100/);
  });

  it("masks unexpected errors and rejects malformed GraphQL clearly", async () => {
    const parse = await gql(app.url, `{ jobs { `, {}, token);
    expect(parse.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    const unknownEnum = await gql(app.url, CREATE, { input: { ...base, schedule: { kind: "HOURLY" } } }, token);
    expect(unknownEnum.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});

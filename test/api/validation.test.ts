/**
 * Bad input is refused with BAD_USER_INPUT, a message that says what is wrong and what is
 * allowed, and nothing is written.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const t = useTestApp();

const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;
const base = { name: "v", schedule: { kind: "INTERVAL", every: "PT1M" }, spec: { kind: "COMMAND", command: "true" } };

async function refused(input: Record<string, unknown>, field: string, message: RegExp) {
  const r = await gql(t.app.url, CREATE, { input: { ...base, ...input } }, t.admin);
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
    // Sizes the kernel would refuse at every start (execve), and that every run document copies.
    const env = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`V${i}`, "x".repeat(30_000)]));
    await refused({ spec: { kind: "COMMAND", command: "true", env } }, "spec.env", /the variables come to 90\d{3} bytes; at most 65536 \(64 KiB\) in all/);
    await refused({ spec: { kind: "COMMAND", argv: ["echo", "y".repeat(70_000)] } }, "spec.argv", /the arguments come to 700\d\d bytes; at most 65536/);
    await refused({ spec: { kind: "SCRIPT", interpreter: "sh", source: "echo", args: ["z".repeat(40_000), "z".repeat(40_000)] } }, "spec.args", /at most 65536/);
  });

  it("refuses other bad fields", async () => {
    await refused({ priority: 10 }, "priority", /0 to 9/);
    await refused({ name: "" }, "name", /1–128/);
    await refused({ tags: ["ok", "not ok"] }, "tags", /not ok/);
  });

  it("writes nothing for refused input", async () => {
    const jobs = await gqlOk<{ jobs: { edges: unknown[] } }>(t.app.url, `{ jobs { edges { node { id } } } }`, {}, t.admin);
    expect(jobs.jobs.edges).toEqual([]);
  });

  it("answers FAILED_PRECONDITION for a duplicate name and BAD_USER_INPUT for a bad cursor", async () => {
    await gqlOk(t.app.url, CREATE, { input: { ...base, name: "unique" } }, t.admin);
    const dup = await gql(t.app.url, CREATE, { input: { ...base, name: "unique" } }, t.admin);
    expect(dup.errors?.[0]?.extensions?.code).toBe("FAILED_PRECONDITION");
    expect(dup.errors?.[0]?.message).toMatch(/already have a job named "unique"/);
    const cur = await gql(t.app.url, `{ jobs(after: "garbage") { edges { node { id } } } }`, {}, t.admin);
    expect(cur.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const page = await gql(t.app.url, `{ jobs(first: 1000) { edges { node { id } } } }`, {}, t.admin);
    expect(page.errors?.[0]?.message).toMatch(/1 to 100/);
  });

  it("masks unexpected errors and rejects malformed GraphQL clearly", async () => {
    const parse = await gql(t.app.url, `{ jobs { `, {}, t.admin);
    expect(parse.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    const unknownEnum = await gql(t.app.url, CREATE, { input: { ...base, schedule: { kind: "HOURLY" } } }, t.admin);
    expect(unknownEnum.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});

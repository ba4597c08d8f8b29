/**
 * An Int that is no 32-bit integer (1e10, "abc", 1.5, 99999999999), written in the document or
 * sent in a variable, over HTTP or WebSocket, is refused as BAD_USER_INPUT naming its argument or
 * input field and what it allows, not with graphql-js's "Int cannot represent non-integer value",
 * which names neither. Every Int the schema takes has its range (resolvers/int-ranges.ts).
 */
import { getNamedType, isInputObjectType, isObjectType } from "graphql";
import { describe, expect, it } from "vitest";
import { buildKairosSchema, INT_RANGES } from "../../src/resolvers/index.js";
import { useTestApp } from "../helpers/app.js";
import { collect, gqlOk, wsClient } from "../helpers/graphql.js";
import { postGql } from "../helpers/http.js";
import { badInput, refusedInputs, type InputErr } from "../helpers/input-errors.js";

const t = useTestApp();

type Err = InputErr;

const JOBS = (first: string) => `{ jobs(first: ${first}) { edges { node { id } } } }`;
const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;
const base = { name: "ints", schedule: { kind: "INTERVAL", every: "PT1M" }, spec: { kind: "COMMAND", command: "true" } };

const refused = (query: string, variables: Record<string, unknown> = {}): Promise<Err[]> => refusedInputs(t.app.url, t.admin, query, variables);
const bad = badInput;

describe("Int inputs that are no 32-bit integer", () => {
  it("written in the document: BAD_USER_INPUT naming the argument and its range", async () => {
    expect(await refused(JOBS("1e10"))).toEqual([bad("first", "first: must be an integer from 1 to 100 (got 1e10)")]);
    expect(await refused(JOBS(`"abc"`))).toEqual([bad("first", `first: must be an integer from 1 to 100 (got "abc")`)]);
    expect(await refused(JOBS("1.5"))).toEqual([bad("first", "first: must be an integer from 1 to 100 (got 1.5)")]);
    expect(await refused(JOBS("99999999999"))).toEqual([bad("first", "first: must be an integer from 1 to 100 (got 99999999999)")]);
    expect(await refused(`{ loginLockouts(first: -3000000000) { edges { node { key } } } }`)).toEqual([bad("first", "first: must be an integer from 1 to 100 (got -3000000000)")]);
  });

  it("written in the document: input fields named by their path, each one refused", async () => {
    const errors = await refused(
      `mutation { createJob(input: { name: "x", priority: 1.5, retry: { nonRetryableExitCodes: [1, "x"] },
        schedule: { kind: INTERVAL, every: "PT1M", maxFires: 3000000000 },
        spec: { kind: COMMAND, command: "true", resources: { memoryMb: 0.5 } } }) { id } }`,
    );
    expect(errors).toEqual([
      bad("priority", "priority: must be an integer from 0 to 9 (got 1.5)"),
      bad("retry.nonRetryableExitCodes", `retry.nonRetryableExitCodes: must be an integer from 0 to 255 (got "x")`),
      bad("schedule.maxFires", "schedule.maxFires: must be an integer from 1 to 2147483647, or null for no limit (got 3000000000)"),
      bad("spec.resources.memoryMb", "spec.resources.memoryMb: must be an integer from 16 to 4194304 MiB (got 0.5)"),
    ]);
  });

  it("in a variable: named where it is used, and which variable it was", async () => {
    const q = `query($n: Int) { jobs(first: $n) { edges { node { id } } } }`;
    expect(await refused(q, { n: 1e10 })).toEqual([bad("first", "first: must be an integer from 1 to 100 (got 10000000000 in $n)")]);
    expect(await refused(q, { n: "abc" })).toEqual([bad("first", `first: must be an integer from 1 to 100 (got "abc" in $n)`)]);
    expect(await refused(q, { n: 1.5 })).toEqual([bad("first", "first: must be an integer from 1 to 100 (got 1.5 in $n)")]);
    // 1e400 in the JSON body is read as Infinity, which printed as "got null".
    const huge = await fetch(t.app.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${t.admin}` }, body: `{"query":${JSON.stringify(q)},"variables":{"n":1e400}}` });
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { errors: Err[] }).errors.map((e) => e.message)).toEqual(["first: must be an integer from 1 to 100 (got a number beyond what a double holds in $n)"]);
    expect(await refused(`query($n: Int = 2.5) { jobs(first: $n) { edges { node { id } } } }`)).toEqual([
      bad("first", "first: must be an integer from 1 to 100 (got 2.5 as the default of $n)"),
    ]);
    const input = { ...base, priority: 1.5, retry: { nonRetryableExitCodes: [1, 2.5] }, spec: { ...base.spec, resources: { pids: 1e12 } } };
    const byField = (a: Err, b: Err) => String(a.extensions?.field).localeCompare(String(b.extensions?.field));
    expect((await refused(CREATE, { input })).sort(byField)).toEqual([
      bad("priority", "priority: must be an integer from 0 to 9 (got 1.5 in $input.priority)"),
      bad("retry.nonRetryableExitCodes", "retry.nonRetryableExitCodes: must be an integer from 0 to 255 (got 2.5 in $input.retry.nonRetryableExitCodes[1])"),
      bad("spec.resources.pids", "spec.resources.pids: must be an integer from 8 to 4194304 processes (got 1000000000000 in $input.spec.resources.pids)"),
    ]);
  });

  it("valid Ints still reach the resolvers, which refuse them out of range as before", async () => {
    await gqlOk(t.app.url, `query($n: Int) { jobs(first: $n) { edges { node { id } } } }`, { n: 5 }, t.admin);
    const r = await postGql(t.app.url, JOBS("101"), { token: t.admin });
    expect(r.json.errors?.[0]).toMatchObject({ message: "first: must be from 1 to 100 (got 101)", extensions: { code: "BAD_USER_INPUT", field: "first" } });
    const { jobs } = await gqlOk<{ jobs: { edges: unknown[] } }>(t.app.url, `{ jobs { edges { node { id } } } }`, {}, t.admin);
    expect(jobs.edges).toEqual([]);
  });

  it("over WebSocket the same", async () => {
    const client = wsClient(t.app.wsUrl, t.admin);
    const errorsOf = async (query: string, variables: Record<string, unknown>) => {
      const { events, errors } = await collect(client, query, variables, () => true, 5_000).done;
      expect(events).toEqual([]);
      return (errors.flat() as Err[]).map(({ message, extensions }) => ({ message, extensions }));
    };
    try {
      expect(await errorsOf(JOBS("1e10"), {})).toEqual([bad("first", "first: must be an integer from 1 to 100 (got 1e10)")]);
      expect(await errorsOf(`subscription($r: ID!, $o: Int) { runLogs(runId: $r, fromOffset: $o) { offset } }`, { r: "x", o: -1e10 })).toEqual([
        bad("fromOffset", "fromOffset: must be an integer from 0 to 2147483647 bytes (got -10000000000 in $o)"),
      ]);
    } finally {
      await client.dispose();
    }
  });
});

describe("Int ranges", () => {
  it("every Int argument and input field of the schema has its range, and every range its Int", async () => {
    const schema = await buildKairosSchema();
    const ints: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith("__")) continue;
      if (isObjectType(type)) {
        for (const f of Object.values(type.getFields())) for (const a of f.args) if (getNamedType(a.type).name === "Int") ints.push(`${type.name}.${f.name}(${a.name}:)`);
      }
      if (isInputObjectType(type)) for (const f of Object.values(type.getFields())) if (getNamedType(f.type).name === "Int") ints.push(`${type.name}.${f.name}`);
    }
    expect(ints.filter((c) => !(c in INT_RANGES)), "Ints without a range in resolvers/int-ranges.ts").toEqual([]);
    expect(Object.keys(INT_RANGES).filter((c) => !ints.includes(c)), "ranges of no Int of the schema").toEqual([]);
  });
});

/**
 * A DateTime or JSONObject input that is none, written in the document or sent in a variable, over
 * HTTP or WebSocket, is refused as an Int that is none is (test/api/int-inputs.test.ts): the same
 * mechanism (api/scalar-inputs.ts), BAD_USER_INPUT naming its argument or input field, what was
 * given and what is allowed, HTTP 400 — not GRAPHQL_VALIDATION_FAILED, nor graphql-js's
 * `Variable "$f" got invalid value …`.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { collect, wsClient } from "../helpers/graphql.js";
import { postGql } from "../helpers/http.js";
import { badInput, refusedInputs, type InputErr } from "../helpers/input-errors.js";

const t = useTestApp();

type Err = InputErr;

const NOT_A_DATE = '"tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z" (UTC) or "2030-01-01T09:00:00+01:00"';
const NO_ZONE = '"2030-01-01T09:00:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"';
const A_NUMBER = 'expected a date-time string, got a number; a date-time is quoted, such as "2030-01-01T09:00:00Z"';
const RUNS = (from: string) => `{ runs(filter: { scheduledFrom: ${from} }) { edges { node { id } } } }`;
const RUNS_VAR = `query($f: DateTime) { runs(filter: { scheduledFrom: $f }) { edges { node { id } } } }`;
const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;
const base = { name: "scalars", schedule: { kind: "INTERVAL", every: "PT1M" }, spec: { kind: "COMMAND", command: "true" } };

const refused = (query: string, variables: Record<string, unknown> = {}): Promise<Err[]> => refusedInputs(t.app.url, t.admin, query, variables);
const bad = badInput;

describe("DateTime and JSONObject inputs that are none", () => {
  it("written in the document: BAD_USER_INPUT naming the field, what was given and what is allowed", async () => {
    expect(await refused(RUNS(`"tomorrow"`))).toEqual([bad("filter.scheduledFrom", `filter.scheduledFrom: ${NOT_A_DATE}`)]);
    expect(await refused(RUNS("1893488400"))).toEqual([bad("filter.scheduledFrom", `filter.scheduledFrom: ${A_NUMBER}`)]);
    expect(await refused(`mutation { backfillDag(id: "x", from: "2030-01-01T09:00:00", to: "2030-01-02T09:00:00Z") { id } }`)).toEqual([bad("from", `from: ${NO_ZONE}`)]);
    // Each refused value once, an Int's and a JSONObject's beside a DateTime's.
    const errors = await refused(
      `mutation { createJob(input: { name: "x", priority: 1.5, schedule: { kind: ONCE, at: "tomorrow" }, spec: { kind: COMMAND, command: "true", env: "DEBUG=1" } }) { id } }`,
    );
    expect(errors).toEqual([
      bad("priority", "priority: must be an integer from 0 to 9 (got 1.5)"),
      bad("schedule.at", `schedule.at: ${NOT_A_DATE}`),
      bad("spec.env", 'spec.env: must be an object of names to values, such as {"DEBUG": "1"} (got "DEBUG=1")'),
    ]);
    expect(await refused(`query($f: DateTime = "tomorrow") { runs(filter: { scheduledFrom: $f }) { edges { node { id } } } }`)).toEqual([
      bad("filter.scheduledFrom", `filter.scheduledFrom: ${NOT_A_DATE} (as the default of $f)`),
    ]);
  });

  it("in a variable: named where it is used, and which variable it was", async () => {
    expect(await refused(RUNS_VAR, { f: "tomorrow" })).toEqual([bad("filter.scheduledFrom", `filter.scheduledFrom: ${NOT_A_DATE} (in $f)`)]);
    expect(await refused(RUNS_VAR, { f: 5 })).toEqual([
      bad("filter.scheduledFrom", 'filter.scheduledFrom: expected a date-time string, got number; a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z" (UTC) or "2030-01-01T09:00:00+01:00" (in $f)'),
    ]);
    const input = { ...base, schedule: { kind: "ONCE", at: "2030-01-01T09:00:00" }, spec: { ...base.spec, env: ["DEBUG=1"] } };
    const byField = (a: Err, b: Err) => String(a.extensions?.field).localeCompare(String(b.extensions?.field));
    expect((await refused(CREATE, { input })).sort(byField)).toEqual([
      bad("schedule.at", `schedule.at: ${NO_ZONE} (in $input.schedule.at)`),
      bad("spec.env", 'spec.env: must be an object of names to values, such as {"DEBUG": "1"} (got ["DEBUG=1"] in $input.spec.env)'),
    ]);
  });

  it("valid ones still reach the resolvers", async () => {
    const r = await postGql(t.app.url, RUNS_VAR, { variables: { f: "2030-01-01T09:00:00+01:00" }, token: t.admin });
    expect(r.status, r.text).toBe(200);
    expect(r.json.errors, r.text).toBeUndefined();
    const made = await postGql(t.app.url, CREATE, { variables: { input: { ...base, spec: { ...base.spec, env: { DEBUG: "1" } } } }, token: t.admin });
    expect(made.json.errors, made.text).toBeUndefined();
  });

  it("over WebSocket the same", async () => {
    const client = wsClient(t.app.wsUrl, t.admin);
    const errorsOf = async (query: string, variables: Record<string, unknown>) => {
      const { events, errors } = await collect(client, query, variables, () => true, 5_000).done;
      expect(events).toEqual([]);
      return (errors.flat() as Err[]).map(({ message, extensions }) => ({ message, extensions }));
    };
    try {
      expect(await errorsOf(RUNS(`"tomorrow"`), {})).toEqual([bad("filter.scheduledFrom", `filter.scheduledFrom: ${NOT_A_DATE}`)]);
      expect(await errorsOf(RUNS_VAR, { f: "tomorrow" })).toEqual([bad("filter.scheduledFrom", `filter.scheduledFrom: ${NOT_A_DATE} (in $f)`)]);
      expect(await errorsOf(CREATE, { input: { ...base, spec: { ...base.spec, env: "x" } } })).toEqual([
        bad("spec.env", 'spec.env: must be an object of names to values, such as {"DEBUG": "1"} (got "x" in $input.spec.env)'),
      ]);
    } finally {
      await client.dispose();
    }
  });
});

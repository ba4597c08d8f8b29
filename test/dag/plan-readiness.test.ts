/** Trigger rules (src/dag/plan/readiness.ts): the table in docs/dags.md, row by row. */
import { describe, expect, it } from "vitest";
import { Readiness, readiness } from "../../src/dag/index.js";
import { DagTaskState as S, TriggerRule as R, type DagTaskState, type TriggerRule } from "../../src/domain/index.js";

const { WAIT, RUN, UPSTREAM_FAILED, SKIPPED } = Readiness;
const OK = S.SUCCEEDED;
const KO = S.FAILED;
const UF = S.UPSTREAM_FAILED;
const SK = S.SKIPPED;
const CX = S.CANCELLED;
const GO = S.RUNNING;

const table: [TriggerRule, DagTaskState[], Readiness][] = [
  [R.ALL_SUCCESS, [OK, OK], RUN],
  [R.ALL_SUCCESS, [OK, GO], WAIT],
  [R.ALL_SUCCESS, [KO, GO], UPSTREAM_FAILED],
  [R.ALL_SUCCESS, [UF, OK], UPSTREAM_FAILED],
  [R.ALL_SUCCESS, [CX, OK], UPSTREAM_FAILED],
  [R.ALL_SUCCESS, [SK, OK], SKIPPED],
  [R.ALL_SUCCESS, [SK, GO], WAIT], // the running parent may still fail
  [R.ALL_SUCCESS, [SK, KO], UPSTREAM_FAILED],
  [R.ALL_DONE, [OK, KO, SK, UF, CX], RUN],
  [R.ALL_DONE, [KO, S.QUEUED], WAIT],
  [R.ALL_DONE, [KO, S.RETRYING], WAIT],
  [R.ALL_DONE, [KO, S.PENDING], WAIT],
  [R.ALL_FAILED, [KO, UF, CX], RUN],
  [R.ALL_FAILED, [KO, GO], WAIT],
  [R.ALL_FAILED, [KO, OK], SKIPPED],
  [R.ALL_FAILED, [OK, GO], SKIPPED],
  [R.ALL_FAILED, [SK, KO], SKIPPED],
  [R.ONE_SUCCESS, [OK, GO], RUN],
  [R.ONE_SUCCESS, [KO, GO], WAIT],
  [R.ONE_SUCCESS, [KO, SK], UPSTREAM_FAILED],
  [R.ONE_SUCCESS, [KO, KO], UPSTREAM_FAILED],
  [R.ONE_SUCCESS, [SK, SK], SKIPPED],
  [R.ONE_FAILED, [KO, GO], RUN],
  [R.ONE_FAILED, [CX, GO], RUN],
  [R.ONE_FAILED, [UF, OK], RUN],
  [R.ONE_FAILED, [OK, GO], WAIT],
  [R.ONE_FAILED, [OK, SK], SKIPPED],
  [R.NONE_FAILED, [OK, SK], RUN],
  [R.NONE_FAILED, [SK, SK], RUN],
  [R.NONE_FAILED, [OK, GO], WAIT],
  [R.NONE_FAILED, [KO, GO], UPSTREAM_FAILED],
  [R.NONE_FAILED, [CX, OK], UPSTREAM_FAILED],
];

describe("readiness", () => {
  it.each(table)("%s with parents %j → %s", (rule, parents, verdict) => {
    expect(readiness(rule, parents)).toBe(verdict);
    expect(readiness(rule, [...parents].reverse())).toBe(verdict);
  });

  it("defaults to ALL_SUCCESS", () => {
    expect(readiness(undefined, [OK, SK])).toBe(SKIPPED);
    expect(readiness(undefined, [OK, OK])).toBe(RUN);
  });

  it.each(Object.values(R))("runs a root at once under %s", (rule) => {
    expect(readiness(rule, [])).toBe(RUN);
  });
});

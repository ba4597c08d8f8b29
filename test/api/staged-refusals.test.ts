/**
 * A refused retry or cancel of a staged or withdrawn run names the run's status as the API reports
 * it (SCHEDULED, WITHDRAWN), never the stored one: before, retryRun of a SCHEDULED run answered
 * "cannot go from QUEUED to QUEUED" and cancelRun of a WITHDRAWN run "is CANCELLED".
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { useTestApp } from "../helpers/app.js";
import { code } from "../helpers/accounts.js";
import { gql, waitFor } from "../helpers/graphql.js";

const t = useTestApp({ scheduler: { stageAheadMs: 10_000 } });
const caller: Principal = { userId: "000000000000000000000079", username: "staged-refusals", role: "ADMIN" };

describe("refusals of staged and withdrawn runs", () => {
  it("retryRun of a SCHEDULED run and cancelRun of a WITHDRAWN one say SCHEDULED and WITHDRAWN", async () => {
    // No executor serves the pool and the slots are 8 s ahead: the runs stay staged while we ask.
    const job = await t.app.services.jobs.create(caller, {
      name: "staged-refusals",
      schedule: { kind: "INTERVAL", every: "PT1S", startAt: Date.now() + 8_000 },
      spec: { kind: "COMMAND", command: "true", pool: "staged-refusals-nowhere" },
    });
    const staged = await waitFor(async () => {
      const rs = await t.app.services.mongo.c.runs.find({ jobId: job._id }).toArray();
      return rs.find((r) => r.status === "QUEUED" && r.notBefore && r.notBefore.getTime() > Date.now() + 2_000) ?? null;
    }, 8_000, 20);

    const retry = await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: staged._id }, t.admin);
    expect(code(retry)).toBe("FAILED_PRECONDITION");
    expect(retry.errors?.[0]?.message).toBe(`run ${staged._id} is SCHEDULED; only a finished run without success can be retried`);

    await t.app.services.jobs.pause(caller, job._id);
    const cancel = await gql(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: staged._id }, t.admin);
    expect(code(cancel)).toBe("FAILED_PRECONDITION");
    expect(cancel.errors?.[0]?.message).toBe(`run ${staged._id} is WITHDRAWN; only PENDING, SCHEDULED, QUEUED, RETRY_SCHEDULED or RUNNING runs can be cancelled`);
    await t.app.services.jobs.delete(caller, job._id);
  });

  it("a staged run cancelled and then retried by its user runs now: it is QUEUED, not SCHEDULED, and a pause does not withdraw it", async () => {
    const job = await t.app.services.jobs.create(caller, {
      name: "staged-retried",
      schedule: { kind: "INTERVAL", every: "PT1S", startAt: Date.now() + 8_000 },
      spec: { kind: "COMMAND", command: "true", pool: "staged-retried-nowhere" },
    });
    const staged = await waitFor(async () => {
      const rs = await t.app.services.mongo.c.runs.find({ jobId: job._id }).toArray();
      return rs.find((r) => r.status === "QUEUED" && r.notBefore && r.notBefore.getTime() > Date.now() + 2_000) ?? null;
    }, 8_000, 20);
    const RUN = `mutation($id: ID!) { %s(id: $id) { id status notBefore } }`;
    const cancelled = await gql(t.app.url, RUN.replace("%s", "cancelRun"), { id: staged._id }, t.admin);
    expect(cancelled.data?.cancelRun.status).toBe("CANCELLED");
    const retried = await gql(t.app.url, RUN.replace("%s", "retryRun"), { id: staged._id }, t.admin);
    expect(retried.errors).toBeUndefined();
    expect(retried.data?.retryRun).toMatchObject({ status: "QUEUED", notBefore: null });
    await t.app.services.jobs.pause(caller, job._id);
    const after = await gql(t.app.url, `query($id: ID!) { run(id: $id) { status } }`, { id: staged._id }, t.admin);
    expect(after.data?.run.status).toBe("QUEUED");
    await t.app.services.jobs.delete(caller, job._id);
  });
});

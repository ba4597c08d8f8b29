/**
 * deleteUser and DAGs (src/core/users.ts, DagService.deleteOwner): the deleted user's DAGs, their
 * hidden timer jobs and their DAG runs go, whatever `jobs` says; running DAG runs are cancelled
 * as a whole first, so cancelling their task runs starts nothing downstream (an ALL_DONE child
 * would otherwise run), and the schedule fires no more.
 */
import { describe, expect, it } from "vitest";
import { code, makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { createDag, gql, gqlOk, readDagRun, row, triggerDag, waitFor } from "./helpers.js";

const t = useTestApp({ scheduler: { stageAheadMs: 0 } });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A long first task, and a child that runs whatever its parent's end (ALL_DONE).
const TASKS = [
  { key: "slow", command: "sleep 30" },
  { key: "after", command: "true", dependsOn: ["slow"], trigger: "ALL_DONE" },
];

describe.each(["KEEP", "DELETE"] as const)("deleteUser(jobs: %s) and the user's DAGs", (mode) => {
  it("deletes their DAGs, schedules and DAG runs; nothing of them runs on or stays readable", async () => {
    const { app, admin } = t;
    const mongo = app.services.mongo;
    const u = await makeUser(app, admin, `dag-leaver-${mode.toLowerCase()}`);
    const manual = await createDag(app.url, u.token, "manual", TASKS);
    const run = await triggerDag(app.url, u.token, manual);
    await waitFor(async () => row(await readDagRun(app.url, u.token, run), "slow").status === "RUNNING" || null, 20_000);
    const scheduled = await createDag(app.url, u.token, "scheduled", TASKS, { schedule: { kind: "CRON", cron: "* * * * * *" }, overlap: "FORBID" });
    await waitFor(async () => (await mongo.c.dagRuns.countDocuments({ dagId: scheduled })) > 0 || null, 20_000);
    const slowRun = (await mongo.c.runs.findOne({ dagRunId: run, taskKey: "slow" }))!;

    const res = await gqlOk<{ deleteUser: { dagsDeleted: number; dagRunsDeleted: number } }>(
      app.url,
      `mutation($id: ID!, $jobs: DeletedUserJobs!) { deleteUser(userId: $id, jobs: $jobs) { dagsDeleted dagRunsDeleted } }`,
      { id: u.id, jobs: mode },
      admin,
    );
    expect(res.deleteUser.dagsDeleted).toBe(2);
    expect(res.deleteUser.dagRunsDeleted).toBeGreaterThanOrEqual(2);

    // Not readable, not even by an administrator.
    for (const id of [manual, scheduled]) expect(code(await gql(app.url, `query($id: ID!) { dag(id: $id) { id } }`, { id }, admin))).toBe("NOT_FOUND");
    expect(code(await gql(app.url, `query($id: ID!) { dagRun(id: $id) { id } }`, { id: run }, admin))).toBe("NOT_FOUND");
    const listed = await gqlOk<{ dags: { edges: Array<{ node: { id: string } }> } }>(app.url, `{ dags(first: 100) { edges { node { id } } } }`, {}, admin);
    expect(listed.dags.edges.map((e) => e.node.id)).not.toContain(manual);

    // The running task is killed; nothing of the user is open, and the schedule fires no more.
    expect((await waitFor(async () => {
      const r = await mongo.c.runs.findOne({ _id: slowRun._id });
      return r && ["CANCELLED", "FAILED"].includes(r.status) ? r : null;
    }, 20_000)).status).toBe("CANCELLED");
    await pause(2_500);
    expect(await mongo.c.dags.countDocuments({ ownerId: u.id })).toBe(0);
    expect(await mongo.c.dagRuns.countDocuments({ ownerId: u.id })).toBe(0);
    expect(await mongo.c.dagDefinitions.countDocuments({ ownerId: u.id })).toBe(0);
    expect(await mongo.c.jobs.countDocuments({ ownerId: u.id, dagId: { $type: "string" } })).toBe(0);
    expect(await mongo.c.runs.countDocuments({ ownerId: u.id, status: { $in: ["PENDING", "QUEUED", "RETRY_SCHEDULED", "RUNNING"] } })).toBe(0);
    // The ALL_DONE child was never started: its DAG run was cancelled before its parent's run.
    expect(await mongo.c.runs.countDocuments({ ownerId: u.id, taskKey: "after" })).toBe(0);
  });
});

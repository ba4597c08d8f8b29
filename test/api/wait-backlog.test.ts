/**
 * Job.problems BACKLOG, driven for real: an owner with KAIROS_MAX_WAITING_RUNS runs waiting (in a
 * pool no executor serves) gets the job's next slots skipped (SKIPPED_BACKLOG), and the job says so.
 * Its own app, as the bound is the deployment's (test/api/wait-reasons.test.ts has the others).
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { gqlOk, login, waitFor } from "../helpers/graphql.js";

const t = useTestApp({ env: { KAIROS_MAX_WAITING_RUNS: "2" } });

interface Reason { code: string; message: string; since: string | null }

describe("Job.problems: BACKLOG", () => {
  it("a job whose owner is at KAIROS_MAX_WAITING_RUNS has its fires skipped, and says so", async () => {
    await gqlOk(t.app.url, `mutation { createUser(username: "backlogged", password: "password-backlogged") { id } }`, {}, t.admin);
    const token = await login(t.app.url, "backlogged", "password-backlogged");
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(
      t.app.url,
      `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
      { i: { name: "every-second", schedule: { kind: "INTERVAL", every: "PT1S" }, spec: { command: "true", pool: "nowhere" } } },
      token,
    );
    const q = `query($id: ID!) { job(id: $id) { problems { code message since } } }`;
    const problems = await waitFor(async () => {
      const p = (await gqlOk<{ job: { problems: Reason[] } }>(t.app.url, q, { id: createJob.id }, token)).job.problems;
      return p.some((r) => r.code === "BACKLOG" && r.since) ? p : null;
    }, 20_000, 200);
    const b = problems.find((r) => r.code === "BACKLOG")!;
    expect(b.message).toMatch(/you have \d+ runs waiting to start \(QUEUED or PENDING\), the most KAIROS_MAX_WAITING_RUNS \(2\) allows, so its next fires are skipped/);
    expect(b.message).toMatch(/was skipped \(SKIPPED_BACKLOG\)/);
    // And why: the waiting runs are in a pool no executor serves.
    expect(problems.map((r) => r.code)).toContain("POOL_UNSERVED");
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: createJob.id }, token);
  });
});

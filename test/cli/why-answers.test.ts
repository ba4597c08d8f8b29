/**
 * `kairos why` (src/cli/why.ts) against the server, in-process: a ref that is no run, DAG run or
 * job of the caller says it looked for all three (before: "job … not found", for what was
 * another user's run id), and every reason of `-o json` carries since and until, as its help
 * promises ({code, message, since, until}; NEXT_FIRE and QUEUE had neither key).
 */
import { describe, expect, it } from "vitest";
import { Ctx } from "../../src/cli/context.js";
import type { Io } from "../../src/cli/output.js";
import { explain } from "../../src/cli/why.js";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk, waitFor } from "../helpers/graphql.js";

const t = useTestApp();

function ctxFor(token: string): Ctx {
  const io: Io = { out: () => undefined, err: () => undefined, color: false, interactive: false, env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: token }, stdin: async () => "", now: () => Date.now() };
  return new Ctx(io, () => ({}));
}

describe("kairos why", () => {
  it("another user's run id is not found as a run, DAG run or job; a job's reasons all carry since and until", async () => {
    const owner = await makeUser(t.app, t.admin, "why-owner");
    const other = await makeUser(t.app, t.admin, "why-other");
    const jobId = await makeJob(t.app, owner.token, "why-queued", "why-nowhere");
    const run = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, owner.token)).triggerJob.id;

    await expect(explain(ctxFor(other.token), run)).rejects.toThrow(`"${run}" not found: no run or DAG run of yours has that id, and no job of yours has that name or id`);

    const answer = await explain(ctxFor(owner.token), "why-queued");
    expect(answer.reasons.map((r) => r.code)).toEqual(expect.arrayContaining(["POOL_UNSERVED", "NEXT_FIRE", "QUEUE"]));
    for (const r of answer.reasons) expect(Object.keys(r).sort()).toEqual(["code", "message", "since", "until"]);
  });

  it("a started run names its node by name, not by id", async () => {
    const owner = await makeUser(t.app, t.admin, "why-started");
    const job = (await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation { createJob(input: { name: "why-long", schedule: { kind: ONCE, at: "2099-01-01T00:00:00Z" }, spec: { kind: COMMAND, command: "sleep 30" } }) { id } }`, {}, owner.token)).createJob.id;
    const run = (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, owner.token)).triggerJob.id;
    const node = await waitFor(async () => {
      const r = (await gqlOk<{ run: { status: string; nodeId: string | null; node: { name: string } | null } }>(t.app.url, `query($id: ID!) { run(id: $id) { status nodeId node { name } } }`, { id: run }, owner.token)).run;
      return r.status === "RUNNING" && r.node ? { id: r.nodeId!, name: r.node.name } : null;
    }, 20_000);
    const started = (await explain(ctxFor(owner.token), run)).reasons.find((r) => r.code === "STARTED");
    expect(started?.message).toMatch(new RegExp(`^it has started: RUNNING on node ${node.name} since`));
    expect(node.name).not.toBe(node.id);
    await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: run }, owner.token);
  });
});

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
import { gqlOk } from "../helpers/graphql.js";

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
});
